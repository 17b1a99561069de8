"""An OTLP/JSON (or Tempo) trace document of any size, read a span at a time.

The file is mapped, not read: :mod:`~replay_tui.formats.otel.scan` finds the
byte range of each span and log record (inside ``resourceSpans`` /
``batches`` -> ``scopeSpans`` -> ``spans``, and ``resourceLogs`` ->
``scopeLogs`` -> ``logRecords``), each is read with orjson on its own, and
only what ordering needs is kept, as integers in arrays: per record its
time, kind and owner (the span or log record it is of); per owner the
range of its bytes and the seq its ``parent_seq`` names. When the events
are written (in the order of :mod:`~replay_tui.formats.otel.source`), each
record's bytes are read again (``os.pread``; a span's kept for its next
records, a bounded few). Memory grows by bytes per record, not with
their content: offsets indexed, content re-read. The mapped pages are let
go of behind each walk over the file, so they do not pile up in the
process's resident memory either.

The records, their order and their envelopes are exactly those of reading
the document whole (:func:`~replay_tui.formats.otel.source.load_trace`,
still used for Jaeger's shape, whose spans are read per trace).
"""

from __future__ import annotations

import hashlib
import mmap
import os
import sys
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
    log_head,
    log_of,
    scope_name,
    span_head,
    span_of,
)
from replay_tui.formats.otel.scan import (
    Malformed,
    Skeleton,
    items,
    release,
    skip_ws,
    value_end,
)
from replay_tui.formats.otel.source import (
    RANK,
    Record,
    depths,
    envelope_line,
    load_trace,
    refused_line,
    refused_words,
)
from replay_tui.formats.whole_file import open_document

_OBJECT = b"{"[0]
_KINDS = {rank: kind for kind, rank in RANK.items()}
_SCOPE_SPANS = ("scopeSpans", "instrumentationLibrarySpans")  # the newer name first
_SCOPE_LOGS = ("scopeLogs", "instrumentationLibraryLogs")
_CACHED_SPANS = 1024  # spans kept read while their records are written
_HASHED = 8 << 20  # bytes hashed at a time (the pages let go of behind)

# A record's order key, (time, rank, depth, copy, sub), packed in one int
# whose order is the tuple's: every field is non-negative and within its
# bits (times 0..2**64-1, as OTLP's fixed64 and the clamping of refused
# records keep them; a document of at most 2 GiB holds fewer than 2**30
# records, spans or events of one span; depth is offset by 2**32).
_SUB_BITS, _COPY_BITS, _DEPTH_BITS = 32, 32, 33
_DEPTH_ZERO = 1 << 32


def _pack(time: int, rank: int, depth: int, copy: int, sub: int) -> int:
    key = ((time << 2 | rank) << _DEPTH_BITS) | (depth + _DEPTH_ZERO)
    return (((key << _COPY_BITS) | copy) << _SUB_BITS) | sub


@dataclass(slots=True)
class _Head:
    """What ordering needs of a span (see ``source.depths``), until the
    order is known."""

    trace_id: str
    span_id: str
    parent_id: str
    start_ns: int
    end_ns: int  # its end record's time (never before the start)
    copy: int
    events: list[int]  # its events' times ([] if refused)
    refused: bool

    @property
    def key(self) -> tuple[str, str]:
        return self.trace_id, self.span_id


class Document:
    """A trace document indexed (see the module); ``envelope_lines`` once.

    Once ordered, what is kept is a few integers per record and per span
    or log record: no id, no dict. Per record, in order: its time, its
    kind and event index, its owner (the span or log record it is of). Per
    owner: the range of its bytes, its resource and scope (an index), and
    the seq its ``parent_seq`` comes from (a span start's: its parent's
    first start; a log's: its span's first start; -1: none), and per span
    the seq of its own start (its events' and end's ``parent_seq``).
    """

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
        # until ordered: per span its head; per log record its ids and time
        self._heads: list[_Head] = []
        self._logs: list[tuple[str, str, int]] = []
        self._ends: dict[tuple[str, str], int] = {}
        # once ordered: per record, per owner, per span (see the class)
        self._time, self._what, self._owner = array("Q"), array("Q"), array("q")
        self._anchor, self._own_start = array("q"), array("q")

    def __len__(self) -> int:
        return len(self._time)

    # -- the first reading: ranges and order keys ---------------------------

    def _read(self, start: int, end: int) -> Any:
        return strict_json.loads_written(self._buf[start:end])

    def _owner_at(self, start: int, end: int, context: int) -> None:
        self._start.append(start)
        self._end.append(end)
        self._context.append(context)

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
            rs = Skeleton(self._buf, rs_start, rs_end, _SCOPE_SPANS)
            resource = rs.value.get("resource")
            attrs = key_values(resource.get("attributes")) if isinstance(resource, dict) else {}
            for ss_start, ss_end in self._objects(rs.chosen(*_SCOPE_SPANS)):
                ss = Skeleton(self._buf, ss_start, ss_end, ("spans",))
                self._contexts.append((attrs, scope_name(ss.value)))
                context = len(self._contexts) - 1
                for start, end in self._objects(ss.arrays.get("spans")):
                    self._add_span(span_head(self._read(start, end)))
                    self._owner_at(start, end, context)
        self._spans = len(self._start)

    def _add_span(self, head: tuple[str, str, str, int, int, list[int], bool]) -> None:
        trace_id, span_id, parent_id, start, end, events, refused = head
        trace_id = sys.intern(trace_id)  # one string for all the spans of a trace
        copy = len(self._heads) + 1
        if refused:
            self._heads.append(_Head(trace_id, span_id, parent_id, start, start, copy, [], True))
            return
        end = max(end, start)
        self._ends.setdefault((trace_id, span_id), end)
        self._heads.append(_Head(trace_id, span_id, parent_id, start, end, copy, events, False))

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
                    trace_id, span_id, time_ns, refused = log_head(self._read(start, end))
                    self._owner_at(start, end, context)
                    at = time_ns or self._ends.get((trace_id, span_id), 0)
                    at = min(max(at, 0), MAX_TIME_NS) if refused else at
                    self._logs.append((sys.intern(trace_id), "" if refused else span_id, at))

    def order(self) -> None:
        """Every record's key, sorted (the order of ``source.ordered``),
        then the seqs ``parent_seq`` is made of; the heads let go of."""
        heads, spans = self._heads, self._spans
        depth = depths(heads)  # type: ignore[arg-type]
        keys: list[int] = []
        for owner, head in enumerate(heads):
            d = depth.get(head.key, 0)
            if head.refused:  # one record, at its start's place
                at = min(max(head.start_ns, 0), MAX_TIME_NS)
                keys.append(_pack(at, 0, d, owner + 1, 0))
                continue
            keys.append(_pack(head.start_ns, 0, d, owner + 1, 0))
            keys.append(_pack(head.end_ns, 3, -d, owner + 1, 0))
            for index, time in enumerate(head.events, start=1):
                keys.append(_pack(time or head.end_ns, 1, d, owner + 1, index))
        for offset, (_, _, time) in enumerate(self._logs):
            keys.append(_pack(time, 2, 0, spans + offset + 1, 0))
        del depth
        self._ends = {}
        keys.sort()
        self._buf.close()
        first: dict[tuple[str, str], int] = {}  # a span's first start (seq)
        own_start = self._own_start = array("q", [-1]) * spans
        sub_mask, copy_mask = (1 << _SUB_BITS) - 1, (1 << _COPY_BITS) - 1
        shift = _SUB_BITS + _COPY_BITS + _DEPTH_BITS
        for index in range(len(keys)):
            key, keys[index] = keys[index], 0
            sub, owner = key & sub_mask, ((key >> _SUB_BITS) & copy_mask) - 1
            rank = (key >> shift) & 3
            self._time.append(key >> (shift + 2))
            self._what.append(sub << 2 | rank)
            self._owner.append(owner)
            if rank == 0 and owner < spans and not heads[owner].refused:
                own_start[owner] = index + 1
                first.setdefault(heads[owner].key, index + 1)
        del keys
        anchor = self._anchor
        for head in heads:
            up = first.get((head.trace_id, head.parent_id), -1) if head.parent_id else -1
            anchor.append(up)
        for trace_id, span_id, _ in self._logs:
            anchor.append(first.get((trace_id, span_id), -1) if span_id else -1)
        self._heads, self._logs = [], []

    # -- the second reading: each record's bytes again -------------------------

    def envelope_lines(self, batch: int = 2048) -> Iterator[bytes]:
        """Envelope lines, in order, ``batch`` records at a time."""
        spans: dict[int, Span] = {}
        chunk: list[bytes] = []
        times, whats, owners = self._time, self._what, self._owner
        for index in range(len(times)):
            seq, what, owner = index + 1, whats[index], owners[index]
            kind = _KINDS[what & 3]
            if owner < self._spans:
                span = spans.get(owner)
                if span is None:
                    span = spans[owner] = self._span(owner)
                    if len(spans) > _CACHED_SPANS:
                        del spans[next(iter(spans))]
                record = Record(times[index], kind, owner + 1, what >> 2, 0, span=span)
                parent = self._anchor[owner] if kind == "span_start" else self._own_start[owner]
            else:
                record = Record(times[index], kind, owner + 1, 0, 0, log=self._log(owner))
                parent = self._anchor[owner]
            refused = refused_words(record)
            if refused:
                chunk.append(refused_line(refused))
            else:
                named = parent if parent > 0 else None
                chunk.append(envelope_line(record, seq, self.run_id, named))
            if len(chunk) >= batch:
                yield b"\n".join(chunk) + b"\n"
                chunk = []
        if chunk:
            yield b"\n".join(chunk) + b"\n"
        self._time, self._what, self._owner = array("Q"), array("Q"), array("q")
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
    fd, size = open_document(path)
    try:
        if size == 0:
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
    document = Document(path, buf, fd, _sha256(buf))
    document.shape = shape
    if shape == OTLP:
        document.resource_spans(root.arrays.get("resourceSpans"))
        document.resource_logs(root.arrays.get("resourceLogs"))
    else:
        document.resource_spans(root.arrays.get("batches"))
    document.order()
    return document


def _sha256(buf: mmap.mmap) -> str:
    """The digest of the mapped bytes, their pages let go of as they are hashed."""
    digest = hashlib.sha256()
    with memoryview(buf) as view:
        for at in range(0, len(view), _HASHED):
            digest.update(view[at : at + _HASHED])
            release(buf, at + _HASHED)
    return digest.hexdigest()
