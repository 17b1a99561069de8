"""A replay let go of is freed at once: nothing it holds refers back to it
but weakly. Its state store freezes what the cyclic collector tracks (a
1M-event pass would otherwise spend 40% rescanning kept states), so a
replay caught in a cycle would never be freed: every rules reload, reread
and run opened beside in the app kept the last replay, its whole store."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.reducers import rules_for_run
from tests.conftest import SAMPLES, TESTS

SESSION = TESTS / "fixtures" / "agent-sessions" / "claude-code" / "codemie--session-624a4a58.jsonl"


@pytest.fixture
def no_collector() -> Iterator[None]:
    """Only reference counting frees anything meanwhile."""
    was = gc.isenabled()
    gc.disable()
    yield
    if was:
        gc.enable()
    gc.unfreeze()


@pytest.mark.parametrize("run", [SAMPLES / "long-300", SESSION], ids=["ledger", "session"])
@pytest.mark.parametrize("history", [True, False], ids=["store", "checkpoints"])
def test_a_replay_let_go_of_is_freed(run: Path, history: bool, no_collector: None) -> None:
    paths = locate_run(run)
    rules = rules_for_run(None, paths.events, paths.format)
    replay = Replay(paths, rules, history=history, checkpoint_every=1)
    replay.verify()
    assert replay.error is None and replay.valid > 200
    assert replay.step(replay.valid).seq == replay.valid  # every part has worked
    if history:
        assert gc.get_freeze_count() > 0  # the store kept states: the collector's are frozen
    replay.close()
    gone = weakref.ref(replay)
    del replay
    assert gone() is None
