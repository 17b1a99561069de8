"""Patches made again: the app's pass records no patches for the built-in
rules; what an event changed is made when asked for, by running the rules
again from the kept state before it. The same states and the same patches
as a pass that records them, rules that do not give the same state twice
named, a state that is not JSON found at its event."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.core import strict_json
from replay_tui.engine.replay import Replay, RulesNotDeterministic
from replay_tui.engine.replay_core import LedgerChanged
from replay_tui.formats.run import locate_run
from replay_tui.reducers import LoadedReducer, load_reducer
from replay_tui.state import canonical
from replay_tui.state.diff import diff
from replay_tui.state.patchlog import decode
from replay_tui.synth.runs import write_agent_run
from replay_tui.views.runview import RunView
from tests.helpers.tangled_rules import RULES_COUNTING, RULES_TANGLED, same_changes, trusted_rules


def _replays(run: Path, rules: LoadedReducer, every: int) -> tuple[Replay, Replay]:
    kept = Replay(locate_run(run), rules, history=True, checkpoint_every=every).verify()
    plain = Replay(locate_run(run), rules).verify()
    return kept, plain


def test_the_built_in_rules_make_patches_again() -> None:
    from tests.conftest import DEMO

    replay = Replay(locate_run(DEMO), load_reducer(None), history=True).verify()
    assert replay.history is not None and replay.history.made_again
    assert len(replay.history.patches) == 0  # nothing recorded by the pass
    assert len(replay.history.patch_log()) == replay.valid


RULES_WATCHED = """
from replay_tui.reducers.agent_run import AgentRunRules


class Rules(AgentRunRules):
    drafts = True


REDUCER = Rules()
"""


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(1, 120), every=st.integers(1, 6))
def test_made_again_or_recorded_the_patch_log_is_the_same(seed: int, n: int, every: int) -> None:
    """The patch log made behind the pass is, byte for byte, the one a pass
    that records patches writes, and every state the same."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        write_agent_run(run, n, seed=seed)
        made = Replay(locate_run(run), load_reducer(None), history=True, checkpoint_every=every)
        (Path(tmp) / "rules.py").write_text(RULES_WATCHED)
        # the same rules, watched as user rules are: they record their patches in the pass
        watched = load_reducer(f"{Path(tmp) / 'rules.py'}:REDUCER")
        recorded = Replay(locate_run(run), watched, history=True, checkpoint_every=every)
        made.verify()
        recorded.verify()
        assert made.history is not None and made.history.made_again
        assert recorded.history is not None and not recorded.history.made_again
        assert made.error is None and recorded.error is None
        # a pane asks out of order first (spans made and cached), then the whole log
        for k in [*range(n, 0, -3), *range(1, n + 1, 2)]:
            assert made.history.changes(k) == recorded.history.changes(k), k
        assert made.history.patch_log().span(1, n) == recorded.history.patches.span(1, n)
        for k in range(n + 1):
            assert canonical.dumps(made.frozen_at(k)) == canonical.dumps(recorded.frozen_at(k))
        made.close()
        recorded.close()


def test_rules_that_replace_and_set_back_give_the_same_patches_made_again(
    tmp_path: Path,
) -> None:
    """Rules that replace what they changed, set a value back and return a
    new dict: made again, every state and diff is a plain replay's."""
    write_agent_run(tmp_path / "run", 260, seed=5)
    kept, plain = _replays(tmp_path / "run", trusted_rules(tmp_path, RULES_TANGLED), 2)
    assert kept.history is not None and kept.history.made_again
    assert kept.error is None and plain.error is None
    states = [plain.state_at(k) for k in range(261)]
    for k in range(260, 0, -1):  # backwards: each step a span made again
        assert canonical.dumps(kept.frozen_at(k)) == canonical.dumps(states[k]), k
        assert same_changes(kept.step(k).changes, diff(states[k - 1], states[k])), k
    log = kept.history.patch_log()
    for k in range(1, 261):
        assert same_changes(decode(log.raw(k)), diff(states[k - 1], states[k])), k


def test_rules_that_do_not_give_the_same_state_twice_are_named(tmp_path: Path) -> None:
    """Rules that read something beside the state and the event cannot be
    replayed: made again, the state they end at is not the one kept, and
    the pane says so instead of showing what never happened."""
    write_agent_run(tmp_path / "run", 60, seed=3)
    rules = trusted_rules(tmp_path, RULES_COUNTING)
    replay = Replay(locate_run(tmp_path / "run"), rules, history=True, checkpoint_every=8)
    replay.verify()
    assert replay.error is None and replay.valid == 60
    assert replay.history is not None
    with pytest.raises(RulesNotDeterministic, match=r"stamp differs"):
        replay.history.patch_log()
    view = RunView(replay).line_view(11)  # seq 12: in a span that ends at a kept state
    assert view.mode == "broken"
    assert "the rules gave another state" in str(view.raw) and "stamp differs" in str(view.raw)


RULES_NOT_JSON = """
from replay_tui.reducers.agent_run import AgentRunRules


class Rules(AgentRunRules):
    drafts = True

    def apply(self, state, event, ctx):
        state = super().apply(state, event, ctx)
        if event.seq == 23:
            state["seen"] = {"a", "b"}  # a set: not JSON
        return state


REDUCER = Rules()
"""


@pytest.mark.parametrize("every", [4, 256])
def test_a_state_not_json_is_found_at_its_event(tmp_path: Path, every: int) -> None:
    """The pass freezes its draft only when it keeps a state: a value that
    is not JSON is found then, and the error is where it was written, as
    when each event's patches are recorded."""
    write_agent_run(tmp_path / "run", 60, seed=2)
    rules = trusted_rules(tmp_path, RULES_NOT_JSON)
    replay = Replay(locate_run(tmp_path / "run"), rules, history=True, checkpoint_every=every)
    replay.verify()
    assert replay.history is not None and replay.history.made_again
    error: Any = replay.error
    assert error is not None and error.code == "reducer_error" and error.seq == 23
    assert "the state after this event is not JSON" in error.message
    assert replay.valid == 22 and len(replay.history) == 22
    assert canonical.dumps(replay.frozen_at(22)) == canonical.dumps(
        Replay(locate_run(tmp_path / "run"), load_reducer(None), history=True)
        .verify()
        .frozen_at(22)
    )


def _indexes(replay: Replay) -> tuple[Any, ...]:
    """What the app reads beside the states: the call index (``v``, ``e``)
    and the clock (the overview strip)."""
    calls, clock = replay.calls, replay.clock
    assert calls is not None and clock is not None
    return (
        list(calls.call),
        list(calls.rows),
        calls.keys,
        [list(calls.lines(n)) for n in range(calls.calls)],
        list(calls.failed),
        list(clock._at),
    )


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(1, 300), every=st.integers(1, 40))
def test_the_indexes_noted_a_chunk_at_a_time_are_those_noted_per_event(
    seed: int, n: int, every: int
) -> None:
    """The pass on drafts notes each chunk's calls and times at once: the
    same call index, failed calls and clock as noting them event by event
    (the pass that records patches), and failures where the rules word them."""
    import tempfile

    from replay_tui.reducers.base import FAILED_CALL, call_facts

    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        write_agent_run(run, n, seed=seed)
        (Path(tmp) / "rules.py").write_text(RULES_WATCHED)
        made = Replay(locate_run(run), load_reducer(None), history=True, checkpoint_every=every)
        watched = load_reducer(f"{Path(tmp) / 'rules.py'}:REDUCER")
        recorded = Replay(locate_run(run), watched, history=True, checkpoint_every=every)
        made.verify()
        recorded.verify()
        assert made.history is not None and made.history.made_again
        assert made.error is None and recorded.error is None
        ours, theirs = _indexes(made), _indexes(recorded)
        assert ours[:4] == theirs[:4] and ours[5] == theirs[5]
        # the watched rules are not asked how calls end: the rules' words are
        events = [made._event_for_apply(i) for i in range(n)]
        facts = [call_facts(made.reducer, e) for e in events]
        in_call = [isinstance(made.reducer.call_of(e), str) for e in events]
        assert ours[4] == [
            i for i, f in enumerate(facts) if f and f.status in FAILED_CALL and in_call[i]
        ]
        made.close()
        recorded.close()


RULES_RAISING = """
from replay_tui.reducers.agent_run import AgentRunRules


class Rules(AgentRunRules):
    drafts = True

    def apply(self, state, event, ctx):
        if event.seq == 23:
            raise RuntimeError("a bug at 23")
        return super().apply(state, event, ctx)


REDUCER = Rules()
"""


@pytest.mark.parametrize("every", [4, 256])
def test_rules_that_raise_stop_the_pass_on_drafts_where_they_raised(
    tmp_path: Path, every: int
) -> None:
    """Rules that raise mid-chunk: the error at that seq, the valid prefix
    before it, and the failing line in the call index and on the clock, as
    in the pass that records patches."""
    write_agent_run(tmp_path / "run", 60, seed=4)
    made = Replay(
        locate_run(tmp_path / "run"),
        trusted_rules(tmp_path, RULES_RAISING),
        history=True,
        checkpoint_every=every,
    ).verify()
    recorded = Replay(
        locate_run(tmp_path / "run"),
        load_reducer(f"{tmp_path / 'rules.py'}:REDUCER"),
        history=True,
        checkpoint_every=every,
    ).verify()
    assert made.history is not None and made.history.made_again
    for replay in (made, recorded):
        error: Any = replay.error
        assert error is not None and (error.code, error.seq) == ("reducer_error", 23)
        assert "a bug at 23" in error.message
        assert replay.valid == 22
    ours, theirs = _indexes(made), _indexes(recorded)
    assert ours[:4] == theirs[:4] and ours[5] == theirs[5]
    assert len(ours[0]) == 23  # the failing line is in the index, as it is on screen


def test_an_observer_sees_every_event_of_the_pass_on_drafts(tmp_path: Path) -> None:
    """Compare mode watches the pass (which receipts each event read): with
    the built-in rules on drafts, every event is seen, in order, with the
    receipts it read."""
    write_agent_run(tmp_path / "run", 2_000, seed=6)
    replay = Replay(locate_run(tmp_path / "run"), load_reducer(None), history=True)
    assert replay.history is not None and replay.history.made_again
    seen: list[int] = []
    reads: dict[int, int] = {}
    log: list[tuple[str, str]] = []
    replay.ctx.receipt_log = log

    def observe(seq: int, state: Any, kind: str) -> None:
        seen.append(seq)
        if log:
            reads[seq] = len(log)
            log.clear()

    replay.observer = observe
    replay.verify()
    assert replay.error is None
    assert seen == list(range(1, 2_001))
    finished = [
        e.seq for e in map(replay._event_for_apply, range(2_000)) if e.kind == "tool_finished"
    ]
    assert sorted(reads) == finished


class _SlowClock:
    """The pass's ``time``: each look at the clock is 2 ms after the one
    before, as if the rules took 2 ms an event (the pass looks once an event)."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 0.002
        return self.now


def test_where_the_rules_are_slow_a_span_is_a_few_ms_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A state is kept once the pass spent 5 ms since the last (SPAN_SECONDS):
    with rules taking 2 ms an event or more, no span holds more than three
    events, so a step into one runs the rules again over three at most."""
    from replay_tui.engine import regular_runs
    from replay_tui.engine.native_runs import NativeRuns
    from replay_tui.engine.replay_core import SPAN_SECONDS
    from replay_tui.state import history as history_module

    assert SPAN_SECONDS <= 0.006
    clock = _SlowClock()
    monkeypatch.setattr(history_module, "time", clock)
    monkeypatch.setattr(regular_runs, "time", clock)
    # (their native twin is never slow: the Python rules here, as slow rules are)
    monkeypatch.setattr(NativeRuns, "take", lambda *_: None)
    write_agent_run(tmp_path / "run", 90, seed=8)
    replay = Replay(locate_run(tmp_path / "run"), load_reducer(None), history=True).verify()
    assert replay.error is None and replay.history is not None
    assert replay.history.made_again
    kept = replay.history._keys
    assert max(b - a for a, b in pairwise(kept)) <= 3, kept


def _told(event: Any) -> tuple[Any, ...]:
    fields = strict_json.dumps(event.fields)
    return (fields, event.seq, event.run_id, event.kind, event.line, event.offset, event.ts)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(1, 700),
    big=st.lists(st.integers(0, 699), max_size=4),
    start=st.integers(0, 699),
    count=st.integers(0, 700),
)
def test_lines_read_again_at_once_are_the_lines_read_one_by_one(
    tmp_path_factory: pytest.TempPathFactory, n: int, big: list[int], start: int, count: int
) -> None:
    """A span made again (or run again for a question) makes a few hundred
    lines' events at once: the events each line gives alone, an integer
    past 64 bits read exactly, and a line changed since it was validated
    named as it is alone."""
    run = tmp_path_factory.mktemp("run") / "r"
    write_agent_run(run, n, seed=n)
    path = run / "events.jsonl"
    lines = path.read_bytes().split(b"\n")
    for i in set(big):  # a payload with an integer past 64 bits
        if i < n:
            lines[i] = lines[i].replace(
                b'"payload":{', b'"payload":{"wide":123456789012345678901234,', 1
            )
    path.write_bytes(b"\n".join(lines))
    paths = locate_run(run)
    replay = Replay(paths, load_reducer("agent_run"), history=True).verify()
    try:
        assert replay.error is None and replay.valid == n
        start = min(start, n)
        end = min(n, start + count)
        together = list(replay._events_for_apply(start, end))
        alone = [replay._event_for_apply(i) for i in range(start, end)]
        assert [_told(e) for e in together] == [_told(e) for e in alone]
        assert all(
            e.fields["payload"]["wide"] == 123456789012345678901234
            for e in together
            if "wide" in e.fields["payload"]
        )
        if end > start:  # a byte of a line in the span changed where it was
            at = (start + end) // 2
            data = bytearray(path.read_bytes())
            where = sum(len(x) + 1 for x in lines[:at]) + lines[at].index(b'"kind":"') + 8
            data[where] = ord("X")
            path.write_bytes(bytes(data))
            with pytest.raises(LedgerChanged, match=f"line {at + 1} changed"):
                list(replay._events_for_apply(start, end))
    finally:
        replay.close()
