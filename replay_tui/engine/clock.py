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

    @property
    def span(self) -> float:
        """Seconds from the first ``ts`` to the latest."""
        return float(self._at[-1]) if self._at else 0.0

    def first_at_or_after(self, seconds: float, upto: int) -> int:
        """The first line among the first ``upto`` at or after ``seconds``."""
        return bisect.bisect_left(self._at, seconds, 0, min(upto, len(self._at)))

    def at(self, index: int) -> float:
        return float(self._at[index])
