"""``p`` / ``P``: from an event to its cause (its ``parent_seq``) and back.

The inspector lists the chain of causes and the direct effects (see
:meth:`~replay_tui.views.runview.RunView.links`); this walks it: ``p`` goes
to the parent and remembers where it came from, ``P`` goes back, a step at
a time, as a browser's back button does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from replay_tui.views.runview import LineView


class CauseHost(Protocol):
    """The screen, as the cause trail moves it."""

    @property
    def line_view(self) -> LineView | None: ...

    def cursor_seq(self) -> int: ...

    def go_to_seq(self, seq: int) -> None: ...

    def notify(self, message: str) -> None: ...


class CauseTrail:
    """The seqs ``p`` came from, so that ``P`` goes back."""

    def __init__(self) -> None:
        self._back: list[int] = []

    def go(self, direction: int, screen: CauseHost) -> None:
        if direction < 0:
            if not self._back:
                screen.notify("nothing to go back to: p goes to an event's cause first")
            else:
                screen.go_to_seq(self._back.pop())
            return
        view = screen.line_view
        if view is None or not view.causes:
            screen.notify("this event names no cause (it has no parent_seq)")
            return
        self._back.append(screen.cursor_seq())
        screen.go_to_seq(view.causes[0][0])
