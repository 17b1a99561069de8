"""Which event caused which: each event's parent and the events naming it.

A parent is an event's ``parent_seq`` (our ledgers, Temporal's), or what a
format's checker found for it (a Claude Code record's ``parentUuid``,
linked by a hash of the uuid: whoever reads the parent confirms it). The
forward pass notes only events that have one, so a run without parents
costs nothing here.
"""

from __future__ import annotations

import bisect

from replay_tui.formats.envelope import Event


class CauseIndex:
    """parent -> effects, in ledger order, and the parents a checker found."""

    def __init__(self) -> None:
        self._effects: dict[int, list[int]] = {}
        self._found: dict[int, int] = {}  # seq -> parent, where the line has no parent_seq

    def note(self, event: Event) -> None:
        """``event`` (validated, with a parent) names its parent."""
        parent = event.parent_seq
        if "parent_seq" not in event.fields:
            self._found[event.seq] = parent
        kids = self._effects.setdefault(parent, [])
        if not kids or kids[-1] != event.seq:  # a retry after a pending receipt
            kids.append(event.seq)

    def parent_of(self, event: Event) -> object:
        """Its ``parent_seq``, or the parent its checker found (None: none)."""
        if event.parent_seq is not None:
            return event.parent_seq
        return self._found.get(event.seq)

    def effects(self, seq: int, upto: int, shown: int) -> tuple[list[int], int]:
        """The first ``shown`` events up to seq ``upto`` naming ``seq``, and how many there are."""
        kids = self._effects.get(seq, ())
        count = bisect.bisect_right(kids, upto)
        return list(kids[: min(shown, count)]), count
