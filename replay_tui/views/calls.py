"""The folded timeline (``v``): one row per call, the other events as rows.

Which rows show is plain data over the engine's :class:`CallIndex`: a call
is folded into the row of its first event, and that row stands for the
prefix through its last event so far; unfolding a call shows its events
again, in ledger order among the others. Kept out of the UI so it is
testable without a terminal.

Where calls nest (spans: see :class:`CallIndex`), the rows are a span tree:
each call's row indented by its depth, children in the order they started.
A span's parent may come after it (a span is exported when it ends): its
row then moves under its parent's as the parent arrives, though no line
moves; the rows are a view over the ledger's lines. A span can be
*closed*: its whole subtree folded into its row, which then stands for the
prefix through the subtree's last event so far. Which calls a closed span
covers is worked out once per change of rows (one pass over the closed
subtrees), never per row drawn. :func:`bar_cells` places a span's bar over
the run's time range (the waterfall of a trace viewer).
"""

from __future__ import annotations

import bisect
import math
from array import array
from collections.abc import Callable, Collection
from dataclasses import dataclass

from replay_tui.engine.indexes.calls import NO_CALL, CallIndex
from replay_tui.reducers.base import CallFacts
from replay_tui.views.rows import Row

#: A call's events read to word its row (its count is known whatever its length).
FACTS_READ = 64
#: Depths counted for a span's indent (a deeper one is drawn at this depth).
MAX_DEPTH = 32


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
    #: The ``ts`` of its first event (None: none).
    start_ts: float | None = None
    #: A model span's ``(input, output)`` tokens (None: it says none).
    tokens: tuple[int, int] | None = None


def call_row(
    index: CallIndex,
    number: int,
    row: Callable[[int], Row],
    facts: Callable[[int], CallFacts | None],
    tokens: Callable[[list[int]], tuple[int, int] | None] | None = None,
) -> CallRow:
    """The row of call ``number``: its events' facts put together (the last
    status said wins; costs add up; tool and argument as first said);
    ``tokens`` says a span's tokens from the lines read of it."""
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
        start_ts=first.ts,
        tokens=tokens(lines) if tokens is not None else None,
    )


def bar_cells(start: float, end: float, width: int) -> tuple[int, int]:
    """The cells ``[a, b)`` of a bar from ``start`` to ``end`` (fractions of
    the run's time range, 0 to 1) in a track ``width`` cells wide: every cell
    the span touches, at least one, clamped to the track. Monotone, so the
    bar of a span inside another lies inside the other's bar."""
    if width <= 0:
        return 0, 0
    end = max(start, end)
    a = min(width - 1, max(0, math.floor(start * width)))
    b = min(width - 1, max(0, math.floor(end * width))) + 1
    return a, max(a + 1, b)


class Folding:
    """Which calls are folded, and so which ledger lines are rows."""

    def __init__(self, index: CallIndex) -> None:
        self.index = index
        #: Calls the person unfolded (call numbers).
        self.unfolded: set[int] = set()
        #: Spans whose whole subtree the person folded into their row (←).
        self.closed: set[int] = set()
        #: Per call, as of the last :meth:`rows`: the closed span whose row
        #: shows it (NO_CALL: none; empty: nothing closed).
        self._cover = array("i")
        #: Per closed span shown: its subtree's last line so far.
        self._reach: dict[int, int] = {}
        #: In a span tree, as of the last :meth:`rows`: each row's line ->
        #: its position (the rows are depth first, not in ledger order);
        #: None when the rows are in ledger order.
        self.order: dict[int, int] | None = None

    @property
    def tree(self) -> bool:
        """Calls nest (some call has a parent, or waits for one named that
        has not come yet): rows are a span tree."""
        return self.index.nested > 0 or self.index.awaiting > 0

    def depth(self, number: int) -> int:
        """How many spans call ``number`` is inside (at most MAX_DEPTH)."""
        parent, depth = self.index.parent, 0
        up = parent[number]
        while up != NO_CALL and depth < MAX_DEPTH:
            depth += 1
            up = parent[up]
        return depth

    def has_children(self, number: int) -> bool:
        return self.tree and self.index.children[number] > 0

    def is_closed(self, number: int) -> bool:
        """Span ``number``'s subtree is folded into its row."""
        return number in self.closed

    def _covered(self, number: int) -> int:
        cover = self._cover
        return cover[number] if 0 <= number < len(cover) else NO_CALL

    def _kids(self) -> dict[int, list[int]]:
        """Each span's children, in the order they started (by their first
        line's ts, then their first line; a child that came before its
        parent among them)."""
        index = self.index
        parent, first, start = index.parent, index.first, index.start
        kids: dict[int, list[int]] = {}
        for number in range(index.calls):
            up = parent[number]
            if up != NO_CALL:
                kids.setdefault(up, []).append(number)

        def started(number: int) -> tuple[float, int]:
            at = start[number] if number < len(start) else math.nan
            return (math.inf if math.isnan(at) else at, first[number])

        for row in kids.values():
            if len(row) > 1:
                row.sort(key=started)  # mostly in order already: a linear pass
        return kids

    def _cover_calls(self, kids: dict[int, list[int]]) -> None:
        """Which closed span's row shows each call inside one (its
        outermost), and how far each such subtree reaches."""
        index, closed = self.index, self.closed
        self._reach = reach = dict[int, int]()
        if not closed or not self.tree:
            self._cover = array("i")
            return
        cover = array("i", [NO_CALL]) * index.calls
        parent, last = index.parent, index.last
        for top in closed:
            up = parent[top]
            while up != NO_CALL and up not in closed:
                up = parent[up]
            if up != NO_CALL:
                continue  # inside an outer closed span: covered from there
            far = last[top]
            stack = list(kids.get(top, ()))
            while stack:
                number = stack.pop()
                cover[number] = top
                far = max(far, last[number])
                stack.extend(kids.get(number, ()))
            reach[top] = far
        self._cover = cover

    def folded_call(self, line: int) -> int | None:
        """The call whose folded row line ``line`` is (None: an event's row)."""
        number = self.index.call_at(line)
        if number == NO_CALL or number in self.unfolded or self.index.first[number] != line:
            return None
        return number

    def target(self, line: int) -> int:
        """The line a row stands for: a folded call's last event so far (a
        closed span's: its subtree's)."""
        number = self.folded_call(line)
        if number is None:
            return line
        return self._reach.get(number, self.index.last[number])

    def row_of(self, line: int) -> int:
        """The row that shows line ``line``: its call's, if folded (the closed
        span's it is inside, if any)."""
        number = self.index.call_at(line)
        if number == NO_CALL:
            return line
        top = self._covered(number)
        if top != NO_CALL:
            return self.index.first[top]
        return line if number in self.unfolded else self.index.first[number]

    def rows(self, total: int, only: array[int] | None = None) -> array[int]:
        """The rows among ``total`` ledger lines (or among ``only``, a filter's):
        folded calls as one row, unfolded calls' events, lines not yet noted;
        none for a call inside a closed span."""
        kids = self._kids() if self.tree else {}
        self._cover_calls(kids)
        noted = len(self.index)
        self.order = None
        if only is not None:
            return array("i", sorted({self.row_of(line) for line in only}))
        if self.tree:
            out = self._tree_rows(kids)
            out.extend(range(noted, total))
            self.order = {line: position for position, line in enumerate(out)}
            return out
        out = array("i", self.index.rows)
        for number in self.unfolded:  # a few: each line put in place (a memmove)
            if self._covered(number) != NO_CALL:
                continue
            for line in self.index.lines(number):
                at = bisect.bisect_left(out, line)
                if at == len(out) or out[at] != line:
                    out.insert(at, line)
        if self._reach:
            call, cover = self.index.call, self._cover
            out = array("i", [r for r in out if call[r] == NO_CALL or cover[call[r]] == NO_CALL])
        out.extend(range(noted, total))
        return out

    def _tree_rows(self, kids: dict[int, list[int]]) -> array[int]:
        """The rows of a span tree, depth first as trace viewers draw it:
        each span's row, then its children's rows in the order they started
        (and its events among them, by line, if it is unfolded; none inside
        a closed span); lines in no span and the roots in ledger order."""
        index = self.index
        parent, first = index.parent, index.first
        out = array("i")
        for line in index.rows:
            number = index.call[line]
            if number == NO_CALL:
                out.append(line)
                continue
            if parent[number] != NO_CALL:
                continue  # drawn under its parent
            stack: list[tuple[int, int]] = [(first[number], number)]  # (line, call or NO_CALL)
            while stack:
                line_at, at = stack.pop()
                out.append(line_at)
                if at == NO_CALL:
                    continue
                below = [] if at in self.closed else [(first[c], c) for c in kids.get(at, [])]
                if at in self.unfolded:  # its events among its children's rows, by line
                    below += [(n, NO_CALL) for n in index.lines(at) if n != line_at]
                    below.sort()
                stack.extend(reversed(below))
        return out

    def position_after(self, line: int) -> int | None:
        """In a span tree: the position of the row with the first line at or
        after ``line`` (None: none, or rows in ledger order)."""
        if self.order is None:
            return None
        after = min(((at, p) for at, p in self.order.items() if at >= line), default=None)
        return None if after is None else after[1]

    def toggle(self, line: int, unfold: bool) -> int | None:
        """Unfold (or fold) the call line ``line`` is part of; the line of the
        row the cursor should then be on, or None if nothing changed.

        In a span tree, → on a closed span opens it one level (its children,
        each closed if it has children), else unfolds its events; ← folds
        its events if unfolded, else closes it if it has children shown
        (its whole subtree into its row), else goes to its parent's row."""
        index = self.index
        number = index.call_at(line)
        if number == NO_CALL:
            return None
        if unfold:
            if number in self.closed and self.folded_call(line) is not None:
                self.closed.discard(number)
                return line
            if number not in self.unfolded:
                self.unfolded.add(number)
                return line
            return None
        if number in self.unfolded:
            self.unfolded.discard(number)
            return index.first[number]
        if not self.tree:
            return None
        if self.has_children(number) and number not in self.closed:
            self.close(number)
            return index.first[number]
        parent = index.parent[number]
        return None if parent == NO_CALL else self.row_of(index.first[parent])

    def close(self, number: int) -> None:
        """Fold span ``number``'s whole subtree into its row: it and every span
        inside it with children closed, their events folded."""
        kids = self._kids()
        self.closed.add(number)
        self.unfolded.discard(number)
        stack = list(kids.get(number, ()))
        while stack:
            inner = stack.pop()
            self.unfolded.discard(inner)
            if inner in kids:
                self.closed.add(inner)
                stack.extend(kids[inner])

    def reveal(self, line: int) -> None:
        """Show line ``line`` as its own row: the spans it is inside opened,
        its call unfolded (going to a seq inside a folded call)."""
        number = self.index.call_at(line)
        if number == NO_CALL:
            return
        up = self.index.parent[number] if self.tree else NO_CALL
        while up != NO_CALL:
            self.closed.discard(up)
            up = self.index.parent[up]
        self._cover_calls(self._kids() if self.tree else {})
        if self.row_of(line) != line:
            self.unfolded.add(number)

    def holds(self, row: int, line: int) -> bool:
        """Row ``row`` is a folded call, and line ``line`` (the error's) is in
        it (or in a span its closed row covers)."""
        return self.holds_any(row, (line,))

    def holds_any(self, row: int, lines: Collection[int]) -> bool:
        """Row ``row`` is a folded call holding any of ``lines`` (the
        person's bookmarks, say), or a span its closed row covers does."""
        number = self.folded_call(row) if lines else None
        if number is None:
            return False
        call_at, covered = self.index.call_at, self._covered
        for line in lines:
            call = call_at(line)
            if call != NO_CALL and (call == number or covered(call) == number):
                return True
        return False

    def sign(self, line: int) -> str:
        """An unfolded call's first event is marked ▾, its other events │."""
        if self.index.call_at(line) not in self.unfolded:
            return ""
        return "│ " if self.is_member(line) else "▾ "

    def is_member(self, line: int) -> bool:
        """Line ``line`` is an event of an unfolded call, after its first."""
        number = self.index.call_at(line)
        return number != NO_CALL and number in self.unfolded and self.index.first[number] != line
