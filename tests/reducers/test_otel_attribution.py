"""Honest attribution of a trace's logs: a log is read at any severity and
by the event name it carries wherever it carries it; a log that cannot be
tied to one model call (no span id, and it could be either of two) is never
merged into a turn: the state lists it as ``unattributed``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.engine.open import open_replay
from replay_tui.reducers.base import State
from tests.helpers.otel_attribution import SEC, T0, TRACE, choice, doc, log_record


def _state(tmp: Path, doc: dict[str, Any]) -> State:
    path = tmp / "trace.json"
    path.write_bytes(orjson.dumps(doc))
    replay, watchdog = open_replay(str(path), fmt="otel")
    try:
        replay.verify()
        return replay.final_state()
    finally:
        replay.close()
        if watchdog is not None:
            watchdog.stop()


def test_a_spanless_log_between_two_model_calls_is_unattributed(tmp_path: Path) -> None:
    stray = log_record(T0 + 3 * SEC, "", choice("Stray words."), "gen_ai.choice")
    state = _state(tmp_path, doc(T0 + 4 * SEC, [stray]))
    [turn] = state["turns"]
    assert turn["user_text"] == "What is the weather?"  # named by otel.event.name, at DEBUG
    assert turn["intermediate_texts"] == ["Let me look."]
    assert turn["final_text"] == "It is sunny."
    [listed] = state["unattributed"]
    assert listed["name"] == "gen_ai.choice"
    assert listed["says"] == "assistant: Stray words."
    assert "no one model call can claim it" in listed["why"]
    assert isinstance(listed["seq"], int)


def test_a_spanless_log_while_two_calls_run_at_once_joins_neither(tmp_path: Path) -> None:
    """Two calls at once (the second starts while the first runs): a log
    with no span id in that time could be either's, so it is neither's
    (today's reader took it for the later call's answer)."""
    stray = log_record(T0 + 18 * SEC // 10, "", choice("Stray words."), "gen_ai.choice")
    state = _state(tmp_path, doc(T0 + 15 * SEC // 10, [stray]))
    [turn] = state["turns"]
    assert "Stray words." not in [turn["final_text"], *turn["intermediate_texts"]]
    assert [u["says"] for u in state["unattributed"]] == ["assistant: Stray words."]


def test_a_log_with_no_trace_id_in_a_gap_is_unattributed_too(tmp_path: Path) -> None:
    stray = log_record(T0 + 3 * SEC, "", choice("Stray words."), "gen_ai.choice", trace="")
    state = _state(tmp_path, doc(T0 + 4 * SEC, [stray]))
    assert [u["says"] for u in state["unattributed"]] == ["assistant: Stray words."]
    assert state["turns"][0]["final_text"] == "It is sunny."


def test_a_spanless_log_inside_one_call_is_that_calls(tmp_path: Path) -> None:
    """In the time of one call only: that call's (no doubt, nothing listed)."""
    inside = log_record(
        T0 + 4 * SEC + 10, "", {"content": "Also: in Celsius."}, "gen_ai.user.message"
    )
    state = _state(tmp_path, doc(T0 + 4 * SEC, [inside]))
    assert state["unattributed"] == []


@given(
    gap=st.integers(min_value=1, max_value=2 * SEC - 1),
    traced=st.booleans(),
    name=st.sampled_from(["gen_ai.choice", "gen_ai.user.message", "gen_ai.assistant.message"]),
)
@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_an_unattributed_log_never_changes_a_turn(
    tmp_path: Path, gap: int, traced: bool, name: str
) -> None:
    """Whatever it says and wherever it falls between the calls, a log that
    no call can claim alone leaves every turn as it was, and is listed."""
    body = choice("Stray.") if name == "gen_ai.choice" else {"content": "Stray."}
    stray = log_record(T0 + 2 * SEC + gap, "", body, name, trace=TRACE if traced else "")
    without = _state(tmp_path, doc(T0 + 4 * SEC, []))
    with_it = _state(tmp_path, doc(T0 + 4 * SEC, [stray]))
    assert with_it["turns"] == without["turns"]
    assert len(with_it["unattributed"]) == 1 and without["unattributed"] == []
