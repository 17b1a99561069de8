"""``replay-tui receive``: its server and its protobuf decoder against the
well-kept alternatives, aiohttp (the ``serve`` extra brings it) and
opentelemetry-proto (Google's protobuf, its upb C core).

    python benchmarks/bench_receive.py [--mb 4] [--requests 2000]

Needs ``aiohttp`` and ``opentelemetry-proto`` installed (``pip install
opentelemetry-proto``; a part whose library is missing is skipped, said so).
Only 127.0.0.1 is talked to. Each figure is a ratio against ours, measured in
the same run (machines here are noisy); memory is the growth of the peak
resident set (VmHWM) of a fresh process, and of tracemalloc's peak
for ours.

1. Decoding one ExportTraceServiceRequest of MB megabytes, the corpus's
   recordings over and over: seconds per MB, and memory per byte of body.
   Ours makes the Collector's JSON line; upb parses (and, second, turns that
   into a dict as ``MessageToDict`` does, which is not yet the Collector's
   line: its ids are base64, not hex).
2. A body of empty messages (``0a 00`` again and again, 2 MiB): what each
   takes, and whether it is refused.
3. Malformed bodies: which each refuses.
4. The servers: REQUESTS small protobuf requests on one kept-alive
   connection (requests/s), one request of MB megabytes, the resident set
   after, and the answers each gives to the fuzzer's findings.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from replay_tui.formats.otel.proto import ProtoError, decode_traces  # noqa: E402
from tests.helpers import otlp_encode  # noqa: E402

TRACES = ROOT / "tests" / "fixtures" / "otel-traces"
PROTOBUF = "application/x-protobuf"


def corpus_request(megabytes: float) -> bytes:
    """One ExportTraceServiceRequest: every recording's resource spans, again
    and again, until it is ``megabytes`` long."""
    items: list[Any] = []
    for path in sorted(TRACES.rglob("*.json")):
        raw = path.read_bytes()
        if not path.name.endswith(".truth.json") and b"resourceSpans" in raw[:200]:
            items += orjson.loads(raw)["resourceSpans"]
    one = otlp_encode.traces_request({"resourceSpans": items})
    return one * max(1, int(megabytes * 1e6 / len(one)))


def _max_rss() -> int:
    """This process's peak resident set (VmHWM: ``ru_maxrss`` would carry the
    parent's over ``exec``)."""
    return _hwm(os.getpid())


# -- a child process: one decoding, measured -----------------------------------------------


def child_decode(how: str, path: str) -> dict[str, Any]:
    body = Path(path).read_bytes()
    if how != "ours":
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )
    before = _max_rss()
    start = time.perf_counter()
    refused = ""
    try:
        if how == "ours":
            orjson.dumps(decode_traces(body, 24 * len(body) + (64 << 10)))
        else:
            message = ExportTraceServiceRequest.FromString(body)
            if how == "upb+dict":
                MessageToDict(message, use_integers_for_enums=True)
    except Exception as exc:  # what each refuses with is the point
        refused = type(exc).__name__
    seconds = time.perf_counter() - start
    del body
    return {"seconds": seconds, "rss": _max_rss() - before, "refused": refused}


def child_server(port_file: str) -> None:
    """aiohttp doing what ``receive`` does: decode, one line appended."""
    from aiohttp import web

    from replay_tui.cli.receive.server import LineFile, Refused, decode

    sink = LineFile(Path(port_file + ".jsonl"))

    async def traces(request: web.Request) -> web.Response:
        body = await request.read()
        try:
            line, _ = decode("/v1/traces", request.content_type, body)
        except Refused as refused:
            return web.Response(status=refused.status, text=refused.message)
        sink.append(line)
        return web.Response(body=b"", content_type=PROTOBUF)

    app = web.Application(client_max_size=64 << 20)
    app.router.add_post("/v1/traces", traces)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    Path(port_file).write_text(str(sock.getsockname()[1]))
    web.run_app(app, sock=sock, print=None, handle_signals=True)


# -- the parent: the tables ----------------------------------------------------------------


def decode_in_child(how: str, body: bytes) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".pb", delete=False) as f:
        f.write(body)
    try:
        got = subprocess.run(
            [sys.executable, __file__, "--child", how, f.name],
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        )
    finally:
        os.unlink(f.name)
    return dict(json.loads(got.stdout))


def have(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        print(f"  ({module} is not installed: skipped)")
        return False
    return True


def decoders(megabytes: float) -> None:
    body = corpus_request(megabytes)
    mb = len(body) / 1e6
    print(f"\n1. decoding a {mb:.1f} MB ExportTraceServiceRequest (the corpus, repeated)")
    print(f"  {'decoder':34} {'s/MB':>8} {'x ours':>7} {'RSS/byte':>9} {'x ours':>7}")
    tracemalloc.start()
    decode_traces(body)
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    hows = ["ours"] + (["upb", "upb+dict"] if have("opentelemetry.proto") else [])
    base: dict[str, Any] = {}
    for how in hows:
        got = decode_in_child(how, body)
        base = base or got
        name = {
            "ours": "ours (the Collector's JSON line)",
            "upb": "opentelemetry-proto: parse",
            "upb+dict": "opentelemetry-proto: MessageToDict",
        }[how]
        print(
            f"  {name:34} {got['seconds'] / mb:8.3f} {got['seconds'] / base['seconds']:7.2f} "
            f"{got['rss'] / len(body):9.1f} {got['rss'] / max(base['rss'], 1):7.2f}"
        )
    print(f"  ours, tracemalloc's peak: {traced / len(body):.1f} bytes a byte of body")
    print("  (upb's parse is not a line yet; MessageToDict's dict is not the Collector's either)")

    flood = b"\x0a\x00" * (1 << 20)
    print("\n2. 2 MiB of empty ResourceSpans (0a 00, again and again; gzip makes it 2 KB)")
    for how in hows:
        got = decode_in_child(how, flood)
        said = f"refused ({got['refused']})" if got["refused"] else "taken"
        print(f"  {how:10} {said:24} {got['seconds']:6.2f} s, RSS +{got['rss'] / 1e6:7.1f} MB")


MALFORMED = {
    "cut inside a varint": b"\x0a\x80",
    "a length past the end": b"\x0a\x05\x0a",
    "a string field sent as varint": b"\x0a\x02\x18\x01",
    "invalid UTF-8 in a name": b"\x0a\x0a\x12\x08\x12\x06\x2a\x04\xff\xfe\xfd\xfc",
    "field number 0": b"\x02\x00",
    "a group (wire type 3)": b"\x0b\x0c",
    "a varint of 11 bytes": b"\x08" + b"\xff" * 10 + b"\x01",
    "nested 200 deep": b"",  # built below
}


def malformed() -> None:
    MALFORMED["nested 200 deep"] = _deep(200)
    print("\n3. malformed bodies: refused or taken")
    upb = have("opentelemetry.proto")
    print(f"  {'body':34} {'ours':>10} {'upb':>10}")
    for name, body in MALFORMED.items():
        ours = _refused_by_ours(body)
        theirs = _refused_by_upb(body) if upb else "-"
        print(f"  {name:34} {ours:>10} {theirs:>10}")


def _deep(levels: int) -> bytes:
    """A span whose one attribute's value is an array of an array of ...``levels`` deep."""
    value = b"\x18\x01"  # intValue 1
    for _ in range(levels):
        array = b"\x0a" + otlp_encode.varint(len(value)) + value  # ArrayValue.values
        value = b"\x2a" + otlp_encode.varint(len(array)) + array  # AnyValue.arrayValue
    kv = b"\x0a\x01k\x12" + otlp_encode.varint(len(value)) + value
    span = b"\x4a" + otlp_encode.varint(len(kv)) + kv
    scope = b"\x12" + otlp_encode.varint(len(span)) + span
    resourced = b"\x12" + otlp_encode.varint(len(scope)) + scope
    return b"\x0a" + otlp_encode.varint(len(resourced)) + resourced


def _refused_by_ours(body: bytes) -> str:
    try:
        decode_traces(body)
    except ProtoError:
        return "refused"
    return "taken"


def _refused_by_upb(body: bytes) -> str:
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    try:
        ExportTraceServiceRequest.FromString(body)
    except DecodeError:
        return "refused"
    return "taken"


FINDINGS = {
    "chunk size -1": b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
    b"application/x-protobuf\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n" + b"x" * 100,
    "HTTP/2.0 request line": b"POST /v1/traces HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n",
    "TRACE": b"TRACE /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    "lowercase post": b"post /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n",
    "Host: 127.0.0.1:80@evil.com": b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1:80@evil.com"
    b"\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n",
    "a 40 KB header": b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nX: "
    + b"a" * 40000
    + b"\r\n\r\n",
}


def _first_line(port: int, raw: bytes) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(raw)
        try:
            got = sock.recv(200)
        except TimeoutError:
            return "(no answer in 5 s)"
    return got.split(b"\r\n")[0].decode("latin-1")[:40] or "(closed)"


def servers(megabytes: float, requests: int) -> None:
    print(
        f"\n4. the servers: {requests} empty and {requests} small requests on one connection, "
        f"one of {megabytes} MB"
    )
    small = otlp_encode.traces_request(
        orjson.loads((TRACES / "adk_py" / "v2_event_only" / "S2.json").read_bytes())
    )
    big = corpus_request(megabytes)
    with tempfile.TemporaryDirectory() as tmp:
        port_file = str(Path(tmp) / "port")
        ours = [sys.executable, "-m", "replay_tui", "receive", f"{tmp}/ours.jsonl", "--port", "0"]
        started = {"ours (http.server)": ours}
        if have("aiohttp"):
            started["aiohttp"] = [sys.executable, __file__, "--child", "server", port_file]
        base: dict[str, float] = {}
        answers: dict[str, list[str]] = {}
        for name, argv in started.items():
            proc = subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT, env=_env()
            )
            try:
                port = _port_of(proc, port_file)
                empty, rate, big_seconds = _load(port, small, big, requests)
                rss = _hwm(proc.pid)
                answers[name] = [_first_line(port, raw) for raw in FINDINGS.values()]
            finally:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=30)
            base = base or {"empty": empty, "rate": rate, "big": big_seconds, "rss": rss}
            print(
                f"  {name:20} empty {empty:6.0f} req/s ({empty / base['empty']:.2f}x)  "
                f"{len(small) // 1000} KB {rate:5.0f} req/s ({rate / base['rate']:.2f}x)  "
                f"{megabytes} MB in {big_seconds:.2f} s ({big_seconds / base['big']:.2f}x)  "
                f"RSS peak {rss / 1e6:.0f} MB ({rss / base['rss']:.2f}x)"
            )
        print("\n  what each answers to the fuzzer's findings:")
        for i, finding in enumerate(FINDINGS):
            print(f"  {finding:28} " + " | ".join(f"{a[i]:36}" for a in answers.values()))


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _port_of(proc: subprocess.Popen[bytes], port_file: str) -> int:
    if "receive" in proc.args:  # type: ignore[operator]
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        return int(line.split("http://127.0.0.1:")[1].split()[0])
    deadline = time.monotonic() + 30
    while not Path(port_file).exists() or not Path(port_file).read_text():
        if time.monotonic() > deadline:
            raise SystemExit("aiohttp did not start")
        time.sleep(0.05)
    return int(Path(port_file).read_text())


def _load(port: int, small: bytes, big: bytes, requests: int) -> tuple[float, float, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Content-Type": PROTOBUF}
    rates = []
    for body in (b"", small):
        start = time.perf_counter()
        for _ in range(requests):
            conn.request("POST", "/v1/traces", body, headers)
            answer = conn.getresponse()
            answer.read()
            assert answer.status == 200, answer.status
        rates.append(requests / (time.perf_counter() - start))
    start = time.perf_counter()
    conn.request("POST", "/v1/traces", big, headers)
    answer = conn.getresponse()
    answer.read()
    conn.close()
    return rates[0], rates[1], time.perf_counter() - start


def _hwm(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=4.0)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        how, path = args.child
        if how == "server":
            child_server(path)
        else:
            print(json.dumps(child_decode(how, path)))
        return
    decoders(args.mb)
    malformed()
    servers(args.mb, args.requests)


if __name__ == "__main__":
    main()
