"""LangGraph checkpointer databases: one long thread and many threads,
checked, beside the same events as an ``events.jsonl`` in the same run.

    python benchmarks/bench_langgraph.py [--supersteps 10000] [--threads 1000]
                                         [--workdir DIR] [--jobs 2]

The databases are made by real LangGraph graphs (the fixtures' maker,
tests/fixtures/langgraph/make_langgraph.py: ``make_long_thread``, one
thread of N supersteps; ``make_many_threads``, N threads of 3 supersteps),
once per workdir. Then, each command its own process (wall time, peak RSS):

- ``check long.sqlite``: the thread read, decoded, converted and proved;
- ``check events.jsonl --reducer langgraph``: the very events of that thread
  written as a ledger, the same rules: what the source itself costs;
- ``check many.sqlite --jobs J``: every thread, one line each.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from bench_scale import PY, run  # noqa: E402


def databases(work: Path, supersteps: int, threads: int) -> tuple[Path, Path]:
    """(one thread of ``supersteps``, ``threads`` threads of a few), made in
    ``work`` by the maker of the fixtures if not there yet."""
    # the maker of the fixtures (tests/fixtures/langgraph/make_langgraph.py)
    make_langgraph = importlib.import_module("tests.fixtures.langgraph.make_langgraph")
    work.mkdir(parents=True, exist_ok=True)
    long = work / f"long-{supersteps}.sqlite"
    many = work / f"many-{threads}.sqlite"
    if not long.exists():
        make_langgraph.make_long_thread(long, supersteps)
    if not many.exists():
        make_langgraph.make_many_threads(many, threads)
    return long, many


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--supersteps", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=1_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/replay-tui-bench-langgraph"))
    args = parser.parse_args()
    from replay_tui.formats.langgraph.thread import load_thread

    work = args.workdir
    long, many = databases(work, args.supersteps, args.threads)
    ledger = work / f"long-{args.supersteps}-ledger"
    if not (ledger / "events.jsonl").exists():
        ledger.mkdir(exist_ok=True)
        (thread,) = thread_ids(long)
        with (ledger / "events.jsonl").open("wb") as fh:
            for chunk in load_thread(long, thread).envelope_lines():
                fh.write(chunk)
    cli = [PY, "-m", "replay_tui", "check"]
    ledger_mb = (ledger / "events.jsonl").stat().st_size / 1e6
    rows = [
        (f"{long.name} ({long.stat().st_size / 1e6:.1f} MB)", [*cli, str(long)]),
        (
            f"events.jsonl, the same events ({ledger_mb:.1f} MB)",
            [*cli, str(ledger), "--reducer", "langgraph"],
        ),
        (
            f"{many.name} ({many.stat().st_size / 1e6:.1f} MB), --jobs {args.jobs}",
            [*cli, str(many), "--jobs", str(args.jobs)],
        ),
    ]
    print(f"{'check':<58} {'seconds':>8} {'peak MiB':>9}  verdict")
    for label, cmd in rows:
        seconds, rss, out = run(cmd)
        said = [line for line in out.splitlines() if "verified" in line]
        verdict = said[-1] if said else "?"
        print(f"{label:<58} {seconds:8.1f} {rss:9.0f}  {verdict[:70]}")


def thread_ids(database: Path) -> list[str]:
    from replay_tui.formats.langgraph.sqlite import list_threads

    return [t.thread_id for t in list_threads(database)]


if __name__ == "__main__":
    main()
