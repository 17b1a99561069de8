"""A large Temporal history against a ledger of the same events.

    python benchmarks/bench_temporal.py [--events 50000] [--repeat 3]

Generates (deterministically) a Temporal history export of N events, pretty
printed as ``temporal workflow show --output json`` writes it: a workflow
that runs activities one after another, each with JSON input and result,
between workflow tasks. The baseline is the same history already converted
to an ``events.jsonl`` (what the importer produces), measured in the same run:
the difference is what reading a history costs over reading a ledger.

Prints, for both: ``check`` time and peak RSS (whole process, median of
--repeat), and the app's first screen (timeline head, state at seq 1) and
time to validated.
"""

from __future__ import annotations

import argparse
import base64
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from benchmarks.bench_scale import median_run  # noqa: E402

PY = sys.executable
APP = r"""
import asyncio, resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[2])
from replay_tui.ui.launch import make_app

async def main():
    app = make_app(sys.argv[1], reducer="temporal")
    async with app.run_test(size=(140, 40)) as pilot:
        while not (app.main.line_view is not None and app.main.line_view.mode == "step"):
            await asyncio.sleep(0.002)
        first = time.perf_counter() - t0
        while app.main.validating:
            await asyncio.sleep(0.02)
        done = time.perf_counter() - t0
        err = app.replay.error
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(first, done, rss, err.code if err else None)

asyncio.run(main())
"""


def _payloads(value: Any) -> dict[str, Any]:
    data = base64.b64encode(orjson.dumps(value)).decode()
    return {"payloads": [{"metadata": {"encoding": "anNvbi9wbGFpbg=="}, "data": data}]}


def history_events(n: int) -> list[dict[str, Any]]:
    """A valid history of exactly ``n`` events (n >= 5)."""
    events: list[dict[str, Any]] = []

    def add(kind: str, **attrs: Any) -> int:
        eid = len(events) + 1
        name = kind[0].lower() + kind[1:] + "EventAttributes"
        second = eid // 10
        events.append(
            {
                "eventId": str(eid),
                "eventTime": f"2026-01-01T{second // 3600 % 24:02d}:{second // 60 % 60:02d}:"
                f"{second % 60:02d}.{eid % 10}00Z",
                "eventType": "EVENT_TYPE_"
                + "".join(f"_{c}" if c.isupper() else c for c in kind).lstrip("_").upper(),
                "taskId": str(1_000_000 + eid),
                name: attrs,
            }
        )
        return eid

    add("WorkflowExecutionStarted", workflowType={"name": "BenchWorkflow"},
        taskQueue={"name": "bench"}, input=_payloads({"items": n}), attempt=1)  # fmt: skip
    activity = 0
    while len(events) + 9 <= n - 1:  # a workflow task, an activity, room to close
        sched = add("WorkflowTaskScheduled", taskQueue={"name": "bench"}, attempt=1)
        start = add("WorkflowTaskStarted", scheduledEventId=str(sched), identity="bench@host")
        done = add("WorkflowTaskCompleted", scheduledEventId=str(sched), startedEventId=str(start))
        activity += 1
        arg = {"path": f"src/module_{activity}.py", "line": activity % 400, "query": "x" * 40}
        a = add("ActivityTaskScheduled", activityId=str(activity),
                activityType={"name": "read_file"}, input=_payloads(arg),
                workflowTaskCompletedEventId=str(done), startToCloseTimeout="10s")  # fmt: skip
        s = add("ActivityTaskStarted", scheduledEventId=str(a), attempt=1, identity="bench@host")
        result = {"ok": True, "bytes": activity * 7 % 9000, "text": "y" * 120}
        add("ActivityTaskCompleted", scheduledEventId=str(a), startedEventId=str(s),
            result=_payloads(result))  # fmt: skip
    while len(events) < n - 1:
        add("MarkerRecorded", markerName="pad", details={})
    add("WorkflowExecutionCompleted", result=_payloads(activity))
    return events


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "replay-bench")
    args = ap.parse_args()
    work = args.workdir / f"temporal-{args.events}"
    work.mkdir(parents=True, exist_ok=True)
    hist = work / "history.json"
    ledger_dir = work / "as-ledger"
    if not (ledger_dir / "events.jsonl").exists() or not hist.exists():
        events = history_events(args.events)
        hist.write_bytes(orjson.dumps({"events": events}, option=orjson.OPT_INDENT_2))
        from replay_tui.formats.temporal import load_history

        ledger_dir.mkdir(exist_ok=True)
        with (ledger_dir / "events.jsonl").open("wb") as out:
            for chunk in load_history(hist).envelope_lines():
                out.write(chunk)
    cli = [PY, "-m", "replay_tui", "check"]
    rows = []
    for label, target, extra in (
        ("events.jsonl", ledger_dir, ["--reducer", "temporal"]),
        ("history.json", hist, []),
    ):
        seconds, rss, out = median_run([*cli, str(target), *extra], args.repeat)
        assert "verified" in out, out
        app = subprocess.run(
            [PY, "-c", APP, str(target), str(ROOT)], capture_output=True, text=True, check=True
        )
        first, done, app_rss, err = app.stdout.split()
        assert err == "None", app.stdout
        size = (target / "events.jsonl" if target.is_dir() else target).stat().st_size
        rows.append((label, size, seconds, rss, float(first), float(done), float(app_rss)))
    base = rows[0]
    print(f"{args.events:,} events (median of {args.repeat} check runs)")
    print(f"{'source':<14}{'MB':>7}{'check s':>9}{'RSS MiB':>9}"
          f"{'app 1st s':>11}{'valid s':>9}{'app MiB':>9}")  # fmt: skip
    for label, size, s, rss, first, done, app_rss in rows:
        print(f"{label:<14}{size / 1e6:>7.1f}{s:>9.2f}{rss:>9.0f}{first:>11.2f}"
              f"{done:>9.2f}{app_rss:>9.0f}")  # fmt: skip
    h = rows[1]
    print(f"history / ledger: check {h[2] / base[2]:.2f}x, first screen {h[4] / base[4]:.2f}x, "
          f"check RSS {h[3] / base[3]:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
