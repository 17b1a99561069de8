"""A question across time asked before the patch log is made (the app's
pass records none with the built-in rules): the rules are run again from
the kept states, recording nothing, and the watched values read after each
event. The same answers as the log's, wherever the log stops, and rules
that do not give the same state twice named."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.engine.replay import Replay, RulesNotDeterministic
from replay_tui.formats.run import locate_run
from replay_tui.questions.across import condition_turns, path_changes, scans
from replay_tui.questions.condition import parse_condition, parse_path
from replay_tui.reducers import rules_for_run
from replay_tui.synth.runs import write_agent_run
from tests.helpers.questions import PATHS, conditions
from tests.helpers.tangled_rules import RULES_COUNTING, trusted_rules


def _replay(run: Path, every: int) -> Replay:
    paths = locate_run(run)
    rules = rules_for_run(None, paths.events, paths.format)
    replay = Replay(paths, rules, history=True, checkpoint_every=every).verify()
    assert replay.history is not None and replay.history.made_again
    return replay


def _typed(value: Any) -> Any:
    """A value with its JSON type told (``1`` and ``true`` apart)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def _answers(replay: Replay, condition: str, path: str) -> tuple[Any, Any]:
    turns = condition_turns(replay, parse_condition(condition), replay.valid)
    changes = path_changes(replay, parse_path(path), replay.valid)
    return (
        # (the moves of a turn in any order: the log's follow the state's keys)
        [(t.seq, sorted((repr(p), _typed(o), _typed(n)) for p, o, n in t.moves)) for t in turns],
        [(c.seq, c.op, _typed(c.old), _typed(c.new)) for c in changes],
    )


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 150),
    condition=conditions(),
    path=st.sampled_from(PATHS),
    every=st.integers(1, 9),
    made=st.floats(0, 1),
    first_chunk=st.integers(1, 40),
)
def test_questions_past_the_patch_log_get_the_logs_answers(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    n: int,
    condition: str,
    path: str,
    every: int,
    made: float,
    first_chunk: int,
) -> None:
    run = tmp_path_factory.mktemp("run") / "r"
    write_agent_run(run, n, seed=seed)
    with patch.object(scans, "FIRST_CHUNK_EVENTS", first_chunk):
        logged = _replay(run, every)
        try:
            assert logged.history is not None
            logged.history.patch_log()
            want = _answers(logged, condition, path)
        finally:
            logged.close()
        # none of the log made, then a part of it: the rest is told again
        for part in (0, int(made * n)):
            replay = _replay(run, every)
            try:
                assert replay.history is not None
                if part:
                    replay.history.patch_log(part)
                assert _answers(replay, condition, path) == want
            finally:
                replay.close()


def test_a_scalar_question_makes_no_patch_log(tmp_path: Path) -> None:
    """``phase == "retrying"`` asked right after the proof is told by the
    rules run again, not by making the log (three times its cost), and the
    scan goes on from where the log was made."""
    write_agent_run(tmp_path / "run", 3000, seed=5)
    replay = _replay(tmp_path / "run", 64)
    try:
        assert replay.history is not None
        turns = condition_turns(replay, parse_condition('phase == "retrying"'), replay.valid)
        tokens = path_changes(replay, parse_path("spent.tokens"), replay.valid)
        attempts = path_changes(replay, parse_path("attempt"), replay.valid)
        assert turns and len(tokens) > 100 and len(attempts) > 10
        assert len(replay.history.patches) == 0
        # an object's history needs the log: it is made for it
        calls = path_changes(replay, parse_path("calls.call-000002"), replay.valid)
        assert calls and len(replay.history.patches) == replay.valid
        made = condition_turns(replay, parse_condition('phase == "retrying"'), replay.valid)
        assert [t.seq for t in made] == [t.seq for t in turns]
    finally:
        replay.close()


def test_rules_that_do_not_give_the_same_state_twice_are_named(tmp_path: Path) -> None:
    """Run again, rules that read something beside the state and the event
    reach a kept state with another value at the watched path: the
    question says so instead of answering what never happened."""
    write_agent_run(tmp_path / "run", 60, seed=3)
    rules = trusted_rules(tmp_path, RULES_COUNTING)  # run as the built-in rules are
    replay = Replay(locate_run(tmp_path / "run"), rules, history=True, checkpoint_every=8)
    try:
        replay.verify()
        assert replay.history is not None and replay.history.made_again
        with pytest.raises(RulesNotDeterministic, match=r"after event 16: stamp differs"):
            condition_turns(replay, parse_condition("stamp > 1000"), replay.valid)
        assert len(replay.history.patches) == 0
    finally:
        replay.close()


@pytest.mark.parametrize(
    "condition",
    [
        "checks.0.passed == false and checks[0] exists",  # one path inside another, spelt apart
        "len(checks.1) == 3 or checks[1].passed == true",
        "len(calls) > 20",  # a draft object's length: left to the log
        "len(checks) == 2 and attempt >= 2",
    ],
)
def test_paths_inside_one_another_and_object_lengths_get_the_logs_answers(
    tmp_path: Path, condition: str
) -> None:
    write_agent_run(tmp_path / "run", 150, seed=2)
    logged = _replay(tmp_path / "run", 4)
    assert logged.history is not None
    logged.history.patch_log()
    want = _answers(logged, condition, "phase")
    logged.close()
    replay = _replay(tmp_path / "run", 4)
    assert _answers(replay, condition, "phase") == want and want[0]
    replay.close()


RULES_SHARING = """
from replay_tui.reducers.agent_run import AgentRunRules


class Rules(AgentRunRules):
    drafts = True

    def apply(self, state, event, ctx):
        state = super().apply(state, event, ctx)
        if event.seq == 1:
            shared = []
            state["a"] = shared
            state["b"] = shared  # one list under two keys, until it is frozen
        state["a"].append(event.seq)
        return state


REDUCER = Rules()
"""


def test_the_rules_run_again_freeze_where_the_pass_kept_a_state(tmp_path: Path) -> None:
    """Rules that hold one plain list under two keys see them part where
    the pass froze its draft (its first kept state, after event 8 here):
    run again, they must part at the same event, or ``len(b)`` would go on
    growing with ``a`` (and the check at the next kept state would call
    the rules not deterministic)."""
    write_agent_run(tmp_path / "run", 40, seed=1)
    rules = trusted_rules(tmp_path, RULES_SHARING)  # run as the built-in rules are
    replay = Replay(locate_run(tmp_path / "run"), rules, history=True, checkpoint_every=4)
    replay.verify()
    history = replay.history
    assert history is not None and history.made_again
    kept = history.kept_in(1, replay.valid)
    assert sorted(kept)[:2] == [8, 16]
    assert [len(kept[k]["b"]) for k in (8, 16)] == [8, 8]  # parted at the first
    assert [len(kept[k]["a"]) for k in (8, 16)] == [8, 16]

    def turns(text: str) -> list[int]:
        return [t.seq for t in condition_turns(replay, parse_condition(text), replay.valid)]

    assert turns("len(b) > 3") == [4]
    assert turns("len(b) == 8") == [8]
    assert turns("len(b) > 8") == []
    assert turns("len(a) > 12") == [13]
    replay.close()
