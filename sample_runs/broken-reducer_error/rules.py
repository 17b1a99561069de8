"""A deliberately buggy reducer for sample_runs/broken-reducer_error.

It is agent_run, except that its apply divides by zero on every tool_denied:
a bug in the rules, not a rule violation. Strict replay must report
``reducer_error`` at the first tool_denied (seq 8), with the traceback, and
never crash. Check the run with this option, from the repository root:

    --reducer sample_runs/broken-reducer_error/rules.py:REDUCER
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replay_tui.reducers.agent_run import REDUCER as BASE

if TYPE_CHECKING:
    from replay_tui.envelope import Event
    from replay_tui.reducers.base import Context


class BuggyAgentRun:
    """agent_run with a division by zero on tool_denied."""

    name = "buggy_agent_run"
    version = "0.0.1"
    kinds: frozenset[str] = BASE.kinds

    def initial_state(self) -> dict[str, Any]:
        return BASE.initial_state()

    def apply(self, state: dict[str, Any], event: Event, ctx: Context) -> dict[str, Any]:
        if event.kind == "tool_denied":
            denied_per_allowed = 1 / 0  # the bug: meant to divide by the allowed calls
            state["denied_per_allowed"] = denied_per_allowed
        return BASE.apply(state, event, ctx)

    def summary(self, state: dict[str, Any]) -> str:
        return BASE.summary(state)


REDUCER = BuggyAgentRun()
