"""Playing a run at its recorded pace, without Textual: how long to wait
before the next event, the speed, and the status line's piece. The screen
owns the timer and moves the cursor."""

from __future__ import annotations

from rich.text import Text

#: Playback pace when events carry no ``ts`` (events per second at speed 1).
FIXED_PACE = 4.0
SLOWEST, FASTEST = 0.125, 64.0
#: No wait is shorter (a frame) or longer than these, whatever the ledger says.
SHORTEST_WAIT, LONGEST_WAIT = 0.02, 5.0


class Playback:
    """Whether the run plays, and how fast."""

    def __init__(self) -> None:
        self.playing = False
        self.speed = 1.0

    def toggle(self) -> bool:
        self.playing = not self.playing
        return self.playing

    def stop(self) -> None:
        self.playing = False

    def faster(self, factor: float) -> str:
        """Change speed by ``factor`` (within bounds); what to say."""
        self.speed = min(max(self.speed * factor, SLOWEST), FASTEST)
        return f"speed ×{self.speed:g}"

    def wait(self, now: float | None, after: float | None) -> float:
        """Seconds to wait between events stamped ``now`` and ``after`` (None:
        no ``ts``): the recorded gap at this speed, within bounds."""
        gap = after - now if now is not None and after is not None else 1.0 / FIXED_PACE
        return min(max(gap / self.speed, SHORTEST_WAIT), LONGEST_WAIT)

    def status(self, text: Text) -> None:
        if self.playing:
            text.append(f"  ▶ playing ×{self.speed:g}", style="bold #81c8be")
