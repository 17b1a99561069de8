"""``replay-tui DB`` on a LangGraph database of several threads: the threads
list (id, checkpoints, last step, status, forks under their thread), and
the thread or fork picked opened in the app, proved (issue 46, point 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay_tui.formats.langgraph.listing import thread_rows
from replay_tui.ui.screens.threads import ThreadsApp, app_for_thread
from tests.helpers.langgraph_db import make_database
from tests.helpers.screen import status
from tests.helpers.waiting import until


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("lg") / "checkpoints.sqlite"
    make_database(db)
    return db


def _rows(app: ThreadsApp) -> list[list[str]]:
    table = app.table
    return [[cell.plain for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_the_threads_list_and_a_fork_opened(database: Path) -> None:
    app = ThreadsApp(database, thread_rows(database))
    async with app.run_test(size=(140, 20)) as pilot:
        rows = _rows(app)
        by_id = {r[0]: r for r in rows if not r[0].startswith("  ↳")}
        assert set(by_id) == {"agent", "fail", "ask", "fan", "sub"}
        below_sub = rows[[r[0] for r in rows].index("sub") + 1][0]
        assert below_sub.startswith("  ↳ subgraph inner:")
        assert by_id["fail"][4] == "failed" and by_id["ask"][4] == "interrupted"
        assert by_id["agent"][4] == "done" and by_id["agent"][5] == "1"
        fork = next(i for i, r in enumerate(rows) if r[0].startswith("  ↳ fork from step 0"))
        assert rows[fork - 1][0] == "agent"
        assert "5 threads, newest first" in str(app.query_one("#where").render())
        for _ in range(fork):
            await pilot.press("down")
        await pilot.press("enter")
    chosen = app.return_value
    assert chosen is not None and "#thread=agent&tip=" in chosen
    opened = app_for_thread(chosen)
    async with opened.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: "verified" in status(opened))
        assert "thread=agent&tip=" in status(opened)
    opened.replay.close()


async def test_an_empty_database_says_so(tmp_path: Path) -> None:
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    db = tmp_path / "empty.sqlite"
    conn = sqlite3.connect(db, check_same_thread=False)
    SqliteSaver(conn).setup()
    conn.close()
    app = ThreadsApp(db, thread_rows(db))
    async with app.run_test(size=(120, 10)) as pilot:
        said = str(app.query_one("#where").render())
        assert "0 threads" in said and "no thread yet" in said
        await pilot.press("q")
    assert app.return_value is None


def test_a_link_into_a_thread_names_the_thread(database: Path) -> None:
    """The app's link (``c``) to a seq of a thread, a fork or a subgraph's
    namespace is ``DB#thread=ID...@SEQ``: it opens that run again, not the
    database (whose five threads ask for one to be chosen)."""
    from replay_tui.core.links import split_link
    from replay_tui.engine.open import open_replay
    from replay_tui.views.runview import RunView

    rows = {r.thread_id: r for r in thread_rows(database)}
    runs = [rows["ask"].run, rows["agent"].forks[0].run, rows["sub"].subgraphs[0].run]
    assert "&tip=" in runs[1] and "&ns=" in runs[2]
    for run in runs:
        replay, _ = open_replay(run)
        try:
            link = RunView(replay).link(2)
        finally:
            replay.close()
        assert link == f"{run}@2"  # the fixture's path is absolute already
        again, seq = split_link(link)
        assert seq == 2 and again is not None
        reopened, _ = open_replay(again)
        try:
            assert reopened.paths.name == replay.paths.name
        finally:
            reopened.close()
