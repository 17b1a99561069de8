"""The two line cores side by side: what proving lines regular costs an event.

    python benchmarks/bench_line_core.py [--events 1000000] [--repeat 3] [--workdir DIR]

Over the lines of one generated agent run (``bench_scale``'s, cached in
--workdir), in groups of ``PROVEN_GROUP`` as the forward pass takes them,
all in this one process (best of --repeat, the collector paused as in the
pass):

- ``orjson`` over every line: the floor both paths pay (the rules need the
  events' values);
- the Python path: :func:`~replay_tui.formats.chunks.regular_events`, its
  checks and the events;
- the native path: ``NativeCore.prove`` alone (the checks, the interpreter's
  lock let go), then with :func:`~replay_tui.formats.chunks.proven_events`
  (the events of the proven lines).

It prints µs an event for each and what each path adds to the orjson floor.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from benchmarks.bench_scale import generate  # noqa: E402
from replay_tui.core import line_core  # noqa: E402
from replay_tui.engine.regular_runs import PROVEN_GROUP  # noqa: E402
from replay_tui.formats.chunks import proven_events, regular_events  # noqa: E402
from replay_tui.formats.envelope import MAX_DEPTH, ts_seconds  # noqa: E402
from replay_tui.reducers.agent_run import KINDS  # noqa: E402


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
        gc.enable()
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "replay-bench")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    run = generate(args.workdir, "valid", args.events)
    lines = (run / "events.jsonl").read_bytes().split(b"\n")[:-1]
    n = len(lines)
    run_id = orjson.loads(lines[0])["run_id"]
    groups = [(at, lines[at : at + PROVEN_GROUP]) for at in range(1, n, PROVEN_GROUP)]
    first_ts = ts_seconds(orjson.loads(lines[0])["ts"])

    def floor() -> None:
        for _, group in groups:
            list(map(orjson.loads, group))

    def python() -> None:
        last_ts = first_ts
        for at, group in groups:
            regular = regular_events(
                group,
                at + 1,
                range(len(group)),
                last_seq=at,
                run_id=run_id,
                last_ts=last_ts,
                kinds=KINDS,
            )
            assert regular is not None, at
            last_ts = regular.last_ts

    rows = {
        "orjson over every line": best(floor, args.repeat),
        "python path": best(python, args.repeat),
    }
    core = line_core.NATIVE
    if core is not None:
        buf = b"".join(line + b"\n" for line in lines[1:])
        native = core  # bound for the closures below

        def prove() -> None:
            proof = native.prove(
                buf, 0, first_seq=2, run_id=run_id, kinds=KINDS,
                max_depth=MAX_DEPTH - 1, max_lines=n - 1,
            )  # fmt: skip
            assert proof.lines == n - 1, proof.why

        def native_path() -> None:
            byte, last_ts = 0, first_ts
            for at, group in groups:
                proof = native.prove(
                    buf, byte, first_seq=at + 1, run_id=run_id, kinds=KINDS,
                    max_depth=MAX_DEPTH - 1, max_lines=len(group),
                )  # fmt: skip
                regular = proven_events(
                    group, at + 1, range(len(group)), first_seq=at + 1, run_id=run_id,
                    timed=proof.times, earlier=proof.backs, last_ts=last_ts,
                    compact_needed=False,
                )  # fmt: skip
                assert regular is not None and proof.lines == len(group), at
                byte, last_ts = proof.end, regular.last_ts

        rows["native core, the checks alone"] = best(prove, args.repeat)
        rows["native path"] = best(native_path, args.repeat)
    print(f"{n:,} lines, groups of {PROVEN_GROUP} (best of {args.repeat}); {line_core.describe()}")
    floor_s = rows["orjson over every line"]
    for name, seconds in rows.items():
        extra = "" if name.startswith("orjson") else f"  (+{(seconds - floor_s) / n * 1e6:.2f})"
        if name == "native core, the checks alone":
            extra = ""
        print(f"{name:<32} {seconds:7.2f} s {seconds / n * 1e6:6.2f} µs/event{extra}")


if __name__ == "__main__":
    main()
