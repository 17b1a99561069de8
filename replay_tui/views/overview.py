"""The overview strip as plain data: the whole run mapped onto a few rows.

Each row of the strip is a slice of the run: of its time when its lines
have a ``ts`` (then how many events fell in it is the run's density, as
lnav's histogram shows it; a failed run is timed up to its failing line,
the lines past it end the last slice), else of its lines. A slice carries the most
pressing mark among its lines: the error, where compared runs part, a
warning, a bookmark, a watched value's change. Everything is found by
bisection over sorted lines, so a frame costs the strip's rows, not the
run's events.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from replay_tui.engine.indexes.clock import EventClock

#: Marks, most pressing first: a slice shows the first it holds.
MARKS = ("error", "differs", "warning", "bookmark", "watch")


@dataclass(frozen=True, slots=True)
class Slice:
    """Lines ``lo`` (inclusive) to ``hi`` (exclusive) of the run."""

    lo: int
    hi: int
    #: Its events relative to the fullest slice, 0..8 (0: none; by time only).
    level: int
    mark: str | None


class SortedMarks:
    """Each kind of mark's lines, sorted once per new set (the sets are
    replaced, not changed, when marks change)."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[object, list[int]]] = {}

    def get(self, name: str, marks: Collection[int]) -> list[int]:
        kept = self._kept.get(name)
        if kept is not None and kept[0] is marks:
            return kept[1]
        ordered = sorted(marks)
        self._kept[name] = (marks, ordered)
        return ordered


def _holds(ordered: Sequence[int], lo: int, hi: int) -> bool:
    pos = bisect.bisect_left(ordered, lo)
    return pos < len(ordered) and ordered[pos] < hi


def timed_lines(clock: EventClock | None, total: int) -> int:
    """How many of the first lines slices of time place: those the clock
    has a time for (all of a whole run; a failed run's up to its failing
    line, a run still being read its lines read so far), when they span more
    than no time at all; else 0 (slices of lines)."""
    if clock is None or total <= 0:
        return 0
    timed = min(len(clock), total)
    return timed if timed > 1 and clock.at(timed - 1) > 0 else 0


def slices(
    rows: int, total: int, clock: EventClock | None, marks: Mapping[str, Sequence[int]]
) -> list[Slice]:
    """``rows`` slices of a run of ``total`` lines, with their marks
    (``marks``: each kind's lines, sorted)."""
    if rows <= 0 or total <= 0:
        return []
    bounds: list[int]
    timed = timed_lines(clock, total)
    if timed:
        assert clock is not None
        span = clock.at(timed - 1)
        bounds = [clock.first_at_or_after(span * b / rows, timed) for b in range(rows)]
        bounds.append(total)  # the lines with no time (past a failure) end the last slice
    else:  # by line; a run shorter than the strip, a line a row
        rows = min(rows, total)
        bounds = [total * b // rows for b in range(rows + 1)]
    # density counts the timed lines only
    ends = [min(bound, timed) if timed else bound for bound in bounds]
    counts = [ends[b + 1] - ends[b] for b in range(rows)]
    fullest = max(counts) or 1
    out = []
    for b in range(rows):
        lo, hi = bounds[b], bounds[b + 1]
        mark = next((name for name in MARKS if _holds(marks.get(name, ()), lo, hi)), None)
        level = -(-8 * counts[b] // fullest) if timed else 0
        out.append(Slice(lo, hi, level, mark))
    return out


def slice_of(found: Sequence[Slice], index: int) -> int | None:
    """The row whose slice holds line ``index``."""
    for row, piece in enumerate(found):
        if piece.lo <= index < piece.hi:
            return row
    return None


def jump_line(found: Sequence[Slice], row: int, direction: int = 1) -> int | None:
    """Where going to ``row`` lands: its first line, or that of the nearest
    slice with any that way (a slice of time may hold no event)."""
    rows = range(max(0, row), len(found)) if direction > 0 else range(row, -1, -1)
    for at in rows:
        if found[at].hi > found[at].lo:
            return found[at].lo
    return None
