"""``replay-tui receive``'s reading of a request: its head (the request line
and headers, each bounded), its body (``Content-Length`` or chunked, at most
``--max-bytes``) and the body before ``Content-Encoding`` (gzip, deflate,
inflated a piece at a time and counted as it grows, never inflated whole
and measured after).

Every way a request can be wrong is a :class:`Refused`: the HTTP status it
is answered with (one of :data:`STATUSES`, the codes the guide lists) and
why, in words.
"""

from __future__ import annotations

import io
import re
import zlib
from email.message import Message

#: Every status ``receive`` answers with, and its reason phrase.
STATUSES = {
    100: "Continue",
    200: "OK",
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    413: "Content Too Large",
    414: "URI Too Long",
    415: "Unsupported Media Type",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    501: "Not Implemented",
    503: "Service Unavailable",
    505: "HTTP Version Not Supported",
}
#: The longest request line taken (method, path, version).
MAX_REQUEST_LINE = 8 << 10
#: The most header bytes (and lines) a request may have, trailers of a chunked body too.
MAX_HEADER_BYTES = 32 << 10
MAX_HEADER_LINES = 100
#: A refused body this long or shorter is read and dropped, so the client
#: gets the answer rather than a reset connection; a longer one is not.
DRAIN_BYTES = 256 << 20

_TOKEN = rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_REQUEST_LINE = re.compile(rb"(" + _TOKEN + rb") ([^\s]+) HTTP/([0-9])\.([0-9])\r?\n")
_HEADER_LINE = re.compile(_TOKEN + rb":[^\r\n]*\r?\n")
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,15})[ \t]*(?:;[^\r\n]*)?\r?\n")
_DIGITS = re.compile(r"[0-9]{1,18}")


class Refused(Exception):
    """A request not taken: the HTTP status and why, in words."""

    def __init__(self, status: int, message: str, *, drained: bool = True) -> None:
        super().__init__(message)
        assert status in STATUSES, status
        self.status = status
        self.message = message
        #: Whether the body was read: if not, the connection cannot take another request.
        self.drained = drained


# -- the head -----------------------------------------------------------------------


def request_line(rfile: io.BufferedIOBase) -> tuple[str, str, tuple[int, int]] | None:
    """The method, target and HTTP version of the next request; None at the
    end of the connection."""
    line = rfile.readline(MAX_REQUEST_LINE + 1)
    while line in (b"\r\n", b"\n"):  # an empty line before a request is skipped (RFC 9112)
        line = rfile.readline(MAX_REQUEST_LINE + 1)
    if not line:
        return None
    if len(line) > MAX_REQUEST_LINE:
        raise Refused(414, f"a request line longer than {MAX_REQUEST_LINE} bytes", drained=False)
    found = _REQUEST_LINE.fullmatch(line)
    if found is None:
        if re.fullmatch(rb"\S+ \S+ HTTP/[0-9.]+\r?\n", line):
            sent = line.rsplit(b"/", 1)[1].strip().decode("ascii")
            raise Refused(505, f"HTTP/{sent}: this server speaks HTTP/1.1", drained=False)
        raise Refused(400, "not an HTTP/1.1 request line", drained=False)
    method, target, major, minor = found.groups()
    version = (int(major), int(minor))
    if version not in ((1, 0), (1, 1)):
        raise Refused(
            505,
            f"HTTP/{major.decode()}.{minor.decode()}: this server speaks HTTP/1.1",
            drained=False,
        )
    return method.decode("ascii"), target.decode("latin-1"), version


def header_block(rfile: io.BufferedIOBase, *, status: int = 431) -> bytes:
    """The header lines up to the empty one (that too), each checked,
    at most :data:`MAX_HEADER_BYTES` and :data:`MAX_HEADER_LINES`."""
    block = bytearray()
    for _ in range(MAX_HEADER_LINES + 1):
        line = rfile.readline(MAX_HEADER_BYTES + 1 - len(block))
        if line in (b"\r\n", b"\n"):
            return bytes(block + line)
        if not line:
            raise Refused(400, "the connection ended inside the headers", drained=False)
        block += line
        if len(block) > MAX_HEADER_BYTES:
            raise Refused(status, f"headers over {MAX_HEADER_BYTES} bytes", drained=False)
        if _HEADER_LINE.fullmatch(line) is None:
            raise Refused(400, "a header line that is not NAME: value", drained=False)
    raise Refused(status, f"more than {MAX_HEADER_LINES} header lines", drained=False)


# -- the body -----------------------------------------------------------------------


def read_body(rfile: io.BufferedIOBase, headers: Message, limit: int) -> bytes:
    """The body as sent (``Content-Length`` or chunked), at most ``limit`` bytes."""
    codings = headers.get_all("Transfer-Encoding") or []
    lengths = headers.get_all("Content-Length") or []
    if len(lengths) > 1 or len(codings) > 1:
        raise Refused(400, "more than one Content-Length or Transfer-Encoding", drained=False)
    coding = str(codings[0]) if codings else ""
    text = str(lengths[0]) if lengths else ""
    if coding:
        if coding.strip().lower() != "chunked":
            raise Refused(501, f"Transfer-Encoding {coding}: only chunked", drained=False)
        if text:
            raise Refused(400, "both Content-Length and Transfer-Encoding", drained=False)
        return _read_chunked(rfile, limit)
    if not text:
        raise Refused(411, "a body needs a Content-Length (or chunked transfer)", drained=False)
    if _DIGITS.fullmatch(text.strip()) is None:
        raise Refused(400, f"Content-Length {text!r} is not a length", drained=False)
    length = int(text)
    if length > limit:
        drained = length <= DRAIN_BYTES and _drain(rfile, length)
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
    """A chunked body: each chunk's size (hex digits, nothing else) counted
    against ``limit`` before the chunk is read."""
    body = bytearray()
    while True:
        found = _CHUNK_SIZE.fullmatch(rfile.readline(258))
        if found is None:
            raise Refused(400, "a bad chunk size (hex digits, then CRLF)", drained=False)
        size = int(found.group(1), 16)
        if size == 0:
            header_block(rfile, status=400)  # trailers, dropped
            return bytes(body)
        if len(body) + size > limit:
            raise Refused(413, f"chunks over the bound of {limit} bytes", drained=False)
        chunk = rfile.read(size)
        if len(chunk) < size:
            raise Refused(400, "the body ended inside a chunk", drained=False)
        if rfile.readline(3) not in (b"\r\n", b"\n"):
            raise Refused(400, "a chunk longer than its size", drained=False)
        body += chunk


# -- before Content-Encoding ----------------------------------------------------------

#: The first piece of a gzip member fed to zlib; each next piece is twice
#: the last, so the bytes left over after a member (copied by zlib) are never
#: more than twice what the member took: linear, however many members.
_FIRST_PIECE = 64


def decompress(body: bytes, encoding: str, limit: int) -> bytes:
    """``body`` as sent before ``Content-Encoding`` (gzip, deflate or none),
    at most ``limit`` bytes once decompressed: counted as it is inflated."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise Refused(415, f"Content-Encoding {encoding}: gzip, deflate or none")
    gzip = encoding != "deflate"
    out = bytearray()
    view = memoryview(body)
    pos = 0
    while True:  # gzip: one member after another
        pos = _member(view, pos, out, limit, gzip, encoding)
        if not gzip or pos >= len(body):
            return bytes(out)


def _member(
    view: memoryview, pos: int, out: bytearray, limit: int, gzip: bool, encoding: str
) -> int:
    """Inflates the member at ``view[pos:]`` into ``out``; where the next begins."""
    unpack = zlib.decompressobj(31 if gzip else 15)
    piece = _FIRST_PIECE
    while True:
        data: bytes | memoryview = view[pos : pos + piece]
        pos += len(data)
        while data:
            try:
                out += unpack.decompress(data, limit + 1 - len(out))
            except zlib.error as exc:
                raise Refused(400, f"not {encoding} data: {exc}") from None
            if len(out) > limit:
                raise Refused(413, f"over the bound of {limit} bytes once decompressed")
            data = unpack.unconsumed_tail
            if unpack.eof:
                return pos - len(unpack.unused_data)
        if pos >= len(view):
            raise Refused(400, f"the {encoding} data ends early")
        piece *= 2
