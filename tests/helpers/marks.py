"""Bookmarks made as a person makes them: ``:`` to the seq, then ``b`` or ``a``."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Input

from replay_tui.ui.app import ReplayApp
from replay_tui.ui.screens.prompts import NoteScreen


async def bookmark(app: ReplayApp, pilot: Pilot[int], seq: int, note: str | None = None) -> None:
    """Go to ``seq`` and bookmark it (``b``), or attach ``note`` to it (``a``)."""
    await pilot.press("colon", *str(seq), "enter")
    for _ in range(100):
        await pilot.pause(0.02)
        if app.main.cursor_seq() == seq and app.main.line_view is not None:
            break
    if note is None:
        await pilot.press("b")
    else:
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, NoteScreen)
        app.screen.query_one(Input).value = note
        await pilot.press("enter")
    await pilot.pause()
