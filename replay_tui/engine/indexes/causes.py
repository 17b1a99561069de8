"""Which event caused which: each event's parent and the events naming it.

A parent is an event's ``parent_seq`` (our ledgers, Temporal's), or what a
format's checker found for it (a Claude Code record's ``parentUuid``,
linked by a hash of the uuid: whoever reads the parent confirms it). The
forward pass notes only events that have one, so a run without parents
costs nothing here.

Bytes per event, not objects: the parents found and each parent's first
effect are 4-byte cells of arrays indexed by seq; only a parent with more
than one effect (a fan-out) has a list of the rest.
"""

from __future__ import annotations

import bisect
from array import array

from replay_tui.formats.envelope import Event

_CELL_LIMIT = 1 << 31  # what an array("i") cell holds


def _put(cells: array[int], at: int, value: int) -> None:
    if at >= len(cells):
        cells.frombytes(bytes(cells.itemsize * (at + 1 - len(cells))))
    cells[at] = value


class CauseIndex:
    """parent -> effects, in ledger order, and the parents a checker found."""

    def __init__(self) -> None:
        #: seq -> the parent a checker found (0: none), where the line has no parent_seq.
        self._found = array("i")
        #: parent seq -> its first effect (0: none).
        self._first = array("i")
        #: parent seq -> its later effects, in ledger order (fan-outs only).
        self._more: dict[int, list[int]] = {}
        #: Seqs or parents no array cell holds (never in a valid ledger of ours).
        self._odd: dict[int, list[int]] = {}

    def note(self, event: Event) -> None:
        """``event`` (validated, with a parent) names its parent."""
        parent, seq = event.parent_seq, event.seq
        if not (0 < parent < _CELL_LIMIT and 0 < seq < _CELL_LIMIT):
            kids = self._odd.setdefault(parent, [])
            if not kids or kids[-1] != seq:
                kids.append(seq)
            return
        if "parent_seq" not in event.fields:
            _put(self._found, seq, parent)
        first = self._first[parent] if parent < len(self._first) else 0
        if not first:
            _put(self._first, parent, seq)
            return
        if first == seq:  # a retry after a pending receipt
            return
        more = self._more.get(parent)
        if more is None:
            self._more[parent] = [seq]
        elif more[-1] != seq:
            more.append(seq)

    def parent_of(self, event: Event) -> object:
        """Its ``parent_seq``, or the parent its checker found (None: none)."""
        if event.parent_seq is not None:
            return event.parent_seq
        seq = event.seq
        found = self._found[seq] if type(seq) is int and 0 <= seq < len(self._found) else 0
        return found or None

    def effects(self, seq: int, upto: int, shown: int) -> tuple[list[int], int]:
        """The first ``shown`` events up to seq ``upto`` naming ``seq``, and how many there are."""
        kids = self._kids(seq)
        count = bisect.bisect_right(kids, upto)
        return list(kids[: min(shown, count)]), count

    def _kids(self, seq: int) -> list[int]:
        first = self._first[seq] if type(seq) is int and 0 <= seq < len(self._first) else 0
        kids = [first, *self._more.get(seq, ())] if first else []
        odd = self._odd.get(seq)
        return sorted(kids + odd) if odd else kids
