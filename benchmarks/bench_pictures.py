"""What the pictures cost a frame at scale: calls folded (``v``) and the
overview strip, against the timeline's own frame, measured in the same run.

    python benchmarks/bench_pictures.py [--events 1000000] [--samples 20]

The app is opened headless at 140x40 on a generated agent_run ledger of
``--events`` events (made once under ``--workdir``) and validated; then, each
the median of ``--samples``:

- baseline, *timeline frame*: every visible timeline row built afresh (its
  strip cache cleared), which is what a step or a page redraws;
- *strip frame*: the overview strip's slices found afresh and its rows drawn;
- *strip, cursor moved*: its rows drawn with the slices kept (a step);
- *fold (v)*: the folded rows made from the forward pass's call index, then
  the folded screen built (each visible call row reads its events);
- *unfold (Enter)*: one call unfolded and the screen built again.

Each is printed in milliseconds and as a ratio to the timeline frame; a
frame at 60 Hz is 16.7 ms. Timing is in-process (``perf_counter``); what a
person sees in a real terminal adds the terminal's own drawing, the same for
both.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_scale import generate  # noqa: E402

from replay_tui.ui.launch import make_app  # noqa: E402
from replay_tui.ui.widgets.overview import OverviewStrip  # noqa: E402


def median_ms(fn: Callable[[], object], samples: int) -> float:
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


async def measure(run: Path, samples: int) -> dict[str, float]:
    app = make_app(str(run))
    async with app.run_test(size=(140, 40)) as pilot:
        started = time.perf_counter()
        while app.main.validating or app.main.line_view is None:
            await pilot.pause(0.2)
            if time.perf_counter() - started > 900:
                raise SystemExit("validation took over 15 minutes")
        timeline = app.main.timeline
        strip = app.query_one(OverviewStrip)
        await pilot.press("colon", *str(len(app.main.view.replay.ledger) // 2), "enter")
        await pilot.pause(0.5)
        height = timeline.scrollable_content_region.height

        def timeline_frame() -> None:
            timeline._cache.clear()
            for y in range(height):
                timeline.render_line(y)

        def strip_frame() -> None:
            strip._kept = None
            for y in range(strip.size.height):
                strip.render_line(y)

        def strip_step() -> None:
            for y in range(strip.size.height):
                strip.render_line(y)

        def fold() -> None:
            timeline.fold_calls()  # folded
            timeline_frame()
            timeline.fold_calls()  # and back, for the next sample

        def unfold() -> None:
            timeline.action_unfold(1)
            timeline_frame()
            timeline.action_unfold(0)

        out = {
            "timeline frame": median_ms(timeline_frame, samples),
            "strip frame": median_ms(strip_frame, samples),
            "strip, cursor moved": median_ms(strip_step, samples),
            "fold (v) + frame": median_ms(fold, samples) / 2,
        }
        timeline.fold_calls()
        out["unfold (Enter) + frame"] = median_ms(unfold, samples) / 2
        out["events"] = float(len(app.main.view.replay.ledger))
        calls = app.main.view.call_index()
        out["calls"] = float(calls.calls if calls is not None else 0)
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "replay-bench")
    args = ap.parse_args()
    run = generate(args.workdir, f"pictures-{args.events}", args.events)
    got = asyncio.run(measure(run, args.samples))
    base = got["timeline frame"]
    print(f"{int(got['events']):,} events, {int(got['calls']):,} calls, 140x40")
    print(f"{'measure':<26}{'ms':>9}{'× timeline frame':>19}")
    for name, ms in got.items():
        if name in ("events", "calls"):
            continue
        print(f"{name:<26}{ms:>9.2f}{ms / base:>19.2f}")


if __name__ == "__main__":
    main()
