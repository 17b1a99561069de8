"""What the app shows about a run, computed without any UI toolkit.

:class:`RunView` sits between :class:`~replay_tui.engine.replay.Replay` and the
widgets: rows for the timeline, the view of one selected line (a step, the
failing event, or a line never replayed: :class:`LineView`, in
:mod:`.line_view`), receipts with their pin status, and searches.
Everything here is safe to call from a worker thread.
"""

from __future__ import annotations

import dataclasses
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from replay_tui.core.errors import Warning_
from replay_tui.core.links import link_to
from replay_tui.core.safe_text import escape_controls
from replay_tui.engine.indexes.calls import NO_CALL, CallIndex
from replay_tui.engine.indexes.causes import CauseIndex
from replay_tui.engine.indexes.clock import EventClock
from replay_tui.engine.replay import LedgerChanged, Replay
from replay_tui.formats.chain import ChainIndex
from replay_tui.formats.envelope import Event, LineError
from replay_tui.formats.langgraph.postgres import redact
from replay_tui.formats.langgraph.store import thread_run
from replay_tui.formats.receipts import ReceiptProblem, ReceiptStore, call_id_problem
from replay_tui.formats.run import OTEL
from replay_tui.formats.sessions import CLAUDE_CODE
from replay_tui.reducers.base import CallFacts, StateView, call_facts
from replay_tui.state import canonical
from replay_tui.views.calls import FACTS_READ, CallRow, call_row
from replay_tui.views.cost import cost_words
from replay_tui.views.genai_tokens import span_tokens
from replay_tui.views.line_view import (
    CAUSES_SHOWN,
    EFFECTS_SHOWN,
    PIN_WORDS,
    LineView,
    ReceiptView,
)
from replay_tui.views.messages import message_record
from replay_tui.views.problems import Problems
from replay_tui.views.resume_rail import ResumeRail, resume_query, resume_rows
from replay_tui.views.rows import Row, make_row
from replay_tui.views.span_receipt import span_record
from replay_tui.views.subagents import SubAgents, meta_words

__all__ = [
    "CAUSES_SHOWN",
    "EFFECTS_SHOWN",
    "PIN_WORDS",
    "LineView",
    "ReceiptView",
    "RunView",
]

#: Rows looked at for the first ``ts`` (a session opens with a few records without one).
FIRST_TS_ROWS = 64


def _names(child: Event, parent: Event) -> bool:
    """``parent`` is the record ``child``'s ``parentUuid`` names, where it has
    one (the checker linked them by a hash of the uuid: confirmed here)."""
    want = child.fields.get("parentUuid")
    return want is None or parent.fields.get("uuid") == want


class RunView:
    def __init__(self, replay: Replay, *, cache_size: int = 4096) -> None:
        self.replay = replay
        self._rows: OrderedDict[int, Row] = OrderedDict()
        self._cache_size = cache_size
        self._first_ts: float | None = None
        self._first_ts_known = False
        self._lock = threading.Lock()  # rows are read by the UI and by search workers
        #: Line index where reloaded rules first derive something different.
        self.difference_index: int | None = None
        #: Lines with a warning, an error or a failed call (``e`` / ``E``).
        self.problems = Problems(replay)
        self._last_state: tuple[int, StateView] | None = None
        #: A Claude Code session's sub-agents with a transcript on disk.
        self.subagents = SubAgents(replay)
        chain = self._chain()
        #: A Claude Code session: the records a resume from the last one loads.
        self.rail = ResumeRail(chain) if chain is not None else None
        #: The rules' words stand for the row's payload (a session's record:
        #: its JSON says less than they do, at a cost per row).
        self._words_only = (
            getattr(replay.reducer, "row_summary_only", False) is True and not replay.guarded
        )
        longest = max((len(k) for k in replay.reducer.kinds), default=16)
        self._columns = (max(16, min(longest, 30)), 12 if replay.receipts.enabled else 0)

    # -- timeline ---------------------------------------------------------
    def row_count(self) -> int:
        return len(self.replay.ledger)

    def row(self, index: int) -> Row:
        with self._lock:
            hit = self._rows.get(index)
        if hit is not None:
            return hit
        parsed = self.replay.ledger.event(index)
        raw = self.replay.ledger.raw_line(index) if isinstance(parsed, LineError) else None
        row = make_row(index, parsed, raw, payload_summary=not self._words_only)
        keep = True
        if isinstance(parsed, Event):
            if self.replay.is_ignored(parsed):
                row = dataclasses.replace(row, problem=self.replay.ignored_words)
            said = self._row_summary(parsed)
            tokens = self._ended_span_tokens(parsed)
            if tokens is not None:  # a model span's end: the tokens it used, first
                said = f"{tokens[0]:,} in/{tokens[1]:,} out · {said or 'span_end'}"
            transcript = self.subagents.at(parsed)
            # a call's sub-agent is known once validation reaches its result:
            # its row is made again until then
            keep = transcript is not None or not parsed.call_id or self.replay.finished
            if transcript is not None:
                meta = meta_words(transcript)
                about = f" ({meta})" if meta else ""
                said = f"{said or ''}  ⤷ sub-agent transcript {transcript.name}{about} (t opens it)"
            if said:  # the rules' words first; the payload after, still searchable
                summary = escape_controls(said) + ("  " + row.summary if row.summary else "")
                row = dataclasses.replace(row, summary=summary)
        calls = self.replay.calls
        if not keep or (calls is not None and index >= len(calls)):
            return row  # (what the call index says of the line is not known yet)
        with self._lock:
            self._rows[index] = row
            if len(self._rows) > self._cache_size:
                self._rows.popitem(last=False)
        return row

    def _row_summary(self, event: Event) -> str | None:
        """The rules' one line for a row (their optional ``row_summary``);
        built-in rules only: it runs for every row drawn, unwatched."""
        fn = getattr(self.replay.reducer, "row_summary", None)
        if fn is None or self.replay.guarded:
            return None
        try:
            said = fn(event)
        except Exception:  # optional prose: a bug in it must not hide the row
            return None
        return said if isinstance(said, str) else None

    def clock(self) -> EventClock | None:
        """When each validated event happened (the overview strip's time)."""
        return self.replay.clock

    def call_index(self) -> CallIndex | None:
        """Which events make one call, if the rules say (``v`` folds them)."""
        return self.replay.calls

    def call_row(self, number: int) -> CallRow:
        """The folded row of call ``number``."""
        assert self.replay.calls is not None
        tokens = self._span_tokens if self.replay.paths.format == OTEL else None
        return call_row(self.replay.calls, number, self.row, self._call_facts, tokens)

    def _ended_span_tokens(self, event: Event) -> tuple[int, int] | None:
        """A trace's span's tokens, on the row of its end (where the rules
        take them: a span's usage is held back until it ends)."""
        calls = self.replay.calls
        if event.kind != "span_end" or calls is None or self.replay.paths.format != OTEL:
            return None
        number = calls.call_at(event.line - 1)
        return (
            None if number == NO_CALL else self._span_tokens(list(calls.lines(number, FACTS_READ)))
        )

    def _span_tokens(self, lines: list[int]) -> tuple[int, int] | None:
        """A trace's span's tokens, from its records (see :mod:`genai_tokens`)."""
        return span_tokens(self.replay.ledger.event(line) for line in lines)

    def _call_facts(self, index: int) -> CallFacts | None:
        """What line ``index`` says of its call (built-in rules only: drawn
        for every row on screen, unwatched)."""
        if self.replay.guarded:
            return None
        event = self.replay.ledger.event(index)
        return call_facts(self.replay.reducer, event) if isinstance(event, Event) else None

    def columns(self) -> tuple[int, int]:
        """Widths of the timeline's kind and call_id columns: kinds as long
        as the rules' longest (16 to 30), no call_id column without receipts."""
        return self._columns

    def first_ts(self) -> float | None:
        """The first ``ts`` among the first rows: the timeline's offsets count
        from it (a session may open with records that carry none)."""
        if not self._first_ts_known and self.row_count():
            rows = min(self.row_count(), FIRST_TS_ROWS)
            self._first_ts = next(
                (t for i in range(rows) if (t := self.row(i).ts) is not None), None
            )
            self._first_ts_known = self._first_ts is not None or rows == FIRST_TS_ROWS
        return self._first_ts

    def valid_count(self) -> int:
        return self.replay.valid

    def error_index(self) -> int | None:
        err = self.replay.error
        return err.line - 1 if err is not None and err.line is not None else None

    def has_error(self) -> bool:
        return self.replay.error is not None

    def error_label(self) -> str:
        err = self.replay.error
        return escape_controls(f"{err.code}: {err.message}") if err else ""

    def pending_index(self) -> int | None:
        pending = self.replay.pending
        return pending.index if pending is not None else None

    def warning_indexes(self) -> frozenset[int]:
        """Lines with a warning."""
        return self.problems.warning_indexes()

    def warnings_at(self, index: int) -> tuple[Warning_, ...]:
        """The warnings at line ``index``, as ``check`` prints them."""
        return self.problems.warnings_at(index)

    def next_problem(self, here: int, direction: int) -> int | None:
        """``e`` / ``E``: the next line with an error, a warning or a failed
        call past ``here`` (before it, for -1)."""
        return self.problems.next_problem(here, direction)

    def index_of_seq(self, seq: int) -> int:
        """Line index of ``seq``: line seq-1 in a valid ledger, else searched
        nearby; -1 if it is not there."""
        guess = seq - 1
        if 0 <= guess < self.row_count() and self.row(guess).seq == seq:
            return guess
        for index in range(min(self.row_count(), max(0, guess + 64)) - 1, -1, -1):
            if self.row(index).seq == seq:
                return index
        return -1

    def goto_range(self) -> str:
        """The seqs ``:`` can go to now (its prompt shows it, kept current)."""
        r = self.replay
        if r.finished or r.error is not None:
            return f"1..{r.valid:,}" if r.error is None else f"1..{self.row_count():,}"
        return f"1..{r.valid:,} validated so far"

    def link(self, seq: int) -> str:
        """``RUN@SEQ``, RUN absolute: ``replay-tui RUN@SEQ`` opens the run at
        ``seq`` from any folder (a ticket is read elsewhere)."""
        paths = self.replay.paths
        run = paths.dir if paths.format == "jsonl" and not paths.compressed else paths.events
        if paths.sample is not None:  # an Inspect log's sample: LOG#ID:EPOCH@SEQ
            return f"{link_to(run, seq).rpartition('@')[0]}#{paths.sample}@{seq}"
        if paths.thread is not None:  # a LangGraph thread: DB#thread=ID@SEQ
            base = redact(paths.url) if paths.url else link_to(run, seq).rpartition("@")[0]
            return f"{thread_run(base, paths.thread, paths.ns, paths.tip)}@{seq}"
        return link_to(run, seq)

    def resume_query(self, seq: int) -> str | None:
        """The filter that shows what ``claude --resume`` from the record at
        (or last before) ``seq`` loads; None if this is no Claude Code session."""
        return resume_query(self._chain(), min(seq, self.replay.valid))

    def resume_kept(self, index: int) -> bool:
        """Line ``index`` is on the rail of what a resume loads (see :mod:`resume_rail`)."""
        return self.rail is not None and self.rail.kept(index, self.replay.valid)

    def _chain(self) -> ChainIndex | None:
        chain = getattr(self.replay.ledger.mapping, "chain", None)
        return chain if isinstance(chain, ChainIndex) else None

    def matches(self, query: str, cancelled: Callable[[], bool] | None = None) -> array[int] | None:
        """Indexes of rows whose kind, call_id or payload text contain ``query``
        (in a Claude Code session, ``resume from line N``: the records
        ``claude --resume`` from line N loads).

        Case-insensitive; ``None`` when cancelled part way.
        """
        walked = resume_rows(self._chain(), query, self.replay.valid)
        if walked is not None:
            return walked
        needle = query.lower()
        found = array("L")
        for index in range(self.row_count()):
            if cancelled is not None and index % 4096 == 0 and cancelled():
                return None
            if needle in self.row(index).search_text():
                found.append(index)
        return found

    # -- the selected line ------------------------------------------------
    def line_view(self, index: int) -> LineView:
        """What happened at ledger line ``index`` (0-based).

        Never raises: if the run changed on disk since it was validated, or
        the rules fail when re-applied, the view says so instead.
        """
        valid = self.replay.valid
        try:
            return dataclasses.replace(self._line_view(index), valid=valid)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            if isinstance(exc, LedgerChanged):
                why = f"{exc}: the run changed on disk since it was checked; reopen it"
            else:
                why = f"re-applying the rules failed: {type(exc).__name__}: {exc}"
            try:
                parsed: Event | LineError | None = self.replay.ledger.event(index)
            except (IndexError, OSError, ValueError):
                parsed = None  # the line itself is gone (the ledger was replaced)
            return LineView(index, "broken", parsed if isinstance(parsed, Event) else None, raw=why)

    def links(self, event: Event | None) -> dict[str, Any]:
        """``causes``, ``causes_more``, ``effects`` and ``effects_count`` of a view of ``event``."""
        if event is None:
            return {}
        parent_of = self.causes.parent_of
        causes: list[tuple[int, str]] = []
        child, seen = event, {event.seq}
        parent = parent_of(event)
        while type(parent) is int and parent not in seen:
            index = self.index_of_seq(parent)
            found = self.replay.ledger.event(index) if index >= 0 else None
            if not isinstance(found, Event) or not _names(child, found):
                break
            if len(causes) == CAUSES_SHOWN:
                return self._with_effects(event, tuple(causes), True)
            seen.add(parent)
            causes.append((parent, found.kind))
            child, parent = found, parent_of(found)
        return self._with_effects(event, tuple(causes), False)

    def _with_effects(
        self, event: Event, causes: tuple[tuple[int, str], ...], more: bool
    ) -> dict[str, Any]:
        kids, count = self.causes.effects(event.seq, self.replay.valid, EFFECTS_SHOWN)
        effects = []
        for seq in kids:
            index = self.index_of_seq(seq)
            effects.append((seq, (self.row(index).kind or "") if index >= 0 else ""))
        return {
            "causes": causes,
            "causes_more": more,
            "effects": tuple(effects),
            "effects_count": count,
        }

    @property
    def causes(self) -> CauseIndex:
        return self.replay.causes

    def _line_view(self, index: int) -> LineView:
        replay = self.replay
        parsed = replay.ledger.event(index)
        event = parsed if isinstance(parsed, Event) else None
        raw = None
        if event is None:
            raw = replay.ledger.raw_line(index).decode("utf-8", errors="backslashreplace")
        err_index = self.error_index()
        if err_index is not None and index == err_index:
            before = replay.frozen_at(replay.valid)
            return LineView(
                index,
                "failed",
                event,
                state_before=before,
                error=replay.error,
                raw=raw,
                receipt=self.receipt_view(event),
                **self.records(event, replay.valid),
                **self.links(event),
                summary=replay.summarize(before),
                where=replay.rules_call.where(before),
                cost=cost_words(before),
            )
        if event is not None and event.seq <= replay.valid and index < replay.valid:
            step = replay.step(index + 1)
            last = index + 1 == replay.valid and replay.error is None
            return LineView(
                index,
                "step",
                event,
                step=step,
                # at the last event: why the run ended as it did
                still_open=replay.still_open() if last else None,
                warnings=self.warnings_at(index),
                receipt=self.receipt_view(event),
                **self.records(event, index + 1),
                **self.links(event),
                summary=replay.summarize(step.after),
                where=replay.rules_call.where(step.after),
                cost=cost_words(step.after),
            )
        if replay.pending is not None and index == replay.pending.index:
            mode = "receipt"  # held back while following: its receipt is not written yet
        else:
            mode = "unreplayed" if replay.error is not None else "pending"
        return LineView(
            index,
            mode,
            event,
            error=replay.error,
            raw=raw,
            receipt=self.receipt_view(event),
            **self.records(event, replay.valid),
            **self.links(event),
        )

    def initial_view(self) -> LineView:
        """Prefix 0: the state before any event (what ``initial_state()`` gives)."""
        state = self.replay.frozen_at(0)
        return LineView(
            -1,
            "initial",
            None,
            state_before=state,
            summary=self.replay.summarize(state),
            cost=cost_words(state),
        )

    def records(self, event: Event | None, n: int) -> dict[str, Any]:
        """The rules' record for ``event`` (``record_for``, if they have it)
        as known after events 1..n, and, if the run went on to change it (an
        activity's result), the record at the end of the valid prefix. In
        an agent's session: the call's result as recorded (see ``result``).
        In a trace: the span as known after 1..n (never what only a later
        record says: see :mod:`~replay_tui.views.span_receipt`)."""
        if self.replay.paths.format == OTEL:
            span = span_record(self.replay, event, n)
            if span is not None:
                return {"record": span}
        if self.replay.ledger.mapping is not None:
            return self._recorded(event, n)
        now = self.record_for(event, n)
        valid = self.replay.valid
        if now is None or n >= valid:
            return {"record": now}
        last = self.record_for(event, valid)
        if last is None or canonical.dumps(last[1]) == canonical.dumps(now[1]):
            return {"record": now}
        return {"record": now, "record_later": last}

    def _recorded(self, event: Event | None, n: int) -> dict[str, Any]:
        """A session's call at ``event`` and its recorded result, after 1..n
        and, if it was recorded only later, at the end of the valid prefix."""
        try:
            now = self.replay.recorded_result(event, n)
        except (OSError, ValueError) as exc:  # unreadable now: say so, never crash
            return {"record": ("result", f"(the recorded result could not be read: {exc})")}
        if now is None:  # no call here: at an API message's line, what it counted
            mapping = self.replay.ledger.mapping
            if event is None or mapping is None or mapping.format != CLAUDE_CODE:
                return {"record": None}
            return {"record": message_record(self._event_at, event.seq - 1, self.replay.valid, n)}
        found: dict[str, Any] = {"record": now.record(), "result": now}
        valid = self.replay.valid
        if now.seq is None and n < valid:
            later = self.replay.recorded_result(event, self._call_end(event, valid))
            if later is not None and later.seq is not None:
                found.update(record_later=later.record(), result_later=later)
        return found

    def _call_end(self, event: Event | None, valid: int) -> int:
        """The prefix that ends with the last line of ``event``'s call (its
        result, if recorded) within the first ``valid`` events: the rules
        keep a call in their state while it is open and when it is answered,
        not forever."""
        calls = self.replay.calls
        index = self.index_of_seq(event.seq) if event is not None else -1
        number = calls.call_at(index) if calls is not None and index >= 0 else NO_CALL
        if calls is None or number == NO_CALL:
            return valid
        return min(valid, calls.last[number] + 1)

    def _event_at(self, index: int) -> Any:
        """Line ``index`` parsed (cached), for what reads around the cursor."""
        return self.replay.event(index)

    def record_for(self, event: Event | None, n: int) -> tuple[str, Any] | None:
        """The rules' record for ``event`` from the state after events 1..n."""
        fn = getattr(self.replay.reducer, "record_for", None)
        if event is None or fn is None:
            return None
        if n == self.replay.valid:  # asked for on every view: keep it
            if self._last_state is None or self._last_state[0] != n:
                self._last_state = (n, self.replay.frozen_at(n))
            state = self._last_state[1]
        else:
            state = self.replay.frozen_at(n)
        try:
            found = self.replay.rules_call.call_with_state(event.seq, fn, state, event)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # optional: a bug in it must not hide the rest
            return ("record", f"(record_for failed: {type(exc).__name__}: {exc})")
        if isinstance(found, tuple) and len(found) == 2 and isinstance(found[0], str):
            return found
        return None

    def receipt_view(self, event: Event | None) -> ReceiptView | None:
        """The receipt of the event's call and whether it matches its pin."""
        if event is None or event.call_id is None or not self.replay.receipts.enabled:
            return None  # a source without receipts/ (a session's are its records)
        cid = event.call_id
        name = ReceiptStore.name_of(cid)
        if call_id_problem(cid):
            return ReceiptView(
                cid, name, None, "not a valid call_id: never used as a path", "missing", None
            )
        pinned = self._pin_for(event)
        got = self.replay.receipts.read(cid)
        if isinstance(got, ReceiptProblem):
            if got.absent and self.replay.following:
                # while following, a receipt not written yet is awaited, not missing
                return ReceiptView(cid, got.name, None, got.message, "pending", pinned)
            return ReceiptView(
                cid,
                got.name,
                None,
                got.message,
                "missing"
                if pinned or event.kind == "tool_finished"
                else ("denied" if event.kind == "tool_denied" else "none yet"),
                pinned,
            )
        if pinned is None:
            pin = "not pinned"
        elif pinned.lower() == got.sha256:
            pin = "matches"
        else:
            pin = "tampered"
        return ReceiptView(cid, got.name, got, got.problem, pin, pinned)

    def _pin_for(self, event: Event) -> str | None:
        value = event.payload.get("receipt_sha256")
        if isinstance(value, str):
            return value
        cid = event.call_id
        at = self.replay.calls_seen.get(cid, -1) if cid else -1
        if at >= 0:
            pinning = self.replay.ledger.event(at)
            if isinstance(pinning, Event):
                pinned = pinning.payload.get("receipt_sha256")
                return pinned if isinstance(pinned, str) else None
        return None
