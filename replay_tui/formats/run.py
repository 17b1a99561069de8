"""Locating a run: a folder with ``events.jsonl``, or that file itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from replay_tui.core.errors import CannotRun
from replay_tui.formats.fragment import SAMPLE_MARK, inspect_sample, wrong_fragment
from replay_tui.formats.gemini.records import why_not_gemini
from replay_tui.formats.inspect.log import looks_like_log
from replay_tui.formats.langgraph.postgres import redact
from replay_tui.formats.langgraph.source import LANGGRAPH, locate_langgraph
from replay_tui.formats.langgraph.store import thread_run
from replay_tui.formats.otel.source import looks_like_trace
from replay_tui.formats.sessions import (
    CLAUDE_CODE,
    CODEX,
    GEMINI,
    SESSION_FORMATS,
    read_head,
    session_format_of,
)
from replay_tui.formats.sniff import RUN_IS, named_as_ledger, not_a_run
from replay_tui.formats.temporal import looks_like_history

EVENTS = "events.jsonl"
EVENTS_GZ = "events.jsonl.gz"
JSONL = "jsonl"
TEMPORAL = "temporal"
OTEL = "otel"
INSPECT = "inspect"
FORMATS = ("auto", JSONL, TEMPORAL, CLAUDE_CODE, CODEX, GEMINI, OTEL, LANGGRAPH, INSPECT)
#: Sources read whole and converted to events (not read in place).
CONVERTED = (TEMPORAL, OTEL, LANGGRAPH, INSPECT)


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
    #: A LangGraph database's thread (None: not chosen yet) and namespace.
    thread: str | None = None
    ns: str = ""
    #: The checkpoint a fork's branch ends at (None: the thread's latest).
    tip: str | None = None
    #: A PostgreSQL database's URL (``events`` is its name, without the password).
    url: str | None = field(default=None, repr=False)
    #: The sample of an Inspect log (``ID:EPOCH``), or None (the whole log).
    sample: str | None = None

    @property
    def name(self) -> str:
        """What to call the run: its folder, or the file given (a history,
        a ledger not named ``events.jsonl``; a LangGraph thread as
        ``DB#thread=ID``, an Inspect log's sample as ``LOG#ID:EPOCH``)."""
        if self.thread is not None:
            base = redact(self.url) if self.url else self.events.name
            return thread_run(base, self.thread, self.ns, self.tip)
        if self.sample is not None:
            return f"{self.events.name}{SAMPLE_MARK}{self.sample}"
        if self.format != JSONL or self.events.name not in (EVENTS, EVENTS_GZ):
            return self.events.name
        return self.dir.resolve().name if self.dir.name in ("", ".", "..") else self.dir.name


def has_ledger(folder: Path) -> bool:
    """A run folder: ``events.jsonl`` in it, or ``events.jsonl.gz``."""
    return (folder / EVENTS).is_file() or (folder / EVENTS_GZ).is_file()


def locate_run(
    arg: str | Path,
    *,
    may_be_empty: bool = False,
    fmt: str = "auto",
    thread: str | None = None,
    ns: str | None = None,
) -> RunPaths:
    """Resolve a RUN argument; raises :class:`CannotRun` with a one-line reason.

    A file other than ``events.jsonl`` that starts like a Temporal history
    export (``{"events": [``) is read as one; a file whose first records look
    like a Claude Code transcript or a Codex rollout, whatever its name, as
    that session; an Inspect AI log (an ``.eval`` zip, or a JSON document
    ``{"version": N, "status": ..., "eval": ...}``) as one, its sample named
    ``LOG#ID:EPOCH`` (``RunPaths.sample``; None: the whole log). ``fmt``
    forces ``jsonl``, ``temporal``, ``claude-code``, ``codex``, ``gemini``,
    ``otel``, ``langgraph`` or ``inspect``. A file not named as a ledger
    (``*.jsonl``, ``*.jsonl.gz``: see :func:`~replay_tui.formats.sniff.named_as_ledger`)
    that is plainly something else (Markdown, HTML, a JSON document, a
    report, binary data, nothing) is refused in one line saying what it
    looks like; one that may be a ledger, even a damaged one, is replayed
    and judged strictly.

    With ``may_be_empty`` (following a run that has not started), a folder
    without ``events.jsonl`` yet, or that file's future path, is accepted.

    A SQLite file with a LangGraph checkpointer's tables is that database
    (``--format langgraph`` forces); ``thread`` and ``ns``, or
    ``DB#thread=ID&ns=NS``, choose its thread (see :mod:`.langgraph.source`).
    Whether a ``#`` names a thread or a sample is decided by the file before
    it (:mod:`.fragment`); one that fits neither is refused in one line.
    """
    sample = inspect_sample(str(arg), fmt) if thread is None and ns is None else None
    if sample is not None:
        log, selector = sample
        return RunPaths(log.parent, log, INSPECT, sample=selector)
    database = locate_langgraph(str(arg), fmt, thread, ns)
    if database is not None:
        db, chosen, namespace, tip = database
        if isinstance(db, str):  # a PostgreSQL URL: named without its password
            where = Path(redact(db))
            return RunPaths(
                Path.cwd(), where, LANGGRAPH, thread=chosen, ns=namespace, tip=tip, url=db
            )
        return RunPaths(db.parent, db, LANGGRAPH, thread=chosen, ns=namespace, tip=tip)
    path = Path(arg)
    wrong_fragment(str(arg), fmt)  # FILE#... that names no thread nor sample of FILE
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
        return _folder_run(path, arg)
    if path.is_file():
        return _file_run(path, arg, fmt, may_be_empty=may_be_empty)
    raise CannotRun(f"{arg}: not a file or folder")


def _folder_run(path: Path, arg: str | Path) -> RunPaths:
    """A folder given as RUN: its ``events.jsonl`` (or ``events.jsonl.gz``)."""
    events = path / EVENTS
    if not events.exists() and (path / EVENTS_GZ).is_file():
        return RunPaths(path, path / EVENTS_GZ, compressed=True)
    if not events.exists():
        raise CannotRun(f"{arg}: not a run folder: no {EVENTS} in it ({RUN_IS})")
    if not events.is_file():
        raise CannotRun(f"{events}: not a regular file")
    return RunPaths(path, events)


def _file_run(path: Path, arg: str | Path, fmt: str, *, may_be_empty: bool) -> RunPaths:
    """A regular file given as RUN: the source it is (see :func:`locate_run`)."""
    if fmt in SESSION_FORMATS:
        if path.name.lower().endswith(".gz"):
            raise CannotRun(f"{arg}: a compressed session is not read: gunzip it first")
        why = why_not_gemini(read_head(path)) if fmt == GEMINI else None
        if why is not None:
            raise CannotRun(f"{arg}: not a run: not a Gemini CLI session: {why}")
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
