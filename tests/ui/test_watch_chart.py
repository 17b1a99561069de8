"""The chart of a watched value: its binning (plain Python), the watch
pane drawing it (Pilot), and the report's SVG and summary."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.pilot import Pilot

from replay_tui.engine.open import open_replay
from replay_tui.handover.charts import ChartSpec
from replay_tui.handover.document import build_report_doc, render_html, render_markdown
from replay_tui.state.paths import ABSENT
from replay_tui.ui.app import ReplayApp
from replay_tui.ui.launch import make_app
from replay_tui.ui.widgets.watch_pane import WatchPane
from replay_tui.views.chart import (
    BANDS,
    NONE,
    NUMBER,
    Series,
    _MinMax,
    band_order,
    braille_rows,
    chunk_of,
    column_of,
    column_starts,
    format_number,
    summarise,
)
from tests.conftest import DEMO
from tests.helpers.runs import live_run
from tests.helpers.screen import ask, screen_text, settle
from tests.helpers.waiting import until

BRAILLE = {chr(c) for c in range(0x2801, 0x2900)}

# -- binning -----------------------------------------------------------------------

values = st.one_of(
    st.integers(-1000, 1000), st.floats(-1e6, 1e6), st.none(), st.just(ABSENT), st.just("s")
)


def _naive(initial: Any, changes: list[tuple[int, Any]], seq: int) -> Any:
    value = initial
    for s, v in changes:
        if s <= seq:
            value = v
    return value


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 400), values), max_size=120),
    values,
    st.integers(1, 90),
    st.integers(1, 40),
)
def test_number_bins_are_min_max_last_of_the_step_function(
    raw: list[tuple[int, Any]], initial: Any, columns: int, batch: int
) -> None:
    changes = sorted(dict(raw).items())
    series = Series(initial)
    for i in range(0, len(changes), batch):  # appended a batch at a time, as a scan posts
        series.add(chunk_of(changes[i : i + batch]))
    end = 401
    bins = series.number_bins(0, end, columns)
    assert len(bins) == columns and bins[0].start == 0
    for item in bins:
        seen = [_naive(initial, changes, s) for s in range(item.start, item.end)]
        nums = [float(v) for v in seen if _is_num(v)]
        assert (item.lo, item.hi) == ((min(nums), max(nums)) if nums else (None, None))
        last, first = seen[-1], seen[0]
        assert item.last == (float(last) if _is_num(last) else None)
        assert item.first == (float(first) if _is_num(first) else None)
    for s in (0, 1, 17, 200, 400):
        got, want = series.value_at(s), _naive(initial, changes, s)
        assert got is want or got == want


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e9, 1e9), min_size=1, max_size=9000), st.data())
def test_block_minima_answer_any_range(items: list[float], data: st.DataObject) -> None:
    from array import array

    levels = _MinMax()
    half = len(items) // 2
    levels.extend(array("d", items[:half]), array("d", items[:half]))
    levels.extend(array("d", items[half:]), array("d", items[half:]))
    i = data.draw(st.integers(0, len(items) - 1))
    j = data.draw(st.integers(i + 1, len(items)))
    assert levels.query(i, j) == (min(items[i:j]), max(items[i:j]))


def test_kind_numbers_bands_or_nothing() -> None:
    assert Series(0).kind == NONE  # never changed: no chart
    numbers = Series(0)
    numbers.extend([(3, 812), (5, None), (7, 1048.5)])  # null is a gap, not a band
    assert numbers.kind == NUMBER
    strings = Series("new")
    strings.extend([(1, "running")])
    assert strings.kind == BANDS
    flags = Series(False)
    flags.extend([(2, True)])
    assert flags.kind == BANDS  # true is not 1


def test_a_staircase_in_braille_and_bands_by_first_appearance() -> None:
    series = Series(0)
    series.extend([(3, 812), (7, 1048), (9, 2538), (13, 3482)])
    rows = braille_rows(series.number_bins(0, 15, 40), 4, (0.0, 3482.0))
    assert len(rows) == 4 and all(len(r) == 20 for r in rows)
    assert rows[0].strip() and rows[0].rstrip()[-1] in BRAILLE  # the highest: at the right
    assert rows[3][0] in BRAILLE and not rows[0][:10].strip()  # it starts at the bottom
    phase = Series("new")
    phase.extend([(1, "running"), (10, "retrying")])
    bins = phase.band_bins(0, 15, 30)
    assert band_order(bins) == ["new", "running", "retrying"]
    assert [b.value for b in bins[:2]] == ["new", "new"] and bins[-1].value == "retrying"


def test_columns_and_labels() -> None:
    starts = column_starts(0, 15, 30)  # fewer seqs than columns: a seq spans two
    assert starts[:4] == [0, 0, 1, 1]
    assert column_of(starts, 1) == 2 and column_of(starts, 14) == 28
    assert column_of(column_starts(0, 1_000_001, 100), 1_000_000) == 99
    assert [format_number(v) for v in (0, 3482, 1_250_000, 0.0021, 2.5)] == [
        "0",
        "3,482",
        "1.25M",
        "0.0021",
        "2.5",
    ]
    assert chunk_of([(1, 10**400)]).numbers == 1  # past a float: drawn as a gap, no error


def test_summary_says_min_max_last_and_where() -> None:
    series = Series(5)
    series.extend([(2, 1), (4, 9), (8, 3)])
    got = summarise(series)
    assert (got.lo, got.lo_seq, got.hi, got.hi_seq, got.last) == (1.0, 2, 9.0, 4, 3)


# -- the watch pane ------------------------------------------------------------------


async def _watch(app: ReplayApp, pilot: Pilot[int], seq: int) -> WatchPane:
    """Go to ``seq`` and watch the first change line's path."""
    await settle(app, pilot)
    await ask(app, pilot, str(seq))
    await settle(app, pilot)
    await pilot.press("tab", "w")
    pane = app.main.watchlist
    await until(pilot, lambda: pane.done)
    await pilot.pause()
    return pane


def _pane_lines(app: ReplayApp) -> list[str]:
    """The watch pane's rows as the screen shows them (right of the timeline)."""
    lines = screen_text(app).splitlines()
    corner = next(c for c in ("╭─ watch ", "┏━ watch ") if any(c in ln for ln in lines))
    top = next(i for i, ln in enumerate(lines) if corner in ln)  # heavy when focused
    col = lines[top].index(corner)
    out = []
    for ln in lines[top + 1 :]:
        cell = ln[col:]
        if cell.startswith(("╰", "┗")):
            break
        out.append(cell[1:-1])
    return out


def _marker(lines: list[str]) -> int:
    axis = next(ln for ln in lines if "▲" in ln)
    return axis.index("▲")


async def test_a_number_is_charted_and_the_marker_follows_the_cursor() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        pane = await _watch(app, pilot, 9)
        assert pane.watched == ("spent", "tokens")
        lines = _pane_lines(app)
        assert lines[0].strip().startswith("seq 9: 2,538")
        assert lines[1].strip().startswith("3,482")  # the highest value, top left
        assert any(set(ln) & BRAILLE for ln in lines[1:5])
        assert any(ln.strip().startswith("0 ") for ln in lines[1:5])
        assert "9  model_finished  1048 → 2538" in "\n".join(lines)  # the list, below
        at_9 = _marker(lines)
        await pilot.press("k", "k")  # the screen's cursor: j / k still step
        await settle(app, pilot)
        lines = _pane_lines(app)
        assert lines[0].strip().startswith("seq 7: 1,048")
        assert _marker(lines) < at_9
        await pilot.press("G")  # the last event (End in the pane is the list's last row)
        await settle(app, pilot)
        assert _pane_lines(app)[0].strip().startswith("seq 14: 3,482")


async def test_strings_are_bands_with_a_legend() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        pane = await _watch(app, pilot, 10)
        assert pane.watched == ("phase",)
        lines = _pane_lines(app)
        text = "\n".join(lines)
        assert lines[0].strip().startswith('seq 10: "retrying"')
        assert not set(text) & BRAILLE
        legend = next(ln for ln in lines if '"new"' in ln)
        assert legend.index('"new"') < legend.index('"running"') < legend.index('"retrying"')
        band = lines[1].strip()
        assert band.startswith("a") and "b" in band and "c" in band  # a letter a band


async def test_an_object_is_charted_by_its_length() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await ask(app, pilot, "10")
        await settle(app, pilot)
        app.main.side.start_watch(("calls",))
        await until(pilot, lambda: app.main.watchlist.done and app.main.watchlist.chart.series)
        await pilot.pause()
        lines = _pane_lines(app)
        assert lines[0].strip().startswith("seq 10: len 2")
        assert lines[1].strip().startswith("3")  # three calls at the end


async def test_no_chart_for_a_value_that_never_changed_and_C_hides_it() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        app.main.side.start_watch(("no_such_key",))
        await until(pilot, lambda: app.main.watchlist.done)
        await pilot.pause()
        lines = _pane_lines(app)
        assert "never changed" in lines[0] and "C hides" not in "\n".join(lines)
        app.main.side.stop_watch()
        await pilot.pause()
        pane = await _watch(app, pilot, 9)
        assert app.focused is pane and "C hides the chart" in _pane_lines(app)[0]
        await pilot.press("C")
        await pilot.pause()
        lines = _pane_lines(app)
        assert lines[0].strip().startswith("3  model_proposed  0 → 812")
        await pilot.press("C")
        await pilot.pause()
        assert _pane_lines(app)[0].strip().startswith("seq 9:")


async def test_at_80x24_the_chart_fits_and_the_list_keeps_its_rows() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(80, 24)) as pilot:
        await _watch(app, pilot, 9)
        lines = _pane_lines(app)
        assert lines[0].strip().startswith("seq 9: 2,538")
        rows = [ln for ln in lines if "model_" in ln]
        assert len(rows) >= 3  # the list still shows its rows under the chart
        assert "3  model_proposed" in rows[0]


async def test_enter_on_the_list_still_goes_to_its_row() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await _watch(app, pilot, 9)
        await pilot.press("up", "enter")  # the change at 7
        await settle(app, pilot)
        assert app.main.cursor_seq() == 7


def test_snapshot_chart_of_a_watched_number(snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, ReplayApp)
        await _watch(app, pilot, 9)

    assert snap_compare(make_app(DEMO), terminal_size=(140, 40), run_before=run)


# -- the report ----------------------------------------------------------------------


def _hostile_run(tmp_path: Path) -> Path:
    events = [
        {"task": "<script>alert(1)</script> & \x1b[31m", "model": "m"},
    ]
    lines = [
        orjson.dumps(
            {
                "seq": 1,
                "run_id": "r",
                "kind": "run_started",
                "ts": "2026-11-01T09:00:00.000Z",
                "payload": events[0],
            }
        )
        + b"\n",
        orjson.dumps(
            {
                "seq": 2,
                "run_id": "r",
                "kind": "attempt_started",
                "ts": "2026-11-01T09:00:01.000Z",
                "payload": {"attempt": 1},
            }
        )
        + b"\n",
    ]
    run = tmp_path / "hostile"
    run.mkdir()
    (run / "events.jsonl").write_bytes(b"".join(lines))
    return run


def test_the_html_report_draws_an_svg_escaped_with_no_script(tmp_path: Path) -> None:
    replay, _ = open_replay(str(_hostile_run(tmp_path)), "agent_run", history=True)
    replay.verify()
    specs = [ChartSpec.parse("task"), ChartSpec.parse("attempt"), ChartSpec.parse("len(calls)")]
    page = render_html(build_report_doc(replay, [1], {}, False, specs))
    assert page.count("<svg") == 2  # len(calls) never changed: words, no chart
    assert "<script" not in page and "alert(1)" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp;" in page
    assert "\x1b" not in page
    markdown = render_markdown(build_report_doc(replay, [1], {}, False, specs))
    assert "`attempt` over seqs 0..2: `min 0 at seq 0, max 1 at seq 2, last 1; 1 change`" in (
        markdown
    )
    replay.close()


def test_report_chart_on_the_command_line(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "replay_tui", "report", str(DEMO), *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )

    got = run("--at", "10", "--chart", "spent.tokens", "--chart", "phase")
    assert got.returncode == 0
    assert "- at the report's seqs: `10: 2,538`" in got.stdout
    assert '`from seq 0: "new", 1: "running", 10: "retrying"; 2 changes`' in got.stdout
    html = run("--at", "10", "--chart", "len(calls)", "--html")
    assert html.returncode == 0 and "<svg" in html.stdout and "len(calls)" in html.stdout
    bad = run("--chart", "spent..x")
    assert bad.returncode == 2 and "--chart spent..x: column 7" in bad.stderr


async def test_the_chart_grows_with_a_followed_run(tmp_path: Path) -> None:
    """A followed run's new events: the chart's series goes on from where
    it stopped (a number, and an object charted by its length)."""

    live, lines = live_run(tmp_path, 160, 7, 60)
    app = make_app(live, follow=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.valid == 60)
        watch = app.main.watchlist
        for path in (("spent", "tokens"), ("calls",)):
            app.main.side.start_watch(path)
            await until(pilot, lambda: watch.done and watch.chart.series is not None)
            assert watch.chart.end == 60
        with open(live / "events.jsonl", "ab") as out:
            out.write(b"".join(lines[60:]))
        await until(pilot, lambda: watch.done and watch.until == len(lines))
        await until(pilot, lambda: watch.chart.end == len(lines))
        series = watch.chart.series
        assert series is not None and watch.chart.length
        calls = {orjson.loads(ln)["payload"].get("call_id") for ln in lines} - {None}
        assert series.value_at(len(lines)) == len(calls)
        assert list(series.seqs) == sorted(series.seqs)  # appended in order, no repeats
        assert len(set(series.seqs)) == len(series.seqs)
