"""A LangGraph thread's tool calls in the app, as calls are in the other
sources: a model's ``tool_calls`` and the ``ToolMessage`` that answers each
(``tool_call_id``) fold into one row (``v``), and the receipt inspector
beside the call shows its arguments and its result, its error (a
``ToolMessage`` with ``status: "error"``), or that none has come yet
(issue 46, point 4)."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from replay_tui.ui.screens.threads import app_for_thread
from tests.helpers.screen import goto, pane_text, screen_text, settle

FIXTURE = Path(__file__).parents[1] / "fixtures" / "langgraph" / "agent.sqlite"


def _record(pane: str) -> Any:
    """The JSON below the receipt pane's title line (what is known now, not
    what comes later in the run)."""
    return json.JSONDecoder().raw_decode(pane.split("\n", 1)[1].strip())[0]


def _call_seq(row: str) -> int:
    """The seq a folded call's row stands at: its last event's."""
    found = re.search(r"seq \d+–(\d+)", row) or re.search(r"(\d+)", row)
    assert found is not None, row
    return int(found.group(1))


async def test_parallel_calls_fold_and_show_their_results() -> None:
    app = app_for_thread(f"{FIXTURE}#thread=agent-weather")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await goto(app, pilot, 5)  # the model's message asking for two tools
        pane = pane_text(app, "receipt")
        assert pane.startswith("2 calls · get_weather pending, get_weather pending")
        assert [c["args"] for c in _record(pane)] == [{"city": "Paris"}, {"city": "London"}]
        assert "later in this run" in pane and "sunny, 21 C" in pane
        await pilot.press("v")
        await settle(app, pilot)
        row = next(line for line in screen_text(app).splitlines() if "get_weather" in line)
        assert "get_weather ×2 ok" in row and "Paris, London" in row and "seq 5–8" in row
        assert "   8 " not in screen_text(app)  # the answer is inside the call's row
        pane = pane_text(app, "receipt")
        assert pane.startswith("2 calls · get_weather ok, get_weather ok")
        calls = _record(pane)
        assert [(c["call_id"], c["status"], c["result"]) for c in calls] == [
            ("call_paris", "ok", "sunny, 21 C"),
            ("call_london", "ok", "rain, 14 C"),
        ]
    app.replay.close()


async def test_a_failed_call_shows_its_error() -> None:
    app = app_for_thread(f"{FIXTURE}#thread=agent-two-turns")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("v")
        await settle(app, pilot)
        rows = [line for line in screen_text(app).splitlines() if "get_weather" in line]
        assert len(rows) == 1 and "get_weather    error  Atlantis" in rows[0]
        seq = _call_seq(rows[0])
        await goto(app, pilot, seq)
        pane = pane_text(app, "receipt")
        assert pane.startswith("get_weather result · error")
        call = _record(pane)
        assert call["status"] == "error" and "result" not in call
        assert "Error" in call["error"] and call["args"]
    app.replay.close()


@pytest.fixture
def waiting_for_tools(tmp_path: Path) -> Path:
    """An agent stopped before its tools ran (``interrupt_before``): the
    model's call has no answer."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    from tests.helpers.langgraph_db import agent_graph

    db = tmp_path / "waiting.sqlite"
    conn = sqlite3.connect(db, check_same_thread=False)
    graph = agent_graph().compile(checkpointer=SqliteSaver(conn), interrupt_before=["tools"])
    graph.invoke({"messages": [HumanMessage("hi", id="h0")]}, {"configurable": {"thread_id": "w"}})
    conn.close()
    return db


async def test_a_call_with_no_answer_is_pending(waiting_for_tools: Path) -> None:
    app = app_for_thread(f"{waiting_for_tools}#thread=w")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("v")
        await settle(app, pilot)
        row = next(line for line in screen_text(app).splitlines() if "search" in line)
        assert "still open" in row
        seq = _call_seq(row)
        await goto(app, pilot, seq)
        pane = pane_text(app, "receipt")
        assert pane.startswith("search · no result yet: pending")
        assert _record(pane) == {
            "call_id": "call1",
            "tool": "search",
            "args": {"q": "x"},
            "status": "pending",
        }
        assert "later in this run" not in pane
    app.replay.close()
