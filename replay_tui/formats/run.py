"""Locating a run: a folder with ``events.jsonl``, or that file itself."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from replay_tui.core.errors import CannotRun
from replay_tui.formats.inspect.log import looks_like_log
from replay_tui.formats.otel.source import looks_like_trace
from replay_tui.formats.sessions import CLAUDE_CODE, CODEX, SESSION_FORMATS, session_format_of
from replay_tui.formats.sniff import RUN_IS, named_as_ledger, not_a_run
from replay_tui.formats.temporal import looks_like_history

EVENTS = "events.jsonl"
EVENTS_GZ = "events.jsonl.gz"
JSONL = "jsonl"
TEMPORAL = "temporal"
OTEL = "otel"
INSPECT = "inspect"
FORMATS = ("auto", JSONL, TEMPORAL, CLAUDE_CODE, CODEX, OTEL, INSPECT)
#: Sources read whole and converted to events (not read in place).
CONVERTED = (TEMPORAL, OTEL, INSPECT)
#: Between an Inspect log and the sample it names in a RUN: ``LOG#ID:EPOCH``.
SAMPLE_MARK = "#"


@dataclass(frozen=True, slots=True)
class RunPaths:
    """Where a run's files are; nothing is opened yet."""

    dir: Path
    events: Path
    #: ``jsonl`` (events.jsonl), ``temporal`` (a Temporal history export),
    #: ``otel`` (an OpenTelemetry trace), ``claude-code`` or ``codex`` (an
    #: agent's session file, read in place).
    format: str = JSONL
    #: The ledger is gzip-compressed (``events.jsonl.gz``, or a ``.gz`` given).
    compressed: bool = False
    #: The sample of an Inspect log (``ID:EPOCH``), or None (the whole log).
    sample: str | None = None

    @property
    def name(self) -> str:
        """What to call the run: its folder, or the file given (a history,
        a ledger not named ``events.jsonl``; an Inspect log's sample as
        ``LOG#ID:EPOCH``)."""
        if self.sample is not None:
            return f"{self.events.name}{SAMPLE_MARK}{self.sample}"
        if self.format != JSONL or self.events.name not in (EVENTS, EVENTS_GZ):
            return self.events.name
        return self.dir.resolve().name if self.dir.name in ("", ".", "..") else self.dir.name


def has_ledger(folder: Path) -> bool:
    """A run folder: ``events.jsonl`` in it, or ``events.jsonl.gz``."""
    return (folder / EVENTS).is_file() or (folder / EVENTS_GZ).is_file()


def locate_run(arg: str | Path, *, may_be_empty: bool = False, fmt: str = "auto") -> RunPaths:
    """Resolve a RUN argument; raises :class:`CannotRun` with a one-line reason.

    A file other than ``events.jsonl`` that starts like a Temporal history
    export (``{"events": [``) is read as one; a file whose first records look
    like a Claude Code transcript or a Codex rollout, whatever its name, as
    that session; an Inspect AI log (an ``.eval`` zip, or a JSON document
    ``{"version": N, "status": ..., "eval": ...}``) as one, its sample named
    ``LOG#ID:EPOCH`` (``RunPaths.sample``; None: the whole log). ``fmt``
    forces ``jsonl``, ``temporal``, ``claude-code``, ``codex``, ``otel`` or
    ``inspect``. A file not named as a ledger (``*.jsonl``, ``*.jsonl.gz``:
    see :func:`~replay_tui.formats.sniff.named_as_ledger`) that is plainly something
    else (Markdown, HTML, a JSON document, a report, binary data, nothing) is
    refused in one line saying what it looks like; one that may be a ledger,
    even a damaged one, is replayed and judged strictly.

    With ``may_be_empty`` (following a run that has not started), a folder
    without ``events.jsonl`` yet, or that file's future path, is accepted.
    """
    path = Path(arg)
    if not path.exists() and SAMPLE_MARK in str(arg):
        log, _, sample = str(arg).rpartition(SAMPLE_MARK)
        named = log and sample and Path(log).is_file() and fmt in ("auto", INSPECT)
        if named and (fmt == INSPECT or looks_like_log(Path(log))):
            return RunPaths(Path(log).parent, Path(log), INSPECT, sample=sample)
    if may_be_empty:
        if path.is_dir() and not has_ledger(path):
            return RunPaths(path, path / EVENTS)
        if not path.exists() and path.name == EVENTS and path.parent.is_dir():
            return RunPaths(path.parent, path)
        if not path.exists() and fmt == OTEL and path.parent.is_dir():
            return RunPaths(path.parent, path, OTEL)  # the Collector's lines, to come
    if not path.exists():
        raise CannotRun(f"{arg}: no such file or folder")
    if fmt not in FORMATS:
        raise CannotRun(f"--format {fmt}: expected one of {', '.join(FORMATS)}")
    if path.is_dir() and fmt == TEMPORAL:
        raise CannotRun(f"{arg}: --format temporal takes a history file, not a folder")
    if path.is_dir() and fmt == OTEL:
        raise CannotRun(f"{arg}: --format otel takes a trace file, not a folder")
    if path.is_dir() and fmt == INSPECT:
        raise CannotRun(f"{arg}: --format inspect takes an Inspect log file, not a folder")
    if path.is_dir() and fmt in SESSION_FORMATS:
        raise CannotRun(f"{arg}: --format {fmt} takes a session file, not a folder")
    if path.is_dir():
        events = path / EVENTS
        if not events.exists() and (path / EVENTS_GZ).is_file():
            return RunPaths(path, path / EVENTS_GZ, compressed=True)
        if not events.exists():
            raise CannotRun(f"{arg}: not a run folder: no {EVENTS} in it ({RUN_IS})")
        if not events.is_file():
            raise CannotRun(f"{events}: not a regular file")
        return RunPaths(path, events)
    if path.is_file():
        if fmt in SESSION_FORMATS:
            if path.name.lower().endswith(".gz"):
                raise CannotRun(f"{arg}: a compressed session is not read: gunzip it first")
            return RunPaths(path.parent, path, fmt)
        if fmt == INSPECT or (fmt == "auto" and not named_as_ledger(path) and looks_like_log(path)):
            return RunPaths(path.parent, path, INSPECT)
        if fmt == "auto" and not path.name.lower().endswith(".gz"):
            found = session_format_of(path)
            if found is not None:
                return RunPaths(path.parent, path, found)
        if fmt == "auto" and not named_as_ledger(path):
            history = path.suffix != ".gz" and (looks_like_history(path) or looks_like_trace(path))
            why = None if history else not_a_run(path, may_be_empty=may_be_empty)
            if why is not None:
                raise CannotRun(f"{arg}: not a run: {why}")
        if path.suffix == ".gz" and fmt not in CONVERTED:
            return RunPaths(path.parent, path, compressed=True)
        if fmt == OTEL or (fmt == "auto" and path.name != EVENTS and looks_like_trace(path)):
            return RunPaths(path.parent, path, OTEL)
        if fmt == TEMPORAL or (fmt == "auto" and path.name != EVENTS and looks_like_history(path)):
            return RunPaths(path.parent, path, TEMPORAL)
        return RunPaths(path.parent, path)
    raise CannotRun(f"{arg}: not a file or folder")
