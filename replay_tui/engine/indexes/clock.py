"""When each event happened, for the overview strip: 4 bytes an event.

The forward pass already reads each event's ``ts``; keeping it here lets
the app map a million-event run onto forty rows of time without a second
read. Kept as seconds after the first ``ts`` seen (float32: a run of days
is still placed to a tenth of a second, enough for a row of a strip), and
never decreasing (a ``ts`` that goes back keeps the latest seen), so a
moment is found by bisection.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Sequence
from itertools import accumulate, repeat
from typing import cast


class EventClock:
    """Per validated line: seconds after the first ``ts`` (monotone)."""

    def __init__(self) -> None:
        self._at = array("f")
        self._first: float | None = None
        self._latest = 0.0

    def __len__(self) -> int:
        return len(self._at)

    def note(self, index: int, ts: float | None) -> None:
        """Line ``index`` happened at ``ts`` (None: it carries none, or the
        last seen stands for it)."""
        at = self._at
        if index < len(at):  # a retry after a pending receipt
            return
        if ts is not None:
            if self._first is None:
                self._first = ts  # lines before the first ts are placed at it
            since = ts - self._first
            if since > self._latest:
                self._latest = since
        while len(at) < index:  # not expected: lines come in order
            at.append(self._latest)
        at.append(self._latest)

    def note_many(
        self, first: int, seconds: Sequence[float | None] | None, n: int, last: float | None
    ) -> None:
        """Lines ``first``.. (``n`` of them) happened at ``seconds`` (each
        line's; None: they carry none, and ``last`` stands for them): as
        :meth:`note` for each, the running latest taken in C."""
        at = self._at
        if first != len(at) or not n or (seconds is not None and None in seconds):
            for index in range(first, first + n):
                self.note(index, seconds[index - first] if seconds is not None else last)
            return
        if seconds is None:
            self.note(first, last)
            at.extend(repeat(at[-1], n - 1))
            return
        times = cast("Sequence[float]", seconds)  # no None in them (above)
        if self._first is None:
            self._first = times[0]
        first_ts: float = self._first
        since = list(accumulate(map(first_ts.__rsub__, times), max, initial=self._latest))
        self._latest = since[-1]
        at.extend(array("f", since[1:]))

    @property
    def span(self) -> float:
        """Seconds from the first ``ts`` to the latest."""
        return float(self._at[-1]) if self._at else 0.0

    def first_at_or_after(self, seconds: float, upto: int) -> int:
        """The first line among the first ``upto`` at or after ``seconds``."""
        return bisect.bisect_left(self._at, seconds, 0, min(upto, len(self._at)))

    def at(self, index: int) -> float:
        return float(self._at[index])
