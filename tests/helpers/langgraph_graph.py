"""A user's LangGraph graph module for ``--graph``: written in a folder
under a name Python has not cached, over the custom-reducer thread."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "langgraph"
#: The thread whose channels have reducers of the graph's own.
CUSTOM = f"{FIXTURES / 'flow.sqlite'}#thread=reducers-custom"
_MADE = {"n": 0}


def graph_module(folder: Path, body: str) -> str:
    """A module of its own name (a name Python has not cached) in ``folder``."""
    _MADE["n"] += 1
    name = f"user_graph_{_MADE['n']}_{abs(hash(str(folder))) % 10**8}"
    (folder / f"{name}.py").write_text(body, encoding="utf-8")
    return name


def graph_of(fields: str) -> str:
    """A graph of the custom-reducer thread's nodes, its state ``fields``."""
    return f"""
import operator
from typing import Annotated, Any, TypedDict
from langgraph.graph import StateGraph, START, END
from tests.fixtures.langgraph.graphs import merge_max, union

class State(TypedDict):
{fields}

def node(state: State) -> dict[str, Any]:
    return {{}}

builder = StateGraph(State)
for name in ("judge_a", "judge_b", "tally"):
    builder.add_node(name, node)
builder.add_edge(START, "judge_a")
builder.add_edge("tally", END)
graph = builder.compile()
"""
