"""Opening a huge run in the app: first screen, then responsiveness and memory
while validation carries on in its worker.

    python benchmarks/bench_open.py RUN [--seconds 60]

Prints the time to the first screen (timeline head and the state at seq 1),
then every 10 s: lines validated so far, peak RSS, and how long a key press
(``j``: next event, with its state) takes to show. The baseline is the same key
press measured before validation got far, so the ratio says how much the
running validation slows the UI down.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import time
from pathlib import Path

START = time.perf_counter()
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from replay_tui.ui.launch import make_app  # noqa: E402


async def press_and_wait(app, pilot) -> float:  # type: ignore[no-untyped-def]
    """Seconds from pressing j to the new row's state being on screen."""
    before = app.main.timeline.cursor_index
    t = time.perf_counter()
    app.simulate_key("j")  # not pilot.press: it also waits for every queue to drain
    while not (app.main.line_view is not None and app.main.line_view.index == before + 1):
        await asyncio.sleep(0.001)
    return time.perf_counter() - t


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--seconds", type=float, default=60.0)
    args = ap.parse_args()
    app = make_app(args.run)
    async with app.run_test(size=(140, 40)) as pilot:
        while not (app.main.line_view is not None and app.main.line_view.mode == "step"):
            await asyncio.sleep(0.002)
        first = time.perf_counter() - START
        print(f"first screen: {first:.2f} s after start (timeline head, state at seq 1)")
        base = await press_and_wait(app, pilot)
        print(f"key press, early: {base * 1e3:.0f} ms (baseline)")
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < args.seconds and app.main.validating:
            await asyncio.sleep(10)
            key = await press_and_wait(app, pilot)
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"{time.perf_counter() - t0:5.0f} s: {app.replay.valid:>10,} lines valid, "
                f"peak RSS {rss:,.0f} MiB, key press {key * 1e3:.0f} ms "
                f"({key / base:.1f}x baseline)"
            )


if __name__ == "__main__":
    asyncio.run(main())
