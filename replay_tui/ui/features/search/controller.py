"""Questions the person asked, without Textual: the ``:`` condition and
where it turns true, and the ``/`` filter and the rows it keeps. The screen
runs the scans in workers and tells this what they found."""

from __future__ import annotations

from array import array
from dataclasses import dataclass

from rich.text import Text

from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import plural
from replay_tui.questions.condition import Condition


@dataclass(frozen=True)
class Turn:
    """Where ``n`` / ``N`` go: a seq, and whether it wrapped around."""

    seq: int
    wrapped: bool


def turn_in(seqs: list[int], here: int, direction: int) -> Turn | None:
    """In ``seqs`` (ascending), the next past ``here`` (before it, for -1),
    wrapping; None if there are none."""
    if not seqs:
        return None
    if direction > 0:
        ahead = [s for s in seqs if s > here]
        return Turn(ahead[0], False) if ahead else Turn(seqs[0], True)
    behind = [s for s in seqs if s < here]
    return Turn(behind[-1], False) if behind else Turn(seqs[-1], True)


class Search:
    """The last condition given to ``:`` and the filter of ``/``."""

    def __init__(self) -> None:
        self.condition: Condition | None = None
        #: Where the condition turns true (None while the scan runs), up to
        #: seq ``turns_until``.
        self.turn_seqs: list[int] | None = None
        self.turns_until = 0
        self.filter_text = ""
        #: Rows the filter keeps (None while it runs, or with no filter).
        self.matches: array[int] | None = None

    # -- the condition -------------------------------------------------------
    def ask(self, condition: Condition) -> None:
        self.condition = condition
        self.turn_seqs = None

    def answered(self, seqs: list[int], until: int) -> None:
        self.turn_seqs = seqs
        self.turns_until = until

    def forget(self) -> bool:
        """Forget the condition; True if there was one."""
        had = self.condition is not None
        self.condition = None
        self.turn_seqs = None
        return had

    def stale(self, valid: int) -> bool:
        """The run grew past what the answers cover: ask again."""
        return valid > self.turns_until

    def next_turn(self, here: int, direction: int) -> Turn | None:
        """The next seq past ``here`` (before it, for -1) where the condition
        turns true, wrapping; None if it never does (or is still searched)."""
        return turn_in(self.turn_seqs or [], here, direction)

    def never_said(self, until: int, seconds: float) -> str:
        """What to say when the condition holds after no prefix."""
        text = self.condition.text if self.condition is not None else ""
        return (
            f"never: {text} holds after none of prefixes 0..{until} (searched in {seconds:.2f} s)"
        )

    # -- the filter ----------------------------------------------------------
    def set_filter(self, query: str) -> str:
        """Filter by ``query`` (stripped; empty: no filter), its rows not yet found."""
        self.filter_text = query.strip()
        self.matches = None
        return self.filter_text

    def clear_filter(self) -> None:
        self.filter_text = ""
        self.matches = None

    def nothing_matches(self) -> bool:
        return bool(self.filter_text) and self.matches is not None and not len(self.matches)

    # -- its pieces of the status line ---------------------------------------
    def filter_status(self, text: Text) -> None:
        if self.filter_text:
            shown = len(self.matches) if self.matches is not None else "…"
            rows = "row" if shown == 1 else "rows"
            text.append(
                f"  filter {escape_controls(self.filter_text)!r}: {shown} {rows}", style="#e5c890"
            )

    def condition_status(self, text: Text, seq: int, *, short: bool = False) -> None:
        """The condition, and where the cursor's ``seq`` is among its turns
        (``short``: in fewer words, for a narrow terminal)."""
        if self.condition is None:
            return
        text.append(f"  {escape_controls(self.condition.text)}", style="#e5c890")
        if self.turn_seqs is None:
            text.append(": searching…", style="#e5c890")
            return
        done = sum(1 for s in self.turn_seqs if s <= seq)
        total = len(self.turn_seqs)
        if not total:
            said = ": never"
        elif seq in self.turn_seqs:
            said = f": turn {done}/{total}" if short else f": turn {done} of {total} (n/N)"
        else:
            said = (
                f": {done}/{plural(total, 'turn')}"
                if short
                else f": turns true {total}x, {done} up to here (n/N)"
            )
        text.append(said, style="#e5c890")
