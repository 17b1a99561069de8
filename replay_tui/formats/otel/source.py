"""OpenTelemetry traces (GenAI agents' runs) as a ledger source.

A trace file (any shape :mod:`replay_tui.formats.otel.load` reads) is read
once and becomes one event per record, in time order:

- ``span_start`` at a span's start (its payload: the whole span, so a
  complete file's facts are all there; the rules still treat it as running
  until its end is replayed);
- ``span_event`` at each of its events' times (an exception, a message);
- ``log`` at each log record's time (content the newer GenAI conventions
  send as events, tied to a span by its ids);
- ``span_end`` at its end (an end before its start is moved to the start
  and said so: ``clamped``).

A span or log record with a time OTLP cannot hold (past its fixed64
nanoseconds, or before the epoch) is one line that fails strict replay
(``bad_envelope``, naming the field, the value as given and the span), at
its start's place (a time past the range: after every other record).

The order is total and stable: time, then at one instant starts before
events before logs before ends, then parents start before their children
and children end before their parents (depth in the span forest, a loop in
parent links broken at the earliest start), then the position in the file,
then the event's index. seq is that position, 1-based; ``parent_seq`` names
the record of the parent span's start (for a span start) or of the span's
own start (for its events, logs and end), when that record came earlier.

Like a Temporal history, the events are converted as the ledger is scanned
into an unlinked temporary file (:class:`~replay_tui.formats.ledger.
ConvertedLedger`): the trace file itself is never written, and
``events_sha256`` is its digest.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.core.errors import CannotRun
from replay_tui.core.supervision import expect_silence
from replay_tui.formats.otel.load import MAX_TIME_NS, Loader, Log, Span, break_loops, shape_of
from replay_tui.formats.whole_file import read_whole

FORMAT = "otel"
_HEAD_BYTES = 1 << 16
_SHAPE = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"(?:resourceSpans|resourceLogs|batches)"\s*:'
    rb'|\A(?:\xef\xbb\xbf)?\s*\{\s*"data"\s*:\s*\[\s*\{\s*"(?:traceID|spans)"'
)
RANK = {"span_start": 0, "span_event": 1, "log": 2, "span_end": 3}
#: A converted line that stands for a record that cannot be replayed: ``!``
#: and the error (``{"code", "message"}``), judged as such by the ledger.
UNREADABLE = b"!"


def looks_like_trace(path: Path) -> bool:
    """Whether ``path`` starts as a trace export does (the shapes
    :mod:`~replay_tui.formats.otel.load` reads), by its first bytes."""
    try:
        with path.open("rb") as f:
            head = f.read(_HEAD_BYTES)
    except OSError:
        return False
    return bool(_SHAPE.match(head))


def effective_parents(spans: dict[tuple[str, str], Span]) -> dict[tuple[str, str], Any]:
    """Span key -> its parent's key, or None for a root: a parent not in
    the file (a remote parent, a partial export) makes a local root; a loop
    of parent links is broken as :func:`~replay_tui.formats.otel.load.break_loops` says."""
    parent: dict[tuple[str, str], Any] = {}
    for key, span in spans.items():
        up = (span.trace_id, span.parent_id)
        parent[key] = up if span.parent_id and up in spans and up != key else None
    break_loops(parent, lambda k: (spans[k].start_ns, spans[k].copy))
    return parent


@dataclass(slots=True)
class Record:
    time_ns: int
    kind: str
    copy: int
    sub: int
    depth: int
    span: Span | None = None
    log: Log | None = None

    def order(self) -> tuple[int, int, int, int, int]:
        depth = -self.depth if self.kind == "span_end" else self.depth
        return (self.time_ns, RANK[self.kind], depth, self.copy, self.sub)


def _iso(ns: int) -> str | None:
    if ns <= 0:
        return None
    try:
        moment = datetime.fromtimestamp(ns // 1_000_000_000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    micros = (ns % 1_000_000_000) // 1000
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{micros:06d}Z"


class Envelopes:
    """Records made envelope lines, seq after seq: what a record's parent
    was and where each span started, remembered across calls (a growing
    file is converted a line at a time; see :mod:`~replay_tui.formats.otel.lines`)."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.seq = 0  # the last seq given
        self._started: dict[tuple[str, str, int], int] = {}  # (trace, span, copy) -> its start
        self._first: dict[tuple[str, str], int] = {}  # (trace, span) -> its first copy's start

    def lines(self, records: list[Record], batch: int = 2048) -> Iterator[bytes]:
        """``records`` (in order) as envelope lines, ``batch`` at a time; each
        record is let go of as it is written."""
        chunk: list[bytes] = []
        for index in range(len(records)):
            record, records[index] = records[index], None  # type: ignore[call-overload]
            self.seq += 1
            chunk.append(self.line(record))
            if len(chunk) >= batch:
                yield b"\n".join(chunk) + b"\n"
                chunk = []
        if chunk:
            yield b"\n".join(chunk) + b"\n"

    def line(self, record: Record) -> bytes:
        """``record`` as the line of seq ``self.seq`` (no newline)."""
        refused = refused_words(record)
        if refused:
            return refused_line(refused)
        seq = self.seq
        parent: int | None = None
        if record.span is not None:
            span = record.span
            own = (span.trace_id, span.span_id, span.copy)
            if record.kind == "span_start":
                self._started[own] = seq
                self._first.setdefault(span.key, seq)
                parent = (
                    self._first.get((span.trace_id, span.parent_id)) if span.parent_id else None
                )
            else:
                parent = self._started.get(own)
        else:
            assert record.log is not None
            log = record.log
            parent = self._first.get((log.trace_id, log.span_id)) if log.span_id else None
        return envelope_line(record, seq, self.run_id, parent)


def refused_line(words: str) -> bytes:
    """The line of a record that cannot be replayed (see ``UNREADABLE``)."""
    return UNREADABLE + strict_json.dumps({"code": "bad_envelope", "message": words})


def envelope_line(record: Record, seq: int, run_id: str, parent: int | None) -> bytes:
    """``record`` as the envelope line of ``seq`` (no newline); ``parent``:
    the seq of the record it hangs under, named only if it came earlier."""
    line: dict[str, Any] = {"seq": seq, "run_id": run_id, "kind": record.kind}
    ts = _iso(record.time_ns)
    if ts is not None:
        line["ts"] = ts
    if record.span is not None:
        if record.kind == "span_start":
            line["payload"] = _start_payload(record.span)
        else:
            line["payload"] = _other_payload(record, record.span)
    else:
        assert record.log is not None
        line["payload"] = _log_payload(record.log)
    if parent is not None and parent < seq:
        line["parent_seq"] = parent
    return strict_json.dumps(line)


def refused_words(record: Record) -> str:
    """Why ``record`` cannot be replayed ("": it can)."""
    if record.span is not None and record.span.refused:
        return f"span {record.span.span_id or '(no id)'}: {record.span.refused}"
    if record.log is not None and record.log.refused:
        log = record.log
        tied = f" of span {log.span_id}" if log.span_id else ""
        return f"log record{tied}: {log.refused}"
    return ""


@dataclass
class Trace:
    """A trace file, read and put in order, not yet converted."""

    records: list[Record]
    sha256: str
    run_id: str
    shape: str

    def __len__(self) -> int:
        return len(self.records)

    def envelope_lines(self, batch: int = 2048) -> Iterator[bytes]:
        """Envelope lines, ``batch`` records at a time (see the module)."""
        yield from Envelopes(self.run_id).lines(self.records, batch)
        self.records = []


def _status(span: Span) -> dict[str, str]:
    return {"code": span.status_code, "message": span.status_message}


def _start_payload(span: Span) -> dict[str, Any]:
    return {
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_id": span.parent_id,
        "name": span.name,
        "kind": span.kind,
        "start_ns": span.start_ns,
        "end_ns": max(span.end_ns, span.start_ns),
        "attributes": span.attributes,
        "resource": span.resource,
        "scope": span.scope,
        "status": _status(span),
        "flags": span.flags,
        "copy": span.copy,
        "events": [
            {"name": e.name, "time_ns": e.time_ns, "attributes": e.attributes} for e in span.events
        ],
    }


def _other_payload(record: Record, span: Span) -> dict[str, Any]:
    head = {"trace_id": span.trace_id, "span_id": span.span_id, "copy": span.copy}
    if record.kind == "span_end":
        return {
            **head,
            "name": span.name,
            "start_ns": span.start_ns,
            "end_ns": max(span.end_ns, span.start_ns),
            "status": _status(span),
            "clamped": span.end_ns < span.start_ns,
        }
    event = span.events[record.sub - 1]
    return {
        **head,
        "index": record.sub,
        "name": event.name,
        "time_ns": event.time_ns,
        "attributes": event.attributes,
    }


def _log_payload(log: Log) -> dict[str, Any]:
    return {
        "trace_id": log.trace_id,
        "span_id": log.span_id,
        "time_ns": log.time_ns,
        "event_name": log.event_name,
        "body": log.body,
        "attributes": log.attributes,
        "resource": log.resource,
        "scope": log.scope,
        "copy": log.copy,
    }


def depths(spans: list[Span]) -> dict[tuple[str, str], int]:
    """Each span's depth in the repaired forest (for ties at one instant)."""
    winners: dict[tuple[str, str], Span] = {}
    for span in sorted(spans, key=lambda s: s.copy):
        winners.setdefault(span.key, span)
    parent = effective_parents(winners)
    depth: dict[tuple[str, str], int] = {}
    for key in winners:
        chain: list[tuple[str, str]] = []
        at: Any = key
        while at is not None and at not in depth:
            chain.append(at)
            at = parent[at]
        base = depth[at] + 1 if at is not None else 0
        for offset, k in enumerate(reversed(chain)):
            depth[k] = base + offset
    return depth


def records_of(loader: Loader) -> list[Record]:
    """Every record of the file, in the order of the module."""
    return ordered(loader.spans, loader.logs)


def ordered(spans: list[Span], logs: list[Log]) -> list[Record]:
    """The records of ``spans`` and ``logs``, in the order of the module
    (depth as the forest of these spans says)."""
    depth = depths(spans)
    ends: dict[tuple[str, str], int] = {}
    records: list[Record] = []
    for span in spans:
        d = depth.get(span.key, 0)
        if span.refused:  # one record, at its start's place
            at = min(max(span.start_ns, 0), MAX_TIME_NS)
            records.append(Record(at, "span_start", span.copy, 0, d, span=span))
            continue
        end = max(span.end_ns, span.start_ns)
        ends.setdefault(span.key, end)
        records.append(Record(span.start_ns, "span_start", span.copy, 0, d, span=span))
        for i, event in enumerate(span.events, start=1):
            records.append(Record(event.time_ns or end, "span_event", span.copy, i, d, span=span))
        records.append(Record(end, "span_end", span.copy, 0, d, span=span))
    for log in logs:
        at = log.time_ns or ends.get((log.trace_id, log.span_id), 0)
        if log.refused:
            at = min(max(at, 0), MAX_TIME_NS)
        records.append(Record(at, "log", log.copy, 0, 0, log=log))
    records.sort(key=Record.order)
    return records


def load_trace(path: Path) -> Trace:
    """Read and order ``path`` once; raises :class:`CannotRun` with one line."""
    loader, digest, shape = load_spans(path)
    return Trace(records_of(loader), digest, path.stem or "trace", shape)


def load_spans(path: Path) -> tuple[Loader, str, str]:
    """``path``'s spans and log records in the normal form, the file's
    sha256 and its shape; raises :class:`CannotRun` with one line."""
    raw = read_whole(path)
    digest = hashlib.sha256(raw).hexdigest()
    body = raw.removeprefix(b"\xef\xbb\xbf")
    expect_silence(5 + 3 * len(body) / 100e6)
    loader = Loader()
    try:
        doc = strict_json.loads_written(body)
    except orjson.JSONDecodeError as exc:
        raise CannotRun(
            f"{path}: not one JSON document ({exc}); the Collector's JSON lines "
            "start with an export request on the first line"
        ) from None
    shape = shape_of(doc)
    if shape is None:
        raise CannotRun(
            f"{path}: not an OpenTelemetry trace (no resourceSpans, "
            "resourceLogs, batches or Jaeger data)"
        )
    del raw, body
    getattr(loader, shape.replace("-", "_"))(doc)  # lets go of the document as it reads
    del doc
    if not loader.spans and not loader.logs:
        raise CannotRun(f"{path}: an OpenTelemetry trace with no spans and no log records")
    return loader, digest, shape
