"""Riding the tail of a growing ledger: whose move was it?

While following, the cursor stays on the newest row until the person moves
it away; then it stays where they put it and the status counts the rows that
arrived since. The hard part is telling the app's own moves (riding) from the
person's, since each move is only seen later, as a message, by which time
more rows may have come. :class:`TailRider` keeps that bookkeeping apart
from the widgets (no Textual here): the app tells it what happened and asks
it where the cursor should go.
"""

from __future__ import annotations


class TailRider:
    """Where the cursor goes as rows arrive, and how many arrived unseen."""

    def __init__(self) -> None:
        #: The cursor rides the tail, until the person moves it off.
        self.riding = True
        self._targets: set[int] = set()  # rows the app moved to while riding
        self._last_put: int | None = None  # where the app last put the cursor
        self._rows_when_left = 0

    def ride(self, position: int) -> None:
        """The person asked for the tail (End, ``f``): ride from ``position``."""
        self.riding = True
        self._last_put = position

    def leave(self, rows: int) -> None:
        """The cursor leaves the tail with ``rows`` rows in the timeline."""
        self.riding = False
        self._rows_when_left = rows

    def moved(self, index: int, *, at_tail: bool, following: bool, rows: int, cursor: int) -> None:
        """A cursor move was seen (to ledger line ``index``): a move the app
        made to ride the tail, seen after more rows came, is not the person
        leaving it."""
        ridden = index in self._targets
        self._targets.discard(index)
        if following and self.riding and not at_tail and not ridden:
            self.leave(rows)
        elif at_tail:
            self.ride(cursor)

    def rows_grew(self, *, cursor: int, following: bool, rows: int) -> bool:
        """Rows arrived (``rows`` in all); True if the cursor should now ride
        to the last one.

        If the person moved off the row the app last put the cursor on (their
        move's message is still on its way), they left the tail: stay put.
        """
        if following and self.riding and self._last_put is not None and cursor != self._last_put:
            self.leave(rows)
        return following and self.riding

    def will_move(self, position: int, index: int, cursor: int) -> None:
        """The app moves the cursor to ``position`` (ledger line ``index``) to
        ride; a move to where it already is sends no message to recognise."""
        if position != cursor:
            self._targets.add(index)
        self._last_put = position

    def unseen(self, rows: int) -> int:
        """Rows that arrived since the cursor left the tail."""
        return 0 if self.riding else max(0, rows - self._rows_when_left)
