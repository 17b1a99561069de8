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
a protobuf request, else JSON): 400 a body that is not the request, 413 one
over the size bound (compressed or not), 415 another content type or
encoding, 404 another path, 405 another method, 411 a body of no stated
length, 403 (on a loopback address) a request naming a host that is not
loopback, as a page on a DNS name rebound to 127.0.0.1 would. None of these
is one an exporter retries. Nothing but the trace file is written.
"""

from __future__ import annotations

import io
import os
import socket
import sys
import threading
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson

from replay_tui.core.net import is_loopback
from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import plural
from replay_tui.formats.otel.load import dicts_of
from replay_tui.formats.otel.proto import ProtoError, decode_logs, decode_traces, encode_status

#: The OTLP/HTTP paths: what each request holds, how protobuf is read, what is counted.
PATHS: dict[str, tuple[str, Callable[[bytes], dict[str, Any]], str, str]] = {
    "/v1/traces": ("resourceSpans", decode_traces, "scopeSpans", "spans"),
    "/v1/logs": ("resourceLogs", decode_logs, "scopeLogs", "logRecords"),
}
JSON = "application/json"
PROTOBUF = "application/x-protobuf"
#: Content types taken as protobuf (the spec's, and the name some clients use).
PROTOBUF_TYPES = (PROTOBUF, "application/protobuf")
#: The default bound on a request, compressed and not: 32 MiB.
DEFAULT_MAX_BYTES = 32 << 20
#: A refused body this long or shorter is read and dropped, so the client
#: gets the answer rather than a reset connection; a longer one is not.
_DRAIN_BYTES = 256 << 20
#: gRPC codes for the Status of a refusal, by HTTP status.
_GRPC = {400: 3, 403: 7, 404: 12, 405: 12, 411: 3, 413: 8, 415: 3, 500: 13, 503: 14}


class Refused(Exception):
    """A request not taken: the HTTP status and why, in words."""

    def __init__(self, status: int, message: str, *, drained: bool = True) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        #: Whether the body was read: if not, the connection cannot take another request.
        self.drained = drained


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


# -- a request's body ---------------------------------------------------------------


def read_body(rfile: io.BufferedIOBase, headers: Any, limit: int) -> bytes:
    """The body as sent (``Content-Length`` or chunked), at most ``limit`` bytes."""
    if "chunked" in headers.get("Transfer-Encoding", "").lower():
        return _read_chunked(rfile, limit)
    text = headers.get("Content-Length")
    if text is None:
        raise Refused(411, "a body needs a Content-Length (or chunked transfer)", drained=False)
    try:
        length = int(text)
    except ValueError:
        length = -1
    if length < 0:
        raise Refused(400, f"Content-Length {text!r} is not a length", drained=False)
    if length > limit:
        drained = length <= _DRAIN_BYTES and _drain(rfile, length)
        raise Refused(413, f"{length} bytes: over the bound of {limit}", drained=drained)
    body = rfile.read(length)
    if len(body) < length:
        raise Refused(400, "the body ended before its Content-Length", drained=False)
    return body


def _drain(rfile: io.BufferedIOBase, length: int) -> bool:
    while length > 0:
        chunk = rfile.read(min(length, 1 << 16))
        if not chunk:
            return False
        length -= len(chunk)
    return True


def _read_chunked(rfile: io.BufferedIOBase, limit: int) -> bytes:
    body = bytearray()
    while True:
        line = rfile.readline(1024)
        try:
            size = int(line.split(b";")[0].strip(), 16)
        except ValueError:
            raise Refused(400, "a bad chunk size", drained=False) from None
        if size == 0:
            while rfile.readline(1024).strip():  # trailers
                pass
            return bytes(body)
        if len(body) + size > limit:
            raise Refused(413, f"over the bound of {limit} bytes", drained=False)
        chunk = rfile.read(size)
        rfile.readline(1024)
        if len(chunk) < size:
            raise Refused(400, "the body ended inside a chunk", drained=False)
        body += chunk


def decompress(body: bytes, encoding: str, limit: int) -> bytes:
    """``body`` as sent before ``Content-Encoding`` (gzip, deflate or none),
    at most ``limit`` bytes once decompressed."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise Refused(415, f"Content-Encoding {encoding}: gzip, deflate or none")
    out = bytearray()
    rest = body
    while rest:  # gzip: one member after another
        unpack = zlib.decompressobj(31 if encoding != "deflate" else 15)
        try:
            out += unpack.decompress(rest, limit + 1 - len(out))
        except zlib.error as exc:
            raise Refused(400, f"not {encoding} data: {exc}") from None
        if len(out) > limit or unpack.unconsumed_tail:
            raise Refused(413, f"over the bound of {limit} bytes once decompressed")
        if not unpack.eof:
            raise Refused(400, f"the {encoding} data ends early")
        rest = unpack.unused_data if encoding != "deflate" else b""
    return bytes(out)


def decode(path: str, content_type: str, body: bytes) -> tuple[bytes, int]:
    """The line ``body`` becomes, and how many spans (or log records) it holds."""
    key, from_protobuf, scoped, records = PATHS[path]
    if content_type in PROTOBUF_TYPES:
        try:
            request = from_protobuf(body)
        except ProtoError as exc:
            raise Refused(400, f"not an OTLP/protobuf request: {exc}") from None
    else:
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise Refused(400, f"not JSON: {exc}") from None
        if not isinstance(doc, dict):
            raise Refused(400, "not an OTLP/JSON request: not a JSON object")
        items = doc.get(key)
        if not isinstance(items, list | None):
            raise Refused(400, f"not an OTLP/JSON request: {key} is not a list")
        request = {key: items or []}
    try:
        line = orjson.dumps(request) + b"\n"
    except orjson.JSONEncodeError as exc:
        raise Refused(400, f"cannot be written as one JSON line: {exc}") from None
    count = 0
    for resourced in request[key]:
        for scope in dicts_of(resourced.get(scoped) if isinstance(resourced, dict) else None):
            found = scope.get(records)
            count += len(found) if isinstance(found, list) else 0
    return line, count


# -- the server -----------------------------------------------------------------------


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
        #: On a loopback address, requests must name a loopback host.
        self.loopback_only = is_loopback(host)
        self.log = log
        self._log_lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def said(self, text: str) -> None:
        if self.log is not None:
            with self._log_lock:
                self.log(escape_controls(text))

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that failed (the client went away): said, no traceback."""
        failure = sys.exc_info()[1]
        self.said(f"a connection from {client_address[0]} failed: {failure!r}")

    def server_close(self) -> None:
        super().server_close()
        sink: LineFile | None = getattr(self, "sink", None)
        if sink is not None:
            sink.close()


class _Handler(BaseHTTPRequestHandler):
    server: Receiver
    protocol_version = "HTTP/1.1"
    server_version = "replay-tui-receive"
    #: Seconds a connection may wait for its next bytes (an idle keep-alive closes).
    timeout = 120

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        content_type = self.headers.get_content_type()
        try:
            self._check_host()
            if path not in PATHS:
                raise Refused(404, f"{path}: not an OTLP/HTTP path (/v1/traces, /v1/logs)")
            if content_type != JSON and content_type not in PROTOBUF_TYPES:
                raise Refused(415, f"Content-Type {content_type}: {PROTOBUF} or {JSON}")
        except Refused as refused:
            refused.drained = self._drained()
            self._refuse(refused, content_type)
            return
        try:
            limit = self.server.max_bytes
            body = read_body(self.rfile, self.headers, limit)
            encoding = self.headers.get("Content-Encoding", "").strip().lower()
            line, count = decode(path, content_type, decompress(body, encoding, limit))
            try:
                self.server.sink.append(line)
            except OSError as exc:
                raise Refused(503, f"cannot append to the file: {exc.strerror or exc}") from None
        except Refused as refused:
            self._refuse(refused, content_type)
            return
        protobuf = content_type in PROTOBUF_TYPES
        what = plural(count, "log record" if path == "/v1/logs" else "span")
        how = ("protobuf" if protobuf else "JSON") + (f", {encoding}" if encoding else "")
        self.server.said(f"POST {path} 200: {what} ({len(body)} bytes, {how})")
        self._answer(200, b"" if protobuf else b"{}", PROTOBUF if protobuf else JSON)

    def _other_method(self) -> None:
        path = self.path.split("?", 1)[0]
        status = 405 if path in PATHS else 404
        words = (
            f"OTLP/HTTP takes POST, not {self.command}"
            if status == 405
            else "not an OTLP/HTTP path"
        )
        refused = Refused(status, f"{path}: {words}", drained=self._drained())
        self._refuse(refused, "")

    do_GET = do_HEAD = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _other_method

    def _drained(self) -> bool:
        """Whether the body of a request refused before it was read could be
        read (and dropped), so the connection can take the next request."""
        if "Content-Length" not in self.headers and "Transfer-Encoding" not in self.headers:
            return True  # no body
        try:
            read_body(self.rfile, self.headers, _DRAIN_BYTES)
        except Refused:
            return False
        return True

    def _check_host(self) -> None:
        host = self.headers.get("Host")
        if not self.server.loopback_only or host is None:
            return
        name = host[1 : host.find("]")] if host.startswith("[") else host.split(":")[0]
        if not is_loopback(name):
            raise Refused(403, f"this server answers 127.0.0.1 and localhost, not {host}")

    def _refuse(self, refused: Refused, content_type: str) -> None:
        code = _GRPC.get(refused.status, 2)
        if content_type in PROTOBUF_TYPES:
            body, kind = encode_status(code, refused.message), PROTOBUF
        else:
            body, kind = orjson.dumps({"code": code, "message": refused.message}), JSON
        if not refused.drained:
            self.close_connection = True
        self.server.said(f"{self.command} {self.path} {refused.status}: {refused.message}")
        self._answer(refused.status, body, kind)

    def _answer(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response_only(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Nothing: a request is said (with --verbose) by :meth:`Receiver.said`."""
