"""Whose the cursor is, without Textual: the person's once they moved it
(validation no longer pulls it to an error), a jump that waits for
validation to reach its seq, an error found after they moved, and prefix 0
(the initial state, shown above the first row).

The screen moves the timeline and tells this what happened; this says
where the cursor should go.
"""

from __future__ import annotations

from replay_tui.core.words import plural
from replay_tui.engine.replay import Replay
from replay_tui.views.runview import RunView


class CursorOwner:
    """The cursor's bookkeeping, apart from the widget that draws it."""

    def __init__(self, start_seq: int | None = None) -> None:
        #: The person moved the cursor: it is theirs, validation does not pull it.
        self.person_moved = False
        #: Go to this seq (a RUN@SEQ link, or ``:`` past the validated
        #: prefix) once validation reaches it.
        self.pending_seq = start_seq
        #: An error found after the person moved: its row, until they go there.
        self.error_waiting: int | None = None
        self._jumped_to_error = False

    def person_moves(self) -> None:
        """The person moved the cursor: theirs now, and a jump still waiting
        for validation is forgotten."""
        self.person_moved = True
        self.pending_seq = None

    def new_replay(self) -> None:
        """Another replay of the run is shown: its error is news again."""
        self._jumped_to_error = False
        self.error_waiting = None

    def wait_for(self, seq: int, replay: Replay) -> str | None:
        """``:`` asked for ``seq``: if validation has not reached it, the jump
        waits and this says so; None to go now."""
        if seq > replay.valid and not replay.finished and replay.error is None:
            self.pending_seq = seq
            return f"validated up to seq {replay.valid:,}: going to seq {seq:,} when it is reached"
        return None

    def pending_due(self, replay: Replay) -> int | None:
        """The seq a link or ``:`` asked for, once validation has reached it
        (not when the whole run is validated); None while it waits."""
        seq = self.pending_seq
        if seq is None or not (replay.valid >= seq or replay.finished or replay.error is not None):
            return None
        self.pending_seq = None
        self.person_moved = True  # a link is the person's choice: errors wait
        return seq

    @staticmethod
    def within_run(view: RunView, seq: int) -> tuple[int, str | None]:
        """Where a link to ``seq`` goes: the seq, or the last event if it is
        past the end, with the warning that says so."""
        last = view.row(view.row_count() - 1).seq if view.row_count() else 0
        if last is None or seq <= last:
            return seq, None
        return (
            last,
            f"seq {seq} is past the end of this run ({plural(last, 'event')}): at the last one",
        )

    def forget_pending(self) -> int | None:
        """Esc: forget a jump still waiting; the seq it was going to."""
        seq, self.pending_seq = self.pending_seq, None
        return seq

    def error_found(
        self, err_index: int | None, cursor_index: int | None
    ) -> tuple[bool, int | None]:
        """Validation found an error at row ``err_index``: (news: it was not
        seen before, the row to go to now). The person moved: no row, the
        status says where and ``e`` goes there."""
        if err_index is None or self._jumped_to_error:
            return False, None
        self._jumped_to_error = True
        if self.person_moved and cursor_index != err_index:
            self.error_waiting = err_index
            return True, None
        return True, err_index

    def moved(self, index: int) -> None:
        """The cursor moved to row ``index``: an error waiting there is seen."""
        if index == self.error_waiting:
            self.error_waiting = None
