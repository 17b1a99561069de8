"""Small LangGraph checkpointer databases made at test time by the real
library (langgraph, langgraph-checkpoint-sqlite, LangChain's messages): an
agent that calls a tool, then an update and a fork; a node that raises; an
interrupt; a fan-out with ``Send`` into a set and a list; a subgraph."""

from __future__ import annotations

import datetime
import operator
import sqlite3
import uuid
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph.checkpoint.sqlite")

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Send, interrupt


class Agent(TypedDict, total=False):
    messages: Annotated[list[Any], add_messages]
    items: Annotated[list[Any], operator.add]
    count: int
    when: Any


def _agent(s: Agent) -> Agent:
    n = len(s["messages"])
    if n < 3:
        call = {"name": "search", "args": {"q": "x"}, "id": f"call{n}"}
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
        msg = AIMessage(content="", id=f"ai{n}", tool_calls=[call], usage_metadata=usage)
        return {
            "messages": [msg],
            "count": s.get("count", 0) + 1,
            "when": datetime.datetime(2024, 1, 2),
        }
    return {"messages": [AIMessage(content="done", id=f"ai{n}")], "count": s.get("count", 0) + 1}


def _tools(s: Agent) -> Agent:
    last = s["messages"][-1]
    answer = ToolMessage(
        content="result", tool_call_id=last.tool_calls[0]["id"], id=f"t{len(s['messages'])}"
    )
    return {"messages": [answer], "items": [uuid.UUID(int=len(s["messages"]))]}


def agent_graph() -> Any:
    g = StateGraph(Agent)
    g.add_node("agent", _agent)
    g.add_node("tools", _tools)
    g.add_edge(START, "agent")
    g.add_conditional_edges(
        "agent", lambda s: "tools" if s["messages"][-1].tool_calls else END, ["tools", END]
    )
    g.add_edge("tools", "agent")
    return g


class Plain(TypedDict):
    x: int


def _boom(s: Plain) -> Plain:
    raise ValueError("boom!")


def _ask(s: Plain) -> Plain:
    return {"x": interrupt({"question": "ok?"})}


class Fan(TypedDict):
    items: Annotated[list[Any], operator.add]
    tags: Annotated[set[str], operator.or_]


def _work(s: Fan) -> Fan:
    return {"items": [s["items"][0] * 10], "tags": {f"t{s['items'][0]}"}}


def make_database(path: Path, *, fork: bool = True) -> dict[str, Any]:
    """Threads ``agent`` (with an update and a fork when ``fork``), ``fail``,
    ``ask`` and ``fan`` into ``path``; their ``get_state`` values."""
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    truths: dict[str, Any] = {}
    app = agent_graph().compile(checkpointer=saver)
    cfg: Any = {"configurable": {"thread_id": "agent"}}
    app.invoke({"messages": [HumanMessage("hi", id="h0")], "count": 0}, cfg)
    if fork:
        app.update_state(cfg, {"count": 100})
        earlier = list(app.get_state_history(cfg))[4].config
        app.invoke(None, earlier)
    truths["agent"] = app.get_state(cfg).values
    g = StateGraph(Plain)
    g.add_node("boom", _boom)
    g.add_edge(START, "boom")
    with pytest.raises(ValueError):
        g.compile(checkpointer=saver).invoke({"x": 1}, {"configurable": {"thread_id": "fail"}})
    g = StateGraph(Plain)
    g.add_node("ask", _ask)
    g.add_edge(START, "ask")
    g.compile(checkpointer=saver).invoke({"x": 1}, {"configurable": {"thread_id": "ask"}})
    g4 = StateGraph(Fan)
    g4.add_node("work", _work)
    g4.add_node("join", lambda s: {"items": ["joined"]})
    g4.add_conditional_edges(
        START, lambda s: [Send("work", {"items": [i], "tags": set()}) for i in range(3)], ["work"]
    )
    g4.add_edge("work", "join")
    fan = g4.compile(checkpointer=saver)
    fan.invoke({"items": [], "tags": set()}, {"configurable": {"thread_id": "fan"}})
    truths["fan"] = fan.get_state({"configurable": {"thread_id": "fan"}}).values
    inner = StateGraph(Plain)
    inner.add_node("inc", lambda s: {"x": s["x"] + 1})
    inner.add_edge(START, "inc")
    outer = StateGraph(Plain)
    outer.add_node("inner", inner.compile())  # its checkpoints: namespace inner:<task id>
    outer.add_edge(START, "inner")
    outer.compile(checkpointer=saver).invoke({"x": 1}, {"configurable": {"thread_id": "sub"}})
    conn.close()
    return truths


def as_json(value: Any) -> Any:
    """A value as the reader renders it: through LangGraph's own serializer
    and this project's decoder."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from replay_tui.formats.langgraph.decode import decode_typed

    return decode_typed(*JsonPlusSerializer().dumps_typed(value)).value
