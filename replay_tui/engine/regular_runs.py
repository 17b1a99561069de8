"""The forward pass's fast path: runs of regular lines, checked at once.

Nearly every line of a real ledger is regular (:mod:`replay_tui.formats.chunks`
says what that means). A run of them is proved at once, by the native line
core (:mod:`replay_tui.core.line_core`: the longest run from a byte
offset, each line it does not prove then judged alone) or by
:func:`~replay_tui.formats.chunks.regular_events` (a group of
:data:`PROVEN_GROUP` lines, or none of it); its events are made and applied
by :meth:`RegularRuns._apply_regular` a group at a time, per event only the
rules and what they need, read from locals taken once a group (no helper
objects, no extra calls per event).
"""

from __future__ import annotations

import threading
import time
import zlib
from bisect import bisect_left
from math import inf
from typing import TYPE_CHECKING, Any

from replay_tui.core.line_core import NATIVE, RULES, NativeCore, Proof
from replay_tui.engine.native_runs import Applied
from replay_tui.engine.rules_step import (
    AlreadyFailed,
    NotAState,
    RulesStep,
    StateNotJSON,
    not_a_state,
)
from replay_tui.formats.chunks import Regular, proven_events, regular_events
from replay_tui.formats.envelope import MAX_DEPTH, Event, parse_line
from replay_tui.formats.ledger import BIG_LINE
from replay_tui.reducers.base import State
from replay_tui.state.drafts import DictDraft, Journal
from replay_tui.state.persistent import freeze

#: Regular lines are made events and applied this many at a time: they are
#: still in the processor's cache when applied (a whole chunk's, made first,
#: were read again from memory: a third of ``check``).
PROVEN_GROUP = 512


class RegularRuns(RulesStep):
    """Runs of regular lines: proved at once, applied with the least per event."""

    if TYPE_CHECKING:

        def _consume_line(self, index: int, raw: bytes) -> None: ...  # from ForwardPass

        def _consume_each(self, index: int, lines: list[bytes]) -> None: ...  # from ForwardPass

        def _ready(self) -> bool: ...  # from ForwardPass

    @property
    def rules_core(self) -> str:
        """Which rules proved this history's events: ``native`` where the
        built-in ``agent_run`` rules' native twin applied any, else ``python``."""
        return "native" if self.native.events else "python"

    @property
    def line_core(self) -> str:
        """Which path proves this history's lines: ``native`` (the compiled
        line core, for envelope ledgers when it is found) or ``python``."""
        return "native" if NATIVE is not None and self.run._parse is parse_line else "python"

    def _consume_regular(self, index: int, lines: list[bytes]) -> None:
        """Lines ``index``.. (envelope lines, past the first): by the native
        core's runs, each line it does not prove judged alone; or a group
        (:data:`PROVEN_GROUP` lines) at a time, each at once if
        :func:`regular_events` proves it whole, else a line at a time."""
        run = self.run
        if NATIVE is not None:
            self._consume_proven(index, lines, NATIVE)
            return
        checker = run._checker
        for sub in range(0, len(lines), PROVEN_GROUP):
            if not self._ready():
                return
            group = lines[sub : sub + PROVEN_GROUP]
            regular = regular_events(
                group,
                index + sub + 1,
                run.ledger.line_offsets(index + sub, len(group)),
                last_seq=checker.last_seq,
                run_id=checker.run_id,
                last_ts=checker.last_ts,
                kinds=run._chunk_kinds,
            )
            if regular is not None and (
                run.clock is None
                or max(map(len, group)) < BIG_LINE  # the app keeps big lines apart
            ):
                self._apply_regular(index + sub, group, regular)
            else:
                self._consume_each(index + sub, group)

    def _consume_proven(self, index: int, lines: list[bytes], core: NativeCore) -> None:
        """Lines ``index``..: the runs of regular lines the native core
        proves applied at once, each line it does not prove judged alone,
        then the next run."""
        run = self.run
        buf = b"\n".join(lines) + b"\n"
        checker = run._checker
        big = BIG_LINE if run.clock is not None else 0  # the app keeps big lines apart
        at = byte = 0
        n = len(lines)
        python_next = False  # (a line the native rules leave: the Python rules' run)
        while at < n and self._ready():
            rules = None if python_next else self.native.take(core, n - at)
            python_next = False
            asked: dict[str, Any] = {
                "first_seq": checker.last_seq + 1,
                "run_id": checker.run_id,
                "kinds": run._chunk_kinds,
                "max_depth": MAX_DEPTH - 1,
                "max_lines": n - at,
                "max_len": big,
            }
            if rules is not None:
                proof, ids, pins, said = self.native.prove(core, rules, buf, byte, asked)
                if proof.lines:
                    applied = lines[at : at + proof.lines]
                    self.native.settle(Applied(index + at, applied, proof, ids, pins, said))
                    at += proof.lines
                    byte = proof.end
                if proof.why == RULES:
                    self.native.hand_over()
                    python_next = True
                    continue
            else:
                # (the app's clock: each ts in seconds)
                proof = core.prove(buf, byte, **asked, seconds=run.clock is not None)
                if proof.lines:
                    self._apply_proven(index + at, lines[at : at + proof.lines], proof, buf, core)
                    at += proof.lines
                    byte = proof.end
            if at < n and self._ready():
                self._consume_line(index + at, lines[at])
                byte += len(lines[at]) + 1
                at += 1

    def _apply_proven(
        self, index: int, lines: list[bytes], proof: Proof, buf: bytes, core: NativeCore
    ) -> None:
        """Apply lines ``index``.. that the native core proved regular, a
        few hundred at a time: each group's events are made and applied
        while they are still in the processor's cache (a whole chunk's,
        made first, were read again from memory: a third of ``check``)."""
        run = self.run
        checker = run._checker
        ready = self._read_receipts_ahead(buf, proof.pins, core)
        backs = proof.backs
        for sub in range(0, len(lines), PROVEN_GROUP):
            group = lines[sub : sub + PROVEN_GROUP]
            lo, hi = bisect_left(backs, sub + 1), bisect_left(backs, sub + len(group))
            regular = proven_events(
                group,
                index + sub + 1,
                run.ledger.line_offsets(index + sub, len(group)),
                first_seq=checker.last_seq + 1,
                run_id=checker.run_id,
                timed=proof.times,
                earlier=[b - sub for b in backs[lo:hi]],  # the first: against the last ts
                last_ts=checker.last_ts,
                compact_needed=run.guarded,
                seconds=(
                    proof.seconds[sub : sub + len(group)] if proof.seconds is not None else None
                ),
            )
            piece = ready.get(sub // PROVEN_GROUP)
            if piece is not None:
                piece.wait()  # this group's receipts are read
            if regular is None:  # orjson reads them otherwise: a line at a time
                self._consume_each(index + sub, group)
            else:
                self._apply_regular(index + sub, group, regular)
            if not self._ready():
                return

    def _read_receipts_ahead(
        self, buf: bytes, pins: list[int], core: NativeCore
    ) -> dict[int, threading.Event]:
        """Read the receipts the proven lines pin on another thread (the
        native reader lets go of the interpreter's lock), a group's at a
        time, while the events are made and applied: each group's
        :class:`threading.Event` is set once its receipts are read (or
        given up: they are then read as the rules ask). Not while following
        (a receipt may be being written)."""
        run = self.run
        receipts = run.receipts
        receipts.drop_ahead()
        if not pins or run.ctx.following or not receipts.enabled:
            return {}
        pieces: dict[int, list[str]] = {}
        for at in range(0, len(pins), 3):
            cid = buf[pins[at + 1] : pins[at + 2]].decode()
            pieces.setdefault(pins[at] // PROVEN_GROUP, []).append(cid)
        ready = {group: threading.Event() for group in pieces}

        def read() -> None:
            try:
                for group, cids in pieces.items():  # in line order
                    receipts.read_ahead(cids, core.read_files)
                    ready[group].set()
            finally:
                for done in ready.values():
                    done.set()

        threading.Thread(target=read, name="receipts-ahead", daemon=True).start()
        return ready

    def _apply_regular(self, index: int, lines: list[bytes], regular: Regular) -> None:
        """Apply a chunk :func:`regular_events` proved regular: per event only
        the rules and what they need (the call ids seen, the indexes the app
        keeps); ``valid`` and the state published once, at the end."""
        run = self.run
        if run.history is not None and run.history.made_again and run.observer is None:
            self._apply_on_drafts(index, lines, regular)  # (an observer sees each event)
            return
        checker = run._checker
        events = regular.events
        ctx = run.ctx
        ctx.warnings.clear()
        history = run.history
        calls = run.calls
        clock = run.clock
        observer = run.observer
        calls_seen = run.calls_seen
        # built-in rules are called as they are (RulesCaller.apply would only pass it on)
        apply = run.rules_call.reducer.apply if not run.guarded else run.rules_call.apply
        # watched rules: a compact line is the event's bytes before the call
        by_line = run.guarded and regular.compact
        apply_line = run.rules_call.apply_line
        checkpoints = run.checkpoints
        due = checkpoints.next_due
        seconds = regular.seconds_of() if clock is not None else None
        state = None
        if history is None:
            state = run._state if run._state is not None else run._live_state()
        if run.run_id is None:
            run.run_id = events[0].run_id
        done = 0
        watching = False
        saved_ts = checker.last_ts  # the last ts before the chunk
        backs = iter(regular.backs)
        back = next(backs, -1)
        try:
            for item, cid, raw in zip(events, regular.call_ids, lines, strict=True):
                if done == back:
                    self._went_back(item)
                    back = next(backs, -1)
                if calls is not None:
                    calls.note(item.line - 1, item)
                if clock is not None:
                    clock.note(item.line - 1, seconds[done] if seconds is not None else saved_ts)
                if cid is not None:
                    if "receipt_sha256" in item.payload:
                        calls_seen[cid] = item.line - 1
                    else:
                        calls_seen.setdefault(cid, -1)
                if history is not None:
                    self._next_in_history(item)
                else:
                    new = (
                        apply_line(state, item, ctx, raw)  # type: ignore[arg-type]
                        if by_line
                        else apply(state, item, ctx)  # type: ignore[arg-type]
                    )
                    if type(new) is not dict and not isinstance(new, dict):
                        raise NotAState(not_a_state(new))
                    state = new
                    if item.seq >= due:
                        if not self._keep_checkpoint(item.seq, index, lines, done, state):
                            return
                        due = checkpoints.next_due
                    if ctx.warnings:
                        self._rule_warnings(item)
                    if observer is not None:
                        run.valid = item.seq
                        watching = True
                        observer(item.seq, state, item.kind)  # what it raises is its own
                        watching = False
                done += 1
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            if watching:
                self._settle_chunk(index, lines, done + 1, state, regular)
                raise
            self._raised_in_chunk(index, lines, done, state, regular, exc)
            return
        self._settle_chunk(index, lines, done, state, regular)

    def _apply_on_drafts(self, index: int, lines: list[bytes], regular: Regular) -> None:
        """Apply a regular chunk in the app's pass with built-in rules: on
        the draft, recording nothing (their patches are made again when
        asked for), per event only the rules; the call index, the clock,
        ``valid`` and the count of events passed noted once, at the end
        (or before a state is kept, or where the rules fail)."""
        run = self.run
        history = run.history
        assert history is not None
        events = regular.events
        ctx = run.ctx
        ctx.warnings.clear()
        apply = run.rules_call.reducer.apply  # built-in rules: called as they are
        calls_seen = run.calls_seen
        clock = run.clock
        seconds = regular.seconds_of() if clock is not None else None
        saved_ts = run._checker.last_ts  # the last ts before the chunk
        if run.run_id is None:
            run.run_id = events[0].run_id
        journal = run._journal
        if journal is None:
            journal = run._journal = Journal(history.head, recording=False)
            ctx.carry_memo(journal.base, journal.root)
        root = journal.root
        noted = done = 0

        def publish(applied: int, seen: int) -> None:
            # events[:seen] noted in the indexes the app reads, [:applied] valid
            nonlocal noted
            if run.calls is not None:
                run.calls.note_many(index + noted, events[noted:seen])
            if clock is not None:
                times = seconds[noted:seen] if seconds is not None else None
                clock.note_many(index + noted, times, seen - noted, saved_ts)
            noted = seen
            if applied:
                with run._lock:
                    history.passed(events[applied - 1].seq)
                    run.valid = events[applied - 1].seq

        due_seq, due_at = history.next_due()
        now = time.perf_counter
        backs = iter(regular.backs)
        back = next(backs, -1)
        try:
            for item, cid in zip(events, regular.call_ids, strict=True):
                if done == back:
                    self._went_back(item)
                    back = next(backs, -1)
                if cid is not None:
                    if "receipt_sha256" in item.payload:
                        calls_seen[cid] = item.line - 1
                    else:
                        calls_seen.setdefault(cid, -1)
                new = apply(root, item, ctx)
                if new is not root:  # a new dict, not the draft changed
                    if not isinstance(new, dict | DictDraft):
                        raise NotAState(not_a_state(new))
                    journal = run._journal = Journal(freeze(new), recording=False)
                    root = journal.root
                # (the clock every event: where the rules are slow, a span
                # made again stays as short as SPAN_SECONDS says)
                if item.seq >= due_seq or (due_at != inf and now() >= due_at):
                    publish(done + 1, done + 1)
                    self._keep_journal(item.seq)
                    root = run._journal.root  # type: ignore[union-attr]
                    due_seq, due_at = history.next_due()
                if ctx.warnings:
                    self._rule_warnings(item)
                done += 1
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            run._journal = None  # the rules may have half-applied the event
            if not isinstance(exc, AlreadyFailed):  # (else what is valid is said)
                publish(done, done + 1)  # the failing line is noted, as a line alone would be
            if isinstance(exc, TypeError):
                exc = StateNotJSON(str(exc))
            self._raised_in_chunk(index, lines, done, None, regular, exc)
            return
        publish(done, done)
        self._settle_chunk(index, lines, done, None, regular)

    def _raised_in_chunk(
        self,
        index: int,
        lines: list[bytes],
        done: int,
        state: State | None,
        regular: Regular,
        exc: BaseException,
    ) -> None:
        """The rules raised ``exc`` at event ``done`` of a regular chunk: the
        events before it are valid, the line checks go on from it, and the
        error (or the wait for a receipt) is said at it."""
        item = regular.events[done]
        self._settle_chunk(index, lines, done, state, regular)
        checker = self.run._checker
        saved_ts = checker.last_ts
        checker.last_seq = item.seq
        if item.ts is not None:
            checker.last_ts = item.ts_s
        self._rules_raised(item, exc, saved_ts)

    def _went_back(self, item: Event) -> None:
        self.run._went_back(item.ts, item.seq, item.line)

    def _keep_checkpoint(
        self, seq: int, index: int, lines: list[bytes], done: int, state: State
    ) -> bool:
        """A checkpoint after ``seq``, event ``done`` of the chunk from line
        ``index``; False (and the error found) if the state is not JSON."""
        run = self.run
        with run._lock:
            run._state = state
            run.valid = seq
            why = None
            try:
                if not run.ctx.settle_later or self._settle_rules():
                    run.checkpoints.keep(seq, state)
                    return True
            except TypeError as exc:
                why = str(exc)
            run._crcs.extend(map(zlib.crc32, lines[: done + 1]))
            run._consumed = index + done + 1
            if why is not None:
                self._fail_not_json(why)
            return False

    def _settle_chunk(
        self, index: int, lines: list[bytes], done: int, state: State | None, regular: Regular
    ) -> None:
        """The first ``done`` events of a regular chunk are valid: say so, and
        where the line checks go on from."""
        run = self.run
        run._crcs.extend(map(zlib.crc32, lines[:done]))
        run._consumed = index + done
        if not done:
            return
        last = regular.events[done - 1]
        run._checker.last_seq = last.seq
        if regular.times is not None:
            run._checker.last_ts = last.ts_s
        if run.history is None:
            with run._lock:
                run._state = state
                run.valid = last.seq

    def _settle_rules(self) -> bool:
        """Let the rules finish the live state (``Context.settle_later``):
        before a checkpoint of it, and at the end of the pass. False if they
        raised: the run then stops where a pass that reads every state would
        (never a crash)."""
        run = self.run
        state = run._state
        if state is None or run.error is not None:
            return True
        try:
            run.rules_call.settle(state, run.ctx)
            return True
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # a bug in the rules
            self._fail_where_raised(None, exc)  # (it turns settle_later off)
            return False
