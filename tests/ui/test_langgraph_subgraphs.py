"""``t`` on the task that ran a LangGraph subgraph opens the subgraph's
namespace (``research:<task id>``) as a run of its own, as ``t`` opens a
sub-agent's transcript; Esc comes back (issue 46, point 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay_tui.formats.langgraph.source import list_namespaces
from replay_tui.ui.screens.run import ReplayScreen
from replay_tui.ui.screens.threads import app_for_thread
from tests.helpers.screen import goto, said, seq_at_cursor, settle, status
from tests.helpers.waiting import until

FIXTURES = Path(__file__).parents[1] / "fixtures" / "langgraph"


@pytest.mark.parametrize(
    ("database", "seq"),
    [
        ("flow.sqlite", 9),  # the research task's write (question)
        ("flow.sqlite", 12),  # the checkpoint its writes made
        ("old.sqlite", 12),  # checkpoint format 1 (2024)
    ],
)
async def test_t_opens_the_subgraph_of_the_task_and_esc_comes_back(database: str, seq: int) -> None:
    db = FIXTURES / database
    ns = next(n for n in list_namespaces(db, "subgraph-research") if n)
    assert ns.startswith("research:")
    app = app_for_thread(f"{db}#thread=subgraph-research")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await goto(app, pilot, seq)
        row = app.main.view.row(seq - 1)
        assert "research" in row.summary or "step 2" in row.summary
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.nested)
        sub = app.screen
        assert isinstance(sub, ReplayScreen)
        await until(pilot, lambda: not sub.validating)
        assert sub.replay.paths.ns == ns and sub.replay.paths.thread == "subgraph-research"
        said_now = sub.status_text().plain
        assert "subgraph of" in said_now and "verified" in said_now
        assert sub.replay.valid > 0
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.main)
        assert seq_at_cursor(app) == seq and f"seq {seq} of" in status(app)
    app.replay.close()


async def test_t_where_no_subgraph_ran_says_what_it_opens() -> None:
    app = app_for_thread(f"{FIXTURES / 'flow.sqlite'}#thread=subgraph-research")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await goto(app, pilot, 6)  # the intake task's write: no subgraph
        await pilot.press("t")
        await pilot.pause()
        assert app.screen is app.main
        assert any("LangGraph subgraph's thread" in m for m in said(app))
    app.replay.close()
