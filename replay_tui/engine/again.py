"""Patches made again: what the events between two kept states changed,
found by running the rules over them once more.

The app's forward pass runs the rules as ``check`` does, on a draft that
records nothing, and keeps a frozen state every few hundred events (see
:mod:`replay_tui.state.history`). When a pane, a seek or a question across
time needs what one of those events changed, :class:`MadeAgain` runs the
rules again from the kept state before it, beside the forward pass (a side
:class:`~replay_tui.reducers.base.Context`, so the two never share a memo),
on a :class:`~replay_tui.state.drafts.Journal` that tells each event's
patches. The state the rules end at is checked against the state kept after
those events (:func:`~replay_tui.state.diff.differs_along`): rules that do
not give the same state twice are named, never shown as what happened.
"""

from __future__ import annotations

from typing import Any

from replay_tui.core.words import plural
from replay_tui.engine.replay_core import Part
from replay_tui.state.diff import MISSING, Change, diff, differs_along, path_str
from replay_tui.state.drafts import DictDraft, Journal
from replay_tui.state.history import apply_changes
from replay_tui.state.persistent import freeze, thaw


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
        for index in range(start, end):
            event = run._event_for_apply(index)
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
