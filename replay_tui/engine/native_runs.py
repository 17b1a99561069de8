"""The built-in ``agent_run`` rules' native twin in the forward pass.

Where the native line core proves runs of regular lines, the twin
(``native/src/rules/``, :mod:`replay_tui.core.native_rules`) applies them
too, in the same pass over the bytes: the state is held natively, and the
Python rules get it back (as JSON their state would write) at a line they
must judge. It never judges a line itself: a run it proves, the Python
rules prove, to the same state.

It runs in ``check``'s pass and in the app's, where the state store keeps
states and makes each event's patches again when asked for (the rules run
again from the kept state before it): there, the calls a span of lines
changed are taken into the app's draft and the state kept where the store
says one is due, and each line's call and time are noted for the call
index and the clock, from what the twin said of it. Nowhere else: not
while following a growing run, nor with rules of one's own, an observer,
or a receipts log.
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from replay_tui.core import strict_json
from replay_tui.core.line_core import NativeCore, Proof
from replay_tui.core.native_rules import NativeRules
from replay_tui.engine.replay_core import Part, ReplayCore
from replay_tui.formats.chunks import went_back_in
from replay_tui.formats.envelope import MAX_DEPTH, Event, ts_seconds
from replay_tui.formats.receipts import MAX_RECEIPT_BYTES
from replay_tui.reducers.agent_run import AgentRunRules
from replay_tui.state.drafts import Journal
from replay_tui.state.persistent import (
    INTERN_CHARS,
    SCALAR_TYPES,
    BigDict,
    FrozenDict,
    dict_rebuilt,
    dict_rebuilt_big,
    freeze,
    list_extended,
    thaw,
)

if TYPE_CHECKING:
    from array import array


class Applied(NamedTuple):
    """Lines from line ``first`` (an index) the native rules applied, and what
    :meth:`.NativeCore.prove_apply` said of them: the call ids they name
    (``ids``), for those a line pins a receipt with, each one's place in
    ``ids`` and the index of the last such line (``pins``), and each line's
    call (``said``, where asked for)."""

    first: int
    lines: list[bytes]
    proof: Proof
    ids: list[str]
    pins: list[int]
    said: array[int] | None


class NativeRuns(Part):
    """The built-in ``agent_run`` rules' native twin in a forward pass: it
    takes the state where it may run them, applies the lines the native
    core proves (and those the core leaves that the Python checks judge
    valid), and hands the state back to the Python rules at a line they
    must judge."""

    def __init__(self, run: ReplayCore) -> None:
        super().__init__(run)
        #: Events it applied.
        self.events = 0
        #: In the app, while the twin holds the state: the state as it was
        #: when last asked what changed (frozen), and which of its calls
        #: are busy (the Python rules' memo of it, kept up as it changes).
        self._frozen: Any = None
        self._memo: dict[str, Any] | None = None
        #: In the app: the seq after which the twin notes the next state to keep.
        self._next_keep = 0

    def take(self, core: NativeCore, lines: int) -> NativeRules | None:
        """The native rules holding the state, taken from the Python rules'
        where they may run (the built-in ``agent_run`` rules in ``check``'s
        pass or the app's: no observer, live receipts or receipts log) and
        taking them costs at most a few times the ``lines`` to come."""
        run = self.run
        if run._native is not None:
            return run._native
        ctx = run.ctx
        history = run.history
        fits = (
            type(run.rules_call.reducer) is AgentRunRules
            and not run.guarded
            and run.observer is None
            and run.receipts.enabled
            and not ctx.following
            and not ctx.fresh_receipts
            and not ctx.settle_later
            and ctx.receipt_log is None
            and (history is None or history.made_again)
            and (run.calls is None or not run.calls.nests)
        )
        if not fits:
            return None
        state = run._live_state() if history is None else self.journal().root
        calls = state.get("calls")
        if not isinstance(calls, Mapping) or len(calls) > 4 * lines:
            return None
        # taking the state costs its size: after the native rules left it,
        # only once the Python rules applied a quarter as many lines again
        # (each hand-over and take paid for by the lines between)
        left = run._native_left_at
        if left is not None and 4 * (run._consumed - left) < len(calls):
            return None
        if history is not None:  # the app's draft, frozen: what the twin goes on from
            journal = self.journal()
            memo = run.rules_call.copy_memo(self._rules().made_memo(state, ctx))
            frozen = journal.freeze()
            ctx.carry_memo(state, journal.root)
            state = thaw(frozen)
        budget = ctx.budget
        try:
            data = orjson.dumps(state)
        except TypeError:
            data = None
        rules = None
        if data is not None:
            rules = NativeRules.take(
                core.rules,
                data,
                budget.max_attempts,
                budget.max_tool_calls,
                budget.max_cost,
                track=history is not None,
            )
        if rules is None:  # (not again before as many lines as a take would cost)
            run._native_left_at = run._consumed
            return None
        run._native = rules
        if history is None:
            run._state = None
        else:
            run._journal = None  # (made again from the state the twin holds, if needed)
            self._frozen, self._memo = frozen, memo
            self._next_keep, _ = history.next_due()
        return rules

    def keeping(self) -> tuple[int, int]:
        """In the app, where :meth:`.NativeCore.prove_apply` is to note the
        states the store keeps: the first after this seq, then one each so
        many events (the store's spacing; the twin is never slow, so the
        store's clock is not asked); (0, 0) elsewhere."""
        history = self.run.history
        if history is None:
            return 0, 0
        return self._next_keep, history.every_events

    def prove(
        self, core: NativeCore, rules: NativeRules, buf: bytes, byte: int, asked: dict[str, Any]
    ) -> tuple[Proof, list[str], list[int], array[int] | None]:
        """:meth:`.NativeCore.prove_apply` of the lines ``asked`` from byte
        ``byte`` of ``buf``, with each line's call and time where the app
        notes them, and the states its store keeps."""
        run = self.run
        app = run.history is not None  # (the call index and the clock: each line's)
        keep_at, keep_every = self.keeping()
        return core.prove_apply(
            rules,
            buf,
            byte,
            **asked,
            receipts_fd=run.receipts.folder_fd(),
            max_size=MAX_RECEIPT_BYTES,
            seconds=app,
            calls=app,
            keep_at=keep_at,
            keep_every=keep_every,
        )

    def settle(self, applied: Applied) -> None:
        """Lines were applied natively (``applied``): where the pass goes on
        from, their times going back said, the call ids they name noted,
        each line's call and time where the app keeps them, the states the
        store keeps, and the events valid."""
        index, lines, proof, ids, pins, said = applied
        run = self.run
        checker = run._checker
        first_seq = checker.last_seq + 1
        saved_ts = checker.last_ts
        if proof.times:
            backs = [b for b in proof.backs if b < len(lines)]
            for at, ts in went_back_in(lines, backs, saved_ts):
                run._went_back(ts, first_seq + at, index + at + 1)
            seconds = proof.seconds
            checker.last_ts = (
                seconds[-1] if seconds is not None else ts_seconds(orjson.loads(lines[-1])["ts"])
            )
        checker.last_seq = last_seq = first_seq + len(lines) - 1
        if run.run_id is None:
            run.run_id = checker.run_id
        ids = list(map(sys.intern, ids))
        calls_seen = run.calls_seen
        calls_seen.update({cid: -1 for cid in ids if cid not in calls_seen})
        pinned = map(ids.__getitem__, pins[::2])
        calls_seen.update(zip(pinned, map(index.__add__, pins[1::2]), strict=True))
        if run.calls is not None and said is not None:
            keys = [ids[c] if c >= 0 else ids[-2 - c] if c < -1 else None for c in said]
            run.calls.note_keys(index, keys, [index + k for k, c in enumerate(said) if c < -1])
        if run.clock is not None:
            run.clock.note_many(index, proof.seconds, len(lines), saved_ts)
        run._crcs.extend(map(zlib.crc32, lines))
        run._consumed = index + len(lines)
        self.events += len(lines)
        history = run.history
        native = run._native
        if history is not None and native is not None:
            for seq, head, calls in native.kept():  # (in order, each after the last)
                self._take_changes(head, calls)
                with run._lock:
                    history.passed(seq)
                self._keep_frozen(seq)
        with run._lock:
            if history is not None:
                history.passed(last_seq)
            run.valid = last_seq

    def keep_due(self) -> bool:
        """In the app, the twin holding the state: the store keeps the
        state after the valid prefix next (by count alone: see :meth:`keeping`)."""
        history = self.run.history
        if history is None or self.run._native is None:
            return False
        seq, _ = history.next_due()
        return self.run.valid >= seq

    def apply_line(self, item: Event, raw: bytes) -> bool:
        """A line the line core does not prove but the checks judged valid
        (a ``parent_seq``, say), applied by the native rules where they hold
        the state and take it: the state is not handed over for one line."""
        run = self.run
        native = run._native
        assert native is not None
        folder = run.receipts.folder_fd()
        if not native.apply_line(raw, item.seq, MAX_DEPTH - 1, folder, MAX_RECEIPT_BYTES):
            return False
        with run._lock:
            if run.history is not None:
                run.history.passed(item.seq)
            run.valid = item.seq
        self.events += 1
        return True

    def journal(self) -> Journal:
        """The app's draft of the state after the valid prefix (made from
        the state store's where there is none)."""
        run = self.run
        journal = run._journal
        if journal is None:
            assert run.history is not None
            journal = run._journal = Journal(run.history.head, recording=False)
            run.ctx.carry_memo(journal.base, journal.root)
        return journal

    def keep(self, seq: int) -> bool:
        """In the app, where the twin holds the state: the state after
        ``seq`` (the valid prefix) kept in the store, as the Python rules'
        would be (True); False where it does not hold it."""
        run = self.run
        if run._native is None or run.history is None:
            return False
        self._drain()
        self._keep_frozen(seq)
        return True

    def _keep_frozen(self, seq: int) -> None:
        """The state the twin held after ``seq``, frozen, kept in the store
        with the rules' memo of it; the next one kept a span after it."""
        run = self.run
        history = run.history
        assert history is not None
        history.keep(seq, self._frozen, run.rules_call.copy_memo(self._memo))
        self._next_keep = seq + history.every_events

    def _drain(self) -> None:
        """The state the twin holds, frozen (see :meth:`_take_changes`)."""
        native = self.run._native
        assert native is not None
        self._take_changes(*native.changes())

    def _take_changes(self, head_data: bytes, calls_data: bytes) -> None:
        """What the twin changed (:meth:`.NativeRules.changes`), made the
        next frozen state (sharing all it did not change), the rules'
        memo of it kept up."""
        head = strict_json.loads_written(head_data)
        changed = strict_json.loads_written(calls_data)
        state = self._frozen
        calls = state["calls"]
        # (an id one string: the call index's, the receipts', each state's)
        writes = {sys.intern(cid): _frozen_call(cid, call, calls) for cid, call in changed.items()}
        if self._memo is not None:
            self._rules().calls_changed(self._memo, changed)
        top: dict[str, Any] = {}
        for key, value in head.items():
            if key == "checks":
                if value:
                    top[key] = list_extended(state[key], [freeze(v) for v in value])
            else:
                top[key] = freeze(value)
        if writes:
            rebuilt = dict_rebuilt_big if type(calls) is BigDict else dict_rebuilt
            top["calls"] = rebuilt(calls, {}, writes, ())
        self._frozen = dict_rebuilt(state, {}, top, ())

    def _rules(self) -> AgentRunRules:
        reducer = self.run.rules_call.reducer
        assert isinstance(reducer, AgentRunRules)  # (the only rules it takes)
        return reducer

    def hand_over(self) -> None:
        """The native rules leave the next line to the Python rules: the
        state is theirs again. In ``check``, kept, where a checkpoint is
        due (where they fail, the state is rebuilt from here, not from the
        start); in the app, its draft made of the state the twin held."""
        run = self.run
        if run._native is None:
            return
        if run.history is not None:
            self._drain()
            native, run._native = run._native, None
            run._native_left_at = run._consumed
            native.close()
            journal = run._journal = Journal(self._frozen, recording=False)
            if self._memo is not None:
                run.ctx.adopt_memo(journal.root, self._memo)
            self._frozen, self._memo = None, None
            return
        state = run._live_state()
        if run.checkpoints.due(run.valid):
            run.checkpoints.keep(run.valid, state)


#: A call's status words, one string each (as the rules' literals are).
_STATUS = {
    word: sys.intern(word) for word in ("proposed", "allowed", "denied", "started", "finished")
}


def _frozen_call(cid: str, call: dict[str, Any], calls: Any) -> FrozenDict:
    """Call ``cid`` as the twin wrote it (whole, if new: it has a ``tool``;
    else only what its steps change, over the call in ``calls``) frozen:
    made as :func:`freeze` makes one, without a call per member (a 1M
    run's hundred thousand calls, several times each)."""
    call["status"] = _STATUS.get(call["status"], call["status"])
    if "tool" in call:
        tool = call["tool"]
        if type(tool) is not str:
            call["tool"] = freeze(tool)
        elif len(tool) <= INTERN_CHARS:
            call["tool"] = sys.intern(tool)
        if type(call["args"]) not in SCALAR_TYPES:
            call["args"] = freeze(call["args"])
    else:
        call = {**calls[cid], **call}
    reason = call["reason"]
    if reason is not None:
        if type(reason) not in SCALAR_TYPES:
            call["reason"] = freeze(reason)
        elif type(reason) is str and len(reason) <= INTERN_CHARS:
            call["reason"] = sys.intern(reason)
    return FrozenDict(call)
