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

from replay_tui.core import strict_json
from replay_tui.core.errors import CannotRun
from replay_tui.core.supervision import worker_init
from replay_tui.core.words import plural
from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import CHECK_CHECKPOINT_BUDGET, Replay
from replay_tui.engine.report import build_report, human_summary
from replay_tui.formats.run import has_ledger
from replay_tui.formats.session_stores.listing import session_files_under
from replay_tui.formats.sessions import session_format_of
from replay_tui.formats.temporal import looks_like_history
from replay_tui.reducers.calling.guard import DEFAULT_TIMEOUT


def expand_runs(args: list[str]) -> list[str]:
    """RUN arguments as runs: a folder with no ledger but runs inside stands
    for those runs, sorted (run folders, Temporal history files and agent
    sessions, and the history and session files of its subfolders; with
    none of those, the session files in its folders named by numbers, as
    a Codex store's ``YYYY/MM/DD``; a Claude Code or Codex home, as
    ``~/.claude``, stands for the sessions in its ``projects`` or
    ``sessions``); anything else stays as given."""
    runs: list[str] = []
    for arg in args:
        path = Path(arg)
        if path.is_dir() and not has_ledger(path):
            inner = _runs_in(path, depth=1) or session_files_under(path) or _store(path)
            if inner:
                runs.extend(str(p) for p in inner)
                continue
        runs.append(arg)
    return runs


def _store(home: Path) -> list[Path]:
    """The sessions of a Claude Code home (``projects/``) or a Codex home
    (``sessions/``) given as the folder itself."""
    found: list[Path] = []
    for store in ("projects", "sessions"):
        folder = home / store
        if folder.is_dir():
            found.extend(_runs_in(folder, depth=1) or session_files_under(folder))
    return found


def _runs_in(folder: Path, *, depth: int) -> list[Path]:
    """Run folders, history files and session files (Claude Code, Codex) in
    ``folder``; with ``depth``, also the history and session files (only) of
    its subfolders, as ``sample_runs/temporal/`` or a Codex day's folder."""
    found: list[Path] = []
    try:
        children = sorted(folder.iterdir())
    except OSError:
        return found
    for p in children:
        if p.is_dir():
            if has_ledger(p):
                found.append(p)
            elif depth > 0:
                found.extend(h for h in _runs_in(p, depth=depth - 1) if h.is_file())
        elif p.is_file() and (  # regular files only: never a FIFO
            looks_like_history(p) or session_format_of(p) is not None
        ):
            found.append(p)
    return found


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
        return strict_json.dumps(body, option=orjson.OPT_SORT_KEYS) + b"\n"


def failing_warnings(replay: Replay, fail_on: tuple[str, ...]) -> int:
    """How many of ``replay``'s warnings ``--fail-on`` names (``any``: all)."""
    if not fail_on:
        return 0
    if "any" in fail_on:
        return replay.warning_count
    return sum(n for code, n in replay.warning_codes.items() if code in fail_on)


def check_one(
    run: str,
    reducer: str | None = None,
    partial: bool = False,
    rules_timeout: float = DEFAULT_TIMEOUT,
    fmt: str = "auto",
    fail_on: tuple[str, ...] = (),
) -> CheckResult:
    """Check one run; never raises (a run that cannot be checked says why).
    Warnings of a code in ``fail_on`` fail it (exit 1) as an error does."""
    replay: Replay | None = None
    watchdog = None
    try:
        replay, watchdog = open_replay(
            run,
            reducer,
            timeout=rules_timeout,
            fmt=fmt,
            checkpoint_budget=CHECK_CHECKPOINT_BUDGET,
        )
        replay.verify()
        report = build_report(replay, partial=partial)
        first = human_summary(run, replay, report).splitlines()[0]
        failing = failing_warnings(replay, fail_on)
        if failing and replay.error is None:
            first += f" (failed: {plural(failing, 'warning')} of a code --fail-on names)"
        failed = replay.error is not None or failing > 0
        return CheckResult(run, 1 if failed else 0, report, first)
    except CannotRun as exc:
        return CheckResult(run, 2, None, str(exc))
    except OSError as exc:
        return CheckResult(run, 2, None, f"{run}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # one broken run must not stop the others
        return CheckResult(run, 2, None, f"internal error: {type(exc).__name__}: {exc}")
    finally:
        if watchdog is not None:
            watchdog.stop()
        if replay is not None:
            replay.close()


_STOPPED = (
    "the process checking it stopped (rules stuck where they cannot be interrupted, "
    "or out of memory?)"
)


def check_many(
    runs: list[str],
    *,
    reducer: str | None = None,
    partial: bool = False,
    jobs: int = 1,
    rules_timeout: float = DEFAULT_TIMEOUT,
    fmt: str = "auto",
    fail_on: tuple[str, ...] = (),
) -> Iterator[CheckResult]:
    """Check ``runs`` in up to ``jobs`` processes, yielding results in order.

    Each run is checked in a worker process, so that rules which cannot be
    stopped (and end their process) lose only their own run: the runs that
    were in the same pool are checked again, each in a process of its own.
    """
    args = (reducer, partial, rules_timeout, fmt, fail_on)
    if len(runs) <= 1:
        for run in runs:
            yield check_one(run, *args)
        return
    broken = False
    with ProcessPoolExecutor(
        max_workers=max(1, min(jobs, len(runs))), initializer=worker_init
    ) as pool:
        futures = [pool.submit(check_one, run, *args) for run in runs]
        for run, future in zip(runs, futures, strict=True):
            if not broken:
                try:
                    yield future.result()
                    continue
                except BrokenProcessPool:
                    broken = True
            yield _alone(run, args)


def _alone(run: str, args: tuple[str | None, bool, float, str, tuple[str, ...]]) -> CheckResult:
    """Check ``run`` in a process of its own (after a pool broke)."""
    with ProcessPoolExecutor(max_workers=1, initializer=worker_init) as pool:
        try:
            return pool.submit(check_one, run, *args).result()
        except BrokenProcessPool:
            return CheckResult(run, 2, None, _STOPPED)
