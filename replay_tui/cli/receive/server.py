"""``replay-tui receive``'s server: OTLP/HTTP in, the Collector's JSON lines out.

An SDK's OTLP/HTTP exporter, pointed at ``OTEL_EXPORTER_OTLP_ENDPOINT``,
POSTs each batch to ``/v1/traces`` (an ``ExportTraceServiceRequest``) or
``/v1/logs`` (an ``ExportLogsServiceRequest``), as ``application/x-protobuf``
(:mod:`~replay_tui.formats.otel.proto` decodes it) or ``application/json``,
maybe gzip- or deflate-compressed. Each request taken becomes one line of
the trace file, the OTLP/JSON the Collector's file exporter writes
(:mod:`~replay_tui.formats.otel.lines` follows such a file): compact JSON
and a newline, written by one ``os.write`` on a file opened to append,
under a lock, so a reader never meets two requests in one line, and meets
half of one only as a last line not yet ended.

The answers are OTLP/HTTP's: 200 with an empty export response in the
request's encoding; else a ``google.rpc.Status`` saying why (in protobuf for
a protobuf request, else JSON), with a code of
:data:`~replay_tui.cli.receive.body.STATUSES`, each listed in the guide (the
OTel page): 400 a body that is not the request, 413 one over the size bound
(compressed or not, or decoding to more than ``DECODE_FACTOR`` times its
size), 415 another content type or encoding, 404 another path, 405 another
method, 403 (on a loopback address) a request naming a host that is not
loopback, as a page on a DNS name rebound to 127.0.0.1 would... None of
these is one an exporter retries but 503 (busy, or the disk full). Nothing
but the trace file is written.

Bounded: a request's head and body are read by
:mod:`~replay_tui.cli.receive.body` (each part bounded), ``BUSY_SLOTS``
requests are read and decoded at once, ``MAX_CONNECTIONS`` are open at most,
and a request must arrive whole within ``REQUEST_SECONDS``.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import itertools
import os
import re
import socket
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson

from replay_tui.cli.receive.body import (
    DRAIN_BYTES,
    STATUSES,
    Refused,
    decompress,
    header_block,
    read_body,
    request_line,
)
from replay_tui.core import strict_json
from replay_tui.core.net import is_loopback
from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import plural
from replay_tui.formats.otel.load import dicts_of
from replay_tui.formats.otel.proto import (
    ProtoError,
    TooBig,
    decode_logs,
    decode_traces,
    encode_status,
)

#: The OTLP/HTTP paths: what each request holds, how protobuf is read, what is counted.
PATHS: dict[str, tuple[str, Callable[[bytes, int], dict[str, Any]], str, str]] = {
    "/v1/traces": ("resourceSpans", decode_traces, "scopeSpans", "spans"),
    "/v1/logs": ("resourceLogs", decode_logs, "scopeLogs", "logRecords"),
}
JSON = "application/json"
PROTOBUF = "application/x-protobuf"
#: Content types taken as protobuf (the spec's, and the name some clients use).
PROTOBUF_TYPES = (PROTOBUF, "application/protobuf")
#: The default bound on a request, compressed and not: 32 MiB.
DEFAULT_MAX_BYTES = 32 << 20
#: gRPC codes for the Status of a refusal, by HTTP status.
_GRPC = {
    400: 3,
    403: 7,
    404: 12,
    405: 12,
    411: 3,
    413: 8,
    414: 3,
    415: 3,
    431: 3,
    500: 13,
    501: 12,
    503: 14,
    505: 12,
}


class CannotOpen(Exception):
    """The trace file cannot be opened to append to."""


class LineFile:
    """The trace file, opened to append (created if missing): each line in
    one ``os.write``, under a lock. After a write that failed half-way, the
    next line starts on a line of its own."""

    def __init__(self, path: Path) -> None:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0)
        self._fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o644)
        self._lock = threading.Lock()
        self._broken = False
        #: Lines written.
        self.lines = 0

    def append(self, line: bytes) -> None:
        with self._lock:
            data = b"\n" + line if self._broken else line
            written = 0
            try:
                while written < len(data):  # one write, but for a disk that fills up
                    written += os.write(self._fd, data[written:])
            except OSError:
                self._broken = self._broken or written > 0
                raise
            self._broken = False
            self.lines += 1

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1


#: Decoding a request may take this many times its (decompressed) size in
#: memory, and 64 KiB more: real exports take at most 15 (protobuf and JSON,
#: every recording of tests/fixtures/otel-traces), a body of empty messages
#: or values some 150 (protobuf) or 40 (JSON): refused (413), not decoded.
DECODE_FACTOR = 24
_DECODE_FLOOR = 64 << 10
#: A JSON string (its escapes too), to count a body's values outside strings.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
#: The bytes of memory orjson may take for each value it makes (a dict, a
#: list, a key, a number...), measured: 108 at most, for an empty dict.
_JSON_VALUE_BYTES = 112
#: How deep a line may nest: what orjson (the app's reader and writer) takes.
MAX_JSON_DEPTH = 255
_BRACKETS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def decode(path: str, content_type: str, body: bytes) -> tuple[bytes, int]:
    """The line ``body`` becomes, and how many spans (or log records) it holds.

    Protobuf becomes the Collector's OTLP/JSON; JSON is written as it was
    sent (its line breaks, outside strings as JSON has them, taken out), so
    what it says (an integer past 64 bits too) is what the file says."""
    key, from_protobuf, scoped, records = PATHS[path]
    budget = DECODE_FACTOR * len(body) + _DECODE_FLOOR
    if content_type in PROTOBUF_TYPES:
        try:
            request = from_protobuf(body, budget)
        except TooBig as exc:
            raise Refused(
                413, f"{exc} ({DECODE_FACTOR} times its size): send smaller batches"
            ) from None
        except ProtoError as exc:
            raise Refused(400, f"not an OTLP/protobuf request: {exc}") from None
        try:
            line = orjson.dumps(request) + b"\n"
        except orjson.JSONEncodeError as exc:
            raise Refused(400, f"cannot be written as one JSON line: {exc}") from None
    else:
        request, line = _json_line(body, key, budget)
    count = 0
    for resourced in dicts_of(request.get(key)):
        for scope in dicts_of(resourced.get(scoped)):
            found = scope.get(records)
            count += len(found) if isinstance(found, list) else 0
    return line, count


def _json_line(body: bytes, key: str, budget: int) -> tuple[dict[str, Any], bytes]:
    """An OTLP/JSON request and the line it is written as (see :func:`decode`)."""
    bare = _JSON_STRING.sub(b'""', body)  # what is outside strings
    values = sum(bare.count(c) for c in b"{[,:") + 1
    if _JSON_VALUE_BYTES * values + 4 * len(body) > budget:
        raise Refused(
            413,
            f"{values} JSON values in {len(body)} bytes: decoding them takes more than "
            f"{DECODE_FACTOR} times its size",
        )
    try:
        doc = strict_json.loads(body)  # integers past 64 bits exactly, a key once
    except ValueError as exc:
        raise Refused(400, f"not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise Refused(400, "not an OTLP/JSON request: not a JSON object")
    items = doc.get(key)
    if not isinstance(items, list | None):
        raise Refused(400, f"not an OTLP/JSON request: {key} is not a list")
    brackets = memoryview(bare.translate(_BRACKETS, _NOT_BRACKETS)).cast("b")
    if max(itertools.accumulate(brackets), default=0) > MAX_JSON_DEPTH:
        raise Refused(
            400, f"cannot be written as one JSON line: nested deeper than {MAX_JSON_DEPTH}"
        )
    if items and next(iter(doc)) == key:
        return doc, body.translate(None, b"\r\n").strip(b" \t") + b"\n"
    return doc, strict_json.dumps({key: items or []}) + b"\n"


# -- the server -----------------------------------------------------------------------

#: Seconds a kept-alive connection may wait for its next request.
IDLE_SECONDS = 120
#: Seconds a request may take to arrive whole (its head and body) once its
#: first byte has: then the connection is closed, unanswered.
REQUEST_SECONDS = 120
#: Requests read and decoded at once (the others wait, their bodies unread):
#: what memory a request takes (see DECODE_FACTOR) is taken this many times at most.
BUSY_SLOTS = 2
#: Connections open at once; one more is answered 503 and closed.
MAX_CONNECTIONS = 64


class Receiver(ThreadingHTTPServer):
    """Listens on ``host:port`` (port 0: any free one; ``port`` says which)
    and appends each request taken to ``path``. Binding fails as
    :class:`OSError`; a file that cannot be opened, :class:`CannotOpen`."""

    daemon_threads = True
    #: Connections waiting to be taken: several exporters may start at once.
    request_queue_size = 128

    def __init__(
        self,
        host: str,
        port: int,
        path: Path,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        log: Callable[[str], None] | None = None,
        request_seconds: float = REQUEST_SECONDS,
    ) -> None:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
        family, address = infos[0][0], infos[0][4]
        self.address_family = family
        super().__init__((str(address[0]), int(address[1])), _Handler)
        try:
            self.sink = LineFile(path)
        except OSError as exc:
            self.server_close()
            raise CannotOpen(f"{path}: cannot append to it: {exc.strerror or exc}") from None
        self.max_bytes = max_bytes
        self.request_seconds = request_seconds
        #: On a loopback address, requests must name a loopback host.
        self.loopback_only = is_loopback(host)
        self.log = log
        self.slots = threading.BoundedSemaphore(BUSY_SLOTS)
        self._log_lock = threading.Lock()
        self._open = 0
        self._open_lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def host(self) -> str:
        """The address it listens on, as bound (``0.0.0.0``, ``::``, ``127.0.0.1``...)."""
        return str(self.server_address[0])

    def said(self, text: str) -> None:
        if self.log is not None:
            with self._log_lock:
                self.log(escape_controls(text))

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            full = self._open >= MAX_CONNECTIONS
            self._open += 0 if full else 1
        if not full:
            super().process_request(request, client_address)
            return
        self.said(f"a connection from {client_address[0]} refused: {MAX_CONNECTIONS} open")
        try:
            request.settimeout(1)
            request.sendall(_plain_answer(503, f"{MAX_CONNECTIONS} connections open: try again"))
        except OSError:
            pass
        self.shutdown_request(request)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._open_lock:
                self._open -= 1

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that failed (the client went away): said, no traceback."""
        failure = sys.exc_info()[1]
        self.said(f"a connection from {client_address[0]} failed: {failure!r}")

    def server_close(self) -> None:
        super().server_close()
        sink: LineFile | None = getattr(self, "sink", None)
        if sink is not None:
            sink.close()


def _plain_answer(status: int, message: str) -> bytes:
    """A whole answer that closes the connection, for when no handler runs."""
    body = orjson.dumps({"code": _GRPC.get(status, 2), "message": message})
    return (
        f"HTTP/1.1 {status} {STATUSES[status]}\r\nContent-Type: {JSON}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode("ascii") + body


class _Handler(BaseHTTPRequestHandler):
    """One connection: its requests one after the other (keep-alive), each
    read by :mod:`~replay_tui.cli.receive.body` (not ``http.server``'s own
    parsing, whose answers to a bad request are not OTLP's)."""

    server: Receiver
    protocol_version = "HTTP/1.1"
    server_version = "replay-tui-receive"
    timeout = IDLE_SECONDS

    def handle_one_request(self) -> None:
        self.close_connection = True
        self.command, self.path, self.request_version = "", "", "HTTP/1.1"
        self.headers = http.client.HTTPMessage()
        self._kind = ""
        self._slow = False
        self._read = False
        self._cutting = threading.Lock()
        try:
            if not self.rfile.peek(1):  # type: ignore[attr-defined]
                return  # the client closed the connection
        except OSError:
            return  # idle too long
        self._cut = threading.Timer(self.server.request_seconds, self._too_slow)
        self._cut.daemon = True
        self._cut.start()
        try:
            self._request()
        except Refused as refused:
            self._refuse(refused)
        except OSError as exc:
            self.close_connection = True
            why = f"not whole within {self.server.request_seconds:g} s" if self._slow else repr(exc)
            self.server.said(f"{self.command or 'a request'} {self.path}: closed: {why}")
        except Exception as exc:  # a failure of this server: said, answered, not a traceback
            self._refuse(Refused(500, f"the server failed: {exc!r}", drained=False))
        finally:
            self._cut.cancel()

    def _too_slow(self) -> None:
        with self._cutting:
            if self._read:
                return  # read whole just in time: answered
            self._slow = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _all_read(self) -> None:
        """The request is read whole: from here on, its time is this server's."""
        with self._cutting:
            self._read = True
            if self._slow:  # cut as its last byte came: not taken, so not written
                raise OSError("cut")
        self._cut.cancel()

    def _request(self) -> None:
        found = request_line(self.rfile)
        if found is None:
            return
        self.command, self.path, version = found
        self.headers = http.client.parse_headers(io.BytesIO(header_block(self.rfile)))
        words = self.headers.get("Connection", "").lower()
        self.close_connection = "close" in words or (version < (1, 1) and "keep-alive" not in words)
        if "Content-Type" in self.headers:
            self._kind = self.headers.get_content_type()
        self._check_host()
        path = self.path.split("?", 1)[0]
        if self.command != "POST":
            status = 405 if path in PATHS else 404
            words = (
                f"OTLP/HTTP takes POST, not {self.command}"
                if status == 405
                else "not an OTLP/HTTP path"
            )
            raise Refused(status, f"{path}: {words}", drained=self._drained())
        if path not in PATHS:
            raise Refused(
                404,
                f"{path}: not an OTLP/HTTP path (/v1/traces, /v1/logs)",
                drained=self._drained(),
            )
        if self._kind != JSON and self._kind not in PROTOBUF_TYPES:
            raise Refused(
                415,
                f"Content-Type {self._kind or 'none'}: {PROTOBUF} or {JSON}",
                drained=self._drained(),
            )
        if not self.server.slots.acquire(timeout=self.server.request_seconds):
            raise Refused(503, "busy with other requests: try again", drained=False)
        try:
            self._post(path, version)
        finally:
            self.server.slots.release()

    def _post(self, path: str, version: tuple[int, int]) -> None:
        if version >= (1, 1) and self.headers.get("Expect", "").lower() == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        limit = self.server.max_bytes
        body = read_body(self.rfile, self.headers, limit)
        self._all_read()
        encoding = self.headers.get("Content-Encoding", "").strip().lower()
        line, count = decode(path, self._kind, decompress(body, encoding, limit))
        try:
            self.server.sink.append(line)
        except OSError as exc:
            raise Refused(503, f"cannot append to the file: {exc.strerror or exc}") from None
        protobuf = self._kind in PROTOBUF_TYPES
        what = plural(count, "log record" if path == "/v1/logs" else "span")
        how = ("protobuf" if protobuf else "JSON") + (f", {encoding}" if encoding else "")
        self.server.said(f"POST {path} 200: {what} ({len(body)} bytes, {how})")
        self._answer(200, b"" if protobuf else b"{}", PROTOBUF if protobuf else JSON)

    def _drained(self) -> bool:
        """Whether the body of a request refused before it was read could be
        read (and dropped), so the connection can take the next request."""
        if "Content-Length" not in self.headers and "Transfer-Encoding" not in self.headers:
            return True  # no body
        if self.headers.get("Expect", "").lower() == "100-continue":
            return False  # the body waits for a 100 Continue it will not get
        try:
            read_body(self.rfile, self.headers, DRAIN_BYTES)
        except Refused:
            return False
        return True

    def _check_host(self) -> None:
        """The Host header, parsed: a name (or address) and maybe a port; on a
        loopback address, a loopback name (a DNS name may be rebound to it)."""
        named = self.headers.get_all("Host") or []
        if len(named) > 1:
            raise Refused(400, "more than one Host header", drained=False)
        if not named:
            return
        name = host_name(named[0])
        if name is None:
            raise Refused(400, f"Host {named[0]!r}: not a host and port", drained=False)
        if self.server.loopback_only and not is_loopback(name):
            raise Refused(
                403, f"this server answers 127.0.0.1 and localhost, not {named[0]}", drained=False
            )

    def _refuse(self, refused: Refused) -> None:
        code = _GRPC.get(refused.status, 2)
        if self._kind in PROTOBUF_TYPES:
            body, kind = encode_status(code, refused.message), PROTOBUF
        else:
            body, kind = orjson.dumps({"code": code, "message": refused.message}), JSON
        if not refused.drained:
            self.close_connection = True
        who = f"{self.command} {self.path}" if self.command else "a request"
        self.server.said(f"{who} {refused.status}: {refused.message}")
        extra = {"Allow": "POST"} if refused.status == 405 else {}
        try:
            self._answer(refused.status, body, kind, extra)
        except OSError:
            self.close_connection = True

    def _answer(
        self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response_only(status, STATUSES[status])
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Nothing: a request is said (with --verbose) by :meth:`Receiver.said`."""


#: A Host header: a bracketed IPv6 address or a name (RFC 3986's reg-name),
#: then maybe a port.
_HOST = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]*)(?::[0-9]{0,5})?")


def host_name(value: str) -> str | None:
    """The host a ``Host`` header names (an IPv6 address without its
    brackets); None if it is not a host and maybe a port."""
    found = _HOST.fullmatch(value.strip())
    if found is None:
        return None
    return found.group(1).removeprefix("[").removesuffix("]")
