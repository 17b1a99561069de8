"""The overview strip: the whole run in the rows beside the timeline, its
density by time, its marks, the cursor's slice; a click or ``{`` / ``}`` go there."""

from __future__ import annotations

from textual.pilot import Pilot

from replay_tui.engine.indexes.clock import EventClock
from replay_tui.ui.launch import make_app
from replay_tui.ui.widgets.overview import OverviewStrip
from replay_tui.views.overview import SortedMarks, jump_line, slice_of, slices
from tests.conftest import DEMO, SAMPLES
from tests.helpers.screen import compared, seq_at_cursor, settle
from tests.helpers.waiting import until

LONG = SAMPLES / "long-300"


def _clock(times: list[float]) -> EventClock:
    clock = EventClock()
    for index, ts in enumerate(times):
        clock.note(index, ts)
    return clock


def test_slices_of_time_show_where_events_crowd() -> None:
    # ten events in the first second, one at 9 s: the first slice is full
    clock = _clock([100 + i / 10 for i in range(10)] + [109.0])
    found = slices(3, 11, clock, {})
    assert [(s.lo, s.hi) for s in found] == [(0, 10), (10, 10), (10, 11)]
    assert [s.level for s in found] == [8, 0, 1]
    assert jump_line(found, 1) == 10  # an empty slice goes on to the next event
    assert slice_of(found, 10) == 2


def test_a_ts_that_goes_back_keeps_the_clock_in_order() -> None:
    clock = _clock([10.0, 12.0, 11.0, 13.0])
    assert [clock.at(i) for i in range(4)] == [0.0, 2.0, 2.0, 3.0]
    clock.note(3, 99.0)  # a line noted again (a retry) is not moved
    assert clock.span == 3.0


def test_the_most_pressing_mark_wins_a_slice() -> None:
    marks = {"error": [5], "warning": [1, 5], "bookmark": [2], "watch": [2, 7]}
    found = slices(4, 8, None, marks)  # no clock: slices of lines
    assert [s.mark for s in found] == ["warning", "bookmark", "error", "watch"]
    assert all(s.level == 0 for s in found)  # no density without time
    assert [(s.lo, s.hi) for s in slices(10, 3, None, {})] == [(0, 1), (1, 2), (2, 3)]


def test_sorted_marks_sorts_a_set_once() -> None:
    kept = SortedMarks()
    marks = frozenset({3, 1, 2})
    first = kept.get("watch", marks)
    assert first == [1, 2, 3] and kept.get("watch", marks) is first
    assert kept.get("watch", frozenset({9})) == [9]


def _strip_text(strip: OverviewStrip) -> list[str]:
    return [strip.render_line(y).text for y in range(strip.size.height)]


def _lit_rows(strip: OverviewStrip) -> list[int]:
    cursor = strip.timeline.cursor_index
    return [y for y, s in enumerate(strip.pieces()) if cursor is not None and s.lo <= cursor < s.hi]


async def test_the_strip_maps_the_whole_run_and_follows_the_cursor() -> None:
    app = make_app(LONG)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        strip = app.query_one(OverviewStrip)
        pieces = strip.pieces()
        assert len(pieces) == strip.size.height > 30
        assert pieces[0].lo == 0 and pieces[-1].hi == 300  # every event, once
        assert all(text[0] != " " for text in _strip_text(strip))  # density drawn
        assert _lit_rows(strip) == [0]
        await pilot.press("right_curly_bracket")
        await settle(app, pilot)
        assert _lit_rows(strip) == [1] and seq_at_cursor(app) == pieces[1].lo + 1
        await pilot.press("left_curly_bracket")
        await settle(app, pilot)
        assert _lit_rows(strip) == [0]
        await pilot.click(OverviewStrip, offset=(0, 20))
        await settle(app, pilot)
        assert seq_at_cursor(app) == pieces[20].lo + 1 and _lit_rows(strip) == [20]


async def _press(pilot: Pilot[int], *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await settle(pilot.app, pilot)  # type: ignore[arg-type]


async def test_the_strip_marks_errors_and_bookmarks() -> None:
    app = make_app(SAMPLES / "broken-divergence")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        strip = app.query_one(OverviewStrip)
        error = app.main.view.error_index()
        assert error is not None
        row = slice_of(strip.pieces(), error)
        assert row is not None and _strip_text(strip)[row][1] == "✗"
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await _press(pilot, "j", "j", "b")
        strip = app.query_one(OverviewStrip)
        row = slice_of(strip.pieces(), 2)
        assert row is not None and _strip_text(strip)[row][1] == "◆"


async def test_the_strip_fits_an_80_column_terminal() -> None:
    app = make_app(LONG)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        strip = app.query_one(OverviewStrip)
        assert strip.size.width == 2 and 0 < strip.size.height < 12
        assert strip.pieces()[-1].hi == 300


async def _marked(pilot: Pilot[int]) -> None:
    await settle(pilot.app, pilot)  # type: ignore[arg-type]
    await pilot.press("colon", *"150", "enter")
    await _press(pilot, "b", "right_curly_bracket", "right_curly_bracket")
    pilot.app.clear_notifications()  # the bookmark's notice times out: not drawn
    await pilot.pause()


def test_snapshot_overview_strip(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(LONG), terminal_size=(140, 40), run_before=_marked)


async def test_the_strip_marks_where_compared_runs_part_and_a_watched_value_changed() -> None:
    app = make_app(DEMO, against=SAMPLES / "broken-divergence")
    async with app.run_test(size=(140, 40)) as pilot:
        await compared(app, pilot)
        await until(pilot, lambda: 10 in app.main.timeline.differs)
        strip = app.query_one(OverviewStrip)
        row = slice_of(strip.pieces(), 10)  # seq 11, where A and B part
        assert row is not None and _strip_text(strip)[row][1] == "≠"
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        app.main.side.start_watch(("phase",))
        # the scan ends in the pane, then the screen marks the timeline
        await until(pilot, lambda: app.main.watchlist.done and bool(app.main.timeline.marks))
        strip = app.query_one(OverviewStrip)
        texts = _strip_text(strip)
        changed = [slice_of(strip.pieces(), c.seq - 1) for c in app.main.watchlist.changes]
        assert changed and all(row is not None and texts[row][1] == "•" for row in changed)
