"""A LangGraph thread followed while its graph writes it (issue 46, point 7):
each new superstep is read and proved as it comes, through the writer's WAL,
and the thread ends in the same state as a cold open."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("langgraph.checkpoint.sqlite")

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.reducers import load_reducer
from tests.helpers.langgraph_db import agent_graph


def test_a_thread_followed_ends_as_a_cold_open(tmp_path: Path) -> None:
    db = tmp_path / "live.sqlite"
    conn = sqlite3.connect(db, check_same_thread=False)  # the writer, open throughout
    app = agent_graph().compile(checkpointer=SqliteSaver(conn))
    cfg: dict = {"configurable": {"thread_id": "live"}}
    app.invoke({"messages": [HumanMessage("hi", id="h0")], "count": 0}, cfg)
    assert (tmp_path / "live.sqlite-wal").exists()  # read through it, never locking it
    run = f"{db}#thread=live"
    followed = Replay(locate_run(run), load_reducer("langgraph"), following=True)
    try:
        followed.advance()
        first = followed.valid
        assert followed.error is None and first > 0
        # a second turn on the same thread: new input, and the graph runs again
        app.invoke({"messages": [HumanMessage("again", id="h9")]}, cfg)
        followed.advance()
        assert followed.error is None and followed.valid > first
        live_state = followed.state_at(followed.valid)
    finally:
        followed.close()
    cold, _ = open_replay(run)
    try:
        cold.verify()
        assert cold.error is None and cold.valid == followed.valid
        assert cold.state_at(cold.valid) == live_state
    finally:
        cold.close()
    conn.close()
