"""``check``'s pass reads no state until it ends: the trace rules then build
a turn whose anchor span is still open once, when asked (``settle``), not
after each of its records. Invariant: settled at any record, the state is
the one building every turn at once gives, and the warnings at each record
are the same.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.engine.checkpoints import JsonCheckpoints
from replay_tui.engine.open import open_replay
from replay_tui.formats.envelope import Event
from replay_tui.reducers.base import State
from replay_tui.reducers.calling.caller import RulesCaller
from replay_tui.reducers.otel_genai import REDUCER
from replay_tui.reducers.otel_genai import turns as otel_turns
from tests.helpers.otel_corpus import (
    CORPUS,
    MULTI_TRACE,
    TRACES,
    events_of,
    every_prefix,
    interleaved,
    name_of,
    new_ctx,
    one_long_trace,
    renumbered,
)


def _json(state: State) -> bytes:
    return orjson.dumps(state, option=orjson.OPT_SORT_KEYS)


def _settled_at(events: list[Event], points: set[int]) -> tuple[dict[int, bytes], list[list[str]]]:
    """Applied with ``settle_later``, settled after the records at ``points``
    (and after the last): the states there, and the warnings at each record."""
    ctx = new_ctx()
    ctx.settle_later = True
    state = REDUCER.initial_state()
    states: dict[int, bytes] = {}
    said = []
    for i, event in enumerate(events):
        ctx.warnings = []
        state = REDUCER.apply(state, event, ctx)
        said.append(list(ctx.warnings))
        if i in points or i == len(events) - 1:
            REDUCER.settle(state, ctx)
            states[i] = _json(state)
    return states, said


def _orders(events: list[Event], rnd: random.Random) -> list[list[Event]]:
    return [
        events,
        renumbered(list(reversed(events))),
        renumbered(rnd.sample(events, len(events))),
        renumbered(interleaved(events, rnd)),
    ]


def _same(events: list[Event], rnd: random.Random) -> None:
    want = every_prefix(events)
    points = {i for i in range(len(events)) if rnd.random() < 0.2}
    states, said = _settled_at(events, points)
    assert said == [w for _, w in want]
    for i, got in states.items():
        assert got == want[i][0], f"the state after record {i + 1} differs"


@pytest.mark.parametrize("path", TRACES, ids=name_of)
@given(seed=st.integers(0, 2**32))
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_settled_anywhere_the_state_and_warnings_are_as_built_at_once(
    path: Path, seed: int
) -> None:
    """Every recording, in its order, reversed, shuffled and its traces
    interleaved; settled at random records."""
    rnd = random.Random(seed)
    for order in _orders(events_of(path), rnd):
        _same(order, rnd)


@given(seed=st.integers(0, 2**32))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_one_long_trace_settled_anywhere_is_as_built_at_once(seed: int) -> None:
    rnd = random.Random(seed)
    events = one_long_trace(CORPUS / "hand" / "openai_v2_logs_span_id.json", 4)
    for order in _orders(events, rnd):
        _same(order, rnd)


def _turns_built(events: list[Event], later: bool) -> int:
    built = 0
    real = otel_turns._group_turn

    def counting(*args: Any) -> Any:
        nonlocal built
        built += 1
        return real(*args)

    ctx = new_ctx()
    ctx.settle_later = later
    state = REDUCER.initial_state()
    otel_turns._group_turn = counting  # type: ignore[assignment]
    try:
        for event in events:
            state = REDUCER.apply(state, event, ctx)
        REDUCER.settle(state, ctx)
    finally:
        otel_turns._group_turn = real  # type: ignore[assignment]
    return built


def test_a_turn_is_built_when_its_anchor_ends_not_at_each_record() -> None:
    """What it is for: twelve agent runs one after another, each a turn of
    23 records, build their turns a few times each instead of at every record."""
    events = one_long_trace(CORPUS / "adk_py" / "v2_event_only" / "S2.json", 12)
    eager, later = _turns_built(events, False), _turns_built(events, True)
    assert eager >= 200
    assert later * 4 <= eager


# -- through the engine ---------------------------------------------------------------
def _verified(path: Path, settles: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(RulesCaller, "settles", property(lambda self: settles and not self.guarded))
    replay, _ = open_replay(str(path))
    # a state kept every 7 records
    replay.checkpoints = JsonCheckpoints(REDUCER.initial_state(), every=7, budget_bytes=1 << 30)
    replay.verify()
    kept = {n: replay.checkpoints.nearest(n) for n in range(0, replay.valid + 1, 7)}
    warnings = [(w.code, w.message, w.seq) for w in replay.warnings]
    return replay.valid, _json(replay._live_state()), warnings, kept


@pytest.mark.parametrize("path", MULTI_TRACE, ids=name_of)
def test_check_gives_the_same_answer_settling_once(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``check``'s pass settles at the end and before each state it keeps:
    its final state, warnings and kept states are those of building each turn at once."""
    assert open_replay(str(path))[0].rules_call.settles  # the pass does settle later
    got = _verified(path, True, monkeypatch)
    want = _verified(path, False, monkeypatch)
    assert got == want


def _stopped(path: Path, settles: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(RulesCaller, "settles", property(lambda self: settles and not self.guarded))
    replay, _ = open_replay(str(path))
    replay.verify()
    error = replay.error
    assert error is not None
    warnings = [(w.code, w.message, w.seq) for w in replay.warnings]
    said = (error.code, error.seq, error.message.split("\n")[0], replay.warning_count)
    return said, replay.valid, warnings, _json(replay.state_at(replay.valid))


@pytest.mark.parametrize("path", [p for p in MULTI_TRACE if p.stem == "S3"], ids=name_of)
def test_a_bug_in_work_left_for_later_stops_where_building_at_once_would(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn of four spans or more makes the rules raise (a bug): left for
    later, it raises records after the one that made it; ``check`` still
    stops at that record, with the warnings and state before it."""
    real = otel_turns._build_turn

    def failing(tid: str, anchor: str, mem: list[str], *rest: Any) -> Any:
        if len(mem) >= 4:
            raise ZeroDivisionError("a bug in the rules")
        return real(tid, anchor, mem, *rest)

    monkeypatch.setattr(otel_turns, "_build_turn", failing)
    got = _stopped(path, True, monkeypatch)
    want = _stopped(path, False, monkeypatch)
    assert want[0][0] == "reducer_error" and want[0][1] is not None
    assert got == want
