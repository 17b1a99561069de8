"""Causes and effects: an event's chain of ``parent_seq`` and the events that
name it, in the inspector; ``p`` goes to the cause and ``P`` back."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from replay_tui.engine.indexes.causes import CauseIndex
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.reducers import load_reducer
from replay_tui.ui.launch import make_app
from replay_tui.views.runview import RunView
from tests.conftest import SAMPLES, RunFactory
from tests.helpers.screen import pane_text, ready_at, said, seq_at_cursor, settle

UPDATE = SAMPLES / "temporal" / "hand-written--update-after-reset.json"


def _event(seq: int, kind: str, parent: int | None = None, **payload: Any) -> bytes:
    record: dict[str, Any] = {"seq": seq, "run_id": "r", "kind": kind, "payload": payload}
    if parent is not None:
        record["parent_seq"] = parent
    return orjson.dumps(record) + b"\n"


def test_the_view_lists_causes_and_effects(run_factory: RunFactory) -> None:
    lines = [
        _event(1, "run_started", task="t"),
        _event(2, "attempt_started", 1, attempt=1),
        _event(3, "model_finished", 2, tokens=5),
        _event(4, "model_finished", 3, tokens=5),
        _event(5, "model_finished", 2, tokens=5),
    ]
    run = run_factory(lines)
    replay = Replay(locate_run(run), load_reducer(None), history=True).verify()
    view = RunView(replay)
    at4 = view.line_view(3)
    assert at4.causes == ((3, "model_finished"), (2, "attempt_started"), (1, "run_started"))
    at2 = view.line_view(1)
    assert at2.causes == ((1, "run_started"),) and at2.effects == (
        (3, "model_finished"),
        (5, "model_finished"),
    )
    assert at2.effects_count == 2 and view.line_view(0).effects == ((2, "attempt_started"),)
    assert view.line_view(4).effects == ()
    replay.close()


async def test_p_goes_to_the_cause_and_capital_p_back() -> None:
    app = make_app(str(UPDATE))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        app.main.go_to_seq(14)
        await settle(app, pilot)
        inspector = pane_text(app, "receipt")
        assert "caused by  seq 11 ActivityTaskScheduled" in inspector
        assert "effects    seq 15 ActivityTaskCompleted" in inspector
        await pilot.press("p")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 11 and "effects    seq 14" in pane_text(app, "receipt")
        await pilot.press("p")  # 11 names no cause: the cursor stays
        await settle(app, pilot)
        assert seq_at_cursor(app) == 11
        assert any("no cause" in m for m in said(app))
        await pilot.press("P")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 14
        await pilot.press("P")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 14
        assert any("nothing to go back to" in m for m in said(app))


def test_snapshot_causes_and_effects(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(str(UPDATE)), terminal_size=(140, 40), run_before=ready_at(14))


async def test_a_claude_code_records_parent_is_its_cause() -> None:
    """``parentUuid`` names the record before it in the conversation: p walks
    the session back a record at a time, P forward again."""
    app = make_app(str(SAMPLES / "agent-sessions" / "claude-code-error.jsonl"))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        app.main.go_to_seq(16)
        await settle(app, pilot)
        view = app.main.line_view
        assert view is not None and view.causes[:2] == ((15, "tool_use"), (14, "assistant"))
        assert view.effects == ((17, "thinking"),)
        assert "caused by  seq 15 tool_use ← seq 14 assistant" in pane_text(app, "receipt")
        await pilot.press("p", "p")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 14
        await pilot.press("P")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 15


class _Noted:
    """What the index reads of an event: its seq, parent and whether the line names it."""

    def __init__(self, seq: int, parent: int, named: bool) -> None:
        self.seq, self.parent_seq = seq, parent
        self.fields = {"parent_seq": parent} if named else {}


@given(
    st.lists(
        st.tuples(st.integers(1, 60), st.booleans(), st.booleans()),
        max_size=80,
    ),
    st.integers(0, 200),
)
def test_the_compact_index_answers_as_a_dict_of_lists_would(
    steps: list[tuple[int, bool, bool]], upto: int
) -> None:
    """Arrays and fan-out lists give the answers of the plain model: every
    effect of a parent in ledger order (a retry noted twice counted once),
    and the parent a checker found only where the line names none."""
    index = CauseIndex()
    effects: dict[int, list[int]] = {}
    found: dict[int, int] = {}
    seq, last = 1, None
    for back, named, retry in steps:
        if retry and last is not None:  # a retry after a pending receipt: noted again
            index.note(last)  # type: ignore[arg-type]
            continue
        seq += 1
        parent = max(1, seq - back)
        last = _Noted(seq, parent, named)
        index.note(last)  # type: ignore[arg-type]
        effects.setdefault(parent, []).append(seq)
        if not named:
            found[seq] = parent
    for s in range(0, seq + 2):
        kids = [k for k in effects.get(s, []) if k <= upto]
        assert index.effects(s, upto, 3) == (kids[:3], len(kids))
        probe = _Noted(s, 0, False)
        probe.parent_seq = None  # type: ignore[assignment]
        assert index.parent_of(probe) == found.get(s)  # type: ignore[arg-type]
