"""The engine at every run size: one table for 300, 20k, 200k and 1M events.

    python benchmarks/bench_engine.py [--sizes 300,20000,200000,1000000]
                                      [--workdir DIR] [--terminal] [--json OUT]

Per size, on a generated agent run (``sample_runs/long-300`` for 300), each
measured in its own process, baselines in the same run:

- ``check``: wall time and peak RSS; ``jq -c .seq`` over the same ledger and a
  naive replay (``json.loads`` and ``deepcopy`` per event, receipts parsed) as
  the baselines (see ``bench_scale.py``);
- the app, headless (Pilot, 140x40): first screen, validation done, then the
  engine's work for a step (``j``: the view of the next line, from the state
  store) and a jump (``:``: a random line) as p50 / p99, End, and the time from
  pressing ``j`` to the pane holding the new view, and peak RSS;
- with ``--terminal``, the real thing in tmux: ``benchmarks/bench_keys.py``
  (key press to the state pane showing the seq, and the app's peak RSS).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import NAIVE, PY, generate, run  # noqa: E402

APP = r"""
import asyncio, json, random, resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[2])
from replay_tui.ui.launch import make_app

def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] * 1e3

async def main():
    app = make_app(sys.argv[1])
    async with app.run_test(size=(140, 40)) as pilot:
        while not (app.main.line_view is not None and app.main.line_view.mode == "step"):
            await asyncio.sleep(0.002)
        first = time.perf_counter() - t0
        while app.main.validating:
            await asyncio.sleep(0.02)
        validated = time.perf_counter() - t0
        view = app.main.view
        n = view.row_count()
        rng = random.Random(7)
        jumps, steps = [], []
        for _ in range(int(sys.argv[3])):
            i = rng.randrange(max(1, n - 4))
            t = time.perf_counter(); view.line_view(i); jumps.append(time.perf_counter() - t)
            for k in (1, 2, 3):
                t = time.perf_counter(); view.line_view(i + k)
                steps.append(time.perf_counter() - t)
        t = time.perf_counter(); view.line_view(n - 1); end = (time.perf_counter() - t) * 1e3
        # a key press to the pane holding the new view, as the app handles it
        app.main.timeline.move_to(n // 2)
        await pilot.pause()
        keys = []
        for _ in range(int(sys.argv[3])):
            want = app.main.timeline.cursor + 1
            if want >= n:
                break
            t = time.perf_counter()
            app.simulate_key("j")
            while not (app.main.line_view is not None and app.main.line_view.index == want):
                await asyncio.sleep(0.0005)
            keys.append(time.perf_counter() - t)
        print(json.dumps({
            "first_s": first, "validated_s": validated - first,
            "jump_p50": q(jumps, .5), "jump_p99": q(jumps, .99),
            "step_p50": q(steps, .5), "step_p99": q(steps, .99), "end_ms": end,
            "key_p50": q(keys, .5), "key_p99": q(keys, .99),
            "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }))

asyncio.run(main())
"""


def measure(path: Path, samples: int) -> dict[str, float]:
    cli = [PY, "-m", "replay_tui", "check", str(path)]
    check_s, check_rss, _ = run(cli)
    naive_s, _, _ = run([PY, "-c", NAIVE, str(path)])
    jq_s = (
        run(["jq", "-c", ".seq", str(path / "events.jsonl")])[0]
        if shutil.which("jq")
        else float("nan")
    )
    out = subprocess.run(
        [PY, "-c", APP, str(path), str(ROOT), str(samples)],
        capture_output=True,
        text=True,
        check=True,
    )
    app = json.loads(out.stdout.strip().splitlines()[-1])
    return {"check_s": check_s, "check_rss": check_rss, "naive_s": naive_s, "jq_s": jq_s, **app}


def terminal(path: Path) -> dict[str, float]:
    """Key press to screen in tmux (bench_keys.py), as JSON."""
    with tempfile.NamedTemporaryFile(suffix=".json") as fh:
        subprocess.run(
            [PY, str(ROOT / "benchmarks" / "bench_keys.py"), str(path), "--json", fh.name],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        data = json.loads(Path(fh.name).read_text())
    row = data["runs"][0] if isinstance(data, dict) and "runs" in data else data[0]
    return row  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="300,20000,200000,1000000")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "replay-bench")
    ap.add_argument("--samples", type=int, default=100, help="jumps, steps and key presses")
    ap.add_argument("--terminal", action="store_true", help="also time keys in tmux")
    ap.add_argument("--json", type=Path, help="write every figure here")
    args = ap.parse_args()
    results: dict[str, dict[str, object]] = {}
    for size in (int(s) for s in args.sizes.split(",")):
        if size == 300:
            path = ROOT / "sample_runs" / "long-300"
        else:
            work = args.workdir / str(size)
            work.mkdir(parents=True, exist_ok=True)
            path = generate(work, "valid", size)
        print(f"measuring {size:,} events ({path})", file=sys.stderr, flush=True)
        row: dict[str, object] = dict(measure(path, args.samples))
        if args.terminal:
            row["terminal"] = terminal(path)
        results[str(size)] = row
    head = (
        f"{'events':>9} {'check s':>8} {'jq/check':>8} {'naive/check':>11} {'check RSS':>9} "
        f"{'app valid. s':>12} {'first s':>7} {'step p50/p99 ms':>15} {'jump p50/p99 ms':>15} "
        f"{'End ms':>6} {'j→pane p50/p99 ms':>17} {'app RSS':>7}"
    )
    print(head)
    for size, r in results.items():
        f = {k: v for k, v in r.items() if isinstance(v, float)}
        print(
            f"{int(size):>9,} {f['check_s']:>8.2f} {f['jq_s'] / f['check_s']:>8.2f} "
            f"{f['naive_s'] / f['check_s']:>11.2f} {f['check_rss']:>9.0f} "
            f"{f['validated_s']:>12.2f} {f['first_s']:>7.2f} "
            f"{f['step_p50']:>7.1f}/{f['step_p99']:<7.1f} "
            f"{f['jump_p50']:>7.1f}/{f['jump_p99']:<7.1f} "
            f"{f['end_ms']:>6.1f} {f['key_p50']:>8.1f}/{f['key_p99']:<8.1f} {f['rss']:>7.0f}"
        )
    if args.terminal:
        print("\nin a real terminal (tmux 140x40), key press to the state pane showing the seq:")
        print(
            f"{'events':>9}  {'first screen s':>14}  {'validated s':>11}  {'j p50/p90 ms':>12}  "
            f"{': p50/p90 ms':>12}  {'End ms':>6}  {'app peak RSS MiB':>16}"
        )
        for size, r in results.items():
            t: dict[str, float] = r["terminal"]  # type: ignore[assignment]
            print(
                f"{int(size):>9,}  {t['first_screen_s']:>14.2f}  {t['validation_s']:>11.2f}  "
                f"{t['j_p50_ms']:>5.0f} / {t['j_p90_ms']:<4.0f}  "
                f"{t['goto_p50_ms']:>5.0f} / {t['goto_p90_ms']:<4.0f}  "
                f"{t['end_ms']:>6.0f}  {t['peak_rss_mib']:>16.0f}"
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
