"""Trace files as ledgers: a whole document, or the Collector's JSON lines, growing.

The OpenTelemetry Collector's file exporter (and ``replay-tui receive``)
writes one OTLP/JSON export request a line, appended as spans end. Such a
file grows, so it can be followed: each complete line becomes its records
(see :mod:`replay_tui.formats.otel.source`) ordered among themselves, after every
record of the lines before it. So the order is the order of export, then
time within one export request (with the module's tie-breaks, depth being
that of the spans of that request). It is the same whether the file is read
complete or followed as it grows: a seq, once given, never moves. (A span
is exported when it ends, so a parent usually comes after its children; a
child's ``parent_seq`` names the parent's start only when it came first.)

A line that is not JSON, or not an export request, becomes an event that
fails strict replay at its seq, in the words of the line it came from. An
unterminated last line is a line still being written while following; once
the file is judged complete it is read if it parses and fails as
``truncated_line`` if not.

A document of any other shape (pretty-printed OTLP/JSON, Jaeger, Tempo) is
read once, complete (:class:`TraceLedger`). Both name the file, the line
(for JSON lines) and the span in their artifacts.
"""

from __future__ import annotations

import mmap
import re
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.formats.envelope import Event, LineError, parse_line
from replay_tui.formats.ledger import ConvertedLedger, Ledger
from replay_tui.formats.otel.load import OTLP, Loader, shape_of
from replay_tui.formats.otel.source import UNREADABLE, Envelopes, ordered
from replay_tui.formats.otel.stream import load_document

_HEAD_BYTES = 1 << 16
#: An export request that starts on the first line, its first key on it too.
_FIRST_LINE = re.compile(rb'\A(?:\xef\xbb\xbf)?[ \t\r]*\{[ \t]*"(?:resourceSpans|resourceLogs)"')


def collector_lines(path: Path) -> bool:
    """Whether ``path`` is (or, empty or not there yet, may become) the
    Collector's JSON lines: an export request whose first key is on the
    first line. A compact one-line document is that too, and reads the same."""
    try:
        with path.open("rb") as f:
            head = f.read(_HEAD_BYTES)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return not head.strip() or bool(_FIRST_LINE.match(head))


def one_line(path: Path) -> bool:
    """Whether ``path`` is one line (a compact document, a newline at its
    end or none): read complete, it is a document, indexed a span at a
    time, not one line read whole."""
    try:
        with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            newline = buf.find(b"\n")
            return newline < 0 or newline == len(buf) - 1
    except (OSError, ValueError):  # not there, empty, not a regular file
        return False


def _span_words(raw: bytes) -> str:
    """ ", span ID" for a converted line of a span (or a log tied to one)."""
    try:
        payload = strict_json.loads_written(raw).get("payload")
    except (orjson.JSONDecodeError, AttributeError):
        return ""
    span = payload.get("span_id") if isinstance(payload, dict) else None
    return f", span {span}" if isinstance(span, str) and span else ""


class TraceLedger(ConvertedLedger):
    """A trace document read once, complete (any shape but JSON lines)."""

    def __init__(self, source: Path, *, cache_size: int = 4096) -> None:
        trace = load_document(source)
        super().__init__(
            source,
            trace.envelope_lines(),
            trace.sha256,
            total=len(trace),
            cache_size=cache_size,
        )
        self.parse = _parse

    def artifact(self, line: int) -> str:
        words = _span_words(self.raw_line(line - 1)) if 0 < line <= len(self) else ""
        return f"{self.path.name}: event {line}{words}"


class TraceLinesLedger(ConvertedLedger):
    """The Collector's JSON lines, converted a line at a time as the file
    grows (see the module). The source is indexed by a :class:`Ledger` of
    its own: its digest, and the proof that lines already read did not
    change, are the source's."""

    def __init__(self, source: Path, *, cache_size: int = 4096) -> None:
        self._source = Ledger(source, may_be_missing=True)
        self._growing = True
        self._loader = Loader()
        self._envelopes = Envelopes(source.stem or "trace")
        #: Per source line: the first seq it gave (the next seq, if none).
        self._firsts = array("Q")
        super().__init__(source, iter(()), "", cache_size=cache_size)
        self._lines = None  # nothing waits to be converted but the source's new lines
        self.parse = _parse

    # -- converting ---------------------------------------------------------
    def scan_chunks(self) -> Iterator[tuple[int, list[bytes]]]:
        yield from Ledger.scan_chunks(self)  # converted, not yet scanned
        for index, raw in self._source.scan():
            if self._append(self._convert(index + 1, raw)):
                yield from Ledger.scan_chunks(self)
        if not self._growing:
            yield from self._last_line()

    def _last_line(self) -> Iterator[tuple[int, list[bytes]]]:
        """The file is complete: an unterminated last line is read if it
        parses; else it is left as the converted file's unterminated last
        line, which strict replay judges ``truncated_line``."""
        tail = self._source.tail()
        if not tail.strip():
            return
        number = len(self._source) + 1
        self._source.accept_tail()
        try:
            doc = strict_json.loads_written(tail)
        except orjson.JSONDecodeError:
            self._firsts.append(self._envelopes.seq + 1)
            self._envelopes.seq += 1
            self._append(tail)  # no newline: the forward pass's own last-line judgement
            return
        self._append(self._convert(number, tail, doc))
        yield from Ledger.scan_chunks(self)

    def _convert(self, number: int, raw: bytes, doc: Any = None) -> bytes:
        """Source line ``number`` as converted lines (see the module)."""
        self._firsts.append(self._envelopes.seq + 1)
        if doc is None:
            if not raw.strip():
                return b""  # nothing is lost: the exporter writes none
            try:
                doc = strict_json.loads_written(raw)
            except orjson.JSONDecodeError as exc:
                return self._unreadable("bad_json", f"line {number} is not JSON ({exc})")
        if shape_of(doc) != OTLP:
            return self._unreadable(
                "bad_envelope",
                f"line {number} is not an OTLP export request (resourceSpans or resourceLogs)",
            )
        loader = self._loader
        loader.otlp(doc)
        del doc
        spans, logs = loader.spans, loader.logs
        loader.spans, loader.logs = [], []
        return b"".join(self._envelopes.lines(ordered(spans, logs)))

    def _unreadable(self, code: str, message: str) -> bytes:
        self._envelopes.seq += 1
        words = f"{self.path.name}: {message}"
        return UNREADABLE + strict_json.dumps({"code": code, "message": words}) + b"\n"

    def _append(self, chunk: bytes) -> bool:
        if not chunk:
            return False
        with self._convert_lock:
            self._write(chunk)
        return True

    def stop_growing(self) -> None:
        self._growing = False

    # -- the source's word --------------------------------------------------
    def file_size(self) -> int:
        """Converted bytes, and an estimate of the rest from the share of
        the source converted (for progress)."""
        size, read = self._source.file_size(), self._source.indexed_end
        if not read or size <= read:
            return self._written
        return self._written * size // read

    def check_unchanged(self) -> None:
        self._source.check_unchanged()

    def verify_prefix(self) -> None:
        self._source.verify_prefix()

    def prefix_changed(self) -> bool:
        return self._source.prefix_changed()

    def sha256(self) -> str:
        return self._source.sha256()

    def artifact(self, line: int) -> str:
        source = bisect_right(self._firsts, line)
        words = _span_words(self.raw_line(line - 1)) if 0 < line <= len(self) else ""
        return f"{self.path.name}: line {source}, event {line}{words}"

    def close(self) -> None:
        self._source.close()
        super().close()


def _parse(raw: bytes, line: int, offset: int) -> Event | LineError:
    """A converted line; one that stands for an unreadable source line is its error."""
    if raw[:1] == UNREADABLE:
        said = strict_json.loads_written(raw[1:])
        return LineError(said["code"], said["message"], line, offset)
    return parse_line(raw, line, offset)
