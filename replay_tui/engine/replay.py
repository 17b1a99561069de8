"""The replay engine: strict validation, state after any prefix, one step's diff.

:class:`Replay` reads the ledger forward once, checking every line and
running the reducer, and keeps canonical-JSON checkpoints of the state. The
state after any prefix ``n`` is then the nearest checkpoint at or before ``n``
plus a bounded number of events: seeking does not replay from the start.
Checkpoints are spaced by event count and by the state's size, so writing
them costs a bounded share of each event, and thinned (every other one
dropped, spacing doubled) when they outgrow their memory budget, so both
memory and seek time stay bounded.

Strict replay stops at the first inconsistency. The longest valid prefix is
still available (``valid`` events), which is all that partial mode reports.
"""

from __future__ import annotations

import threading
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from replay_tui.core.errors import ERROR_CODES, CannotRun, ReplayError, RuleViolation, Warning_
from replay_tui.engine.checkpoints import JsonCheckpoints
from replay_tui.formats import temporal
from replay_tui.formats.budget import Budget, load_budget
from replay_tui.formats.envelope import Event, LineError, SequenceChecker, parse_line
from replay_tui.formats.ledger import (
    GZIP_MAGIC,
    ConvertedLedger,
    GzipLedger,
    Ledger,
    LedgerRewritten,
)
from replay_tui.formats.receipts import ReceiptStore
from replay_tui.formats.run import JSONL, RunPaths
from replay_tui.reducers import LoadedReducer
from replay_tui.reducers.base import Context, ReceiptPending, State
from replay_tui.reducers.call import RulesCaller, rules_traceback
from replay_tui.reducers.guard import EventChanged, RulesStuck, RulesWatch
from replay_tui.state import canonical
from replay_tui.state.diff import Change, diff
from replay_tui.state.history import History
from replay_tui.state.persistent import DictDraft, freeze, thaw

_MAX_WARNINGS = 1000
#: ``check`` never seeks, so it keeps few checkpoints (only to rebuild the
#: valid prefix after an error); the app keeps many, for fast jumps.
CHECK_CHECKPOINT_BUDGET = 8 << 20


@dataclass(frozen=True, slots=True)
class Pending:
    """A line held back while following: its receipt is not written yet."""

    index: int
    call_id: str
    seq: int

    @property
    def name(self) -> str:
        return ReceiptStore.name_of(self.call_id)


@dataclass(frozen=True, slots=True)
class Step:
    """What event ``seq`` did: the states around it, the changes, the rule in words."""

    seq: int
    event: Event
    before: State
    after: State
    changes: list[Change]
    explanation: str | None


class _StateNotJSON(Exception):
    pass


class _NotAState(Exception):
    pass


def _not_a_state(value: object) -> str:
    return f"apply returned {type(value).__name__}, not a state object"


class LedgerChanged(Exception):
    """A line already validated reads differently now: the file was rewritten."""


def why_not_follow(paths: RunPaths) -> str | None:
    """Why this source cannot be followed as it grows (None: it can): a
    compressed ledger or a Temporal export is read once, complete."""
    if paths.compressed:
        return "a compressed ledger is read once, complete: following is for a growing ledger"
    if paths.format != JSONL:
        return "a Temporal history is read once, complete: following is for a growing ledger"
    return None


def open_ledger(paths: RunPaths, *, following: bool = False) -> Ledger:
    """The ledger of a run in whichever format it comes (``paths.format``)."""
    refused = why_not_follow(paths) if following else None
    if refused:
        raise CannotRun(f"{paths.events}: {refused} (--follow)")
    if paths.compressed:
        return GzipLedger(paths.events)
    if paths.format == JSONL:
        return Ledger(paths.events, may_be_missing=following)
    history = temporal.load_history(paths.events)
    return ConvertedLedger(
        paths.events, history.envelope_lines(), history.sha256, total=len(history.events)
    )


class Replay:
    """Strict replay of one run. Not started until :meth:`advance` is called."""

    def __init__(
        self,
        paths: RunPaths,
        rules: LoadedReducer,
        *,
        checkpoint_every: int = 256,
        checkpoint_budget: int = 96 << 20,
        following: bool = False,
        watch: RulesWatch | None = None,
        history: bool = False,
        skip: Iterable[int] = (),
    ) -> None:
        self.paths = paths
        #: Seqs left out: a hypothetical branch of the run (``diff --skip``).
        #: They are read and checked as lines, but the rules never see them.
        self.skip = frozenset(skip)
        self.rules = rules
        self.reducer = rules.reducer
        #: While following a growing run, a line still being written and a
        #: receipt not yet written are waited for, not errors.
        self.following = following
        self.ledger = open_ledger(paths, following=following)
        #: A Temporal history carries its activities' results in its events:
        #: no receipts/ or budget.json beside it belongs to it.
        self.receipts = ReceiptStore(paths.dir, enabled=paths.format == JSONL)
        self.error: ReplayError | None = None
        self.warnings: list[Warning_] = []
        self.warning_count = 0
        #: Events in the longest valid prefix so far.
        self.valid = 0
        self.run_id: str | None = None
        self.finished = False
        every = max(1, checkpoint_every)
        self._checker = SequenceChecker(
            frozenset(self.reducer.kinds), getattr(self.reducer, "ignorable", None)
        )
        #: Kinds whose ts is recorded late by design (see TemporalRules).
        self._late_ts_kinds: frozenset[str] = frozenset(getattr(self.reducer, "late_ts_kinds", ()))
        #: call_id -> line index of the event that pins its receipt (-1: none yet).
        self.calls_seen: dict[str, int] = {}
        #: While following: the line waiting for its receipt file, if any.
        self.pending: Pending | None = None
        self._consumed = 0  # lines validated (or failed) so far
        # crc32 of each validated line (4 bytes an event): a line re-read later
        # to rebuild a state must be the line that was validated.
        self._crcs = array("I")
        self._advancing = False
        self._lock = threading.RLock()
        self.budget = Budget()
        try:
            if paths.format == JSONL:
                self.budget = load_budget(paths.dir)
        except RuleViolation as exc:
            self.error = ReplayError(exc.code, exc.message, artifact=exc.artifact)
        self.rules_call = RulesCaller(rules, watch if watch is not None else RulesWatch())
        #: Rules not built in are watched: they must return, and leave events be.
        self.guarded = self.rules_call.guarded
        self.ctx = Context(
            self.budget, self.receipts, following=following, fresh_receipts=self.guarded
        )
        self.history: History | None = None  # set below, once the rules gave a state
        try:
            initial = self.rules_call.initial_state()
        except BaseException:
            self.close()  # the ledger may hold a file (a converted history's)
            raise
        self._state: State | None = initial
        #: With ``history`` (the app, ``state``), every prefix's state is kept,
        #: sharing structure, with each event's patches: seeks and diffs cost
        #: what changed. The rules then change a draft of the frozen state
        #: (what they write is recorded), which the built-in rules and user
        #: rules that say ``drafts = True`` accept. Other user rules, and
        #: ``check``, keep one mutable state and JSON checkpoints.
        if history and self.rules_call.drafts:
            # a checkpoint costs the nodes copied since the last one: every
            # 3,072 patches keeps a 1M-event run's within budget, and a seek
            # applies at most that many patches (a few ms)
            self.history = History(
                freeze(initial), every_patches=12 * every, every_events=24 * every
            )
        self.checkpoints = JsonCheckpoints(
            initial, every=checkpoint_every, budget_bytes=checkpoint_budget
        )
        self._final: tuple[int, str, str] | None = None  # (valid, summary, digest)
        #: Called with (seq, state, kind) after each event of the forward
        #: pass, in order, with the state in place (plain or frozen; do not
        #: change it and copy what you keep): how ``when`` and ``history``
        #: watch a run at the cost of ``check``.
        self.observer: Callable[[int, State, str], None] | None = None

    # -- reading forward --------------------------------------------------
    def advance(
        self,
        *,
        progress: Callable[[int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        every: int = 8192,
        limit: int | None = None,
    ) -> int:
        """Check and apply the complete lines appended since the last call.

        After an error, lines are still indexed (so they can be shown) but
        not replayed. With ``limit``, stop once that many events are valid
        (``state --at N`` need not read past N). Returns the lines indexed.
        """
        count = 0
        with self._lock:
            self._advancing = True
        try:
            count = self._advance(progress, cancelled, every, limit)
        finally:
            with self._lock:
                self._advancing = False
        return count

    def _advance(
        self,
        progress: Callable[[int], None] | None,
        cancelled: Callable[[], bool] | None,
        every: int,
        limit: int | None,
    ) -> int:
        # Lines indexed earlier but held back (a receipt was pending) go first.
        while self._ready() and self._consumed < len(self.ledger):
            index = self._consumed
            self._consume_line(index, self.ledger.raw_line(index))
        count = 0
        for index, raw in self.ledger.scan():
            count += 1
            if self._ready() and index == self._consumed:
                self._consume_line(index, raw)
                if limit is not None and self.valid >= limit:
                    break
            if count % every == 0:
                if progress is not None:
                    progress(index + 1)
                if cancelled is not None and cancelled():
                    break
        if progress is not None:
            progress(len(self.ledger))
        return count

    def _ready(self) -> bool:
        return self.error is None and self.pending is None

    def _consume_line(self, index: int, raw: bytes) -> None:
        if index == 0 and raw.startswith(GZIP_MAGIC) and not self.ledger.compressed:
            self._consumed = 1
            self._fail(
                ReplayError(
                    "bad_encoding",
                    f"{self.ledger.path.name} is gzip-compressed: give it a .gz name (or put "
                    "it in the run folder as events.jsonl.gz) and replay-tui reads it, or "
                    "gunzip it",
                    line=1,
                    artifact=self.ledger.artifact(1),
                )
            )
            return
        if index == 0 and self.ledger.foreign_encoding:
            enc = self.ledger.foreign_encoding
            self._consumed = 1
            self._fail(
                ReplayError(
                    "bad_encoding",
                    f"{self.ledger.path.name} is {enc}, not UTF-8 (a PowerShell '>' redirect "
                    "writes UTF-16); convert it, e.g. iconv -f UTF-16 -t UTF-8",
                    line=1,
                    artifact=self.ledger.artifact(1),
                )
            )
            return
        valid_before = self.valid
        self._consume(parse_line(raw, index + 1, self.ledger.line_span(index)[0]))
        if self.valid > valid_before:
            self._crcs.append(zlib.crc32(raw))
        if self.pending is None:
            self._consumed = index + 1

    def stop_following(self) -> None:
        """From now on the ledger is judged as complete: strict rules again."""
        self.following = False
        self.ctx.following = False
        if self.pending is not None:
            self.receipts.forget(self.pending.call_id)
            self.pending = None

    def retry_pending(self) -> None:
        """A file arrived: let the line waiting for its receipt try again."""
        if self.pending is not None:
            self.receipts.forget(self.pending.call_id)
            self.pending = None

    def finish(self) -> None:
        """The ledger is complete: judge an unterminated last line, warn of orphans.

        A last line without ``\\n`` that parses is accepted with a warning;
        one that does not is ``truncated_line``. (While following a growing
        file, do not call this: the line is simply not complete yet.)
        """
        if self.finished:
            return
        self.stop_following()
        self.advance()
        tail = self.ledger.tail()
        if tail and self.error is None:
            line = len(self.ledger) + 1
            offset = self.ledger.indexed_end
            raw = tail[:-1] if tail.endswith(b"\r") else tail
            parsed = parse_line(raw, line, offset)
            if isinstance(parsed, LineError) and parsed.code in (
                "bad_json",
                "bad_encoding",
                "blank_line",
            ):
                parsed = LineError(
                    "truncated_line",
                    f"the last line has no newline and is not complete JSON ({parsed.message})",
                    line,
                    offset,
                )
            with self._lock:
                self._advancing = True
            try:
                self.ledger.accept_tail()
                if isinstance(parsed, Event):
                    self._warn("no_final_newline", "the last line has no newline", parsed.seq, line)
                valid_before = self.valid
                self._consume(parsed)
                if self.valid > valid_before:
                    self._crcs.append(zlib.crc32(raw))
            finally:
                with self._lock:
                    self._advancing = False
        elif tail:
            self.ledger.accept_tail()
        if self.error is None and len(self.ledger) == 0:
            name = self.ledger.path.name
            self._warn("empty_ledger", f"{name} has no events: nothing was replayed")
        if self.error is None:
            self._check_final_state()
        if self.error is None:
            for stem in self.receipts.stems():
                if stem not in self.calls_seen:
                    self._warn(
                        "orphan_receipt",
                        f"{ReceiptStore.name_of(stem)} is not referred to by any event",
                        artifact=ReceiptStore.name_of(stem),
                    )
        self.finished = True

    def _check_final_state(self) -> None:
        """The final state must be JSON and have a summary (short runs never
        reach a checkpoint, where this is otherwise checked)."""
        state = self._live_state()
        try:
            digest = canonical.sha256_hex(canonical.dumps(state))
        except TypeError as exc:
            self._fail_not_json(str(exc))
            return
        word = self._summary_word(state)
        if word is not None:
            self._final = (self.valid, word, digest)

    def _summary_word(self, state: State) -> str | None:
        """The rules' one word for ``state``; None, and ``reducer_error`` if
        there is no error yet, when the rules fail to give one."""
        try:
            word = self.summarize(state)
            if not isinstance(word, str):
                raise TypeError(f"summary() returned {type(word).__name__}, not a string")
            return word
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a bug in the rules, never a crash
            if self.error is None:
                self._fail(
                    ReplayError(
                        "reducer_error",
                        f"the rules' summary() raised {type(exc).__name__}: {exc}",
                        traceback=rules_traceback(),
                    )
                )
            return None

    def verify(self) -> Replay:
        """Read the whole ledger as it is now and judge it (``check``)."""
        self.advance()
        self.finish()
        return self

    def _warn(
        self,
        code: str,
        message: str,
        seq: int | None = None,
        line: int | None = None,
        artifact: str | None = None,
    ) -> None:
        self.warning_count += 1
        if len(self.warnings) < _MAX_WARNINGS:
            self.warnings.append(Warning_(code, message, seq, line, artifact))

    def _live_state(self) -> State:
        if self.history is not None:
            return self.history.head  # type: ignore[no-any-return]
        if self._state is None:
            self._state = self._rebuild(self.valid, self.ctx)
        return self._state

    def _rebuild(self, n: int, ctx: Context) -> State:
        """The state after ``n`` events: nearest checkpoint, then the events after it."""
        if self.history is not None:
            return thaw(self.history.state_at(n))  # type: ignore[no-any-return]
        at, data = self.checkpoints.nearest(n)
        state: State = orjson.loads(data)
        for index in range(at, n):
            event = self._event_for_apply(index)
            if not self.is_ignored(event):
                state = self.apply_rules(state, event, ctx)
        return state

    def iter_states(
        self, until: int, cancelled: Callable[[], bool] | None = None, start: int = 0
    ) -> Iterator[tuple[int, State]]:
        """(n, state after n events) for n = start..until, the rules run
        again on plain states (from the nearest checkpoint): for questions
        across time when there is no patch log (rules of one's own without
        drafts), and ``diff`` walking on from where two runs' events part.
        The state is the same object changed in place: copy what you keep."""
        ctx = self._side_context()
        if start:
            state: State = self._rebuild(start, ctx)
        else:
            state = orjson.loads(self.checkpoints.nearest(0)[1])
        yield start, state
        for index in range(start, min(until, self.valid)):
            if cancelled is not None and cancelled():
                return
            event = self._event_for_apply(index)
            if self.is_ignored(event):
                yield index + 1, state
                continue
            state = self.apply_rules(state, event, ctx)
            yield index + 1, state

    @property
    def watch(self) -> RulesWatch:
        """The watch over user rules (the app's clock shares one across reloads)."""
        return self.rules_call.watch

    @watch.setter
    def watch(self, watch: RulesWatch) -> None:
        self.rules_call.watch = watch

    def apply_rules(self, state: State, event: Event, ctx: Context) -> State:
        return self.rules_call.apply(state, event, ctx)

    def as_rules_take(self, state: State) -> State:
        return self.rules_call.as_rules_take(state)

    def summarize(self, state: State) -> str:
        return self.rules_call.summary(state)

    def _side_context(self) -> Context:
        """A Context for replays beside the live one (seeks from the UI thread),
        so the two never share ``memo``."""
        return Context(
            self.budget, self.receipts, following=self.ctx.following, fresh_receipts=self.guarded
        )

    def _line_error(self, e: LineError) -> ReplayError:
        return ReplayError(e.code, e.message, e.seq, e.line, e.kind, self.ledger.artifact(e.line))

    def _fail_at(self, item: Event, message: str, tb: str | None = None) -> None:
        """A bug in the rules (``reducer_error``) at event ``item``."""
        artifact = self.ledger.artifact(item.line)
        self._fail(
            ReplayError(
                "reducer_error", message, item.seq, item.line, item.kind, artifact, traceback=tb
            )
        )

    def _fail(self, error: ReplayError) -> None:
        self.error = error
        # The reducer may have half-applied the failing event: rebuild the
        # valid prefix's state from a checkpoint when next asked.
        self._state = None

    def _consume(self, item: Event | LineError) -> None:
        if isinstance(item, LineError):
            self._fail(self._line_error(item))
            return
        problem = self._checker.check(item)
        if problem is not None:
            self._fail(self._line_error(problem))
            return
        if item.kind not in self._late_ts_kinds and self._checker.ts_went_back(item):
            self._warn(
                "ts_backwards",
                f"ts {item.ts} is earlier than the event before",
                item.seq,
                item.line,
            )
        if self.run_id is None:
            self.run_id = item.run_id
        if item.seq in self.skip or item.kind not in self._checker.kinds:
            # left out of this branch, or passed only as ignorable: skipped
            with self._lock:
                if self.history is not None:
                    self.history.record(item.seq, self.history.head, [])
                self.valid = item.seq
            if self.observer is not None:
                self.observer(item.seq, self._live_state(), item.kind)
            return
        cid = item.payload.get("call_id")
        if isinstance(cid, str):
            if "receipt_sha256" in item.payload:
                self.calls_seen[cid] = item.line - 1
            else:
                self.calls_seen.setdefault(cid, -1)
        saved_ts = self._checker.last_ts
        self.ctx.warnings.clear()  # anything a rebuild with this ctx said
        try:
            if self.history is not None:
                self._next_in_history(item)
                return
            state = self._state if self._state is not None else self._live_state()
            new = self.apply_rules(state, item, self.ctx)
        except ReceiptPending as exc:
            # not an error while following: wait for the file, then retry
            self.pending = Pending(item.line - 1, exc.call_id, item.seq)
            self._checker.last_seq = item.seq - 1
            self._checker.last_ts = saved_ts
            self._state = None  # the rules may have half-applied it
            return
        except RuleViolation as exc:
            code = exc.code if exc.code in ERROR_CODES else "reducer_error"
            message = (
                exc.message if code == exc.code else f"unknown code {exc.code!r}: {exc.message}"
            )
            self._fail(
                ReplayError(
                    code,
                    message,
                    item.seq,
                    item.line,
                    item.kind,
                    exc.artifact or self.ledger.artifact(item.line),
                )
            )
            return
        except _NotAState as exc:
            self._fail_at(item, str(exc))
            return
        except _StateNotJSON as exc:
            self._fail_at(item, f"the state after this event is not JSON: {exc}")
            return
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # SystemExit from rules is a bug in them too
            known = isinstance(exc, (EventChanged, RulesStuck))
            message = str(exc) if known else f"the rules raised {type(exc).__name__}: {exc}"
            self._fail_at(item, message, rules_traceback())
            return
        if not isinstance(new, dict):
            self._fail_at(item, _not_a_state(new))
            return
        with self._lock:
            self._state = new
            self.valid = item.seq
            if self.checkpoints.due(self.valid):
                try:
                    self.checkpoints.keep(self.valid, new)
                except TypeError as exc:
                    self._fail_not_json(str(exc))
        self._rule_warnings(item)
        if self.observer is not None and self.error is None:
            self.observer(item.seq, new, item.kind)

    def _next_in_history(self, item: Event) -> None:
        """Apply ``item`` and record the frozen state it makes and its patches."""
        assert self.history is not None
        head = self.history.head
        patches: list[Change] = []
        draft = DictDraft(head)
        self.ctx.carry_memo(head, draft)
        # a draft reads and writes as the dict the rules are written for
        new = self.apply_rules(draft, item, self.ctx)  # type: ignore[arg-type]
        try:
            if new is draft:
                frozen = draft.commit(patches)
            elif isinstance(new, dict | DictDraft):  # a new dict, not the draft changed
                frozen = freeze(new)
                patches = diff(thaw(head), thaw(frozen))
            else:
                raise _NotAState(_not_a_state(new))
        except TypeError as exc:
            raise _StateNotJSON(str(exc)) from None
        self.ctx.carry_memo(draft, frozen)
        with self._lock:
            self.history.record(item.seq, frozen, patches)
            self.valid = item.seq
        self._rule_warnings(item)
        if self.observer is not None:
            self.observer(item.seq, frozen, item.kind)  # type: ignore[arg-type]

    def _rule_warnings(self, item: Event) -> None:
        """What the rules said with ``ctx.warn`` about ``item``, as warnings."""
        if self.ctx.warnings and self.error is None:
            for message in self.ctx.warnings:
                self._warn("rule_warning", message, item.seq, item.line)
            self.ctx.warnings.clear()

    # -- checkpoints ------------------------------------------------------
    def _fail_not_json(self, why: str) -> None:
        """Find the first event after which the state stopped being JSON."""
        start, data = self.checkpoints.last()
        state = orjson.loads(data)
        for index in range(start, self.valid):
            event = self._event_for_apply(index)
            if self.is_ignored(event):
                continue
            state = self.apply_rules(state, event, self.ctx)
            try:
                canonical.dumps(state)
            except TypeError as exc:
                self.valid = event.seq - 1
                self._fail_at(event, f"the state after this event is not JSON: {exc}")
                return
        self._fail(ReplayError("reducer_error", f"the state is not JSON: {why}"))

    def _event_for_apply(self, index: int) -> Event:
        raw = self.ledger.raw_line(index)
        offset = self.ledger.line_span(index)[0]
        if index < len(self._crcs):
            if zlib.crc32(raw) != self._crcs[index]:
                raise LedgerChanged(f"line {index + 1} changed since it was validated")
            # the very line that passed every envelope check: skip them
            obj = orjson.loads(raw)
            return Event(
                obj,
                obj["seq"],
                obj["run_id"],
                obj["kind"],
                obj.get("payload", {}),
                obj.get("ts"),
                obj.get("parent_seq"),
                obj.get("v", 1),
                index + 1,
                offset,
            )
        event = parse_line(raw, index + 1, offset)
        if not isinstance(event, Event):  # only valid lines are replayed
            raise LedgerChanged(f"line {index + 1} changed since it was validated")
        return event

    # -- asking about prefixes -------------------------------------------
    def state_at(self, n: int) -> State:
        """A fresh copy of the state after the first ``n`` events (0..valid)."""
        if not 0 <= n <= self.valid:
            raise IndexError(f"no state at {n}: the valid prefix has {self.valid} events")
        if self.history is not None:
            return thaw(self.history.state_at(n))  # type: ignore[no-any-return]
        with self._lock:
            # The live state is mutated in place while a worker advances.
            if n == self.valid and self._state is not None and not self._advancing:
                return orjson.loads(canonical.dumps_fast(self._state))  # type: ignore[no-any-return]
        state = self._rebuild(n, self._side_context())
        with self._lock:
            if n == self.valid and self._state is None and not self._advancing:
                self._state = orjson.loads(canonical.dumps_fast(state))
        return state

    def frozen_at(self, n: int) -> State:
        """The state after the first ``n`` events, frozen: shared with the
        store, not to be changed (cheap with ``history``)."""
        if self.history is not None:
            if not 0 <= n <= self.valid:
                raise IndexError(f"no state at {n}: the valid prefix has {self.valid} events")
            return self.history.state_at(n)  # type: ignore[no-any-return]
        return freeze(self.state_at(n))  # type: ignore[no-any-return]

    def step(self, seq: int) -> Step:
        """What event ``seq`` (1..valid) changed, and the rule in words.

        With ``history``, the states are frozen and the changes come from the
        patch log: the cost is what the event changed, not the state's size.
        """
        if not 1 <= seq <= self.valid:
            raise IndexError(f"no valid event {seq}: the valid prefix has {self.valid} events")
        if self.history is not None:
            before = self.history.state_at(seq - 1)
            after = self.history.state_at(seq)
            event = self._event_for_apply(seq - 1)
            changes = self.history.changes(seq)
            if event.seq in self.skip:
                explained: str | None = f"{event.kind}: left out (hypothetical branch), no change"
            elif self.is_ignored(event):
                explained = f"{event.kind}: ignored (workerMayIgnore), no change"
            else:
                explained = self.rules_call.explain(before, event, after)
            return Step(seq, event, before, after, changes, explained)
        before = self.state_at(seq - 1)
        before_bytes = canonical.dumps_fast(before)
        event = self._event_for_apply(seq - 1)
        if self.is_ignored(event):
            after = before
        else:
            after = self.apply_rules(before, event, self._side_context())
        before = orjson.loads(before_bytes)
        return Step(
            seq,
            event,
            before,
            after,
            diff(before, after),
            self.rules_call.explain(before, event, after),
        )

    def find_rewrite(self) -> LedgerRewritten | None:
        """Whether any byte already read changed (rehashing what was read,
        O(bytes read): call it from a worker), and if so where: the first
        validated line whose checksum differs now."""
        if not self.ledger.prefix_changed():
            return None
        return self.locate_rewrite(LedgerRewritten(0, "bytes already read changed"))

    def is_ignored(self, event: Event) -> bool:
        """An event the rules do not apply: left out of this branch
        (``skip``), or of a kind they do not know but let pass
        (``workerMayIgnore``)."""
        if event.seq in self.skip:
            return True
        return event.kind not in self._checker.kinds and self._checker.ignorable(event)

    def locate_rewrite(self, exc: LedgerRewritten) -> LedgerRewritten:
        """Where history changed, when the ledger could only say that it did
        (an edit in place, same size): the first validated line whose
        checksum differs now. O(file), and only after a rewrite."""
        if exc.offset:
            return exc
        for index in range(len(self._crcs)):
            if zlib.crc32(self.ledger.raw_line(index)) != self._crcs[index]:
                start = self.ledger.line_span(index)[0]
                return LedgerRewritten(start, f"line {index + 1} changed")
        return exc

    def checkpoint_keys(self) -> list[int]:
        if self.history is not None:
            return self.history.checkpoints()
        return self.checkpoints.keys()

    def checkpoint_bytes(self, n: int) -> bytes:
        """Canonical JSON of the state after ``n`` events (a checkpoint or rebuilt)."""
        if self.history is not None:
            return canonical.dumps(self.history.state_at(n))
        data = self.checkpoints.get(n)
        state = orjson.loads(data) if data is not None else self.state_at(n)
        return canonical.dumps(state)

    def event(self, index: int) -> Event | LineError:
        """Line ``index`` (0-based) as parsed, for display (cached)."""
        return self.ledger.event(index)

    def final_summary(self) -> tuple[str, str]:
        """(summary word, sha256 of the canonical state) after the valid prefix,
        without copying the state (a long run's state is large)."""
        if self._final is not None and self._final[0] == self.valid:
            return self._final[1], self._final[2]
        state = self.frozen_at(self.valid) if self.history is not None else self.final_state()
        digest = canonical.digest(state)
        word = self._summary_word(state) or "?"
        self._final = (self.valid, word, digest)
        return word, digest

    def still_open(self) -> list[str]:
        """What the rules say the valid prefix leaves open (why a run that
        stops here ended as it did), read from the final state in place."""
        try:
            return self.rules_call.still_open(self._live_state())
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # stuck or broken rules: say so, never crash
            return [f"(still_open failed: {type(exc).__name__}: {exc})"]

    def final_state(self) -> State:
        return self.state_at(self.valid)

    def close(self) -> None:
        self.receipts.close()
        self.ledger.close()
        if self.history is not None:
            self.history.close()


def verify(paths: RunPaths, rules: LoadedReducer, **kwargs: Any) -> Replay:
    """Open and fully check a run (the engine behind ``replay-tui check``)."""
    return Replay(paths, rules, **kwargs).verify()
