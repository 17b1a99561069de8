"""``replay-tui receive``: OTLP/HTTP in, the Collector's JSON lines out.

Every recording of the corpus sent as an SDK sends it (JSON, and protobuf
encoded by tests/helpers/otlp_encode.py, written apart from the decoder)
ends, once received, in its truth; protobuf decodes to the very OTLP/JSON
the Collector writes (a round trip over random requests); and what is not a
request is refused as OTLP/HTTP says, leaving the file alone.
"""

from __future__ import annotations

import base64
import gzip
import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay_tui.cli.commands import main
from replay_tui.cli.receive.server import Receiver
from replay_tui.engine.open import open_replay
from replay_tui.formats.otel.load import Loader
from replay_tui.formats.otel.proto import (
    MAX_DEPTH,
    ProtoError,
    decode_logs,
    decode_traces,
    encode_status,
)
from tests.conftest import ROOT
from tests.helpers import otlp_encode as enc
from tests.helpers.otel_truth import compare

TRACES = ROOT / "tests" / "fixtures" / "otel-traces"
FILES = sorted(
    p
    for p in TRACES.rglob("*.json")
    if not p.name.endswith(".truth.json") and b"resourceSpans" in p.read_bytes()[:200]
)
JSON = "application/json"
PROTOBUF = "application/x-protobuf"


@contextmanager
def receiving(path: Path, **options: Any) -> Iterator[Receiver]:
    """The server on a free port of 127.0.0.1, appending to ``path``."""
    server = Receiver("127.0.0.1", 0, path, **options)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def post(
    port: int,
    path: str,
    body: bytes,
    content_type: str = JSON,
    headers: dict[str, str] | None = None,
    method: str = "POST",
) -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body, {"Content-Type": content_type, **(headers or {})})
        answer = conn.getresponse()
        return answer.status, answer.getheader("Content-Type") or "", answer.read()
    finally:
        conn.close()


def requests_of(doc: dict[str, Any], encoding: str) -> list[tuple[str, bytes]]:
    """What an SDK would send for ``doc``: its spans to /v1/traces, its logs to /v1/logs."""
    sent = []
    if encoding == "protobuf":
        sent.append(("/v1/traces", enc.traces_request(doc)))
        if doc.get("resourceLogs"):
            sent.append(("/v1/logs", enc.logs_request(doc)))
    else:
        sent.append(("/v1/traces", orjson.dumps({"resourceSpans": doc["resourceSpans"]})))
        if doc.get("resourceLogs"):
            sent.append(("/v1/logs", orjson.dumps({"resourceLogs": doc["resourceLogs"]})))
    return sent


def normal_form(docs: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    loader = Loader()
    for doc in docs:
        loader.otlp(doc)
    return loader.spans, loader.logs


# -- every recording, as JSON and as protobuf ------------------------------------------


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(TRACES)))
def test_a_recording_received_ends_in_its_truth(path: Path, encoding: str, tmp_path: Path) -> None:
    doc = orjson.loads(path.read_bytes())
    out = tmp_path / "received.jsonl"
    content_type = PROTOBUF if encoding == "protobuf" else JSON
    with receiving(out) as server:
        for where, body in requests_of(doc, encoding):
            status, kind, answer = post(server.port, where, body, content_type)
            assert (status, kind) == (200, content_type)
            assert answer == (b"" if encoding == "protobuf" else b"{}")
    lines = out.read_bytes().splitlines(keepends=True)
    assert len(lines) == len(requests_of(doc, encoding))
    assert all(line.endswith(b"\n") and b"\n" not in line[:-1] for line in lines)
    # the same spans and logs, field for field, whichever the encoding
    assert normal_form([orjson.loads(line) for line in lines]) == normal_form([doc])
    replay, _ = open_replay(str(out))
    try:
        replay.verify()
        assert replay.error is None, replay.error
        truth = orjson.loads(path.with_name(path.stem + ".truth.json").read_bytes())
        assert compare(truth, replay.final_state()) == []
    finally:
        replay.close()


# -- protobuf decodes to the Collector's OTLP/JSON: a round trip ---------------------

_TEXT = st.text(max_size=12)
_SOME_TEXT = st.one_of(st.none(), st.text(min_size=1, max_size=12))
_INT64 = st.integers(-(2**63), 2**63 - 1).map(str)


def _some(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


def _hex(size: int) -> st.SearchStrategy[str | None]:
    return _some(st.binary(min_size=size, max_size=size).filter(any).map(bytes.hex))


def _message(*fields: tuple[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """A message as the Collector writes it: fields in this order, those at
    their default (drawn as None) left out."""
    names = [name for name, _ in fields]
    return st.fixed_dictionaries(dict(fields)).map(
        lambda d: {n: d[n] for n in names if d[n] is not None}
    )


def _nonzero(top: int) -> st.SearchStrategy[int | None]:
    return _some(st.integers(1, top))


_SCALARS = st.one_of(
    st.builds(lambda v: {"stringValue": v}, _TEXT),
    st.builds(lambda v: {"boolValue": v}, st.booleans()),
    st.builds(lambda v: {"intValue": v}, _INT64),
    st.builds(lambda v: {"doubleValue": v}, st.floats(allow_nan=False, allow_infinity=False)),
    st.builds(lambda v: {"bytesValue": base64.b64encode(v).decode()}, st.binary(max_size=8)),
    st.just({}),
)


def _key_values(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return _message(("key", _SOME_TEXT), ("value", values))


def _wrapped(values: st.SearchStrategy[Any], kind: str) -> st.SearchStrategy[dict[str, Any]]:
    items = st.lists(values if kind == "arrayValue" else _key_values(values), max_size=3)
    return items.map(lambda v: {kind: {"values": v} if v else {}})


ANY_VALUE = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(_wrapped(inner, "arrayValue"), _wrapped(inner, "kvlistValue")),
    max_leaves=8,
)
ATTRIBUTES = _some(st.lists(_key_values(ANY_VALUE), min_size=1, max_size=3))
TIME = _some(st.integers(1, 2**64 - 1).map(str))
U32 = _nonzero(2**32 - 1)
SCOPE = _message(
    ("name", _SOME_TEXT), ("version", _SOME_TEXT), ("attributes", ATTRIBUTES),
    ("droppedAttributesCount", U32),
)  # fmt: skip
RESOURCE = _message(("attributes", ATTRIBUTES), ("droppedAttributesCount", U32))
EVENT = _message(
    ("timeUnixNano", TIME), ("name", _SOME_TEXT), ("attributes", ATTRIBUTES),
    ("droppedAttributesCount", U32),
)  # fmt: skip
LINK = _message(
    ("traceId", _hex(16)), ("spanId", _hex(8)), ("traceState", _SOME_TEXT),
    ("attributes", ATTRIBUTES), ("droppedAttributesCount", U32), ("flags", U32),
)  # fmt: skip
SPAN = _message(
    ("traceId", _hex(16)), ("spanId", _hex(8)), ("traceState", _SOME_TEXT),
    ("parentSpanId", _hex(8)), ("flags", U32), ("name", _SOME_TEXT), ("kind", _nonzero(5)),
    ("startTimeUnixNano", TIME), ("endTimeUnixNano", TIME), ("attributes", ATTRIBUTES),
    ("droppedAttributesCount", U32), ("events", _some(st.lists(EVENT, min_size=1, max_size=2))),
    ("droppedEventsCount", U32), ("links", _some(st.lists(LINK, min_size=1, max_size=2))),
    ("droppedLinksCount", U32),
    ("status", _message(("message", _SOME_TEXT), ("code", _nonzero(2)))),
)  # fmt: skip
LOG = _message(
    ("timeUnixNano", TIME), ("observedTimeUnixNano", TIME), ("severityNumber", _nonzero(24)),
    ("severityText", _SOME_TEXT), ("body", ANY_VALUE), ("attributes", ATTRIBUTES),
    ("droppedAttributesCount", U32), ("flags", U32), ("traceId", _hex(16)), ("spanId", _hex(8)),
    ("eventName", _SOME_TEXT),
)  # fmt: skip


def _request(key: str, scoped: str, records: str, record: Any) -> Any:
    scopes = _message(
        ("scope", SCOPE),
        (records, _some(st.lists(record, min_size=1, max_size=3))),
        ("schemaUrl", _SOME_TEXT),
    )
    resources = _message(
        ("resource", RESOURCE),
        (scoped, _some(st.lists(scopes, min_size=1, max_size=2))),
        ("schemaUrl", _SOME_TEXT),
    )
    return st.lists(resources, max_size=2).map(lambda items: {key: items})


@settings(max_examples=150, deadline=None)
@given(_request("resourceSpans", "scopeSpans", "spans", SPAN))
def test_protobuf_spans_decode_to_the_collectors_json(doc: dict[str, Any]) -> None:
    decoded = decode_traces(enc.traces_request(doc))
    assert orjson.dumps(decoded) == orjson.dumps(doc)  # the same fields, in the same order


@settings(max_examples=150, deadline=None)
@given(_request("resourceLogs", "scopeLogs", "logRecords", LOG))
def test_protobuf_logs_decode_to_the_collectors_json(doc: dict[str, Any]) -> None:
    decoded = decode_logs(enc.logs_request(doc))
    assert orjson.dumps(decoded) == orjson.dumps(doc)


def test_the_collectors_shape_in_one_example() -> None:
    span = {
        "traceId": "5B8EFFF798038103D269B633813FC60C",
        "spanId": "eee19b7ec3c1b174",
        "name": "chat",
        "kind": "SPAN_KIND_CLIENT",
        "startTimeUnixNano": 1544712660000000000,
        "attributes": [
            {"key": "n", "value": {"intValue": -3}},
            {"key": "e", "value": {"stringValue": ""}},
            {"key": "x", "value": {"doubleValue": float("inf")}},
        ],
    }
    line = orjson.dumps(
        decode_traces(enc.traces_request({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    )
    assert line == (
        b'{"resourceSpans":[{"resource":{},"scopeSpans":[{"scope":{},"spans":[{'
        b'"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174",'
        b'"name":"chat","kind":3,"startTimeUnixNano":"1544712660000000000","attributes":['
        b'{"key":"n","value":{"intValue":"-3"}},{"key":"e","value":{"stringValue":""}},'
        b'{"key":"x","value":{"doubleValue":"Infinity"}}],"status":{}}]}]}]}'
    )


def test_unknown_fields_are_skipped() -> None:
    # ResourceSpans field 1000 (the old instrumentation_library_spans) and a Span field 99
    span = enc.span({"spanId": "0102030405060708"}) + enc.uint(99, 7)
    body = enc.length(1, enc.length(1000, b"\x0a\x00") + enc.length(2, enc.length(2, span)))
    assert decode_traces(body) == {
        "resourceSpans": [
            {
                "resource": {},
                "scopeSpans": [
                    {"scope": {}, "spans": [{"spanId": "0102030405060708", "status": {}}]}
                ],
            }
        ]
    }


@pytest.mark.parametrize(
    "body, words",
    [
        (b"\x0a\x05\x0a\x03", "runs past the end"),
        (b"\x0a", "cut short"),
        (b"\xff" * 11, "longer than 10 bytes"),
        (b"\x08\x01", "sent as varint, not length-delimited"),
        (b"\x0b", "wire type 3"),
        (b"\x00", "field number 0"),
        (b"not protobuf", "wire type 6"),
    ],
)
def test_what_is_not_a_request_is_said_where(body: bytes, words: str) -> None:
    with pytest.raises(ProtoError, match=words):
        decode_traces(body)


def test_values_nested_too_deep_are_refused() -> None:
    value: dict[str, Any] = {"stringValue": "x"}
    for _ in range(MAX_DEPTH):
        value = {"arrayValue": {"values": [value]}}
    doc = {
        "resourceSpans": [
            {"scopeSpans": [{"spans": [{"attributes": [{"key": "k", "value": value}]}]}]}
        ]
    }
    with pytest.raises(ProtoError, match="nested deeper"):
        decode_traces(enc.traces_request(doc))


def test_status_is_google_rpc_status() -> None:
    assert encode_status(3, "bad") == b"\x08\x03\x12\x03bad"


# -- the server: what it takes and what it refuses -------------------------------------

SPANS = TRACES / "adk_py" / "v1_default" / "S2.json"


def _spans_body(encoding: str = "json") -> bytes:
    return dict(requests_of(orjson.loads(SPANS.read_bytes()), encoding))["/v1/traces"]


def _status_message(body: bytes) -> str:
    """The message of a protobuf ``google.rpc.Status`` (field 2)."""
    at = body.index(b"\x12")
    return body[at + 2 : at + 2 + body[at + 1]].decode()


@pytest.mark.parametrize("compression", ["gzip", "deflate"])
def test_compressed_requests_are_taken(tmp_path: Path, compression: str) -> None:
    out = tmp_path / "t.jsonl"
    body = _spans_body("protobuf")
    packed = gzip.compress(body) if compression == "gzip" else zlib.compress(body)
    with receiving(out) as server:
        status, _, _ = post(
            server.port, "/v1/traces", packed, PROTOBUF, {"Content-Encoding": compression}
        )
        assert status == 200
        # two gzip members, one after the other, are one body
        twice = gzip.compress(b"{") + gzip.compress(b'"resourceSpans":[]}')
        status, _, _ = post(server.port, "/v1/traces", twice, JSON, {"Content-Encoding": "gzip"})
        assert status == 200
    lines = out.read_bytes().splitlines()
    assert lines[0] == orjson.dumps(decode_traces(body)) and lines[1] == b'{"resourceSpans":[]}'


def test_refusals_write_nothing_and_say_why(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    body = _spans_body()
    bomb = gzip.compress(b" " * 5000)
    with receiving(out, max_bytes=4000) as server:
        port = server.port
        assert post(port, "/v1/traces", b" " * 4001)[0] == 413
        assert post(port, "/v1/traces", bomb, JSON, {"Content-Encoding": "gzip"})[0] == 413
        assert post(port, "/v1/traces", b"{}", "text/plain")[0] == 415
        assert post(port, "/v1/traces", b"{}", JSON, {"Content-Encoding": "br"})[0] == 415
        assert post(port, "/v1/metrics", b"{}")[0] == 404
        assert post(port, "/v1/traces", b"", method="GET")[0] == 405
        assert post(port, "/v1/traces", b"{}", JSON, {"Host": "rebound.example:4318"})[0] == 403
        assert post(port, "/v1/traces", b"[1]")[0] == 400
        assert post(port, "/v1/traces", b'{"resourceSpans": 1}')[0] == 400
        assert post(port, "/v1/traces", b"{not json")[0] == 400
        status, kind, answer = post(port, "/v1/traces", b"\x0a\x05garbage", PROTOBUF)
        assert (status, kind) == (400, PROTOBUF)
        assert "not an OTLP/protobuf request" in _status_message(answer)
        status, kind, answer = post(port, "/v1/logs", b"{", JSON)
        assert (status, kind) == (400, JSON) and orjson.loads(answer)["code"] == 3
    assert out.read_bytes() == b""
    with receiving(out, max_bytes=len(body)) as server:  # the bound itself is taken
        assert post(server.port, "/v1/traces", body)[0] == 200
    assert out.read_bytes().count(b"\n") == 1


def test_one_line_per_request_taken_whatever_comes_at_once(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    bodies = [_spans_body("protobuf"), _spans_body("json")] * 10
    with receiving(out) as server:
        results: list[int] = []

        def send(i: int) -> None:
            kind = PROTOBUF if i % 2 == 0 else JSON
            results.append(post(server.port, "/v1/traces", bodies[i], kind)[0])
            results.append(post(server.port, "/v1/nothing", b"{}")[0])

        threads = [threading.Thread(target=send, args=(i,)) for i in range(len(bodies))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(results) == [200] * 20 + [404] * 20
        assert server.sink.lines == 20
    lines = out.read_bytes().splitlines()
    # each line one whole request: ten as the protobuf decoded, ten as the JSON sent
    from_protobuf, from_json = (
        orjson.dumps(decode_traces(bodies[0])),
        orjson.dumps(orjson.loads(bodies[1])),
    )
    assert sorted(lines) == sorted([from_protobuf] * 10 + [from_json] * 10)


def test_one_connection_carries_many_requests(tmp_path: Path) -> None:
    """Keep-alive, as exporters use it: a refused body is read, so the next request is whole."""
    out = tmp_path / "t.jsonl"
    with receiving(out) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        for path, kind, status in [
            ("/v1/traces", PROTOBUF, 200),
            ("/v1/other", PROTOBUF, 404),
            ("/v1/traces", "text/plain", 415),
            ("/v1/traces", JSON, 400),
            ("/v1/traces", PROTOBUF, 200),
        ]:
            conn.request("POST", path, _spans_body("protobuf"), {"Content-Type": kind})
            answer = conn.getresponse()
            answer.read()
            assert answer.status == status
        # chunked, as a streaming client sends
        conn.putrequest("POST", "/v1/traces")
        conn.putheader("Content-Type", JSON)
        conn.putheader("Transfer-Encoding", "chunked")
        conn.endheaders()
        body = _spans_body("json")
        for piece in (body[:100], body[100:]):
            conn.send(b"%x\r\n%s\r\n" % (len(piece), piece))
        conn.send(b"0\r\n\r\n")
        answer = conn.getresponse()
        assert (answer.status, answer.read()) == (200, b"{}")
        conn.close()
    assert out.read_bytes().count(b"\n") == 3


def test_the_file_can_be_followed_as_it_is_received(tmp_path: Path) -> None:
    from replay_tui.engine.replay import Replay
    from replay_tui.formats.run import OTEL, locate_run
    from replay_tui.reducers import load_reducer

    out = tmp_path / "live.jsonl"
    doc = orjson.loads((TRACES / "adk_py" / "v2_event_only" / "S2.json").read_bytes())
    with receiving(out) as server:
        followed = Replay(
            locate_run(out, fmt=OTEL, may_be_empty=True), load_reducer("otel_genai"), following=True
        )
        for where, body in requests_of(doc, "protobuf"):
            assert post(server.port, where, body, PROTOBUF)[0] == 200
            followed.advance()
            assert followed.error is None
    followed.finish()
    truth = orjson.loads((TRACES / "adk_py" / "v2_event_only" / "S2.truth.json").read_bytes())
    assert compare(truth, followed.final_state()) == []
    followed.close()


# -- the command --------------------------------------------------------------------------


def test_the_command_receives_until_ctrl_c(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "replay_tui", "receive", str(out), "--port", "0", "--verbose"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().decode()
        found = re.search(
            r"listening on http://127\.0\.0\.1:(\d+) \(OTLP/HTTP, JSON and protobuf\)", first
        )
        assert found, first
        assert f"follow it with: replay-tui --follow --format otel {out}" in first
        port = int(found.group(1))
        assert post(port, "/v1/traces", _spans_body("protobuf"), PROTOBUF)[0] == 200
        assert post(port, "/v1/traces", b"x", PROTOBUF)[0] == 400
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert stdout.decode() == "replay-tui receive: stopped (1 line appended)\n"
    said = stderr.decode().splitlines()
    assert said[0].startswith("replay-tui receive: POST /v1/traces 200: ") and "protobuf" in said[0]
    assert said[1].startswith("replay-tui receive: POST /v1/traces 400: ")
    assert len(said) == 2  # no traceback
    assert out.read_bytes().count(b"\n") == 1
    assert sorted(os.listdir(tmp_path)) == ["t.jsonl"]  # nothing else written


def test_a_port_in_use_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["receive", str(tmp_path / "t.jsonl"), "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"replay-tui: 127.0.0.1:{port}: the port is in use (another server?): pick another with --port N\n"
    )
    assert not (tmp_path / "t.jsonl").exists()


@pytest.mark.parametrize(
    "content, words",
    [
        (b'{"events": [1]}\n', "holds something other than OTLP/JSON lines"),
        (b'{"resourceSpans": []}', "its last line is not ended"),
    ],
)
def test_a_file_that_appending_would_damage_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, words: str
) -> None:
    out = tmp_path / "t.jsonl"
    out.write_bytes(content)
    assert main(["receive", str(out), "--port", "0"]) == 2
    assert words in capsys.readouterr().err
    assert out.read_bytes() == content


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--port", "65536"], "ports are 1 to 65535"),
        (["--max-bytes", "0"], "give bytes"),
        (["--host", "no-such-host.invalid"], "--host no-such-host.invalid"),
    ],
)
def test_bad_arguments_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    assert main(["receive", str(tmp_path / "t.jsonl"), *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_max_bytes_takes_units() -> None:
    from replay_tui.cli.commands import build_parser

    args = build_parser().parse_args(["receive", "t.jsonl", "--max-bytes", "2M"])
    assert (args.max_bytes, args.port, args.host) == (2 << 20, 4318, "127.0.0.1")


def test_help_says_where_to_point_the_exporter(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["receive", "--help"])
    text = capsys.readouterr().out
    assert "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318" in text
    assert "replay-tui --follow --format otel traces.jsonl" in text
    assert max(len(line) for line in text.splitlines()) <= 100


def test_an_address_beyond_this_machine_is_warned_of() -> None:
    from replay_tui.cli.receive.command import exposure_warning

    assert exposure_warning("127.0.0.1", 4318, "t.jsonl") is None
    assert exposure_warning("::1", 4318, "t.jsonl") is None
    said = exposure_warning("0.0.0.0", 4318, "t.jsonl")
    assert said == (
        "warning: listening on every address of this machine, port 4318: "
        "anyone who can reach it can append to t.jsonl"
    )


def test_json_nested_past_what_a_line_can_hold_is_refused(tmp_path: Path) -> None:
    deep = b'{"resourceSpans": [' + b"[" * 400 + b"]" * 400 + b"]}"
    with receiving(tmp_path / "t.jsonl") as server:
        status, _, answer = post(server.port, "/v1/traces", deep)
    assert status == 400 and b"one JSON line" in answer
    assert (tmp_path / "t.jsonl").read_bytes() == b""
