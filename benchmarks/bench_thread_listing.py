"""The LangGraph threads picker's listing against a full decode of the same
threads, measured in the same run (issue 46, point 2).

    python benchmarks/bench_thread_listing.py [--threads 1000] [--supersteps 10000]
                                              [--repeat 3] [--workdir DIR]

Two databases made by real LangGraph (the fixtures' maker,
tests/fixtures/langgraph/make_langgraph.py), once per workdir: ``many``,
N threads of 3 supersteps (``make_many_threads``), and ``long``, one thread
of N supersteps (``make_long_thread``). For each, the best of ``--repeat``
wall times of ``thread_rows`` (what the picker shows: SQL, and each
thread's latest checkpoint decoded) and of the same rows made by decoding
every thread whole (tests/helpers/langgraph_listing.py, what the picker did
before); the two must be equal.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from bench_langgraph import databases  # noqa: E402


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, got = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        got = fn()
        times.append(time.perf_counter() - start)
    return min(times), got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1_000)
    parser.add_argument("--supersteps", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/replay-tui-bench-listing"))
    args = parser.parse_args()
    from replay_tui.formats.langgraph.listing import thread_rows
    from tests.helpers.langgraph_listing import decoded_thread_rows

    long, many = databases(args.workdir, args.supersteps, args.threads)
    print(f"{'database':<28} {'threads':>7} {'listing':>9} {'full decode':>12} {'ratio':>7}")
    for db in (many, long):
        fast, rows = best(lambda db=db: thread_rows(db), args.repeat)
        slow, truth = best(lambda db=db: decoded_thread_rows(db), args.repeat)
        if rows != truth:
            raise SystemExit(f"{db.name}: the listing differs from a full decode")
        print(
            f"{db.name:<28} {len(rows):>7} {fast * 1000:>7.0f}ms {slow * 1000:>10.0f}ms "
            f"{slow / fast:>6.1f}x"
        )


if __name__ == "__main__":
    main()
