"""Scale: check and the app on a large generated run, against jq and a naive replay.

    python benchmarks/bench_scale.py [--events 1000000] [--workdir DIR] [--skip-app]

Generates (once, cached in --workdir) a valid agent run with a tool call and
its receipt about every 8 events, the same run with every call denied (no
receipts needed) and one with an error planted at seq events-10, then prints
one table. Baselines are measured in the same run, on the same files:

- ``jq -c .seq`` over the ledger (reads every line, checks nothing);
- a naive replay in the articles' style: ``json.loads`` and ``deepcopy`` per
  event, each receipt opened and parsed when its call finishes.

Every command is timed as a whole process; peak RSS comes from
``getrusage`` of that process alone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

NAIVE = r"""
import copy, json, sys
from pathlib import Path
root = Path(sys.argv[1])
state = {"phase": "new", "attempt": 0, "calls": {}, "cost": 0.0}
for line in open(root / "events.jsonl", encoding="utf-8"):
    event = copy.deepcopy(json.loads(line))
    kind, p = event["kind"], event.get("payload", {})
    if kind == "run_started":
        state["phase"] = "running"
    elif kind == "attempt_started":
        state["attempt"] = p["attempt"]
    elif kind == "model_proposed":
        state["calls"][p["call_id"]] = "proposed"
    elif kind in ("tool_allowed", "tool_denied", "tool_started"):
        state["calls"][p["call_id"]] = kind
    elif kind == "tool_finished":
        receipt = json.loads((root / "receipts" / (p["call_id"] + ".json")).read_text())
        assert receipt["call_id"] == p["call_id"]
        state["calls"][p["call_id"]] = "finished"
        state["cost"] += p.get("cost", 0)
    elif kind == "check_finished":
        state["phase"] = "succeeded" if p["passed"] else "retrying"
print(state["phase"])
"""

APP = r"""
import asyncio, random, statistics, sys, time, resource
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[2])
from replay_tui.ui.launch import make_app

async def main():
    app = make_app(sys.argv[1])
    async with app.run_test(size=(140, 40)) as pilot:
        while not (app.main.line_view is not None and app.main.line_view.mode == "step"):
            await asyncio.sleep(0.002)
        first = time.perf_counter() - t0
        while app.main.validating:
            await asyncio.sleep(0.05)
        validated = time.perf_counter() - t0
        view = app.main.view
        n = view.row_count()
        t = time.perf_counter(); view.line_view(n - 1); end_ms = (time.perf_counter() - t) * 1e3
        rng = random.Random(7)
        seeks = []
        for _ in range(int(sys.argv[3])):
            i = rng.randrange(n)
            t = time.perf_counter()
            view.line_view(i)
            seeks.append((time.perf_counter() - t) * 1e3)
        seeks.sort()
        err = app.replay.error
        print(first, validated, end_ms, statistics.median(seeks),
              seeks[min(len(seeks) - 1, int(0.99 * len(seeks)))],
              resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
              err.seq if err else None, app.main.timeline.cursor_index)

asyncio.run(main())
"""


def run(cmd: list[str]) -> tuple[float, float, str]:
    """(seconds, peak RSS MiB, stdout) of one command as a whole process."""
    wrapper = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "dt = time.perf_counter() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "sys.stdout.write(f'{dt} {rss}\\n' + p.stdout)\n"
        "sys.stderr.write(p.stderr)\n"
        "sys.exit(p.returncode)\n"
    )
    out = subprocess.run([PY, "-c", wrapper, *cmd], capture_output=True, text=True)
    if out.returncode not in (0, 1) or "Traceback (most recent call last)" in out.stderr:
        # a pass that crashed is not a time: say so rather than print its 0.04 s
        # (exit 1 alone is a verdict: `check` of a run that fails)
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    head, _, rest = out.stdout.partition("\n")
    seconds, rss = head.split()
    return float(seconds), float(rss), rest


def median_run(cmd: list[str], repeat: int) -> tuple[float, float, str]:
    results = [run(cmd) for _ in range(repeat)]
    results.sort(key=lambda r: r[0])
    return results[len(results) // 2]


def generate(workdir: Path, name: str, events: int, **kw: object) -> Path:
    dest = workdir / name
    if (dest / "events.jsonl").exists():
        return dest
    sys.path.insert(0, str(ROOT))
    from replay_tui.synth.runs import write_agent_run

    tmp = workdir / f".{name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    write_agent_run(tmp, events, seed=1, **kw)  # type: ignore[arg-type]
    tmp.rename(dest)
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "replay-bench")
    ap.add_argument("--repeat", type=int, default=1, help="runs per command (median)")
    ap.add_argument("--seeks", type=int, default=200, help="random jumps in the app")
    ap.add_argument("--skip-app", action="store_true")
    args = ap.parse_args()
    work = args.workdir / str(args.events)
    work.mkdir(parents=True, exist_ok=True)
    n = args.events
    t = time.perf_counter()
    valid = generate(work, "valid", n)
    denied = generate(work, "denied", n, deny_all=True)
    planted = generate(work, "planted", n, plant="divergence", plant_seq=n - 10)
    print(f"runs ready in {time.perf_counter() - t:.0f} s under {work}", file=sys.stderr)
    size = (valid / "events.jsonl").stat().st_size
    receipts = len(os.listdir(valid / "receipts"))
    cli = [PY, "-m", "replay_tui", "check"]
    rows: list[tuple[str, str, str]] = []

    check_s, check_rss, _ = median_run([*cli, str(valid)], args.repeat)
    deny_s, deny_rss, _ = median_run([*cli, str(denied)], args.repeat)
    plant_s, _, plant_out = median_run([*cli, str(planted)], 1)
    naive_s, naive_rss, _ = median_run([PY, "-c", NAIVE, str(valid)], args.repeat)
    if shutil.which("jq"):
        jq_s, _, _ = median_run(["jq", "-c", ".seq", str(valid / "events.jsonl")], args.repeat)
    else:
        jq_s = float("nan")

    rows.append(("ledger", f"{n:,} events, {size / 1e6:,.0f} MB, {receipts:,} receipts", ""))
    rows.append(("replay-tui check (s)", f"{check_s:.2f}", f"{n / check_s:,.0f} events/s"))
    rows.append(("  vs jq -c .seq (s)", f"{jq_s:.2f}", f"check is {jq_s / check_s:.2f}x jq"))
    rows.append(
        ("  vs naive replay (s)", f"{naive_s:.2f}", f"check is {naive_s / check_s:.2f}x naive")
    )
    rows.append(("check peak RSS (MiB)", f"{check_rss:.0f}", f"naive: {naive_rss:.0f}"))
    rows.append(("check, every call denied (s)", f"{deny_s:.2f}", f"RSS {deny_rss:.0f} MiB"))
    found = "found" if f"seq {n - 10}," in plant_out else "NOT FOUND"
    rows.append((f"check, error planted at seq {n - 10:,}", f"{plant_s:.2f}", found))

    if not args.skip_app:
        out = subprocess.run(
            [PY, "-c", APP, str(valid), str(ROOT), str(args.seeks)],
            capture_output=True,
            text=True,
            check=True,
        )
        first, validated, end_ms, p50, p99, rss, _, _ = out.stdout.split()
        rows.append(("app: first screen (s)", f"{float(first):.2f}", "timeline head + seq 1"))
        rows.append(("app: validated (s)", f"{float(validated):.2f}", "in a worker"))
        rows.append(("app: End, state at the last seq (ms)", f"{float(end_ms):.0f}", ""))
        rows.append(
            (
                "app: random jump p50 / p99 (ms)",
                f"{float(p50):.0f} / {float(p99):.0f}",
                f"{args.seeks} jumps",
            )
        )
        rows.append(("app: peak RSS, run open (MiB)", f"{float(rss):.0f}", ""))
        out = subprocess.run(
            [PY, "-c", APP, str(planted), str(ROOT), "5"],
            capture_output=True,
            text=True,
            check=True,
        )
        parts = out.stdout.split()
        shown = parts[6] == str(n - 10) and parts[7] == str(n - 11)
        rows.append(
            (
                f"app: planted error at seq {n - 10:,}",
                "cursor there" if shown else f"NOT SHOWN ({parts[6]})",
                "",
            )
        )

    width = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>14}  {note}")


if __name__ == "__main__":
    main()
