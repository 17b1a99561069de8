"""An OTLP/JSON (or Tempo) trace document of any size, read a span at a time.

The file is mapped, not read: :mod:`~replay_tui.formats.otel.scan` finds the
byte range of each span and log record (inside ``resourceSpans`` /
``batches`` -> ``scopeSpans`` -> ``spans``, and ``resourceLogs`` ->
``scopeLogs`` -> ``logRecords``), each is read with orjson on its own, and
only what ordering needs is kept: per record its time, kind, depth, place
in the file and the range of its span or log. When the events are written
(in the order of :mod:`~replay_tui.formats.otel.source`), each record's
bytes are read again. Memory grows with the number of records, not with
their content: the toolong principle, offsets indexed, content re-read.

The records, their order and their envelopes are exactly those of reading
the document whole (:func:`~replay_tui.formats.otel.source.load_trace`,
still used for Jaeger's shape, whose spans are read per trace).
"""

from __future__ import annotations

import hashlib
import mmap
import os
import stat
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.core.errors import CannotRun
from replay_tui.core.supervision import expect_silence
from replay_tui.formats.otel.load import (
    MAX_TIME_NS,
    OTLP,
    TEMPO,
    Log,
    Span,
    key_values,
    log_of,
    scope_name,
    span_of,
)
from replay_tui.formats.otel.scan import Malformed, Skeleton, items, skip_ws, value_end
from replay_tui.formats.otel.source import RANK, Envelopes, Record, depths, load_trace
from replay_tui.formats.whole_file import MAX_DOCUMENT_BYTES

_OBJECT = b"{"[0]
_KINDS = {rank: kind for kind, rank in RANK.items()}
_SCOPE_SPANS = ("scopeSpans", "instrumentationLibrarySpans")  # the newer name first
_SCOPE_LOGS = ("scopeLogs", "instrumentationLibraryLogs")
_CACHED_SPANS = 1024  # spans kept read while their records are written


@dataclass(slots=True)
class _Head:
    """What ordering needs of a span (see ``source.depths``)."""

    trace_id: str
    span_id: str
    parent_id: str
    start_ns: int
    copy: int

    @property
    def key(self) -> tuple[str, str]:
        return self.trace_id, self.span_id


class Document:
    """A trace document indexed (see the module); ``envelope_lines`` once."""

    def __init__(self, path: Path, buf: mmap.mmap, fd: int, sha256: str) -> None:
        self.path = path
        self.sha256 = sha256
        self.run_id = path.stem or "trace"
        self.shape = OTLP
        self._buf = buf  # the first reading's
        self._fd = fd  # the second's: read, not mapped (a file cut short is an error, not a crash)
        self._contexts: list[tuple[dict[str, Any], str]] = []  # (resource, scope)
        # per span, then per log record (owner index): its range and context
        self._start, self._end, self._context = array("q"), array("q"), array("q")
        self._spans = 0
        self._heads: list[_Head] = []
        self._events: list[tuple[int, int, int]] = []  # (owner, index, time)
        self._span_ends: list[int] = []  # -1: refused
        self._ends: dict[tuple[str, str], int] = {}
        self._log_times: list[int] = []
        self.records: list[tuple[int, int, int, int, int, int]] = []

    def __len__(self) -> int:
        return len(self.records)

    # -- the first reading: ranges and order keys ---------------------------

    def _read(self, start: int, end: int) -> Any:
        return strict_json.loads_written(self._buf[start:end])

    def _owner(self, start: int, end: int, context: int) -> int:
        self._start.append(start)
        self._end.append(end)
        self._context.append(context)
        return len(self._start) - 1

    def _objects(self, array_at: int | None) -> Iterator[tuple[int, int]]:
        """The object items of the array at ``array_at`` (others read, to be
        judged JSON, and passed over, as the whole reading does)."""
        if array_at is None:
            return
        for start, end in items(self._buf, array_at):
            if self._buf[start] == _OBJECT:
                yield start, end
            else:
                self._read(start, end)

    def resource_spans(self, array_at: int | None) -> None:
        for rs_start, rs_end in self._objects(array_at):
            rs = Skeleton(
                self._buf, rs_start, rs_end, ("scopeSpans", "instrumentationLibrarySpans")
            )
            resource = rs.value.get("resource")
            attrs = key_values(resource.get("attributes")) if isinstance(resource, dict) else {}
            for ss_start, ss_end in self._objects(rs.chosen(*_SCOPE_SPANS)):
                ss = Skeleton(self._buf, ss_start, ss_end, ("spans",))
                self._contexts.append((attrs, scope_name(ss.value)))
                context = len(self._contexts) - 1
                for start, end in self._objects(ss.arrays.get("spans")):
                    span = span_of(self._read(start, end), attrs, "", len(self._start) + 1)
                    self._add_span(span, self._owner(start, end, context))
        self._spans = len(self._start)

    def _add_span(self, span: Span, owner: int) -> None:
        self._heads.append(
            _Head(span.trace_id, span.span_id, span.parent_id, span.start_ns, span.copy)
        )
        if span.refused:
            self._span_ends.append(-1)
            return
        end = max(span.end_ns, span.start_ns)
        self._ends.setdefault(span.key, end)
        self._span_ends.append(end)
        for index, event in enumerate(span.events, start=1):
            self._events.append((owner, index, event.time_ns or end))

    def resource_logs(self, array_at: int | None) -> None:
        for rl_start, rl_end in self._objects(array_at):
            rl = Skeleton(self._buf, rl_start, rl_end, _SCOPE_LOGS)
            resource = rl.value.get("resource")
            attrs = key_values(resource.get("attributes")) if isinstance(resource, dict) else {}
            for sl_start, sl_end in self._objects(rl.chosen(*_SCOPE_LOGS)):
                sl = Skeleton(self._buf, sl_start, sl_end, ("logRecords",))
                self._contexts.append((attrs, scope_name(sl.value)))
                context = len(self._contexts) - 1
                for start, end in self._objects(sl.arrays.get("logRecords")):
                    log = log_of(self._read(start, end), attrs, "", len(self._start) + 1)
                    self._owner(start, end, context)
                    at = log.time_ns or self._ends.get((log.trace_id, log.span_id), 0)
                    self._log_times.append(min(max(at, 0), MAX_TIME_NS) if log.refused else at)

    def order(self) -> None:
        """Every record's key, sorted (the order of ``source.ordered``)."""
        depth = depths(self._heads)  # type: ignore[arg-type]
        records = self.records
        for owner, head in enumerate(self._heads):
            d = depth.get(head.key, 0)
            end = self._span_ends[owner]
            copy = owner + 1
            if end < 0:  # refused: one record, at its start's place
                records.append((min(max(head.start_ns, 0), MAX_TIME_NS), 0, d, copy, 0, owner))
                continue
            records.append((head.start_ns, 0, d, copy, 0, owner))
            records.append((end, 3, -d, copy, 0, owner))
        for owner, index, time in self._events:
            records.append((time, 1, depth.get(self._heads[owner].key, 0), owner + 1, index, owner))
        for offset, time in enumerate(self._log_times):
            owner = self._spans + offset
            records.append((time, 2, 0, owner + 1, 0, owner))
        self._heads, self._events, self._span_ends, self._log_times = [], [], [], []
        self._ends = {}
        records.sort()
        self._buf.close()

    # -- the second reading: each record's bytes again -------------------------

    def envelope_lines(self, batch: int = 2048) -> Iterator[bytes]:
        """Envelope lines, in order, ``batch`` records at a time."""
        envelopes = Envelopes(self.run_id)
        spans: dict[int, Span] = {}
        chunk: list[Record] = []
        for time, rank, depth, copy, sub, owner in self.records:
            kind = _KINDS[rank]
            if owner < self._spans:
                span = spans.get(owner)
                if span is None:
                    span = spans[owner] = self._span(owner)
                    if len(spans) > _CACHED_SPANS:
                        del spans[next(iter(spans))]
                chunk.append(Record(time, kind, copy, sub, abs(depth), span=span))
            else:
                chunk.append(Record(time, kind, copy, sub, 0, log=self._log(owner)))
            if len(chunk) >= batch:
                yield from envelopes.lines(chunk, batch)
                chunk = []
        if chunk:
            yield from envelopes.lines(chunk, batch)
        self.records = []
        self.close()

    def close(self) -> None:
        self._buf.close()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _again(self, owner: int) -> Any:
        """The record's bytes read again; :class:`CannotRun` if the file
        changed since it was indexed."""
        start, end = self._start[owner], self._end[owner]
        try:
            raw = os.pread(self._fd, end - start, start)
            if len(raw) == end - start:
                return strict_json.loads_written(raw)
        except (OSError, orjson.JSONDecodeError):
            pass
        raise CannotRun(f"{self.path}: changed while it was read (near byte {start})")

    def _span(self, owner: int) -> Span:
        attrs, scope = self._contexts[self._context[owner]]
        raw = self._again(owner)
        return span_of(raw, attrs, scope, owner + 1)

    def _log(self, owner: int) -> Log:
        attrs, scope = self._contexts[self._context[owner]]
        raw = self._again(owner)
        return log_of(raw, attrs, scope, owner + 1)


def _mapped(path: Path) -> tuple[mmap.mmap, int] | None:
    """``path`` mapped, and a descriptor of it to read it again (None:
    empty); :class:`CannotRun` as ``read_whole`` says."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise CannotRun(f"{path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CannotRun(f"{path}: not a regular file")
        if st.st_size > MAX_DOCUMENT_BYTES:
            raise CannotRun(
                f"{path}: over {MAX_DOCUMENT_BYTES >> 30} GiB, more than this reader takes"
            )
        if st.st_size == 0:
            return None
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ), os.dup(fd)
    except OSError as exc:
        raise CannotRun(f"{path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def load_document(path: Path) -> Document | Any:
    """``path`` indexed as a :class:`Document` if it is an OTLP/JSON or
    Tempo document, else read whole (:func:`~replay_tui.formats.otel.source.
    load_trace`: Jaeger's shape, and every refusal's words); raises
    :class:`CannotRun` with one line."""
    mapped = _mapped(path)
    if mapped is None:
        return load_trace(path)
    buf, fd = mapped
    body = 3 if buf[:3] == b"\xef\xbb\xbf" else 0
    root_at = skip_ws(buf, body)
    if root_at >= len(buf) or buf[root_at] != _OBJECT:
        buf.close()
        os.close(fd)
        return load_trace(path)
    expect_silence(5 + 6 * len(buf) / 100e6)
    try:
        document = _indexed(path, buf, fd, root_at)
    except (Malformed, orjson.JSONDecodeError) as exc:
        buf.close()
        os.close(fd)
        raise CannotRun(
            f"{path}: not one JSON document ({exc}); the Collector's JSON lines "
            "start with an export request on the first line"
        ) from None
    if document is None:
        buf.close()
        os.close(fd)
        return load_trace(path)
    if not len(document):
        document.close()
        raise CannotRun(f"{path}: an OpenTelemetry trace with no spans and no log records")
    return document


def _indexed(path: Path, buf: mmap.mmap, fd: int, root_at: int) -> Document | None:
    """The document indexed, or None if it is not OTLP's or Tempo's shape."""
    root_end = value_end(buf, root_at)
    if skip_ws(buf, root_end) != len(buf):
        raise Malformed("more after the document", skip_ws(buf, root_end))
    root = Skeleton(buf, root_at, root_end, ("resourceSpans", "resourceLogs", "batches"))
    shape = None
    if "resourceSpans" in root.value or "resourceLogs" in root.value:
        shape = OTLP
    elif isinstance(root.value.get("batches"), list):
        shape = TEMPO
    if shape is None:
        return None
    document = Document(path, buf, fd, hashlib.sha256(_view(buf)).hexdigest())
    document.shape = shape
    if shape == OTLP:
        document.resource_spans(root.arrays.get("resourceSpans"))
        document.resource_logs(root.arrays.get("resourceLogs"))
    else:
        document.resource_spans(root.arrays.get("batches"))
    document.order()
    return document


def _view(buf: mmap.mmap) -> memoryview:
    return memoryview(buf)
