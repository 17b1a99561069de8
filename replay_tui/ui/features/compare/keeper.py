"""Compare mode as the screen uses it: a widget with nothing to draw that
runs :class:`~replay_tui.ui.features.compare.controller.Comparison` (no Textual there) with its
workers (replaying B, finding where A and B part) and its words. It tells
the screen, as :class:`CompareChanged`, when what compare mode shows moved
on."""

from __future__ import annotations

from textual import work
from textual.widget import Widget
from textual.worker import get_current_worker

from replay_tui.engine.open import reopen
from replay_tui.engine.replay import Replay
from replay_tui.questions.sidebyside import row_differences
from replay_tui.ui.features.compare.controller import Comparison
from replay_tui.ui.features.run.controller import COMPARE_FINISHED
from replay_tui.ui.messages import CompareChanged, Differences, Notice, OtherSideDone


class CompareKeeper(Widget):
    """``s`` ``]`` ``[`` and Esc out of compare mode: B beside the run."""

    DEFAULT_CSS = "CompareKeeper { display: none; }"

    def __init__(self, compare: Comparison) -> None:
        super().__init__()
        self.compare = compare

    def on_mount(self) -> None:
        if self.compare.b is not None:
            self._replay_b(self.compare.b)

    @work(thread=True, exclusive=True, group="advance-b", exit_on_error=False)
    def _replay_b(self, b: Replay) -> None:
        """Replay B strictly, beside A's own reader."""
        worker = get_current_worker()
        try:
            b.advance(cancelled=lambda: worker.is_cancelled)
            if not worker.is_cancelled:
                b.finish()
        except Exception as exc:  # B unreadable: say so, A stays
            self.post_message(OtherSideDone(b, f"B could not be replayed: {exc}"))
            return
        if not worker.is_cancelled:
            self.post_message(OtherSideDone(b, ""))

    def on_other_side_done(self, message: OtherSideDone) -> None:
        message.stop()
        if message.b is not self.compare.b:
            return
        if message.why:
            self.post_message(Notice(message.why, "error", 10))
        self.compare.replayed()
        self.post_message(CompareChanged(differences=False))

    def find_differences(self, a: Replay) -> None:
        """A was read (or B was): where they part, once both are replayed."""
        b = self.compare.b
        if b is not None and self.compare.wants_differences(a):
            self._differences(a, b)

    @work(thread=True, exclusive=True, group="differences", exit_on_error=False)
    def _differences(self, a: Replay, b: Replay) -> None:
        """Where A and B part, row by row (events, then what they changed)."""
        worker = get_current_worker()
        strict = self.compare.strict
        found = row_differences(a, b, strict=strict, cancelled=lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.post_message(Differences(b, found))

    def on_differences(self, message: Differences) -> None:
        message.stop()
        if message.b is self.compare.b:
            self.compare.differs = message.indexes
            self.post_message(CompareChanged(differences=True))

    def next_difference(self, here: int, direction: int) -> int | None:
        """``]`` / ``[``: the row where they part next, or None (said why)."""
        found = self.compare.difference_from(here, direction)
        if isinstance(found, str):
            self.notify(found, timeout=3 if self.compare.b is None else 2)
            return None
        return found

    def skip(self, a: Replay, seq: int | None, *, following: bool) -> None:
        """``s``: what if the event ``seq`` had not happened? Compare the run
        with the branch that leaves it out (and the others skipped so far)."""
        b = self.compare.b
        if seq is None or seq > a.valid:
            self.notify("s leaves out an event the run replayed: not this row", timeout=3)
        elif following:
            self.notify(f"{COMPARE_FINISHED}: F stops following first", timeout=4)
        elif b is not None and not b.skip:
            self.notify("already comparing with another run: Esc first", timeout=3)
        else:
            skip = {seq, *(b.skip if b is not None else ())}
            self.open(reopen(a, following=False, skip=skip))

    def open(self, b: Replay) -> None:
        """Compare mode with B (closing any B before it)."""
        self.close()
        self.compare.start(b)
        self._replay_b(b)
        self.post_message(CompareChanged(differences=True))

    def close(self) -> bool:
        """Leave compare mode; False if it was not on."""
        if self.compare.b is None:
            return False
        self.workers.cancel_group(self, "advance-b")
        self.workers.cancel_group(self, "differences")
        old = self.compare.stop()
        if old is not None:
            old.close()
        self.post_message(CompareChanged(differences=True))
        return True
