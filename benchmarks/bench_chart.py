"""The watch pane's chart at a million changes: what a frame costs.

    python benchmarks/bench_chart.py [--changes 1000000] [--repeat 20]

A value that changed at every one of a million events (the worst case: a
counter bumped by each event) is put in the real watch pane of the app,
headless at 140x40, as a number and as bands of three strings. Timed, each
the median of --repeat:

- the scan worker's extra work: the changes made ready for the chart
  (``changes_chunk``, per million) and the UI thread's append of them;
- a cold chart (bins and drawing, as after a resize or a new batch);
- a cursor move: the marker's column on the cached rows (what j / k cost);
- ``select_seq`` by bisect on the changes (by their seq), beside building the list of
  all seqs per call (the code before);

against the baseline measured in the same run: the watch pane drawing one
screen of its list rows (what it drew per frame before the chart).
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from replay_tui.questions.across import PathChange  # noqa: E402
from replay_tui.ui.launch import make_app  # noqa: E402
from replay_tui.ui.widgets.watch_chart import ChartFound, changes_chunk  # noqa: E402


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def synthetic(n: int, strings: bool) -> list[PathChange]:
    words = ("running", "retrying", "waiting")
    if strings:
        return [PathChange(s, "changed", words[(s - 1) % 3], words[s % 3]) for s in range(1, n + 1)]
    return [PathChange(s, "changed", (s - 1) * 7, s * 7) for s in range(1, n + 1)]


async def measure(n: int, repeat: int) -> list[tuple[str, float]]:
    app = make_app(ROOT / "sample_runs" / "demo-001")
    rows: list[tuple[str, float]] = []
    async with app.run_test(size=(140, 40)) as pilot:
        for _ in range(50):
            await pilot.pause(0.05)
            if app.main.replay.finished:
                break
        screen = app.main
        pane = screen.watchlist
        for strings in (False, True):
            label = "bands" if strings else "number"
            changes = synthetic(n, strings)
            path = ("phase",) if strings else ("spent", "tokens")
            t0 = time.perf_counter()
            chunks = [changes_chunk(changes[i : i + 80_000]) for i in range(0, n, 80_000)]
            rows.append(
                (f"{label}: worker, values made ready (all)", (time.perf_counter() - t0) * 1000)
            )
            pane.watched, pane.done, pane.until = path, True, n
            pane.chart.reset(path)
            t0 = time.perf_counter()
            for i, chunk in enumerate(chunks):
                pane.chart.add(ChartFound(path, chunk, changes[0].old, n, i == 0, False))
            rows.append((f"{label}: UI thread, appended (all)", (time.perf_counter() - t0) * 1000))
            pane.changes = changes
            pane.set_changes(changes, "")
            screen.watching = True
            await pilot.pause(0.1)
            chart_rows = pane._chart_rows()
            height = pane.size.height
            assert chart_rows > 0, "no chart drawn"

            def list_screen(chart_rows: int = chart_rows, height: int = height) -> None:
                for y in range(chart_rows, height):
                    pane.render_line(y)

            def cold(chart_rows: int = chart_rows) -> None:
                pane.chart._drawn = None
                for y in range(chart_rows):
                    pane.render_line(y)

            seqs = iter(range(1, 10**9, 997))

            def move(chart_rows: int = chart_rows, seqs: Any = seqs) -> None:
                pane.select_seq(next(seqs) % n)
                for y in range(chart_rows):
                    pane.render_line(y)

            def select_before() -> None:
                every = [c.seq for c in pane.changes]
                bisect.bisect_right(every, n // 2)

            base = median_ms(list_screen, repeat)
            first = len(rows) - 2  # before this label's worker and append rows
            rows.insert(
                first, (f"{label}: BASELINE list rows, one screen ({height - chart_rows})", base)
            )
            rows.append(
                (f"{label}: chart cold ({chart_rows} rows: bins + draw)", median_ms(cold, repeat))
            )
            rows.append((f"{label}: cursor move (marker on cached rows)", median_ms(move, repeat)))
            rows.append(
                (
                    f"{label}: select_seq, bisect on the changes",
                    median_ms(lambda: pane.select_seq(n // 2), repeat),
                )
            )
            rows.append(
                (
                    f"{label}: select_seq before (list of all seqs)",
                    median_ms(select_before, max(3, repeat // 4)),
                )
            )
            rows.append(("", 0.0))
        await pilot.press("q")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--changes", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    rows = asyncio.run(measure(args.changes, args.repeat))
    title = f"measure ({args.changes:,} changes, 140x40)"
    print(f"{title:<58} {'ms':>9} {'/ base':>8}")
    base = 1.0
    for name, ms in rows:
        if not name:
            print()
            continue
        if "BASELINE" in name:
            base = ms
        print(f"{name:<58} {ms:9.2f} {ms / base:8.2f}")
    print("frame budget: 16.7 ms (60 Hz); a cursor move redraws only the chart's rows")


if __name__ == "__main__":
    main()
