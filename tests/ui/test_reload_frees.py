"""Reloading the rules (``R``) lets the last replay go: its state store and
all that showed it are freed, however many times a developer reloads. The
store freezes what the cyclic collector tracks as it keeps states (the
app's panes among them), so the replay it drops must be thawed with it."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from replay_tui.synth.runs import write_agent_run
from replay_tui.ui.app import ReplayApp
from replay_tui.ui.launch import make_app
from tests.helpers.waiting import until

RULES = """
from replay_tui.reducers.agent_run import AgentRunRules


class Rules(AgentRunRules):
    drafts = True


REDUCER = Rules()
"""


async def test_reloaded_rules_free_the_last_replay(tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_agent_run(run, 7_000, seed=3)  # past the store's first kept state (6,144 events)
    rules = tmp_path / "rules.py"
    rules.write_text(RULES)
    app = make_app(run, reducer=f"{rules}:REDUCER")
    assert isinstance(app, ReplayApp)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.finished, seconds=90)
        assert app.replay.history is not None and gc.get_freeze_count() > 0
        dropped = []
        for _ in range(2):
            shown = weakref.ref(app.replay)
            dropped.append(shown)
            await pilot.press("R")
            await until(
                pilot,
                lambda shown=shown: app.replay is not shown() and app.replay.finished,
                seconds=90,
            )
        # freed, once a worker's thread that still held one has ended
        # (a thread goes on a moment after its answer is shown)
        await until(pilot, lambda: _collected() and all(ref() is None for ref in dropped))


def _collected() -> bool:
    gc.collect()
    return True
