"""Bookmarks made as a person makes them: ``:`` to the seq, then ``b`` or ``a``."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Input

from replay_tui.ui.app import ReplayApp
from replay_tui.ui.screens.prompts import NoteScreen
from tests.helpers.screen import settled
from tests.helpers.waiting import until


async def bookmark(app: ReplayApp, pilot: Pilot[int], seq: int, note: str | None = None) -> None:
    """Go to ``seq`` and bookmark it (``b``), or attach ``note`` to it (``a``);
    back once its row is marked in the gutter."""
    await pilot.press("colon", *str(seq), "enter")
    await until(pilot, lambda: app.main.cursor_seq() == seq and settled(app.main))
    if note is None:
        await pilot.press("b")
    else:
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, NoteScreen)
        app.screen.query_one(Input).value = note
        await pilot.press("enter")
    row = app.main.view.index_of_seq(seq)
    await until(pilot, lambda: row in app.main.timeline.bookmarks)
    if note is not None:
        await until(pilot, lambda: app.main.marks.note(seq) == note)
