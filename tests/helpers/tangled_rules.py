"""Rules that replace what they changed, set a value back and return a new
dict (the hard cases of a draft's patches), and how two lists of patches are
compared (in any order): for the state store's tests; and rules that
remember something beside the state (not deterministic: run again, they
give another state)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from replay_tui.reducers import LoadedReducer, load_reducer

RULES_TANGLED = """
from replay_tui.reducers.agent_run import AgentRunRules


class Rules(AgentRunRules):
    drafts = True

    def initial_state(self):
        return {**super().initial_state(), "tally": {"n": 0, "seen": []}}

    def apply(self, state, event, ctx):
        state = super().apply(state, event, ctx)
        state["tally"]["n"] += 1
        state["tally"]["seen"].append(event.kind[:1])
        if event.seq % 3 == 0:  # changed below, then replaced: compared whole
            state["tally"] = {"n": state["tally"]["n"], "seen": state["tally"]["seen"][-2:]}
        if event.seq % 7 == 0:  # set back within the event: no patch
            state["attempt"] += 1
            state["attempt"] -= 1
        if event.seq % 11 == 0:  # a new dict, not the draft changed
            return {k: state[k] for k in state}
        return state


REDUCER = Rules()
"""


def key_of(change: Any) -> str:
    """A patch's path and op, to sort patches by."""
    return orjson.dumps([change.path, change.op], default=str).decode()


def same_changes(a: list[Any], b: list[Any]) -> bool:
    """The same patches, in any order."""
    return sorted(a, key=key_of) == sorted(b, key=key_of)


#: A counter kept beside the state, written into it every tenth event.
RULES_COUNTING = """
from replay_tui.reducers.agent_run import AgentRunRules

applied = [0]


class Rules(AgentRunRules):
    drafts = True

    def apply(self, state, event, ctx):
        state = super().apply(state, event, ctx)
        applied[0] += 1  # what the rules remember beside the state
        if event.seq % 10 == 0:
            state["stamp"] = applied[0]
        return state


REDUCER = Rules()
"""


def trusted_rules(tmp_path: Path, source: str) -> LoadedReducer:
    """Rules from ``source`` run as the built-in ones are: unwatched, so
    their patches are made again (user rules are watched, and record them)."""
    path = tmp_path / "rules.py"
    path.write_text(source)
    rules = load_reducer(f"{path}:REDUCER")
    rules.trusted = True
    return rules
