"""Seeks and steps: the state after any prefix, and what one event did.

With a state store (``history``) every prefix's frozen state is at hand;
without one, the nearest JSON checkpoint plus a bounded number of events
is replayed again, beside the live state (a side :class:`Context`), so
seeking never disturbs the forward pass. Rules whose memo holds what they
read (``memo_holds_history``, the trace rules) are replayed from the first
event instead: their state alone cannot be gone on from.

With the built-in rules the app's pass records no patches: what an event
changed is made again (:class:`MadeAgain`), by running the rules from the
state kept before it beside the pass (a side context) on a journal, and the
state they end at is checked against the one kept after
(:func:`~replay_tui.state.diff.differs_along`): rules that do not give the
same state twice are named, never shown as what happened.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from replay_tui.core import strict_json
from replay_tui.core.words import plural
from replay_tui.engine.replay_core import Part
from replay_tui.formats.envelope import Event
from replay_tui.reducers.base import Context, State, StateView
from replay_tui.state import canonical
from replay_tui.state.diff import MISSING, Change, diff, differs_along, path_str
from replay_tui.state.drafts import DictDraft, Journal
from replay_tui.state.history import apply_changes
from replay_tui.state.persistent import freeze, thaw


@dataclass(frozen=True, slots=True)
class Step:
    """What event ``seq`` did: the states around it, the changes, the rule in words."""

    seq: int
    event: Event
    before: StateView
    after: StateView
    changes: list[Change]
    explanation: str | None


class Seeking(Part):
    """Answers about prefixes of ``run``'s valid prefix, for the UI and the questions."""

    def state_at(self, n: int) -> State:
        """A fresh copy of the state after the first ``n`` events (0..valid)."""
        run = self.run
        if not 0 <= n <= run.valid:
            raise IndexError(f"no state at {n}: the valid prefix has {plural(run.valid, 'event')}")
        if run.history is not None:
            return thaw(run.history.state_at(n))  # type: ignore[no-any-return]
        with run._lock:
            # The live state is mutated in place while a worker advances.
            live = run._state is not None or run._native is not None
            if n == run.valid and live and not run._advancing:
                return strict_json.loads_written(canonical.dumps_fast(run._live_state()))  # type: ignore[no-any-return]
        state = run._rebuild(n, run._side_context())
        with run._lock:
            # (a copy has no memo: rules whose memo holds history rebuild their own)
            keep = not run._advancing and not run.from_start
            if n == run.valid and run._state is None and keep:
                run._state = strict_json.loads_written(canonical.dumps_fast(state))
        return state

    def frozen_at(self, n: int) -> StateView:
        """The state after the first ``n`` events, frozen: shared with the
        store, not to be changed (cheap with ``history``)."""
        run = self.run
        if run.history is not None:
            if not 0 <= n <= run.valid:
                raise IndexError(
                    f"no state at {n}: the valid prefix has {plural(run.valid, 'event')}"
                )
            return run.history.state_at(n)  # type: ignore[no-any-return]
        return freeze(self.state_at(n))  # type: ignore[no-any-return]

    def step(self, seq: int) -> Step:
        """What event ``seq`` (1..valid) changed, and the rule in words.

        With ``history``, the states are frozen and the changes come from the
        patch log: the cost is what the event changed, not the state's size.
        """
        run = self.run
        if not 1 <= seq <= run.valid:
            raise IndexError(
                f"no valid event {seq}: the valid prefix has {plural(run.valid, 'event')}"
            )
        if run.history is not None:
            before = run.history.state_at(seq - 1)
            after = run.history.state_at(seq)
            event = run._event_for_apply(seq - 1)
            changes = run.history.changes(seq)
            if event.seq in run.skip:
                explained: str | None = f"{event.kind}: left out (hypothetical branch), no change"
            elif run.is_ignored(event):
                explained = f"{event.kind}: {run.ignored_words}, no change"
            else:
                explained = run.rules_call.explain(before, event, after)
            return Step(seq, event, before, after, changes, explained)
        ctx = run._side_context()
        # rules whose memo holds history go on from a state rebuilt with its memo
        before = run._rebuild(seq - 1, ctx) if run.from_start else self.state_at(seq - 1)
        before_bytes = canonical.dumps_fast(before)
        event = run._event_for_apply(seq - 1)
        after = before if run.is_ignored(event) else run.apply_rules(before, event, ctx)
        before = strict_json.loads_written(before_bytes)
        return Step(
            seq,
            event,
            before,
            after,
            diff(before, after),
            run.rules_call.explain(before, event, after),
        )

    def iter_states(
        self, until: int, cancelled: Callable[[], bool] | None = None, start: int = 0
    ) -> Iterator[tuple[int, State]]:
        """(n, state after n events) for n = start..until, the rules run
        again on plain states (from the nearest checkpoint): for questions
        across time when there is no patch log (rules of one's own without
        drafts), and ``diff`` walking on from where two runs' events part.
        The state is the same object changed in place: copy what you keep."""
        run = self.run
        ctx = run._side_context()
        if start:
            state: State = run._rebuild(start, ctx)
        else:
            state = strict_json.loads_written(run.checkpoints.nearest(0)[1])
        yield start, state
        for index in range(start, min(until, run.valid)):
            if cancelled is not None and cancelled():
                return
            event = run._event_for_apply(index)
            if run.is_ignored(event):
                yield index + 1, state
                continue
            state = run.apply_rules(state, event, ctx)
            yield index + 1, state

    def final_summary(self) -> tuple[str, str]:
        """(summary word, sha256 of the canonical state) after the valid prefix,
        without copying the state (a long run's state is large)."""
        run = self.run
        if run._final is not None and run._final[0] == run.valid:
            return run._final[1], run._final[2]
        state = self.frozen_at(run.valid) if run.history is not None else self.final_state()
        digest = canonical.digest(state)
        word = run._summary_word(state) or "?"
        run._final = (run.valid, word, digest)
        return word, digest

    def still_open(self) -> list[str]:
        """What the rules say the valid prefix leaves open (why a run that
        stops here ended as it did), read from the final state in place.

        Kept for the valid prefix it was read at: the rules walk the whole
        state for it (every call of a million-event run), so the app's worker
        reads it once the pass is done, and ``End`` finds it here."""
        run = self.run
        valid = run.valid
        said = run._still_open
        if said is not None and said[0] == valid:
            return list(said[1])
        if run.history is not None:
            state = self.frozen_at(valid)  # the very prefix, while a worker reads on
            lines = self._final_lines("still_open", run.rules_call.still_open, state)
        else:
            lines = self._final_lines("still_open", run.rules_call.still_open)
        run._still_open = (valid, lines)
        return list(lines)

    def notes(self) -> list[str]:
        """What the rules say a person should know of the valid prefix's
        state (what a resume would drop), read from the final state in place."""
        return self._final_lines("notes", self.run.rules_call.notes)

    def _final_lines(
        self, hook: str, ask: Callable[[StateView], list[str]], state: StateView | None = None
    ) -> list[str]:
        try:
            return ask(self.run._final_view() if state is None else state)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # stuck or broken rules: say so, never crash
            return [f"({hook} failed: {type(exc).__name__}: {exc})"]

    def final_state(self) -> State:
        return self.state_at(self.run.valid)


class RulesNotDeterministic(Exception):
    """The rules, run again over events they were run over, gave another state."""


class MadeAgain(Part):
    """Each event's patches, made again from a kept state (see the module)."""

    def patches(self, start: int, end: int, state: Any, memo: Any, kept: Any) -> list[list[Change]]:
        """The patches of events ``start+1 .. end``, each event's list, from
        ``state`` (the frozen state after ``start``; ``memo``: the rules' memo
        kept with it, or None); ``kept`` is the frozen state kept after
        ``end`` (None: none yet), which they must end at."""
        run = self.run
        ctx = run._side_context()
        journal = Journal(state)
        memo = run.rules_call.copy_memo(memo)  # the kept one stays as it was
        if memo is not None:
            ctx.adopt_memo(journal.root, memo)
        made: list[list[Change]] = []
        frozen_at = 0  # events made when the journal's base was frozen
        for event in run._events_for_apply(start, end):
            patches: list[Change] = []
            if not run.is_ignored(event):
                root = journal.root
                new = run.apply_rules(root, event, ctx)
                if new is root:
                    if not journal.end_event(patches):  # it cannot tell: compare
                        before = _after(journal.base, made[frozen_at:])
                        patches = _compared(before, journal.freeze())
                        frozen_at = len(made) + 1
                elif isinstance(new, dict | DictDraft):
                    before = _after(journal.base, made[frozen_at:])
                    frozen = freeze(new)
                    patches = _compared(before, frozen)
                    journal, frozen_at = Journal(frozen), len(made) + 1
                else:
                    raise RulesNotDeterministic(
                        f"applied again, event {event.seq} returned {type(new).__name__}"
                    )
            made.append(patches)
        if kept is not None:
            where = differs_along(kept, journal.freeze(), made)
            if where is not None:
                raise RulesNotDeterministic(
                    f"applied again from seq {start}, the rules gave another state after "
                    f"{plural(end - start, 'event')}: {path_str(where)} differs (rules that "
                    "read the clock, chance or anything beside the state and the event "
                    "cannot be replayed)"
                )
        return made

    def watch(
        self,
        start: int,
        end: int,
        state: Any,
        memo: Any,
        kept: Mapping[int, tuple[Any, Any]],
        see: Callable[[int, Any], bool],
    ) -> bool:
        """The rules run again from ``state`` (the frozen state after
        ``start``, ``memo`` kept with it) over events ``start+1 .. end`` on a
        draft that records nothing, as the pass runs them: ``see(n, state)``
        is told the state after ``start`` and after each event (a draft
        changed in place: read it, do not keep it). After a seq in ``kept``
        (where the pass kept a state: the state and memo kept) they go on
        from the state kept, as the pass went on from it frozen (rules that
        hold one value under two keys see them part there too), once
        ``see`` has compared the two. False if ``see`` said stop. What a
        question across time reads where the patch log is not made yet: a
        third of the cost of making it."""
        run = self.run
        ctx = run._side_context()
        root = self._draft_over(ctx, state, memo)
        if not see(start, root):
            return False
        n = start
        for event in run._events_for_apply(start, end):
            n += 1
            if not run.is_ignored(event):
                new = run.apply_rules(root, event, ctx)
                if new is not root:  # a new dict: frozen, as the pass does
                    if not isinstance(new, dict | DictDraft):
                        raise RulesNotDeterministic(
                            f"applied again, event {event.seq} returned {type(new).__name__}"
                        )
                    root = Journal(freeze(new), recording=False).root
            if not see(n, root):
                return False
            if n in kept:
                root = self._draft_over(ctx, *kept[n])
        return True

    def _draft_over(self, ctx: Context, state: Any, memo: Any) -> DictDraft:
        """A draft that records nothing over a kept state, the rules' memo
        kept with it (a copy) adopted for it."""
        root = Journal(state, recording=False).root
        memo = self.run.rules_call.copy_memo(memo)
        if memo is not None:
            ctx.adopt_memo(root, memo)
        return root


def _compared(before: Any, after: Any) -> list[Change]:
    """The patches between two frozen states, as the pass that records them
    gives them, their values frozen: they are kept for many seeks, and a
    seek applies them to a draft, which would change a plain value in place."""
    return [
        Change(
            c.path,
            c.old if c.old is MISSING else freeze(c.old),
            c.new if c.new is MISSING else freeze(c.new),
        )
        for c in diff(thaw(before), thaw(after))
    ]


def _after(state: Any, made: list[list[Change]]) -> Any:
    """``state`` with the patches ``made`` applied."""
    if not any(made):
        return state
    return apply_changes(state, (c for changes in made for c in changes))
