"""The folded timeline (``v``): one row per call, the other events as rows.

Which rows show is plain data over the engine's :class:`CallIndex`: a call
is folded into the row of its first event, and that row stands for the
prefix through its last event so far; unfolding a call shows its events
again, in ledger order among the others. Kept out of the UI so it is
testable without a terminal.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable
from dataclasses import dataclass

from replay_tui.engine.calls import NO_CALL, CallIndex
from replay_tui.reducers.base import CallFacts
from replay_tui.views.rows import Row

#: A call's events read to word its row (its count is known whatever its length).
FACTS_READ = 64


@dataclass(frozen=True, slots=True)
class CallRow:
    """One folded call, as its row says it."""

    name: str
    count: int
    #: "ok", "error", "denied", or "open" (no event of it ended it yet).
    status: str
    tool: str | None = None
    arg: str | None = None
    #: Seconds from its first event to its last so far (None: no ts).
    duration: float | None = None
    cost: float | None = None
    first_seq: int | None = None
    last_seq: int | None = None


def call_row(
    index: CallIndex,
    number: int,
    row: Callable[[int], Row],
    facts: Callable[[int], CallFacts | None],
) -> CallRow:
    """The row of call ``number``: its events' facts put together (the last
    status said wins; costs add up; tool and argument as first said)."""
    tool = arg = status = None
    cost: float | None = None
    lines = list(index.lines(number, FACTS_READ))
    for line in lines:
        said = facts(line)
        if said is None:
            continue
        tool = tool or said.tool
        arg = arg or said.arg
        status = said.status or status
        if said.cost is not None:
            cost = (cost or 0) + said.cost
    first, last = row(lines[0]), row(index.last[number])
    duration = last.ts - first.ts if first.ts is not None and last.ts is not None else None
    return CallRow(
        name=index.keys[number],
        count=index.count[number],
        status=status or "open",
        tool=tool,
        arg=arg,
        duration=duration,
        cost=cost,
        first_seq=first.seq,
        last_seq=last.seq,
    )


class Folding:
    """Which calls are folded, and so which ledger lines are rows."""

    def __init__(self, index: CallIndex) -> None:
        self.index = index
        #: Calls the person unfolded (call numbers).
        self.unfolded: set[int] = set()

    def folded_call(self, line: int) -> int | None:
        """The call whose folded row line ``line`` is (None: an event's row)."""
        number = self.index.call_at(line)
        if number == NO_CALL or number in self.unfolded or self.index.first[number] != line:
            return None
        return number

    def target(self, line: int) -> int:
        """The line a row stands for: a folded call's last event so far."""
        number = self.folded_call(line)
        return line if number is None else self.index.last[number]

    def row_of(self, line: int) -> int:
        """The row that shows line ``line``: its call's, if folded."""
        number = self.index.call_at(line)
        if number == NO_CALL or number in self.unfolded:
            return line
        return self.index.first[number]

    def rows(self, total: int, only: array[int] | None = None) -> array[int]:
        """The rows among ``total`` ledger lines (or among ``only``, a filter's):
        folded calls as one row, unfolded calls' events, lines not yet noted."""
        noted = len(self.index)
        if only is not None:
            return array("i", sorted({self.row_of(line) for line in only}))
        out = array("i", self.index.rows)
        for number in self.unfolded:  # a few: each line put in place (a memmove)
            for line in self.index.lines(number):
                at = bisect.bisect_left(out, line)
                if at == len(out) or out[at] != line:
                    out.insert(at, line)
        out.extend(range(noted, total))
        return out

    def toggle(self, line: int, unfold: bool) -> int | None:
        """Unfold (or fold) the call line ``line`` is part of; the line of the
        row the cursor should then be on, or None if nothing changed."""
        number = self.index.call_at(line)
        if number == NO_CALL:
            return None
        if unfold and number not in self.unfolded:
            self.unfolded.add(number)
            return line
        if not unfold and number in self.unfolded:
            self.unfolded.discard(number)
            return self.index.first[number]
        return None

    def holds(self, row: int, line: int) -> bool:
        """Row ``row`` is a folded call, and line ``line`` (the error's) is in it."""
        number = self.folded_call(row)
        return number is not None and self.index.call_at(line) == number

    def sign(self, line: int) -> str:
        """An unfolded call's first event is marked ▾, its other events │."""
        if self.index.call_at(line) not in self.unfolded:
            return ""
        return "│ " if self.is_member(line) else "▾ "

    def is_member(self, line: int) -> bool:
        """Line ``line`` is an event of an unfolded call, after its first."""
        number = self.index.call_at(line)
        return number != NO_CALL and number in self.unfolded and self.index.first[number] != line
