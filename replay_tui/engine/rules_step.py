"""One event through the rules, and what their failures mean.

:class:`RulesStep` is the part of the forward pass that applies the rules:
an event's state and patches in the app's state store, the error a rules
failure makes at its seq (or the wait for a receipt while following), the
warnings the rules said, and the search for the first state that is not
JSON. :mod:`.forward` reads the lines and calls it.
"""

from __future__ import annotations

from replay_tui.core import strict_json
from replay_tui.core.errors import ERROR_CODES, ReplayError, RuleViolation
from replay_tui.engine.native_runs import NativeRuns
from replay_tui.engine.replay_core import Part, Pending, ReplayCore
from replay_tui.formats.envelope import Event
from replay_tui.reducers.base import ReceiptPending
from replay_tui.reducers.calling.caller import rules_traceback
from replay_tui.reducers.calling.guard import EventChanged, RulesStuck
from replay_tui.state import canonical
from replay_tui.state.diff import Change, diff
from replay_tui.state.drafts import DictDraft, Journal
from replay_tui.state.persistent import BigDict, FrozenDict, freeze, thaw


class StateNotJSON(Exception):
    """The rules made a state that is not JSON (raised from a state store commit)."""


class AlreadyFailed(Exception):
    """The forward pass stops: the error it stops at is recorded already."""


class NotAState(Exception):
    """The rules returned something other than a state."""


def not_a_state(value: object) -> str:
    return f"apply returned {type(value).__name__}, not a state object"


class RulesStep(Part):
    """Applying the rules to one event, for the forward pass of ``run``."""

    def __init__(self, run: ReplayCore) -> None:
        super().__init__(run)
        #: The built-in rules' native twin, where it runs them.
        self.native = NativeRuns(run)

    def _fail_at(self, item: Event, message: str, tb: str | None = None) -> None:
        """A bug in the rules (``reducer_error``) at event ``item``."""
        run = self.run
        artifact = run.ledger.artifact(item.line)
        run._fail(
            ReplayError(
                "reducer_error", message, item.seq, item.line, item.kind, artifact, traceback=tb
            )
        )

    def _rules_raised(self, item: Event, exc: BaseException, saved_ts: float | None) -> None:
        """Applying ``item`` raised ``exc``: wait for its receipt (while
        following), or stop there with the error it makes."""
        run = self.run
        if isinstance(exc, AlreadyFailed):
            return
        if run.ctx.settle_later and not isinstance(exc, ReceiptPending):
            self._fail_where_raised(item, exc)
        elif isinstance(exc, ReceiptPending):
            # not an error while following: wait for the file, then retry
            run.pending = Pending(item.line - 1, exc.call_id, item.seq)
            run._checker.last_seq = item.seq - 1
            run._checker.last_ts = saved_ts
            run._state = None  # the rules may have half-applied it
        elif isinstance(exc, RuleViolation):
            code = exc.code if exc.code in ERROR_CODES else "reducer_error"
            message = (
                exc.message if code == exc.code else f"unknown code {exc.code!r}: {exc.message}"
            )
            run._fail(
                ReplayError(
                    code,
                    message,
                    item.seq,
                    item.line,
                    item.kind,
                    exc.artifact or run.ledger.artifact(item.line),
                )
            )
        elif isinstance(exc, NotAState):
            self._fail_at(item, str(exc))
        elif isinstance(exc, StateNotJSON):
            self._fail_at(item, f"the state after this event is not JSON: {exc}")
        else:  # SystemExit from rules is a bug in them too
            known = isinstance(exc, (EventChanged, RulesStuck))
            message = str(exc) if known else f"the rules raised {type(exc).__name__}: {exc}"
            self._fail_at(item, message, rules_traceback())

    def _next_in_history(self, item: Event) -> None:
        """Apply ``item`` to the journal's draft and record its patches; keep
        the frozen state when the state store says one is due."""
        run = self.run
        history = run.history
        assert history is not None
        self.native.hand_over()  # (the state is the Python rules' from here)
        journal = run._journal
        recording = not history.made_again
        if journal is None:
            journal = run._journal = Journal(history.head, recording=recording)
            run.ctx.carry_memo(journal.base, journal.root)
        root = journal.root
        try:
            # a draft reads and writes as the dict the rules are written for
            new = run.apply_rules(root, item, run.ctx)
            patches: list[Change] = []
            if new is root:
                if recording and not journal.end_event(patches):
                    patches = self._compared(journal, item.seq)
            elif isinstance(new, dict | DictDraft):  # a new dict, not the draft changed
                frozen = freeze(new)
                if recording:
                    patches = diff(thaw(history.state_at(item.seq - 1)), thaw(frozen))
                journal = run._journal = Journal(frozen, recording=recording)
            else:
                raise NotAState(not_a_state(new))
        except BaseException as exc:
            run._journal = None  # the rules may have half-applied the event
            if isinstance(exc, TypeError):
                raise StateNotJSON(str(exc)) from None
            raise
        with run._lock:
            if recording:
                history.record(item.seq, patches)
            else:
                history.passed(item.seq)
            run.valid = item.seq
        if history.due():
            self._keep_journal(item.seq)
        self._rule_warnings(item)
        if run.observer is not None:
            run.observer(item.seq, journal.root, item.kind)

    def _compared(self, journal: Journal, seq: int) -> list[Change]:
        """Event ``seq``'s patches, comparing the states around it (when the
        journal cannot tell them: it replaced what it had changed)."""
        run = self.run
        assert run.history is not None
        frozen = self._freeze_journal(journal)
        return diff(thaw(run.history.state_at(seq - 1)), thaw(frozen))

    def _freeze_journal(self, journal: Journal) -> FrozenDict | BigDict:
        """The journal's state frozen; the rules' memo goes on with its new draft."""
        root = journal.root
        frozen = journal.freeze()
        self.run.ctx.carry_memo(root, journal.root)
        return frozen

    def _keep_journal(self, seq: int) -> None:
        """Keep the state after event ``seq`` (the last recorded) in the store."""
        run = self.run
        assert run.history is not None
        if self.native.keep(seq):  # (the native rules' state, where they hold it)
            return
        journal = run._journal
        if journal is None:
            run.history.keep(seq, run.history.head)
            return
        try:
            frozen = self._freeze_journal(journal)
        except TypeError as exc:  # a draft that records nothing is frozen only now
            run._journal = None
            self._not_json_since_kept(str(exc))
            raise AlreadyFailed from None
        memo = run.rules_call.copy_memo(run.ctx.memo_of(journal.root))
        run.history.keep(seq, frozen, memo)

    def _not_json_since_kept(self, why: str) -> None:
        """Freezing the state failed: a value the rules wrote since the last
        kept state is not JSON. The events since are applied again, each
        frozen, and the first after which the state is not JSON is the
        error; the valid prefix ends before it."""
        run = self.run
        history = run.history
        assert history is not None
        start, state = history.last_kept()
        ctx = run._side_context()
        journal = Journal(state)
        for index in range(start, run.valid):
            event = run._event_for_apply(index)
            if run.is_ignored(event):
                continue
            try:
                new = run.apply_rules(journal.root, event, ctx)
                if new is journal.root:
                    journal.end_event([])
                else:
                    journal = Journal(freeze(new))
            except TypeError as exc:
                self._unsay_after(event.seq - 1)
                history.truncate(event.seq - 1)
                self._fail_at(event, f"the state after this event is not JSON: {exc}")
                return
        run._fail(ReplayError("reducer_error", f"the state is not JSON: {why}"))

    def _rule_warnings(self, item: Event) -> None:
        """What the rules said with ``ctx.warn`` about ``item``, as warnings."""
        run = self.run
        if run.ctx.warnings and run.error is None:
            for message in run.ctx.warnings:
                run._warn("rule_warning", message, item.seq, item.line)
            run.ctx.warnings.clear()

    def _fail_where_raised(self, item: Event | None, exc: BaseException) -> None:
        """The rules raised ``exc`` at ``item`` (None: settling at the end)
        while they left work for later (``Context.settle_later``): it may be
        an earlier event's. Stop where building every state at once raises,
        as a pass that reads every state would (a bug in the rules: rare, so
        the valid prefix is replayed again to find it)."""
        run = self.run
        run.ctx.settle_later = False
        ctx = run._side_context()
        state = strict_json.loads_written(run.checkpoints.nearest(0)[1])
        events = (run._event_for_apply(i) for i in range(run.valid))
        for event in [*events, *([item] if item is not None else [])]:
            if run.is_ignored(event):
                continue
            try:
                state = run.apply_rules(state, event, ctx)
            except BaseException as found:  # the event a pass at once stops at
                if isinstance(found, KeyboardInterrupt):
                    raise
                self._unsay_after(event.seq - 1)
                self._rules_raised(event, found, None)
                return
        if item is not None:  # not raised at once: it is this event's, as far as can be told
            self._rules_raised(item, exc, None)
        else:
            message = f"the rules raised {type(exc).__name__}: {exc}"
            run._fail(ReplayError("reducer_error", message))

    def _unsay_after(self, valid: int) -> None:
        """The valid prefix is ``valid`` events: what was said of later ones is taken back."""
        run = self.run
        run.valid = valid
        later = [w for w in run.warnings if w.seq is not None and w.seq > valid]
        for w in later:
            run.warning_count -= 1
            run.warning_codes[w.code] -= 1
            if not run.warning_codes[w.code]:
                del run.warning_codes[w.code]
        run.warnings = [w for w in run.warnings if w.seq is None or w.seq <= valid]

    def _fail_not_json(self, why: str) -> None:
        """Find the first event after which the state stopped being JSON."""
        run = self.run
        start, data = run.checkpoints.nearest(0) if run.from_start else run.checkpoints.last()
        state = strict_json.loads_written(data)
        for index in range(start, run.valid):
            event = run._event_for_apply(index)
            if run.is_ignored(event):
                continue
            state = run.apply_rules(state, event, run.ctx)
            try:
                canonical.dumps(state)
            except TypeError as exc:
                run.valid = event.seq - 1
                self._fail_at(event, f"the state after this event is not JSON: {exc}")
                return
        run._fail(ReplayError("reducer_error", f"the state is not JSON: {why}"))
