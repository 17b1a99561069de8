"""Checking many runs at once: ``replay-tui check RUN1 RUN2 ...`` or a folder of runs.

Each run is checked in its own process (``--jobs``), since one replay is
CPU-bound Python; results come back in the order the runs were given.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.core.errors import CannotRun
from replay_tui.core.links import split_link
from replay_tui.core.supervision import worker_init
from replay_tui.core.words import plural
from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import CHECK_CHECKPOINT_BUDGET, Replay
from replay_tui.engine.report import build_report, human_summary
from replay_tui.formats.inspect import InspectLog, looks_like_log
from replay_tui.formats.langgraph.postgres import shown_run
from replay_tui.formats.langgraph.source import database_threads
from replay_tui.formats.run import EVENTS, EVENTS_GZ, JSONL, has_ledger, locate_run
from replay_tui.formats.sessions import HEAD_BYTES, session_format_of_head
from replay_tui.formats.sniff import describe, named_as_ledger
from replay_tui.reducers.calling.guard import DEFAULT_TIMEOUT


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file or folder in a folder given to ``check`` that is no run any
    source reads, and why."""

    path: str
    reason: str

    def one_line(self) -> str:
        return f"{self.path}: skipped: {self.reason}"

    def json_line(self) -> bytes:
        body = {"skipped": self.path, "reason": self.reason}
        return orjson.dumps(body, option=orjson.OPT_SORT_KEYS) + b"\n"


@dataclass(slots=True)
class Gathered:
    """RUN arguments as runs, and what the folders among them held that is
    none (see :func:`gather_runs`)."""

    runs: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    #: Folders given that hold no run a source reads (kept in ``runs`` as
    #: given, to be said so), each with what it skipped.
    empty: dict[str, list[Skipped]] = field(default_factory=dict)


def expand_runs(args: list[str]) -> list[str]:
    """The runs of :func:`gather_runs`."""
    return gather_runs(args).runs


def gather_runs(args: list[str]) -> Gathered:
    """RUN arguments as runs: a folder with no ledger stands for every run
    in it that a source reads, sorted: run folders, and files any source
    recognises (ledgers and their gzip copies, Temporal histories, Claude
    Code, Codex and Gemini CLI sessions, OpenTelemetry traces and the
    Collector's JSON lines, each thread of a LangGraph database, each sample
    of an Inspect log), in it and in its subfolders (one level; folders named by numbers,
    as a Codex store's ``YYYY/MM/DD``, three more); everything else in it is
    skipped, with the reason. A Claude Code or Codex home given as the folder
    itself (``~/.claude``) stands for the sessions of its store. Anything
    else stays as given (``RUN@SEQ`` too: a link to a folder is refused)."""
    got = Gathered()
    for arg in args:
        path = Path(arg)
        threads = database_threads(arg)
        if threads is not None:  # a LangGraph database: each of its threads
            got.runs.extend(threads)
            if not threads:
                got.skipped.append(
                    Skipped(arg, "a LangGraph checkpointer's database with 0 threads")
                )
            continue
        if not path.is_dir():
            target, seq = split_link(arg)
            if seq is not None and target is not None and _folder_of_runs(Path(target)):
                raise CannotRun(
                    f"{arg}: a folder of runs takes no @SEQ: link one run in it (RUN@SEQ)"
                )
            got.runs.extend(samples_of(arg) or [arg])  # opening a log of no sample says so
            continue
        if has_ledger(path):
            got.runs.append(arg)
            continue
        runs, skipped = _scan(path, depth=1, numbered=3, top=True)
        if not runs:
            stored = _store(path)
            if stored:
                runs, skipped = stored, []  # a home's own files are no runs, nor news
        if runs:
            for found in runs:
                held = runs_in_file(str(found))
                if held:
                    got.runs.extend(held)
                else:  # a log of no sample, a database of no thread: nothing to check
                    got.skipped.append(Skipped(str(found), _holds_none(str(found))))
            got.skipped.extend(skipped)
        else:
            got.runs.append(arg)  # to be said to be no run folder
            got.empty[arg] = skipped
    return got


def runs_in_file(run: str) -> list[str]:
    """A file found in a folder as the runs it holds: each thread of a
    LangGraph database (as given alone), each sample of an Inspect log, or
    itself; none for a database of no thread or a log of no sample."""
    threads = database_threads(run)
    return threads if threads is not None else samples_of(run)


def samples_of(run: str) -> list[str]:
    """An Inspect log named without a sample as each of its samples
    (``LOG#ID:EPOCH``: none if it holds none); any other run as given."""
    path = Path(run)
    if not path.is_file() or not looks_like_log(path):
        return [run]
    try:
        log = InspectLog(path)
    except CannotRun:
        return [run]  # opening it says why
    try:
        return [f"{run}#{ref.key}" for ref in log.samples]
    finally:
        log.close()


def _holds_none(run: str) -> str:
    """Why a file :func:`runs_in_file` found no run in is skipped."""
    if database_threads(run) is not None:
        return "a LangGraph checkpointer's database with 0 threads"
    log = InspectLog(Path(run))
    try:
        status = log.header().get("status")
    finally:
        log.close()
    return "an Inspect log with no sample in it" + (
        f" (status {status})" if isinstance(status, str) else ""
    )


def no_runs_in(folder: str, skipped: list[Skipped]) -> str:
    """Why ``check FOLDER`` has nothing to check in ``folder``, on one line."""
    why = f"{folder}: not a run folder (no {EVENTS} in it)"
    if not skipped:
        return why
    return (
        f"{why}, and no run in it that a source reads: {len(skipped)} skipped ({reasons(skipped)})"
    )


def reasons(skipped: list[Skipped]) -> str:
    """What was skipped, most common first: ``2 Markdown text, 1 XML``."""
    kinds: dict[str, int] = {}
    for item in skipped:
        what = item.reason
        if what.startswith("it looks like "):  # the kind alone, not why it is none
            what = what.removeprefix("it looks like ").partition(": ")[0]
        what = what.partition(" (")[0]
        kinds[what] = kinds.get(what, 0) + 1
    ranked = sorted(kinds.items(), key=lambda item: (-item[1], item[0]))
    shown = ", ".join(f"{n} {what}" for what, n in ranked[:3])
    return shown + (", ..." if len(ranked) > 3 else "")


def _folder_of_runs(path: Path) -> bool:
    return path.is_dir() and not has_ledger(path)


def _store(home: Path) -> list[Path]:
    """The sessions of a Claude Code home (``projects/``) or a Codex home
    (``sessions/``) given as the folder itself."""
    found: list[Path] = []
    for store in ("projects", "sessions"):
        folder = home / store
        if folder.is_dir():
            found.extend(_scan(folder, depth=1, numbered=3)[0])
    return found


#: A folder not looked in, since it is deeper than ``check`` looks.
_DEEPER = "a folder below the levels check looks in: give it as its own RUN"
#: A run folder in a subfolder: only the folder given is a folder of runs.
_RUN_BELOW = "a run folder in a subfolder: check the folder that holds it"


def _scan(
    folder: Path, *, depth: int, numbered: int, top: bool = False
) -> tuple[list[Path], list[Skipped]]:
    """The runs in ``folder`` (:func:`gather_runs`), and what it skipped:
    run folders only at the ``top``, files a source reads at every level
    looked in."""
    runs: list[Path] = []
    skipped: list[Skipped] = []
    try:
        children = sorted(folder.iterdir())
    except OSError as exc:
        return runs, [Skipped(str(folder), f"cannot list it: {exc.strerror or exc}")]
    # a session's own folder (its sub-agents, its tool results) is read with it
    sessions = {p.name.removesuffix(".jsonl") for p in children if p.name.endswith(".jsonl")}
    for p in children:
        try:
            is_dir = p.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            inner: tuple[list[Path], list[Skipped]] | None = None
            if has_ledger(p) and top:
                runs.append(p)
            elif has_ledger(p):
                skipped.append(Skipped(str(p), _RUN_BELOW))
            elif p.name in sessions:
                continue
            elif p.is_symlink():
                skipped.append(Skipped(str(p), "a symbolic link to a folder, not followed"))
            elif p.name.startswith("."):
                skipped.append(Skipped(str(p), "a hidden folder, not looked in"))
            elif p.name.isdigit() and numbered > 0:
                inner = _scan(p, depth=depth, numbered=numbered - 1)
            elif depth > 0:
                inner = _scan(p, depth=depth - 1, numbered=numbered)
            else:
                skipped.append(Skipped(str(p), _DEEPER))
            if inner is not None:
                runs.extend(inner[0])
                skipped.extend(inner[1])
        elif p.is_file():  # regular files only: never a FIFO
            why = why_not_a_run(p)
            if why is None:
                runs.append(p)
            else:
                skipped.append(Skipped(str(p), why))
        else:
            skipped.append(Skipped(str(p), "not a regular file or a folder"))
    return runs, skipped


def why_not_a_run(path: Path) -> str | None:
    """Why no source reads the regular file ``path`` as a run, or None if
    one does (as ``replay-tui RUN`` would open it with ``--format auto``).
    A file named as a ledger that plainly holds no events (JSON lines of
    something else, nothing) is no run here, though given alone it is
    replayed, and judged, as one."""
    try:
        paths = locate_run(path)
    except CannotRun as exc:
        looks = describe(path)
        if looks is not None:  # what it looks like and why that is none, without what a RUN is
            return f"{looks[0]}: {looks[1]}"
        return str(exc).removeprefix(f"{path}: ").removeprefix("not a run: ")
    if paths.format != JSONL or path.name in (EVENTS, EVENTS_GZ):
        return None
    looks = describe(path)
    if looks is None and named_as_ledger(path):
        return None
    try:
        if looks is None and _starts_with_an_event(path):
            return None
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    source = _gzip_session(path) if paths.compressed else None
    if source is not None:
        return f"a gzip-compressed {source} session: sessions are read in place, gunzip it"
    if looks is not None:
        return f"{looks[0]}: {looks[1]}"
    # given alone it is replayed, and judged, as a damaged ledger; among others, no run
    return "not named as a ledger (*.jsonl) and its first line is no event"


def _starts_with_an_event(path: Path) -> bool:
    """Whether the first line of ``path`` is a JSON object with a field of
    an event; raises OSError if it cannot be read."""
    with path.open("rb") as fh:
        first = fh.readline(HEAD_BYTES)
    try:
        obj = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return isinstance(obj, dict) and any(k in obj for k in ("seq", "run_id", "kind"))


def _gzip_session(path: Path) -> str | None:
    """``claude-code`` or ``codex`` if the gzip file ``path`` holds that session."""
    try:
        with gzip.open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except (OSError, EOFError, zlib.error):
        return None
    return session_format_of_head(head)


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One run's outcome, small enough to send between processes."""

    run: str
    code: int  # 0 verified, 1 failed, 2 could not be checked
    report: dict[str, Any] | None
    summary: str  # the first line of the human summary, or why it could not run
    #: How many warnings of each code (all of them, not only those shown).
    warnings: dict[str, int] = field(default_factory=dict)

    def one_line(self) -> str:
        return (
            self.summary
            if self.code != 2
            else f"{shown_run(self.run)}: cannot check: {self.summary}"
        )

    def json_line(self) -> bytes:
        body: dict[str, Any] = {"run": shown_run(self.run), "exit": self.code}
        if self.report is not None:
            body["report"] = self.report
            body["warnings"] = self.warnings
        else:
            body["reason"] = self.summary
        return strict_json.dumps(body, option=orjson.OPT_SORT_KEYS) + b"\n"


def judge(replay: Replay, at: int | None, name: str = "") -> None:
    """Replay the whole run strictly (``check``), or with ``at`` (``RUN@SEQ``)
    its first ``at`` events only: the events after them are not read, and
    what only a whole run is judged on (its last line, orphan receipts, the
    final state's summary) is not judged. A run shorter than ``at`` that
    verifies cannot run (exit 2)."""
    if at is None:
        replay.verify()
        return
    replay.advance(limit=at)
    if replay.valid < at and replay.error is None:
        replay.finish()  # the whole run read, and shorter
        if replay.error is None:
            raise CannotRun(
                f"{name}@{at}: the run has only {plural(replay.valid, 'event')} "
                f"(give a seq 0..{replay.valid})"
            )


def prefix_report(report: dict[str, Any], at: int | None) -> dict[str, Any]:
    """The report, saying (``"prefix": SEQ``) when only events 1..SEQ were checked."""
    return report if at is None else report | {"prefix": at}


def summary_of(name: str, replay: Replay, report: dict[str, Any], at: int | None) -> str:
    """``check``'s summary of a run, or of its prefix (``RUN@SEQ``): named
    ``NAME@SEQ``, and saying the rest was not read."""
    if at is None:
        return human_summary(name, replay, report)
    first, _, rest = human_summary(f"{name}@{at}", replay, report).partition("\n")
    note = f"  checked the prefix up to seq {at} only: the events after it were not read"
    return "\n".join(line for line in (first, note, rest) if line)


def warnings_hint(codes: dict[str, int]) -> str:
    """A run's warnings on its one line: ``; 3 warnings (ts_backwards)``,
    each code with its count when there are several, most first."""
    total = sum(codes.values())
    if not total:
        return ""
    if len(codes) == 1:
        named = next(iter(codes))
    else:
        ranked = sorted(codes.items(), key=lambda item: (-item[1], item[0]))
        named = ", ".join(f"{code} {n}" for code, n in ranked)
    return f"; {plural(total, 'warning')} ({named})"


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
        path, at = split_link(run)
        assert path is not None
        replay, watchdog = open_replay(
            path,
            reducer,
            timeout=rules_timeout,
            fmt=fmt,
            checkpoint_budget=CHECK_CHECKPOINT_BUDGET,
        )
        judge(replay, at, path)
        report = prefix_report(build_report(replay, partial=partial), at)
        first = summary_of(shown_run(path), replay, report, None).splitlines()[0]
        if at is not None:
            first = (
                first.replace(f"{shown_run(path)}: ", f"{shown_run(run)}: ", 1)
                + f" (the prefix up to seq {at} only)"
            )
        first += warnings_hint(replay.warning_codes)
        failing = failing_warnings(replay, fail_on)
        if failing and replay.error is None:
            first += f" (failed: {plural(failing, 'warning')} of a code --fail-on names)"
        failed = replay.error is not None or failing > 0
        return CheckResult(run, 1 if failed else 0, report, first, dict(replay.warning_codes))
    except CannotRun as exc:
        return CheckResult(run, 2, None, str(exc))
    except OSError as exc:
        return CheckResult(run, 2, None, f"{shown_run(run)}: {exc.strerror or exc}")
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
