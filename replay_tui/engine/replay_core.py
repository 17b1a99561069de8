"""The state of one strict replay, and what every part of it shares.

:class:`ReplayCore` opens the run (ledger, receipts, budget, rules) and
holds what the forward pass (:mod:`.forward`), following a growing file
(:mod:`.follow`) and seeks (:mod:`.seek`) all read and write: the valid
prefix, the live state, the checkpoints or the state store, the line
checksums, and the few primitives they all call (recording an error or a
warning, re-reading a validated line, rebuilding a state, calling the
rules). :class:`~replay_tui.engine.replay.Replay` is this state and holds
the parts, each given it as ``run``. Its underscore attributes are the
engine's own: the parts read and write them, nothing outside ``engine/``
does. On the per-event path a part takes what it reads into locals once a
group or a line, not an attribute chain per event.
"""

from __future__ import annotations

import threading
import weakref
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial

from replay_tui.core import strict_json
from replay_tui.core.errors import CannotRun, ReplayError, RuleViolation, Warning_
from replay_tui.core.native_rules import NativeRules
from replay_tui.engine.checkpoints import JsonCheckpoints
from replay_tui.engine.indexes.calls import CallIndex
from replay_tui.engine.indexes.causes import CauseIndex
from replay_tui.engine.indexes.clock import EventClock
from replay_tui.formats import temporal
from replay_tui.formats.budget import Budget, load_budget
from replay_tui.formats.envelope import Event, LineError, SequenceChecker, event_of
from replay_tui.formats.gemini.document import Document, DocumentLines, is_document
from replay_tui.formats.gemini.lines import GeminiLines
from replay_tui.formats.inspect import open_sample
from replay_tui.formats.inspect.follow import SampleToCome
from replay_tui.formats.langgraph.source import LANGGRAPH, ThreadLedger
from replay_tui.formats.ledger import ConvertedLedger, GzipLedger, Ledger
from replay_tui.formats.otel.lines import (
    TraceLedger,
    TraceLinesLedger,
    collector_lines,
    one_line,
)
from replay_tui.formats.receipts import ReceiptStore
from replay_tui.formats.run import INSPECT, JSONL, OTEL, RunPaths
from replay_tui.formats.sessions import GEMINI, SESSION_FORMATS, lines_for, read_head
from replay_tui.reducers import LoadedReducer
from replay_tui.reducers.base import FAILED_CALL, Context, State, StateView, call_facts
from replay_tui.reducers.calling.caller import RulesCaller, rules_traceback
from replay_tui.reducers.calling.guard import RulesWatch
from replay_tui.state import canonical
from replay_tui.state.drafts import Journal
from replay_tui.state.history import History
from replay_tui.state.native_state import NativeView
from replay_tui.state.persistent import freeze, thaw

_MAX_WARNINGS = 1000


@dataclass(frozen=True, slots=True)
class Pending:
    """A line held back while following: its receipt is not written yet."""

    index: int
    call_id: str
    seq: int

    @property
    def name(self) -> str:
        return ReceiptStore.name_of(self.call_id)


class LedgerChanged(Exception):
    """A line already validated reads differently now: the file was rewritten."""


def why_not_follow(paths: RunPaths) -> str | None:
    """Why this source cannot be followed as it grows (None: it can): a
    compressed ledger or a Temporal export is read once, complete."""
    if paths.compressed:
        return "a compressed ledger is read once, complete: following is for a growing ledger"
    if paths.format == OTEL:
        if collector_lines(paths.events):
            return None
        return (
            "a trace document is read once, complete: following is for the Collector's "
            "JSON lines (one export request a line)"
        )
    if paths.format == GEMINI and is_document(read_head(paths.events)):
        return (
            "a Gemini CLI session document (.json) is read once, complete: following is for "
            "a session's JSON lines (.jsonl)"
        )
    if paths.format == LANGGRAPH and paths.tip is not None:
        return "a fork is followed no more once it has a newer branch: follow the thread itself"
    if paths.format == LANGGRAPH:
        return None
    if paths.format == INSPECT:
        return None  # a sample is followed until the log holds it (see formats/inspect/follow.py)
    if paths.format != JSONL and paths.format not in SESSION_FORMATS:
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
    if paths.format == GEMINI:
        return _gemini_ledger(paths)
    if paths.format in SESSION_FORMATS:
        # the session file is the ledger: indexed in place, never converted
        return Ledger(paths.events, mapping=lines_for(paths.format, paths.events))
    if paths.format == LANGGRAPH:
        return ThreadLedger(
            paths.url or paths.events, paths.thread, paths.ns, paths.tip, following=following
        )
    if paths.format == OTEL:
        if collector_lines(paths.events) and (following or not one_line(paths.events)):
            return TraceLinesLedger(paths.events)
        return TraceLedger(paths.events)
    if paths.format == INSPECT and following:
        return SampleToCome(paths.events, paths.sample)
    if paths.format == INSPECT:
        sample = open_sample(paths.events, paths.sample)
        return ConvertedLedger(paths.events, sample.lines, sample.sha256, total=sample.events)
    history = temporal.load_history(paths.events)
    return ConvertedLedger(
        paths.events, history.envelope_lines(), history.sha256, total=len(history.events)
    )


def _gemini_ledger(paths: RunPaths) -> Ledger:
    """A Gemini CLI session: its JSON lines read in place, or the older
    single document converted to a line for each message."""
    if is_document(read_head(paths.events)):
        doc = Document(paths.events)
        return ConvertedLedger(
            paths.events,
            doc.lines(),
            doc.sha256,
            total=len(doc),
            mapping=DocumentLines(paths.events),
        )
    return Ledger(paths.events, mapping=GeminiLines(paths.events))


def _ends_in_failure(reducer: object, event: Event) -> bool:
    """Whether ``event`` ends its call in failure, as built-in rules word it
    (``call_facts``; rules of one's own are not asked). A function of the
    rules, not a method of the replay: the call index it is given to must
    not keep the replay alive (see :meth:`ReplayCore._hold_parts`)."""
    said = call_facts(reducer, event)
    return said is not None and said.status in FAILED_CALL


def _end_kinds(reducer: object) -> frozenset[str] | None:
    """The only kinds whose ``call_facts`` can end a call in failure, where
    built-in rules say (``call_end_kinds``); None: ask of every kind."""
    kinds = getattr(reducer, "call_end_kinds", None)
    if isinstance(kinds, frozenset) and all(isinstance(k, str) for k in kinds):
        return kinds
    return None


def _validated_in(crcs: array[int], index: int, raw: bytes) -> bool:
    """Line ``index`` is the very line strict replay accepted (by its crc32
    in ``crcs``, the replay's: given to the ledger, which must not keep the
    replay alive)."""
    return index < len(crcs) and zlib.crc32(raw) == crcs[index]


#: A checkpoint spacing no run reaches.
_NEVER = 1 << 62


class ReplayCore:
    """What a replay holds, and the primitives its parts share (see the module)."""

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
        record_patches: bool = False,
        skip: Iterable[int] = (),
    ) -> None:
        self.paths = paths
        #: Seqs left out: a hypothetical branch of the run (``diff --skip``).
        #: They are read and checked as lines, but the rules never see them.
        self.skip = frozenset(skip)
        self.rules = rules
        self.reducer = rules.reducer
        #: Rules whose memo holds what they read of earlier events (their
        #: state holds only what a user reads): a prefix's state is rebuilt
        #: by replaying from the first event, never from a later checkpoint,
        #: so a seek gives the state a replay straight through gives.
        self.from_start = getattr(self.reducer, "memo_holds_history", False) is True
        #: While following a growing run, a line still being written and a
        #: receipt not yet written are waited for, not errors.
        self.following = following
        self.ledger = open_ledger(paths, following=following)
        #: A Temporal history carries its activities' results in its events:
        #: no receipts/ or budget.json beside it belongs to it.
        self.receipts = ReceiptStore(paths.dir, enabled=paths.format == JSONL)
        self._start_judging()
        self._load_budget()
        initial = self._start_rules(watch, history=history, following=following)
        self._keep_states(
            initial, history, checkpoint_every, checkpoint_budget, record=record_patches
        )
        self._final: tuple[int, str, str] | None = None  # (valid, summary, digest)
        self._still_open: tuple[int, list[str]] | None = None  # (valid, what is open)
        #: Called with (seq, state, kind) after each event of the forward
        #: pass, in order, with the state in place (plain, or the app's draft;
        #: do not change it and copy what you keep): how ``when`` and ``history``
        #: watch a run at the cost of ``check``.
        self.observer: Callable[[int, State, str], None] | None = None
        self._hold_parts()

    def _hold_parts(self) -> None:
        """Make the parts that work on this state (the replay's: see
        :class:`~replay_tui.engine.replay.Replay`), once it is opened.

        Nothing the replay holds refers back to it but weakly (each part is
        a :class:`Part`): a replay let go of is freed at once. Its state
        store freezes what the cyclic collector tracks
        (:meth:`~replay_tui.state.history.History.keep`), so a replay in a
        cycle would never be freed: the app's every reload kept the last."""

    def _start_judging(self) -> None:
        """What judging the ledger keeps, before its first line: no error yet,
        no valid event, the line checker and how a line is parsed, and what
        the forward pass records of each line (calls, causes, checksums)."""
        self.error: ReplayError | None = None
        self.warnings: list[Warning_] = []
        self.warning_count = 0
        #: Warnings by code, all of them (``warnings`` keeps the first few).
        self.warning_codes: dict[str, int] = {}
        #: Events in the longest valid prefix so far.
        self.valid = 0
        self.run_id: str | None = None
        self.finished = False
        self._checker = self._line_checker()
        #: How a line becomes an event: envelope v1, or a session's records.
        self._parse = self.ledger.parse
        mapping = self.ledger.mapping
        self._reread = mapping.reread if mapping is not None else None
        #: Kinds whose ts is recorded late by design (see TemporalRules).
        self._late_ts_kinds: frozenset[str] = frozenset(getattr(self.reducer, "late_ts_kinds", ()))
        #: Kinds a chunk may be read at once with: a late ts is not the clock's,
        #: so events of those kinds are read a line at a time.
        self._chunk_kinds = self._checker.kinds - self._late_ts_kinds
        #: call_id -> line index of the event that pins its receipt (-1: none yet).
        self.calls_seen: dict[str, int] = {}
        #: Each event's parent and the events naming it (``p`` / ``P``).
        self.causes = CauseIndex()
        #: While following: the line waiting for its receipt file, if any.
        self.pending: Pending | None = None
        self._consumed = 0  # lines validated (or failed) so far
        # crc32 of each validated line (4 bytes an event): a line re-read later
        # to rebuild a state must be the line that was validated.
        self._crcs = array("I")
        if mapping is not None:
            self.ledger.validated = partial(_validated_in, self._crcs)
        self._advancing = False
        self._lock = threading.RLock()

    def _load_budget(self) -> None:
        """The run's ``budget.json`` (a ledger's only): one that breaks its
        rules is the replay's error before any event."""
        self.budget = Budget()
        try:
            if self.paths.format == JSONL:
                self.budget = load_budget(self.paths.dir)
        except RuleViolation as exc:
            self.error = ReplayError(exc.code, exc.message, artifact=exc.artifact)

    def _start_rules(self, watch: RulesWatch | None, *, history: bool, following: bool) -> State:
        """The rules called (watched unless built in), the call index and the
        clock the app reads, the context events are applied with, and the
        initial state the rules give (returned; the ledger is closed if they fail)."""
        self.rules_call = RulesCaller(self.rules, watch if watch is not None else RulesWatch())
        #: Rules not built in are watched: they must return, and leave events be.
        self.guarded = self.rules_call.guarded
        #: Which events make one call, where the rules say (the app's ``v``).
        call_of = self.rules_call.call_of() if history else None
        nests = not self.guarded and getattr(self.reducer, "calls_nest", False) is True
        parent_of = getattr(self.reducer, "call_parent", None) if nests else None
        self.calls: CallIndex | None = (
            CallIndex(
                call_of,
                None if self.guarded else partial(_ends_in_failure, self.reducer),
                nests=nests,
                parent_of=parent_of if callable(parent_of) else None,
                end_kinds=_end_kinds(self.reducer) if not self.guarded else None,
            )
            if call_of is not None
            else None
        )
        #: When each event happened (the app's overview strip).
        self.clock: EventClock | None = EventClock() if history else None
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
        #: The app's draft across the events since the last kept state (see
        #: :meth:`.rules_step.RulesStep._next_in_history`); None: made when next needed.
        self._journal: Journal | None = None
        #: The state while the built-in rules run natively (``_state`` is
        #: then None): given back as JSON when the state is next needed.
        self._native: NativeRules | None = None
        #: The line the native rules last left the state at (None: never).
        self._native_left_at: int | None = None
        return initial

    def _line_checker(self) -> SequenceChecker:
        """What every line must be: the envelope's rules, or a session format's."""
        mapping = self.ledger.mapping
        kinds = frozenset(self.reducer.kinds)
        ignorable = getattr(self.reducer, "ignorable", None)
        if mapping is None:
            return SequenceChecker(kinds, ignorable)
        return mapping.checker(kinds, ignorable, self.ledger.raw_line)

    def _keep_states(
        self, initial: State, history: bool, every: int, budget: int, *, record: bool
    ) -> None:
        """With ``history`` (the app, ``state``), every prefix's state is kept,
        sharing structure, with each event's patches: seeks and diffs cost
        what changed. The rules then change a draft of the frozen state
        (what they write is recorded), which the built-in rules and user
        rules that say ``drafts = True`` accept. Other user rules, and
        ``check``, keep one mutable state and JSON checkpoints."""
        #: The forward pass records no patches: they are made again from
        #: the kept states when asked for (:class:`.seek.MadeAgain`), for the built-in
        #: rules that can go on from any state (not the trace rules, whose
        #: memo holds history; user rules are watched, and record them).
        self.patches_made_again = False
        if history and self.rules_call.drafts:
            spacing = max(1, every)
            # (``record``: the caller reads every event's patches at once, a
            # chart of the whole run: cheaper made in the pass than again)
            if not self.guarded and not self.from_start and not record:
                # a state kept every 512 events, or 5 ms of the pass if
                # sooner: a seek runs the rules over at most that many again
                self.patches_made_again = True
                self.history = History(
                    freeze(initial),
                    every_patches=1 << 62,
                    every_events=2 * spacing,
                    every_seconds=SPAN_SECONDS,
                )
            else:
                # a checkpoint costs the nodes copied since the last one: every
                # 3,072 patches keeps a 1M-event run's within budget, and a seek
                # applies at most that many patches (a few ms)
                self.history = History(
                    freeze(initial), every_patches=12 * spacing, every_events=24 * spacing
                )
        # a replay that will not seek keeps few (each after as many events as
        # before it): only --partial after an error rebuilds, replaying at most
        # half; rules whose memo holds history are rebuilt from the first
        # event, so only the initial state is kept for them
        self.checkpoints = JsonCheckpoints(
            initial,
            every=_NEVER if self.from_start else every,
            budget_bytes=budget,
            growth=None if history else 1,
        )

    def close(self) -> None:
        """Release what the replay holds open: receipts, ledger, patch log."""
        self.receipts.close()
        self.ledger.close()
        if self.history is not None:
            self.history.close()

    def _went_back(self, ts: str | None, seq: int, line: int) -> None:
        self._warn("ts_backwards", f"ts {ts} is earlier than the event before", seq, line)

    def _fail(self, error: ReplayError) -> None:
        """Record the error the forward pass stops at."""
        self.error = error
        # The reducer may have half-applied the failing event: rebuild the
        # valid prefix's state from a checkpoint when next asked.
        self._state = None
        self._journal = None

    def _warn(
        self,
        code: str,
        message: str,
        seq: int | None = None,
        line: int | None = None,
        artifact: str | None = None,
    ) -> None:
        self.warning_count += 1
        self.warning_codes[code] = self.warning_codes.get(code, 0) + 1
        if len(self.warnings) < _MAX_WARNINGS:
            self.warnings.append(Warning_(code, message, seq, line, artifact))

    def _summary_word(self, state: StateView) -> str | None:
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

    def _live_state(self) -> State:
        """The state after the valid prefix, in place (rebuilt if it was dropped)."""
        if self.history is not None:
            return self.history.head  # type: ignore[no-any-return]
        if self._state is None and self._native is not None:
            native, self._native = self._native, None
            self._native_left_at = self._consumed
            data = native.state()
            native.close()  # (its memory first: a 1M run's state is 40 MB)
            self._state = strict_json.loads_written_big(data)
        if self._state is None:
            self._state = self._rebuild(self.valid, self.ctx)
        return self._state

    def _final_view(self) -> StateView:
        """The state after the valid prefix, to read (never changed): the
        native rules' own where they hold it (not made whole in Python)."""
        if self._state is None and self._native is not None:
            return NativeView(self._native)
        return self._live_state()

    @staticmethod
    def _final_digest(state: StateView) -> str:
        """:func:`canonical.digest` of ``state``, from :meth:`_final_view`."""
        return state.digest() if isinstance(state, NativeView) else canonical.digest(state)

    def _rebuild(self, n: int, ctx: Context) -> State:
        """The state after ``n`` events: nearest checkpoint, then the events
        after it (from the first event for rules whose memo holds history:
        ``ctx``'s memo then serves the state returned)."""
        if self.history is not None:
            return thaw(self.history.state_at(n))  # type: ignore[no-any-return]
        at, data = self.checkpoints.nearest(0 if self.from_start else n)
        state: State = strict_json.loads_written(data)
        for index in range(at, n):
            event = self._event_for_apply(index)
            if not self.is_ignored(event):
                state = self.apply_rules(state, event, ctx)
        return state

    def _events_for_apply(self, start: int, end: int) -> Iterator[Event]:
        """Lines ``start`` .. ``end - 1`` again, as :meth:`_event_for_apply`
        gives each, read a few hundred at a time (a span made again, a
        question's run): envelope lines judged valid, as they were, made at
        once (:meth:`~replay_tui.formats.ledger.Ledger.valid_again`)."""
        ledger = self.ledger
        crcs = self._crcs
        for at in range(start, end, _REREAD_LINES):
            count = min(_REREAD_LINES, end - at)
            raws = ledger.raw_lines(at, count)
            group = ledger.valid_again(at, raws, crcs) if self._reread is None else None
            if group is not None:
                yield from group
            else:  # each says what changed, in turn
                yield from map(self._event_for_apply, range(at, at + count), raws)

    def _event_for_apply(self, index: int, raw: bytes | None = None) -> Event:
        """Line ``index`` again (``raw``: its bytes, read already), for the
        rules: the line validated (by its crc32) or :class:`LedgerChanged`."""
        if raw is None:
            raw = self.ledger.raw_line(index)
        offset = self.ledger.line_span(index)[0]
        if index < len(self._crcs):
            if zlib.crc32(raw) != self._crcs[index]:
                raise LedgerChanged(f"line {index + 1} changed since it was validated")
            # the very line that passed every envelope check: skip them
            kept = self.ledger.kept_big(index)
            if kept is not None:
                return kept
            if self._reread is not None:
                return self._reread(raw, index + 1, offset)
            return event_of(strict_json.loads_written(raw), index + 1, offset)
        event = self._parse(raw, index + 1, offset)
        if not isinstance(event, Event):  # only valid lines are replayed
            raise LedgerChanged(f"line {index + 1} changed since it was validated")
        return event

    def is_ignored(self, event: Event) -> bool:
        """An event the rules do not apply: left out of this branch
        (``skip``), or of a kind they do not know but let pass
        (``workerMayIgnore``)."""
        if event.seq in self.skip:
            return True
        return event.kind not in self._checker.kinds and self._checker.ignorable(event)

    @property
    def ignored_words(self) -> str:
        """How an event the rules let pass unread is named (the rules'
        ``ignored_words``; Temporal's: ``ignored (workerMayIgnore)``)."""
        words = getattr(self.reducer, "ignored_words", None)
        return words if isinstance(words, str) else "ignored (workerMayIgnore)"

    @property
    def watch(self) -> RulesWatch:
        """The watch over user rules (the app's clock shares one across reloads)."""
        return self.rules_call.watch

    @watch.setter
    def watch(self, watch: RulesWatch) -> None:
        self.rules_call.watch = watch

    def apply_rules(self, state: State, event: Event, ctx: Context) -> State:
        """The rules' ``apply``, called as their kind needs (watched if not built in)."""
        return self.rules_call.apply(state, event, ctx)

    def as_rules_take(self, state: StateView) -> StateView:
        return self.rules_call.as_rules_take(state)

    def summarize(self, state: StateView) -> str:
        return self.rules_call.summary(state)

    def _side_context(self) -> Context:
        """A Context for replays beside the live one (seeks from the UI thread),
        so the two never share ``memo``."""
        return Context(
            self.budget, self.receipts, following=self.ctx.following, fresh_receipts=self.guarded
        )

    def event(self, index: int) -> Event | LineError:
        """Line ``index`` (0-based) as parsed, for display (cached)."""
        return self.ledger.event(index)


#: Where the patches are made again, a state is kept at least this often in
#: the pass's time (seconds), so that making a span again (two to three
#: times the pass's work on it) takes a key's worth of time, whatever an
#: event costs the rules.
SPAN_SECONDS = 0.005
#: Lines read again at once when a span is made again.
_REREAD_LINES = 256


class Part:
    """A part of a replay (its forward pass, following, seeking, results),
    given the replay's state as :attr:`run`. Held weakly: the replay holds
    its parts, and a cycle between them would outlive the replay (see
    :meth:`ReplayCore._hold_parts`)."""

    def __init__(self, run: ReplayCore) -> None:
        self._run = weakref.ref(run)

    @property
    def run(self) -> ReplayCore:
        """The replay's state (a part is never used once its replay is gone)."""
        run = self._run()
        if run is None:
            raise ReferenceError("this part's replay is gone")
        return run
