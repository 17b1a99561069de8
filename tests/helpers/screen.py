"""The app's screen, reached and read as a person would: wait for it to
settle, go to a seq, ask across time, and read the status line, a pane,
the whole screen and what the app said."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Input, Static

from replay_tui.ui.app import ReplayApp
from replay_tui.ui.screens.prompts import GotoScreen
from replay_tui.ui.widgets.state_pane import StatePane
from tests.helpers.waiting import until


async def settle(app: ReplayApp, pilot: Pilot[int]) -> None:
    """Wait for validation and for the view of the cursor row."""
    for _ in range(200):
        await pilot.pause(0.02)
        if (
            not app.main.validating
            and app.main.line_view is not None
            and (app.main.line_view.index == app.main.timeline.cursor_index)
        ):
            break
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
    """B is replayed, compared, and its side drawn (on a loaded machine the
    pane says "B is being replayed…" for a while after the rows part)."""
    await settle(app, pilot)
    await until(pilot, lambda: app.main.compare.differs is not None)
    await until(pilot, lambda: "B is being replayed" not in pane_text(app, "state"))
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


def said(app: ReplayApp) -> list[str]:
    """Every notification the app has shown, oldest first."""
    return [n.message for n in app._notifications]


def notices(app: ReplayApp) -> str:
    """Every notification the app has shown, as one text."""
    return "\n".join(said(app))
