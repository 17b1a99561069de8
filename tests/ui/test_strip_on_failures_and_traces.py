"""The overview strip's density on a run that failed (timed up to the
failing line, the failure marked) and on an OpenTelemetry trace (its
records placed by their own times)."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from replay_tui.engine.indexes.clock import EventClock
from replay_tui.ui.launch import make_app
from replay_tui.ui.widgets.overview import OverviewStrip
from replay_tui.views.overview import slice_of, slices
from tests.conftest import SAMPLES
from tests.helpers.screen import settle

TRACE = SAMPLES / "traces" / "agentevals--adk_py-v2_span_only-S3.json"


def test_a_failed_run_is_sliced_by_time_up_to_its_failing_line() -> None:
    clock = EventClock()
    for index, ts in enumerate([100.0, 100.5, 101.0, 104.0, 108.0, 110.0]):
        clock.note(index, ts)  # six lines timed; line 6 failed, 7 and 8 were not read
    found = slices(5, 9, clock, {"error": [6]})
    assert found[0].lo == 0 and found[-1].hi == 9  # every line, once
    assert [s.level for s in found] == [8, 0, 3, 0, 6]  # three lines in the first 2 s of 10
    assert slice_of(found, 6) == 4 and found[-1].mark == "error"


@given(
    st.lists(st.floats(0, 1e6, allow_nan=False), max_size=40),
    st.integers(0, 10),
    st.integers(1, 50),
    st.data(),
)
def test_slices_hold_every_line_once_and_the_failure(
    times: list[float], untimed: int, rows: int, data: st.DataObject
) -> None:
    """Timed or not, every line is in exactly one slice, in order; a slice
    with no timed line has no bar; the failing line's slice is marked."""
    clock = EventClock()
    for index, ts in enumerate(times):
        clock.note(index, ts)
    total = len(times) + untimed
    if total == 0:
        assert slices(rows, total, clock, {}) == []
        return
    error = data.draw(st.integers(0, total - 1))
    found = slices(rows, total, clock, {"error": [error]})
    assert found[0].lo == 0 and found[-1].hi == total
    assert all(a.hi == b.lo for a, b in pairwise(found))
    assert all(0 <= s.level <= 8 for s in found)
    assert all(s.level == 0 for s in found if min(s.hi, len(times)) <= s.lo)
    row = slice_of(found, error)
    assert row is not None and found[row].mark == "error"


def _strip_text(strip: OverviewStrip) -> list[str]:
    return [strip.render_line(y).text for y in range(strip.size.height)]


async def test_the_strip_of_a_failed_run_has_density_and_marks_the_failure() -> None:
    app = make_app(SAMPLES / "broken-divergence")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        strip = app.query_one(OverviewStrip)
        rows = _strip_text(strip)
        error = app.main.view.error_index()
        assert error == 10
        row = slice_of(strip.pieces(), error)
        assert row == len(rows) - 1 and rows[row] == "▌✗"  # the failure at its time: the end
        assert sum(text[0] != " " for text in rows) >= 6  # bars, as on a run that verified


async def test_the_strip_of_a_trace_places_its_records_by_time() -> None:
    app = make_app(TRACE)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        strip = app.query_one(OverviewStrip)
        pieces = strip.pieces()
        assert pieces[0].lo == 0 and pieces[-1].hi == 34
        assert any(p.hi == p.lo for p in pieces)  # a pause between turns: a slice of no record
        rows = _strip_text(strip)
        assert sum(text[0] != " " for text in rows) >= 10 and "█ " in rows
