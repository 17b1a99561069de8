"""``replay-tui receive`` against bytes from outside: every answer has a
status line and a code the guide lists, memory and time stay bounded, and
what is taken is written exactly as sent. Only 127.0.0.1 is talked to."""

from __future__ import annotations

import contextlib
import gzip
import http.client
import io
import itertools
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import tracemalloc
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.cli.receive import server as otlp_server
from replay_tui.cli.receive.body import STATUSES, Refused, decompress, read_body
from replay_tui.cli.receive.server import Receiver, decode
from tests.conftest import ROOT

JSON = "application/json"
PROTOBUF = "application/x-protobuf"
EMPTY = b'{"resourceSpans":[]}'


@contextmanager
def receiving(path: Path, **options: Any) -> Iterator[Receiver]:
    server = Receiver("127.0.0.1", 0, path, **options)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def exchange(port: int, raw: bytes, *, end: bool = True, timeout: float = 30) -> bytes:
    """What the server answers to ``raw`` (sent, then the sending side shut
    if ``end``), up to the connection's close or the first whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        with contextlib.suppress(OSError):  # the server may have answered and closed already
            sock.sendall(raw)
            if end:
                sock.shutdown(socket.SHUT_WR)
        got = b""
        while True:
            try:
                piece = sock.recv(65536)
            except ConnectionResetError:
                return got
            if not piece:
                return got
            got += piece
            if _whole(got):
                return got


def _whole(answer: bytes) -> bool:
    head, sep, body = answer.partition(b"\r\n\r\n")
    if not sep or head.startswith(b"HTTP/1.1 100 "):
        return False
    length = re.search(rb"\r\nContent-Length: (\d+)", head)
    return length is not None and len(body) >= int(length.group(1))


def status_of(answer: bytes) -> int:
    """The status of an answer, which must start with an HTTP/1.1 status line."""
    found = re.match(rb"HTTP/1\.1 (\d{3}) [A-Za-z ]+\r\n", answer)
    assert found, answer[:200]
    return int(found.group(1))


def request(
    body: bytes = EMPTY,
    *,
    method: bytes = b"POST",
    path: bytes = b"/v1/traces",
    version: bytes = b"HTTP/1.1",
    headers: bytes = b"",
    kind: bytes = JSON.encode(),
) -> bytes:
    return (
        method + b" " + path + b" " + version + b"\r\nHost: 127.0.0.1\r\nContent-Type: " + kind
        + b"\r\nContent-Length: %d\r\n" % len(body) + headers + b"\r\n" + body
    )  # fmt: skip


# -- the fuzzer's findings, one by one -------------------------------------------------


def test_a_negative_chunk_size_is_refused_not_read_to_the_end(tmp_path: Path) -> None:
    head = b"POST /v1/traces HTTP/1.1\r\nContent-Type: application/json\r\n"
    chunked = head + b"Transfer-Encoding: chunked\r\n\r\n"
    with receiving(tmp_path / "t.jsonl", max_bytes=1000) as server:
        # the client does not close: the answer comes without it
        assert status_of(exchange(server.port, chunked + b"-1\r\n" + b"x" * 5000, end=False)) == 400
        for size in (b"+10", b"0x10", b"1_0", b" ", b"10000000000000000"):
            assert status_of(exchange(server.port, chunked + size + b"\r\n")) == 400
        # chunks count against --max-bytes before they are read
        over = b"200\r\n" + b" " * 512 + b"\r\n" + b"400\r\n"
        assert status_of(exchange(server.port, chunked + over, end=False)) == 413
        whole = b"%x\r\n%s\r\n0\r\n\r\n" % (len(EMPTY), EMPTY)
        assert status_of(exchange(server.port, chunked + whole)) == 200
    assert (tmp_path / "t.jsonl").read_bytes() == EMPTY + b"\n"


class _Counting:
    """zlib's decompressor, counting the bytes it is given."""

    fed = 0

    def __init__(self, *args: Any) -> None:
        self._inner = _REAL_DECOMPRESSOBJ(*args)

    def decompress(self, data: Any, max_length: int = 0) -> bytes:
        _Counting.fed += len(data)
        return self._inner.decompress(data, max_length)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


_REAL_DECOMPRESSOBJ = zlib.decompressobj


def test_many_empty_gzip_members_cost_linear_work(monkeypatch: pytest.MonkeyPatch) -> None:
    body = gzip.compress(b"") * 4000 + gzip.compress(EMPTY)  # 80 KB, 4,001 members
    monkeypatch.setattr(zlib, "decompressobj", _Counting)
    _Counting.fed = 0
    assert decompress(body, "gzip", 1 << 20) == EMPTY
    # each byte given to zlib a few times at most (not once for each member before it)
    assert _Counting.fed <= 4 * len(body)


def test_a_gzip_bomb_is_refused_as_it_inflates() -> None:
    bomb = gzip.compress(b"\0" * (64 << 20), compresslevel=9)  # 64 KB, 64 MiB inflated
    tracemalloc.start()
    try:
        with pytest.raises(Refused) as refused:
            decompress(bomb, "gzip", 1 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert refused.value.status == 413
    assert peak < 8 << 20


@pytest.mark.parametrize(
    "kind, body",
    [
        (PROTOBUF, b"\x0a\x00" * (128 << 10)),  # 128 Ki empty ResourceSpans
        (PROTOBUF, b"\x0a\x04\x12\x02\x12\x00" * (40 << 10)),  # empty spans, nested
        (JSON, b'{"resourceSpans":[' + b"{}," * (80 << 10) + b"{}]}"),
        (JSON, b'{"resourceSpans":[' + b"[]," * (80 << 10) + b"[]]}"),
    ],
    ids=["protobuf", "protobuf-nested", "json-objects", "json-lists"],
)
def test_a_small_body_of_empty_messages_is_refused_in_bounded_memory(
    kind: str, body: bytes, tmp_path: Path
) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(Refused) as refused:
            decode("/v1/traces", kind, body)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert refused.value.status == 413
    assert peak <= otlp_server.DECODE_FACTOR * len(body) + (2 << 20)
    # and over HTTP, gzipped as the fuzzer sent it: 413, nothing written
    with receiving(tmp_path / "t.jsonl") as server:
        packed = gzip.compress(body)
        headers = b"Content-Encoding: gzip\r\n"
        answer = exchange(server.port, request(packed, kind=kind.encode(), headers=headers))
        assert status_of(answer) == 413
    assert (tmp_path / "t.jsonl").read_bytes() == b""


@pytest.mark.parametrize(
    "raw, status",
    [
        (request(version=b"HTTP/2.0"), 505),
        (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505),
        (request(method=b"TRACE"), 405),
        (request(method=b"post"), 405),
        (request(method=b"BREW"), 405),
        (request(method=b"TRACE", path=b"/elsewhere"), 404),
        (b"GET /\r\n\r\n", 400),  # HTTP/0.9
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\0" * 40, 400),  # TLS to a plain port
        (b"POST /v1/traces HTTP/1.1 extra\r\n\r\n", 400),
        (b"POST /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n", 414),
        (request(headers=b"X-Big: " + b"a" * 40000 + b"\r\n"), 431),
        (request(headers=b"X-Many: 1\r\n" * 200), 431),
        (request(headers=b"no colon here\r\n"), 400),
        (request(headers=b"Transfer-Encoding: gzip\r\n"), 501),
        (request(headers=b"Content-Length: 5\r\n"), 400),  # two lengths
        (request().replace(b"Length: 20", b"Length: +20"), 400),
        (request().replace(b"Length: 20", b"Length: 2_0"), 400),
        (request(method=b"POST", headers=b"Host: 127.0.0.1:80@evil.com\r\n"), 400),
    ],
    ids=lambda v: v if isinstance(v, int) else repr(v[:30]),
)
def test_every_bad_request_gets_a_status_line_and_a_listed_code(
    tmp_path: Path, raw: bytes, status: int
) -> None:
    with receiving(tmp_path / "t.jsonl") as server:
        answer = exchange(server.port, raw)
    assert status_of(answer) == status
    head = answer.split(b"\r\n\r\n")[0]
    assert b"\r\nContent-Type: application/json\r\n" in head
    if status == 405:
        assert b"\r\nAllow: POST" in head + b"\r\n"
    body = answer.split(b"\r\n\r\n", 1)[1]
    assert orjson.loads(body)["message"]
    assert (tmp_path / "t.jsonl").read_bytes() == b""


@pytest.mark.parametrize(
    "host, status",
    [
        ("127.0.0.1:80@evil.com", 400),
        ("127.0.0.1@evil.com", 400),
        ("127.0.0.1:80/evil.com", 400),
        ("[::1]x", 400),
        ("127.0.0.1.evil.com", 403),
        ("localhost.evil.com:4318", 403),
        ("evil.com:4318", 403),
        ("[::ffff:1.2.3.4]:4318", 403),
        ("127.0.0.1", 200),
        ("127.0.0.1:4318", 200),
        ("localhost:4318", 200),
        ("[::1]:4318", 200),
        ("127.0.0.2", 200),
    ],
)
def test_the_host_header_is_parsed_not_cut(tmp_path: Path, host: str, status: int) -> None:
    raw = request().replace(b"Host: 127.0.0.1", b"Host: " + host.encode())
    with receiving(tmp_path / "t.jsonl") as server:
        assert status_of(exchange(server.port, raw)) == status
    assert (tmp_path / "t.jsonl").read_bytes() == (EMPTY + b"\n" if status == 200 else b"")


def test_an_integer_past_64_bits_is_written_exactly(tmp_path: Path) -> None:
    big = 2**70
    attribute = b'{"key":"n","value":{"intValue":%d}}' % big
    span = b'{"traceId":"01","spanId":"02","name":"s","attributes":[%s]}' % attribute
    body = b'{\n  "resourceSpans": [{"scopeSpans": [{"spans": [%s]}]}]\n}' % span
    with receiving(tmp_path / "t.jsonl") as server:
        assert status_of(exchange(server.port, request(body))) == 200
        # the same, its key not first: written re-encoded, the integer kept
        later = b'{"x": 1, "resourceSpans": [{"scopeSpans": [{"spans": [%s]}]}]}' % span
        assert status_of(exchange(server.port, request(later))) == 200
        twice = b'{"resourceSpans": [], "x": 1, "x": 2}'
        assert status_of(exchange(server.port, request(twice))) == 400
    lines = (tmp_path / "t.jsonl").read_bytes().splitlines()
    assert len(lines) == 2
    for line in lines:
        doc = json.loads(line)
        value = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"][0]["value"]
        assert value["intValue"] == big and type(value["intValue"]) is int


def test_the_address_it_listens_on_is_said(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "replay_tui",
            "receive",
            str(out),
            "--host",
            "0.0.0.0",
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().decode()
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    found = re.search(
        r"listening on every interface, port (\d+) \(0\.0\.0\.0; from this machine: "
        r"http://127\.0\.0\.1:(\d+)\)",
        first,
    )
    assert found and found.group(1) == found.group(2), first


@settings(max_examples=60, deadline=None)
@given(parts=st.lists(st.binary(max_size=300), min_size=1, max_size=20))
def test_gzip_members_inflate_to_what_was_packed(parts: list[bytes]) -> None:
    packed = b"".join(gzip.compress(part) for part in parts)
    assert decompress(packed, "gzip", 1 << 20) == b"".join(parts)
    whole = b"".join(parts)
    assert decompress(zlib.compress(whole), "deflate", 1 << 20) == whole
    if whole:  # one byte under: refused, not cut short
        with pytest.raises(Refused) as refused:
            decompress(packed, "gzip", len(whole) - 1)
        assert refused.value.status == 413


@settings(max_examples=60, deadline=None)
@given(
    body=st.binary(max_size=2000),
    cuts=st.lists(st.integers(0, 2000), max_size=10),
    extension=st.sampled_from([b"", b";x=1", b" "]),
)
def test_any_chunking_reads_back_the_body(body: bytes, cuts: list[int], extension: bytes) -> None:
    edges = sorted({0, len(body), *(c for c in cuts if c < len(body))})
    chunks = [body[a:b] for a, b in itertools.pairwise(edges) if b > a]
    wire = b"".join(b"%x%s\r\n%s\r\n" % (len(c), extension, c) for c in chunks) + b"0\r\n\r\n"
    headers = http.client.parse_headers(io.BytesIO(b"Transfer-Encoding: chunked\r\n\r\n"))
    assert read_body(io.BytesIO(wire), headers, len(body)) == body
    if body:
        with pytest.raises(Refused) as refused:
            read_body(io.BytesIO(wire), headers, len(body) - 1)
        assert refused.value.status == 413


# -- time and connections ----------------------------------------------------------------


def test_a_request_that_never_ends_is_cut(tmp_path: Path) -> None:
    with receiving(tmp_path / "t.jsonl", request_seconds=0.5) as server:
        # a head sent, then nothing: the server closes the connection itself
        answer = exchange(server.port, b"POST /v1/traces HTTP/1.1\r\nHost: 127", end=False)
        assert answer == b""
        # a body promised and not sent
        answer = exchange(server.port, request(b"")[:-4] + b"9\r\n\r\n{", end=False)
        assert answer == b""
        assert status_of(exchange(server.port, request())) == 200  # and it still serves


def test_connections_past_the_bound_are_answered_503(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(otlp_server, "MAX_CONNECTIONS", 2)
    with receiving(tmp_path / "t.jsonl") as server:
        held = [socket.create_connection(("127.0.0.1", server.port), timeout=30) for _ in range(2)]
        try:
            for sock in held:  # each is being served: its answer says so
                sock.sendall(request())
                assert status_of(sock.recv(65536)) == 200
            # one more: answered at once, before it sends anything
            assert status_of(exchange(server.port, b"", end=False)) == 503
        finally:
            for sock in held:
                sock.close()


def test_expect_100_continue_is_answered_before_the_body(tmp_path: Path) -> None:
    head = request(b"")[:-2].replace(b"Length: 0", b"Length: %d" % len(EMPTY))
    with (
        receiving(tmp_path / "t.jsonl") as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock,
    ):
        sock.sendall(head + b"Expect: 100-continue\r\n\r\n")
        assert sock.recv(65536) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(EMPTY)
        assert status_of(sock.recv(65536)) == 200


# -- the guide lists every code ------------------------------------------------------------


def test_every_code_answered_is_in_the_guide() -> None:
    page = (ROOT / "docs" / "otel.md").read_text()
    section = page[page.index("## Receiving") :]
    for code, phrase in STATUSES.items():
        assert f"{code} {phrase}" in section, code


# -- a byte fuzzer, bounded --------------------------------------------------------------

_VALID = [
    request(),
    request(gzip.compress(EMPTY), headers=b"Content-Encoding: gzip\r\n"),
    request(b"\x0a\x00", kind=PROTOBUF.encode()),
    b"POST /v1/logs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n3\r\n{}\n\r\n0\r\n\r\n",
]


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """A valid request with bytes changed, cut, repeated or put in."""
    raw = bytearray(draw(st.sampled_from(_VALID)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(raw)))
        what = draw(st.sampled_from(["set", "cut", "insert", "repeat"]))
        piece = draw(st.binary(min_size=1, max_size=12))
        if what == "set" and at < len(raw):
            raw[at] = piece[0]
        elif what == "cut":
            del raw[at : at + len(piece)]
        elif what == "insert":
            raw[at:at] = piece
        else:
            raw[at:at] = raw[at : at + len(piece)] * draw(st.integers(1, 50))
    return bytes(raw)


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Receiver]:
    with receiving(tmp_path_factory.mktemp("fuzz") / "t.jsonl", max_bytes=64 << 10) as server:
        yield server


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(raw=st.one_of(damaged(), st.binary(max_size=300)))
def test_any_bytes_get_a_listed_code_or_a_close(fuzzed: Receiver, raw: bytes) -> None:
    tracemalloc.start()
    try:
        answer = exchange(fuzzed.port, raw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if answer:
        assert status_of(answer) in STATUSES
    assert peak < 16 << 20
    # it still serves
    assert status_of(exchange(fuzzed.port, request())) == 200
