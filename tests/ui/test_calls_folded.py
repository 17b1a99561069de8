"""Calls folded (``v``): one timeline row per call, with its tool, how it
ended, how long it took and what it cost; Enter / → unfold it, ← folds it."""

from __future__ import annotations

from array import array
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from textual.pilot import Pilot

from replay_tui.engine.indexes.calls import CallIndex
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.reducers import load_reducer
from replay_tui.ui.launch import make_app
from replay_tui.views.calls import Folding
from replay_tui.views.runview import RunView
from tests.conftest import DEMO, SAMPLES
from tests.helpers.screen import pane_text, ready, said, screen_text, seq_at_cursor, settle
from tests.helpers.waiting import until

RESEARCH = SAMPLES / "temporal" / "sdk-python--research-workflow-history.json"


def _demo_view() -> RunView:
    replay = Replay(locate_run(DEMO), load_reducer(None), history=True).verify()
    return RunView(replay)


def test_the_forward_pass_says_which_events_make_each_call() -> None:
    view = _demo_view()
    calls = view.call_index()
    assert calls is not None and calls.calls == 3
    assert [list(calls.lines(n)) for n in range(3)] == [[2, 3, 4, 5], [6, 7], [12, 13]]
    # the folded timeline: lines in no call, and the first line of each call
    assert list(calls.rows) == [0, 1, 2, 6, 8, 9, 10, 11, 12]
    read, shell, edit = (view.call_row(n) for n in range(3))
    assert (read.tool, read.arg, read.status, read.cost, read.count) == (
        "read_file",
        "tests/test_parser.py",
        "ok",
        0.002,
        4,
    )
    assert read.duration is not None and abs(read.duration - 0.317) < 1e-6
    assert (read.first_seq, read.last_seq) == (3, 6)
    assert (shell.tool, shell.status) == ("shell", "denied")
    assert edit.status == "open"  # the run stops before the edit finishes
    view.replay.close()


def test_a_retried_event_is_noted_once() -> None:
    index = CallIndex(lambda event: event.payload.get("call_id"))
    fake = type("E", (), {"payload": {"call_id": "a"}})()
    index.note(0, fake)  # type: ignore[arg-type]
    index.note(0, fake)  # type: ignore[arg-type]  # after a pending receipt
    index.note(1, fake)  # type: ignore[arg-type]
    assert index.count[0] == 2 and list(index.lines(0)) == [0, 1] and list(index.rows) == [0]


def test_rules_whose_call_of_raises_leave_the_event_alone() -> None:
    def broken(event: object) -> str:
        raise ValueError("bug")

    index = CallIndex(broken)  # type: ignore[arg-type]
    index.note(0, object())  # type: ignore[arg-type]
    assert list(index.rows) == [0] and index.calls == 0


@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(0, 6), st.sampled_from([7, b"x"])),
            st.booleans(),
            st.sampled_from(["start", "end"]),
        ),
        max_size=80,
    ),
    st.lists(st.integers(1, 30), max_size=6),
    st.booleans(),
)
def test_lines_noted_a_group_at_a_time_are_noted_as_one_by_one(
    lines: list[tuple[Any, bool, str]], cuts: list[int], kinds_named: bool
) -> None:
    """The forward pass notes a chunk's lines at once: the same calls, rows,
    links and failed calls as noting them one by one; a line in no call (or
    whose call is not a name) ends none, whatever the rules say of it."""
    events = [
        type(
            "E",
            (),
            {
                "key": key if not isinstance(key, int) or key == 7 else f"c{key}",
                "failed": bad,
                "kind": kind,
            },
        )()
        for key, bad, kind in lines
    ]
    ends = frozenset({"end"}) if kinds_named else None

    def index() -> CallIndex:
        return CallIndex(
            lambda e: e.key,
            lambda e: e.failed,
            end_kinds=ends,  # type: ignore[attr-defined]
        )

    one, many = index(), index()
    for at, event in enumerate(events):
        one.note(at, event)  # type: ignore[arg-type]
    at = 0
    for cut in [*cuts, len(events)]:
        many.note_many(at, events[at : at + cut])  # type: ignore[arg-type]
        at = min(len(events), at + cut)
    many.note_many(at, events[at:])  # type: ignore[arg-type]
    assert list(many.call) == list(one.call) and list(many.rows) == list(one.rows)
    assert many.keys == one.keys and list(many.count) == list(one.count)
    assert [list(many.lines(n)) for n in range(many.calls)] == [
        list(one.lines(n)) for n in range(one.calls)
    ]
    assert list(many.failed) == list(one.failed)
    assert all(isinstance(events[i].key, str) for i in many.failed)  # type: ignore[attr-defined]


@given(st.lists(st.one_of(st.none(), st.integers(0, 5)), min_size=1, max_size=60), st.data())
def test_folded_rows_show_every_line_once(calls: list[int | None], data: st.DataObject) -> None:
    index = CallIndex(lambda event: event)  # type: ignore[arg-type, return-value]
    for line, call in enumerate(calls):
        index.note(line, None if call is None else f"c{call}")  # type: ignore[arg-type]
    folding = Folding(index)
    total = len(calls) + data.draw(st.integers(0, 3))  # lines not yet noted
    for number in data.draw(st.sets(st.integers(0, max(0, index.calls - 1)))):
        if number < index.calls:
            folding.unfolded.add(number)
    rows = folding.rows(total)
    assert list(rows) == sorted(set(rows))
    # every line is shown by exactly one row: its own, or its folded call's
    for line in range(total):
        assert folding.row_of(line) in rows
        target = folding.target(folding.row_of(line))
        assert target >= line or line >= len(index)
    only = array("i", [line for line in range(total) if line % 2 == 0])
    assert set(folding.rows(total, only)) == {folding.row_of(line) for line in only}


async def _folded(pilot: Pilot[int]) -> None:
    await ready(pilot)
    await pilot.press("v")
    app = pilot.app
    await settle(app, pilot)  # type: ignore[arg-type]


async def test_v_folds_each_call_into_one_row_and_back() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await _folded(pilot)
        timeline = app.main.timeline
        assert timeline.row_count == 9
        screen = screen_text(app)
        assert "▸ read_file" in screen and "ok  tests/test_parser.py  317 ms" in screen
        assert "denied  rm -rf build/" in screen and "still open  src/parser.py" in screen
        assert "tool_allowed" not in screen
        assert any("3 calls folded" in m for m in said(app))
        await pilot.press("j", "j")  # run_started, attempt_started, then the read_file call
        await settle(app, pilot)
        # the call's row is the prefix through its last event
        assert seq_at_cursor(app) == 6
        assert "prefix 1..6" in pane_text(app, "state") or "seq 6" in screen_text(app)
        await pilot.press("v")
        await settle(app, pilot)
        assert timeline.row_count == 14 and seq_at_cursor(app) == 6


async def test_enter_unfolds_a_call_and_left_folds_it() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await _folded(pilot)
        await pilot.press("j", "j", "enter")
        await settle(app, pilot)
        screen = screen_text(app)
        assert "▾ model_proposed" in screen and "│ tool_allowed" in screen
        assert app.main.timeline.row_count == 12
        await pilot.press("j")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 4
        await pilot.press("left")
        await settle(app, pilot)
        assert app.main.timeline.row_count == 9 and seq_at_cursor(app) == 6
        assert "▸ read_file" in screen_text(app)


async def test_going_to_a_seq_inside_a_folded_call_unfolds_it() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await _folded(pilot)
        await pilot.press("colon", "5", "enter")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 5
        assert "│ tool_started" in screen_text(app)


async def test_temporal_activities_fold_into_their_type_and_outcome() -> None:
    app = make_app(RESEARCH)
    async with app.run_test(size=(140, 40)) as pilot:
        await _folded(pilot)
        screen = screen_text(app)
        assert "▸ invoke_model_activity" in screen and "ok  #1  5.8 s · 3 events" in screen
        assert "ActivityTaskStarted" not in screen


async def test_rules_that_name_no_calls_say_there_is_nothing_to_fold() -> None:
    app = make_app(SAMPLES / "refund-180")
    async with app.run_test(size=(140, 40)) as pilot:
        await _folded(pilot)
        assert any("nothing to fold" in m for m in said(app))
        assert app.main.timeline.row_count == 3


async def test_a_filter_shows_the_calls_it_matches_folded() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await _folded(pilot)
        await pilot.press("slash", *"call-002", "enter")
        await settle(app, pilot)
        await until(pilot, lambda: app.main.timeline.row_count == 1)
        assert "denied  rm -rf build/" in screen_text(app)


def test_snapshot_calls_folded(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(DEMO), terminal_size=(140, 40), run_before=_folded)


async def test_a_folded_call_that_holds_the_error_says_so() -> None:
    app = make_app(SAMPLES / "broken-illegal_transition")
    async with app.run_test(size=(140, 40)) as pilot:
        await _folded(pilot)
        row = next(line for line in screen_text(app).splitlines() if "▸ shell" in line)
        assert "illegal_transition: tool_started" in row
        assert seq_at_cursor(app) == 9  # the call's row stands for the failing event
