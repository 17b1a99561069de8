"""Checking many runs at once: ``replay-tui check RUN1 RUN2 ...`` or a folder of runs.

Each run is checked in its own process (``--jobs``), since one replay is
CPU-bound Python; results come back in the order the runs were given.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from replay_tui.errors import CannotRun
from replay_tui.reducers import rules_for_run
from replay_tui.replay import CHECK_CHECKPOINT_BUDGET, Replay
from replay_tui.report import build_report, human_summary
from replay_tui.rules_guard import DEFAULT_TIMEOUT, stop_when_stuck
from replay_tui.run import EVENTS, locate_run


def expand_runs(args: list[str]) -> list[str]:
    """RUN arguments as runs: a folder with no ledger but run folders inside
    stands for those runs (sorted); anything else stays as given."""
    runs: list[str] = []
    for arg in args:
        path = Path(arg)
        if path.is_dir() and not (path / EVENTS).exists():
            inner = sorted(p for p in path.iterdir() if (p / EVENTS).is_file())
            if inner:
                runs.extend(str(p) for p in inner)
                continue
        runs.append(arg)
    return runs


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One run's outcome, small enough to send between processes."""

    run: str
    code: int  # 0 verified, 1 failed, 2 could not be checked
    report: dict[str, Any] | None
    summary: str  # the first line of the human summary, or why it could not run

    def one_line(self) -> str:
        return self.summary if self.code != 2 else f"{self.run}: cannot check: {self.summary}"

    def json_line(self) -> bytes:
        body: dict[str, Any] = {"run": self.run, "exit": self.code}
        if self.report is not None:
            body["report"] = self.report
        else:
            body["reason"] = self.summary
        return orjson.dumps(body, option=orjson.OPT_SORT_KEYS) + b"\n"


def check_one(
    run: str,
    reducer: str | None = None,
    partial: bool = False,
    rules_timeout: float = DEFAULT_TIMEOUT,
    fmt: str = "auto",
) -> CheckResult:
    """Check one run; never raises (a run that cannot be checked says why)."""
    try:
        paths = locate_run(run, fmt=fmt)
        replay = Replay(
            paths,
            rules_for_run(reducer, paths.events, paths.format),
            checkpoint_budget=CHECK_CHECKPOINT_BUDGET,
        )
    except CannotRun as exc:
        return CheckResult(run, 2, None, str(exc))
    except OSError as exc:
        return CheckResult(run, 2, None, f"{run}: {exc.strerror or exc}")
    watchdog = stop_when_stuck(replay.watch, rules_timeout, run) if replay.guarded else None
    try:
        replay.verify()
        report = build_report(replay, partial=partial)
        first = human_summary(run, replay, report).splitlines()[0]
        return CheckResult(run, 0 if replay.error is None else 1, report, first)
    except Exception as exc:  # one broken run must not stop the others
        return CheckResult(run, 2, None, f"internal error: {type(exc).__name__}: {exc}")
    finally:
        if watchdog is not None:
            watchdog.stop()
        replay.close()


def check_many(
    runs: list[str],
    *,
    reducer: str | None = None,
    partial: bool = False,
    jobs: int = 1,
    rules_timeout: float = DEFAULT_TIMEOUT,
    fmt: str = "auto",
) -> Iterator[CheckResult]:
    """Check ``runs`` in up to ``jobs`` processes, yielding results in order."""
    if jobs <= 1 or len(runs) <= 1:
        for run in runs:
            yield check_one(run, reducer, partial, rules_timeout, fmt)
        return
    with ProcessPoolExecutor(max_workers=min(jobs, len(runs))) as pool:
        futures = [
            pool.submit(check_one, run, reducer, partial, rules_timeout, fmt) for run in runs
        ]
        for run, future in zip(runs, futures, strict=True):
            try:
                yield future.result()
            except BrokenProcessPool:
                yield CheckResult(
                    run,
                    2,
                    None,
                    "the process checking it stopped (rules stuck where they cannot be "
                    "interrupted, or out of memory?)",
                )
