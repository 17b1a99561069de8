"""A span of an OpenTelemetry trace as its own receipt, as known after a prefix.

A trace (:mod:`replay_tui.formats.otel.source`) has no receipts/: what a call did is
in its span. So at any record of a span (its start, its events, the logs
tied to it, its end) the inspector shows the span: its name, ids, times,
status, attributes, resource and scope, its events and its logs, each with
the seq where it is in the timeline.

What is shown is what events 1..n say, never what only a later record says:

- the start record carries the whole span (its end, status, events and
  final attributes too); until the span's end is in the prefix it is
  *running*: its end, duration and status are unknown, and the attributes
  the rules count only once it has ended (a tool's result, a model's
  output and usage, ``error.type``: :data:`END_KEYS`, :data:`END_PREFIXES`)
  are held back, named but not shown;
- its events and logs are those whose own records are in the prefix.

The span's lines come from the replay's call index (the rules' ``call_of``
keys every record of a span and its logs ``trace_id:span_id``), walked as
an array, and only the first :data:`HEAD` and the last :data:`TAIL` of them
are read: a span with 10,000 logs costs a walk of 10,000 array cells and
the reading of 48 lines, and the receipt says how many records it did not
list. Its end is normally among the last; if not (logs timed after it),
up to :data:`END_REACH` more are read back to find it. At a log or span
event, that record comes first (``this_record``): the pane is short.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from replay_tui.core.words import plural
from replay_tui.engine.indexes.calls import NO_CALL, CallIndex
from replay_tui.engine.replay import LedgerChanged, Replay
from replay_tui.formats.envelope import Event
from replay_tui.reducers.otel_genai import span_seconds, status_word

#: The records a trace is made of (see :mod:`replay_tui.formats.otel.source`).
SPAN_START, SPAN_EVENT, LOG, SPAN_END = "span_start", "span_event", "log", "span_end"
KINDS = frozenset({SPAN_START, SPAN_EVENT, LOG, SPAN_END})

#: Where each record says when it is (see :mod:`replay_tui.formats.otel.source`).
_TIME = {SPAN_START: "start_ns", SPAN_EVENT: "time_ns", LOG: "time_ns", SPAN_END: "end_ns"}

#: A span's first and last records read and listed (the rest are counted).
HEAD = 32
TAIL = 16
#: Records read further back when the end is not among the last TAIL.
END_REACH = 512

#: Attributes that say how a span ended (its output): held back while it runs.
END_KEYS = frozenset(
    {
        "gen_ai.tool.call.result",
        "gcp.vertex.agent.tool_response",
        "gen_ai.output.messages",
        "gcp.vertex.agent.llm_response",
        "gen_ai.completion",
        "error.type",
    }
)
END_PREFIXES = ("gen_ai.response.", "gen_ai.usage.", "llm.usage.", "gen_ai.completion.")


def span_record(replay: Replay, event: Event | None, n: int) -> tuple[str, Any] | None:
    """The receipt of the span ``event`` is a record of (or of ``event``
    itself, a log tied to no span) as known after events 1..n: (title,
    JSON value); None if ``event`` is no record of a trace. Never raises
    for a line it cannot read or a value it does not expect: it says so."""
    if event is None or event.kind not in KINDS:
        return None
    try:
        return _Receipt(replay, event, n).build()
    except LedgerChanged:
        raise
    except Exception as exc:  # a receipt that cannot be made must not hide the rest
        return "span", f"(the span could not be read: {type(exc).__name__}: {exc})"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def _copy(event: Event) -> int:
    return _int(event.payload.get("copy")) or 0


def iso(ns: Any) -> str | None:
    """Nanoseconds since the epoch as an ISO time, to the nanosecond (None: none)."""
    if type(ns) is not int or ns <= 0:
        return None
    try:
        moment = datetime.fromtimestamp(ns // 1_000_000_000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{ns % 1_000_000_000:09d}Z"


def took(start: Any, end: Any) -> str | None:
    """How long a span took, in the rules' words (None: not known)."""
    return span_seconds(start, end) or None


def held_back(key: str) -> bool:
    """Whether attribute ``key`` says how the span ended (shown once it has)."""
    return key in END_KEYS or key.startswith(END_PREFIXES)


def _status_text(status: Any) -> Any:
    """``OK``, ``UNSET``, ``ERROR: why``: a span's status in one line (as
    recorded, if it is not the usual {code, message})."""
    if not isinstance(status, Mapping) or set(status) - {"code", "message"}:
        return status
    code, message = status.get("code"), status.get("message")
    if not isinstance(code, str) or not isinstance(message, str | None):
        return dict(status)
    return f"{code}: {message}" if message else code


def _short_id(sid: str) -> str:
    return f"{sid[:4]}…" if len(sid) > 4 else sid


class _Receipt:
    """One receipt in the making (see :func:`span_record`)."""

    def __init__(self, replay: Replay, event: Event, n: int) -> None:
        self.replay = replay
        self.event = event
        self.n = n
        p = event.payload
        self.tid = _text(p.get("trace_id"))
        self.sid = _text(p.get("span_id"))
        #: Lines read: index -> the record, if it is one of this span's.
        self.read: dict[int, Event | None] = {}
        #: The span's end may be among lines never read (see END_REACH).
        self.unsure = False
        #: The span's lines in the prefix, and how many of the first were read.
        self.total = self.heads = 0

    # -- reading ------------------------------------------------------------------
    def _at(self, index: int) -> Event | None:
        """Line ``index`` if it is a record of this span within the prefix."""
        if index in self.read:
            return self.read[index]
        found: Event | None = None
        if 0 <= index < self.n:
            parsed = self.replay.event(index)
            if (
                isinstance(parsed, Event)
                and parsed.kind in KINDS
                and _text(parsed.payload.get("span_id")) == self.sid
                and _text(parsed.payload.get("trace_id")) == self.tid
            ):
                found = parsed
        self.read[index] = found
        return found

    def _lines(self) -> tuple[list[int], deque[int], int]:
        """The span's lines in the prefix: the first HEAD, the last ones
        (TAIL + END_REACH at most, after those), and how many in all."""
        calls: CallIndex | None = self.replay.calls
        here = self.event.line - 1
        number = calls.call_at(here) if calls is not None else NO_CALL
        if calls is not None and number == NO_CALL:  # a line past those noted
            start = self._start_named_by(self.event)
            if start is not None:
                number = calls.call_at(start)
        head: list[int] = []
        rest: deque[int] = deque(maxlen=TAIL + END_REACH)
        total = 0
        if calls is None or number == NO_CALL:  # no index (not the app): what is at hand
            start = self._start_named_by(self.event)
            found = sorted({i for i in (start, here) if i is not None and 0 <= i < self.n})
            return found, rest, len(found)
        for index in calls.lines(number):
            if index >= self.n:
                break
            if total < HEAD:
                head.append(index)
            else:
                rest.append(index)
            total += 1
        return head, rest, total

    def _start_named_by(self, event: Event) -> int | None:
        """The line of the span start ``event`` names (its own, if it is one)."""
        if event.kind == SPAN_START:
            return event.line - 1
        parent = event.parent_seq
        if type(parent) is not int or not 0 < parent <= self.n:
            return None
        start = self._at(parent - 1)
        return parent - 1 if start is not None and start.kind == SPAN_START else None

    # -- the receipt --------------------------------------------------------------
    def build(self) -> tuple[str, Any] | None:
        if not self.sid:
            return self._lone_log() if self.event.kind == LOG else None
        head, rest, total = self._lines()
        tail = list(rest)[-TAIL:]
        listed = [(i, e) for i in [*head, *tail] if (e := self._at(i)) is not None]
        start = self._start(listed)
        if start is None:
            return self._unstarted(listed, total)
        copy = _copy(start)
        self.total, self.heads = total, len(head)
        end = self._end(listed, rest, start)
        events = [e for _, e in listed if e.kind == SPAN_EVENT and _copy(e) == copy]
        logs = [e for _, e in listed if e.kind == LOG]
        others = sorted({e.seq for _, e in listed if e.kind == SPAN_START and e is not start})
        value = self._span(start, end)
        here = self.event
        if here.kind in (LOG, SPAN_EVENT) and here.line - 1 < self.n:  # first: the pane is short
            value["this_record"] = self._log(here) if here.kind == LOG else self._event(here)
            if here.kind == SPAN_EVENT and _copy(here) != copy:
                value["this_record"]["copy"] = "another copy of this span (not the one shown)"
        value.update(self._attributes(start, end))
        if events:
            value["events"] = [self._event(e) for e in events]
        if logs:
            value["logs"] = [self._log(e) for e in logs]
        skipped = total - len(head) - len(tail)
        if skipped > 0:
            value["not_listed"] = (
                f"{plural(skipped, 'more record', sep=True)} of this span (events, logs) "
                "between seq "
                f"{head[-1] + 1:,} and seq {tail[0] + 1:,}: step to them in the timeline"
            )
        if others:
            value["exported_again"] = (
                f"{len(others) + 1} copies of this span in the file: the first is shown "
                f"(the rules keep it); another starts at seq {', '.join(map(str, others))}"
            )
        value.update(self._ids(start, end))
        value["resource"] = start.payload.get("resource")
        value["scope"] = start.payload.get("scope")
        return self._title(start, end), value

    def _start(self, listed: list[tuple[int, Event]]) -> Event | None:
        """The span's start the rules keep (the lowest copy) among the lines
        read, else the one a record read names."""
        starts = [e for _, e in listed if e.kind == SPAN_START]
        if starts:
            return min(starts, key=_copy)
        for _, e in listed:
            at = self._start_named_by(e)
            if at is not None:
                return self._at(at)
        return None

    def _end(self, listed: list[tuple[int, Event]], rest: deque[int], start: Event) -> Event | None:
        """The end of ``start``'s copy in the prefix: among the lines listed,
        else among the last ones not listed (read back from the last), if
        it can be there: records are in time order, an end after the
        records of its instant, so a span's last record in the prefix
        timed at or before the span's end (as the start record says it)
        and no end of another copy says its end is not in the prefix yet."""
        copy = _copy(start)
        for _, e in listed:
            if e.kind == SPAN_END and _copy(e) == copy:
                return e
        if not listed:
            return None
        last = listed[-1][1]
        end_ns = _int(start.payload.get("end_ns"))
        at = _int(last.payload.get(_TIME[last.kind]))
        if last.kind != SPAN_END and (end_ns is None or not at or at <= end_ns):
            return None
        for index in reversed(list(rest)[: max(0, len(rest) - TAIL)]):
            found = self._at(index)
            if found is not None and found.kind == SPAN_END and _copy(found) == copy:
                return found
        self.unsure = self.total - self.heads > len(rest)  # some never read
        return None

    def _title(self, start: Event, end: Event | None) -> str:
        name = _text(start.payload.get("name")) or "span"
        words = [name, f"span {_short_id(self.sid)}"]
        if end is None:
            words.append("end not read" if self.unsure else "running")
        else:
            words.append(status_word(end.payload.get("status")))
            length = took(start.payload.get("start_ns"), end.payload.get("end_ns"))
            if length:
                words.append(length)
        return " · ".join(words)

    def _span(self, start: Event, end: Event | None) -> dict[str, Any]:
        """What the span is and says, first (the pane is short)."""
        p = start.payload
        value: dict[str, Any] = {"name": p.get("name")}
        if end is None:
            value["status"] = "unknown" if self.unsure else "running"
            value["start"] = iso(p.get("start_ns"))
            value["end"] = (
                "unknown: its end is not among the records of this span read"
                if self.unsure
                else f"unknown: not in events 1..{self.n:,}"
            )
        else:
            q = end.payload
            value["status"] = _status_text(q.get("status"))
            value["start"] = iso(p.get("start_ns"))
            value["end"] = iso(q.get("end_ns"))
            value["duration"] = took(p.get("start_ns"), q.get("end_ns"))
            if q.get("clamped") is True:
                value["clamped"] = "the file says it ends before it starts: end moved to its start"
        return value

    def _attributes(self, start: Event, end: Event | None) -> dict[str, Any]:
        """The span's attributes as recorded; while it runs, without those
        that say how it ended (named)."""
        value: dict[str, Any] = {}
        attrs = start.payload.get("attributes")
        if isinstance(attrs, Mapping) and end is None:
            hidden = [k for k in attrs if held_back(k)]
            value["attributes"] = {k: v for k, v in attrs.items() if not held_back(k)}
            if hidden:
                value["held_back_until_it_ends"] = hidden
        else:
            value["attributes"] = attrs
        return value

    def _ids(self, start: Event, end: Event | None) -> dict[str, Any]:
        """Where the span is: its kind, ids and records' seqs."""
        p = start.payload
        return {
            "kind": p.get("kind"),
            "trace_id": self.tid,
            "span_id": self.sid,
            "parent_id": p.get("parent_id") or None,
            "start_seq": start.seq,
            "end_seq": end.seq if end is not None else None,
        }

    @staticmethod
    def _event(e: Event) -> dict[str, Any]:
        p = e.payload
        return {
            "seq": e.seq,
            "name": p.get("name"),
            "time": iso(p.get("time_ns")),
            "attributes": p.get("attributes"),
        }

    @staticmethod
    def _log(e: Event) -> dict[str, Any]:
        p = e.payload
        found: dict[str, Any] = {
            "seq": e.seq,
            "event_name": p.get("event_name"),
            "time": iso(p.get("time_ns")),
            "body": p.get("body"),
        }
        if p.get("attributes"):
            found["attributes"] = p.get("attributes")
        return found

    def _unstarted(self, listed: list[tuple[int, Event]], total: int) -> tuple[str, Any]:
        """Records of a span whose start is not in the prefix (logs before it,
        or a span the file does not hold)."""
        logs = [e for _, e in listed if e.kind == LOG]
        value: dict[str, Any] = {
            "status": f"not started: its start is not in events 1..{self.n:,}",
            "trace_id": self.tid,
            "span_id": self.sid,
        }
        if logs:
            value["logs"] = [self._log(e) for e in logs]
        if total > len(listed):
            value["not_listed"] = (
                f"{plural(total - len(listed), 'more record', sep=True)} of this span"
            )
        return f"span {_short_id(self.sid)} · not started", value

    def _lone_log(self) -> tuple[str, Any]:
        """A log tied to no span: its own receipt."""
        e = self.event
        p = e.payload
        value = {**self._log(e), "trace_id": p.get("trace_id") or None}
        value["resource"] = p.get("resource")
        value["scope"] = p.get("scope")
        name = _text(p.get("event_name")) or "(no event name)"
        why = self._unattributed(e.seq)
        if why is not None:
            value["unattributed"] = why
            return f"log {name} · tied to no span · unattributed", value
        return f"log {name} · tied to no span", value

    def _unattributed(self, seq: int) -> str | None:
        """Why the rules tied log ``seq`` to no model call (None: they did,
        or these rules keep no such list)."""
        try:
            state = self.replay.state_at(self.n)
        except (IndexError, LedgerChanged):
            return None
        listed = state.get("unattributed") if isinstance(state, Mapping) else None
        for item in listed if isinstance(listed, list) else []:
            if isinstance(item, Mapping) and item.get("seq") == seq:
                return f"{item.get('why')}: not merged into any turn"
        return None
