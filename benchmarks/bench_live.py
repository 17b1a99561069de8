"""Live view: append-to-screen latency and a sustained append rate.

    python benchmarks/bench_live.py [--rate 5000] [--seconds 20] [--appends 200]

Runs the real app headless (``App.run_test``) following a run folder while a
writer appends events, and prints one table. Machines here are noisy, so each
figure comes with a baseline measured in the same run:

- latency: time from ``write()`` of one event to the app having it on screen
  (the timeline row count and the status line updated), p50 and p95, against
  the bare inotify latency (``watchfiles.awatch`` alone seeing the same write);
- sustained rate: the writer appends RATE events/s in 10 ms batches for
  SECONDS; the backlog (events written but not yet replayed by the app) is
  sampled every second. The view keeps up if the backlog does not grow. The
  baseline is the engine's own throughput with no UI (events/s).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from watchfiles import awatch  # noqa: E402

from replay_tui.engine.replay import Replay  # noqa: E402
from replay_tui.formats.run import RunPaths  # noqa: E402
from replay_tui.reducers import load_reducer  # noqa: E402
from replay_tui.synth.runs import write_agent_run  # noqa: E402
from replay_tui.ui.app import ReplayApp  # noqa: E402
from replay_tui.ui.launch import make_app  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def prepare(tmp: Path, events: int) -> tuple[Path, list[bytes]]:
    src = tmp / "src"
    write_agent_run(src, events, seed=11)
    return src, (src / "events.jsonl").read_bytes().splitlines(keepends=True)


def fresh_live(tmp: Path, src: Path, name: str) -> Path:
    live = tmp / name
    live.mkdir()
    shutil.copy(src / "budget.json", live)
    shutil.copytree(src / "receipts", live / "receipts")  # receipts first: nothing pending
    (live / "events.jsonl").write_bytes(b"")
    return live


async def bare_inotify_latency(folder: Path, appends: int) -> list[float]:
    """Baseline: how long inotify + watchfiles alone take to report a write."""
    target = folder / "probe.jsonl"
    target.write_bytes(b"")
    seen: list[float] = []
    written: list[float] = []
    ready = asyncio.Event()

    async def watch() -> None:
        async for _ in awatch(folder, debounce=40, step=5):
            seen.append(time.perf_counter())
            ready.set()
            if len(seen) >= appends:
                return

    task = asyncio.create_task(watch())
    await asyncio.sleep(0.3)
    for _ in range(appends):
        ready.clear()
        with open(target, "ab") as fh:
            written.append(time.perf_counter())
            fh.write(b"{}\n")
        await asyncio.wait_for(ready.wait(), 5)
        await asyncio.sleep(0.02)
    await task
    return [s - w for s, w in zip(seen, written, strict=False)]


async def app_latency(live: Path, lines: list[bytes], appends: int) -> list[float]:
    app = make_app(live, follow=True)
    latencies: list[float] = []
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause(0.5)
        with open(live / "events.jsonl", "ab") as out:
            for i in range(appends):
                want = i + 1
                t0 = time.perf_counter()
                out.write(lines[i])
                out.flush()
                while not (
                    app.main.view.row_count() >= want
                    and f"seq {want} of {want}" in app.main.status_text().plain
                ):
                    await asyncio.sleep(0.0005)
                latencies.append(time.perf_counter() - t0)
                await asyncio.sleep(0.02)
    return latencies


async def sustained(live: Path, lines: list[bytes], rate: int, seconds: float) -> dict[str, float]:
    app: ReplayApp = make_app(live, follow=True)
    written = [0]
    stop = threading.Event()

    def writer() -> None:
        batch = max(1, rate // 100)
        start = time.perf_counter()
        with open(live / "events.jsonl", "ab") as out:
            i = 0
            while not stop.is_set() and i < len(lines):
                due = start + (i / rate)
                delay = due - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                out.write(b"".join(lines[i : i + batch]))
                out.flush()
                i += batch
                written[0] = min(i, len(lines))
                if time.perf_counter() - start >= seconds:
                    break

    backlog: list[int] = []
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause(0.5)
        thread = threading.Thread(target=writer)
        t0 = time.perf_counter()
        thread.start()
        while thread.is_alive():
            await asyncio.sleep(1.0)
            backlog.append(written[0] - app.replay.valid)
        elapsed = time.perf_counter() - t0
        total = written[0]
        drain0 = time.perf_counter()
        while app.replay.valid < total and time.perf_counter() - drain0 < 60:
            await asyncio.sleep(0.01)
        drain = time.perf_counter() - drain0
    stop.set()
    return {
        "written": total,
        "rate": total / elapsed,
        "backlog_first": backlog[0] if backlog else 0,
        "backlog_max": max(backlog) if backlog else 0,
        "backlog_last": backlog[-1] if backlog else 0,
        "drain_s": drain,
    }


def engine_rate(src: Path) -> float:
    """Baseline: events/s of the engine alone over the same ledger."""
    replay = Replay(RunPaths(src, src / "events.jsonl"), load_reducer(None), history=True)
    t0 = time.perf_counter()
    replay.verify()
    return replay.valid / (time.perf_counter() - t0)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", type=int, default=5000, help="events per second to append")
    ap.add_argument("--seconds", type=float, default=20.0, help="how long to append")
    ap.add_argument("--appends", type=int, default=200, help="single appends for latency")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        need = int(args.rate * args.seconds) + 1000
        src, lines = prepare(tmp, need)
        base = await bare_inotify_latency(tmp, args.appends)
        lat = await app_latency(fresh_live(tmp, src, "lat"), lines, args.appends)
        engine = engine_rate(src)
        sus = await sustained(fresh_live(tmp, src, "rate"), lines, args.rate, args.seconds)
    keeps_up = sus["backlog_last"] <= max(sus["backlog_first"], args.rate // 2)
    print(f"{'measure':<38} {'value':>12} {'baseline':>12} {'ratio':>7}")
    b50, b95 = statistics.median(base), pct(base, 0.95)
    a50, a95 = statistics.median(lat), pct(lat, 0.95)
    print(
        f"{'append-to-screen latency p50 (ms)':<38} {a50 * 1e3:>12.1f} {b50 * 1e3:>12.1f} "
        f"{a50 / b50:>7.2f}"
    )
    print(
        f"{'append-to-screen latency p95 (ms)':<38} {a95 * 1e3:>12.1f} {b95 * 1e3:>12.1f} "
        f"{a95 / b95:>7.2f}"
    )
    print(
        f"{'sustained append rate (events/s)':<38} {sus['rate']:>12,.0f} {engine:>12,.0f} "
        f"{sus['rate'] / engine:>7.2f}"
    )
    print(
        f"{'backlog after 1 s / max / at end':<38} "
        f"{sus['backlog_first']:>4,.0f} / {sus['backlog_max']:,.0f} / {sus['backlog_last']:,.0f}"
    )
    print(f"{'drain after the writer stopped (s)':<38} {sus['drain_s']:>12.2f}")
    print(
        f"keeps up: {'yes' if keeps_up else 'NO'} (baselines: bare inotify latency; "
        "engine throughput with no UI)"
    )


if __name__ == "__main__":
    asyncio.run(main())
