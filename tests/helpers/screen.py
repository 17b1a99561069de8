"""The app's screen, reached and read as a person would: wait for it to
settle, go to a seq, ask across time, and read the status line, a pane,
the whole screen and what the app said."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from rich.text import Text
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Input, Static

from replay_tui.ui.app import ReplayApp
from replay_tui.ui.screens.prompts import GotoScreen
from replay_tui.ui.screens.run import ReplayScreen
from replay_tui.ui.widgets.state_pane import StatePane
from tests.helpers.waiting import until


def settled(screen: ReplayScreen) -> bool:
    """Validation is over, the bookmarks are loaded (``b`` works), all that
    was read is shown (a followed ledger's rows, the tree of its spans) and
    the panes show the cursor's row (or, at prefix 0, the initial state;
    with no event at all, nothing): the screen a person reads."""
    view, cursor = screen.line_view, screen.timeline.cursor_index
    if screen.validating or screen.marks.bookmarks is None or not screen.session.up_to_date:
        return False
    if not screen.timeline.row_count:
        return True  # no event to show (an empty ledger): nothing more to wait for
    if view is None:
        return False
    if screen.at_initial:
        return view.index < 0
    return view.index == cursor and view.mode != "pending"


async def settle(app: ReplayApp, pilot: Pilot[int]) -> None:
    """Wait for validation and for the view of the cursor row (what is
    queued, a key say, handled first)."""
    await pilot.pause()
    await until(pilot, lambda: settled(app.main))
    await pilot.pause()


async def ready(pilot: Pilot[int]) -> None:
    """Settle the pilot's app (a snapshot's ``run_before``)."""
    app = pilot.app
    assert isinstance(app, ReplayApp)
    await settle(app, pilot)


async def goto(app: ReplayApp, pilot: Pilot[int], seq: int) -> None:
    """``:`` to ``seq``, settled there."""
    await pilot.press("colon", *str(seq), "enter")
    await settle(app, pilot)
    assert seq_at_cursor(app) == seq


def ready_at(seq: int) -> Callable[[Pilot[int]], Awaitable[None]]:
    """A snapshot's ``run_before``: settled, then at ``seq``."""

    async def run(pilot: Pilot[int]) -> None:
        await ready(pilot)
        assert isinstance(pilot.app, ReplayApp)
        await goto(pilot.app, pilot, seq)

    return run


async def ask(app: ReplayApp, pilot: Pilot[int], text: str) -> None:
    """Type ``text`` into ``:`` and press Enter."""
    await pilot.press("colon")
    await pilot.pause()
    assert isinstance(app.screen, GotoScreen)
    app.screen.query_one(Input).value = text
    await pilot.press("enter")
    await pilot.pause()


async def compared(app: ReplayApp, pilot: Pilot[int]) -> None:
    """B is replayed, compared, and its side drawn at the cursor's row (on a
    loaded machine the pane says "B is being replayed…" for a while after
    the rows part)."""
    await until(
        pilot,
        lambda: (
            settled(app.main)
            and app.main.compare.differs is not None
            and "B is being replayed" not in pane_text(app, "state")
        ),
    )
    await pilot.pause()


def status(app: ReplayApp) -> str:
    """The status line, as plain text."""
    return app.main.status_text().plain


def screen_text(app: ReplayApp) -> str:
    """What the terminal shows, as plain text lines."""
    strips = app.screen._compositor.render_strips()
    return "\n".join(strip.text for strip in strips)


def pane_text(app: ReplayApp, which: str) -> str:
    """The whole text of a side pane (``state`` or ``receipt``), unwrapped."""
    if which == "state":
        return app.query_one(StatePane).render_text()
    content = app.query_one(f"#{which}-body", Static).content
    assert isinstance(content, Text)
    return content.plain


def seq_at_cursor(app: ReplayApp) -> int | None:
    """The seq of the cursor row (None without one)."""
    index = app.main.timeline.cursor_index
    return None if index is None else app.main.view.row(index).seq


def said(app: App[Any]) -> list[str]:
    """Every notification the app has shown, oldest first, those timed out
    too (kept by conftest's ``_every_notice_kept``)."""
    return [n.message for n in app.__dict__.get("_said", [])]


def notices(app: App[Any]) -> str:
    """Every notification the app has shown, as one text."""
    return "\n".join(said(app))


async def still(pilot: Pilot[Any]) -> None:
    """The screen as it stays, for a snapshot: the notices, which leave by
    the clock (sooner or later than the snapshot on a loaded machine), gone."""
    pilot.app.clear_notifications()
    await pilot.pause()
