"""What a ``#`` after a file names in a RUN: a LangGraph checkpointer
database's thread (``DB#thread=ID&ns=NS&tip=CP``) or an Inspect AI log's
sample (``LOG#ID:EPOCH``). Which one is decided by the file before the
``#``, never by the text after it: a sample's id may be any text, and a
fragment that does not fit the file is refused in one line saying how that
file's runs are named."""

from __future__ import annotations

from pathlib import Path

from replay_tui.core.errors import CannotRun
from replay_tui.formats.inspect.log import FORMAT as INSPECT
from replay_tui.formats.inspect.log import InspectLog, looks_like_log
from replay_tui.formats.langgraph import sqlite
from replay_tui.formats.langgraph.store import THREAD_MARK

#: Between a file and what it names in a RUN: ``LOG#ID:EPOCH``, ``DB#thread=ID``.
SAMPLE_MARK = "#"

_THREAD_FIELD = THREAD_MARK.removeprefix(SAMPLE_MARK)  # "thread="


def split_file(arg: str) -> tuple[Path, str] | None:
    """``FILE#REST`` as (FILE, REST) when ``arg`` is no file itself and the
    text before one of its ``#`` is (the first such: an id may hold a ``#``);
    None otherwise."""
    if SAMPLE_MARK not in arg or Path(arg).exists():
        return None
    at = arg.find(SAMPLE_MARK)
    while at > 0:
        head = Path(arg[:at])
        if head.is_file():
            return head, arg[at + 1 :]
        at = arg.find(SAMPLE_MARK, at + 1)
    return None


def _is_checkpointer(path: Path) -> bool:
    return sqlite.is_sqlite(path) and sqlite.why_not_checkpointer(path) is None


def inspect_sample(arg: str, fmt: str) -> tuple[Path, str] | None:
    """(log, ``ID[:EPOCH]``) when ``arg`` is ``LOG#ID:EPOCH`` and LOG is an
    Inspect log (or ``--format inspect`` says so); None for anything else."""
    split = split_file(arg)
    if split is None or fmt not in ("auto", INSPECT):
        return None
    log, sample = split
    if fmt != INSPECT and not looks_like_log(log):
        return None
    if not sample:
        raise CannotRun(f"{arg}: no sample after '#': an Inspect AI log's run is LOG#ID[:EPOCH]")
    if sample.startswith(_THREAD_FIELD):
        opened = InspectLog(log)
        try:
            opened.find(sample)  # a sample named so is that sample
        except CannotRun:
            raise CannotRun(
                f"{arg}: {log.name} is an Inspect AI log, whose runs are its samples: name "
                f"one as LOG#ID:EPOCH ({opened.listing()}); #thread= is for a LangGraph "
                "checkpointer database"
            ) from None
        finally:
            opened.close()
    return log, sample


def wrong_fragment(arg: str, fmt: str) -> None:
    """Raise :class:`CannotRun` if ``arg`` is ``FILE#...`` naming what FILE
    cannot hold (any LangGraph thread and Inspect sample ``fmt`` lets be has
    been taken by now); nothing if ``arg`` has no file before a ``#``."""
    split = split_file(arg)
    if split is None:
        return
    file, rest = split
    if _is_checkpointer(file):
        raise CannotRun(
            f"{arg}: {file.name} is a LangGraph checkpointer database, whose runs are its "
            f"threads: name one as DB#thread=ID[&ns=NS][&tip=CHECKPOINT] or with --thread ID, "
            f"not #{rest}"
        )
    if fmt != "auto" and looks_like_log(file):
        raise CannotRun(
            f"{arg}: no such file; {file.name} is an Inspect AI log (LOG#ID:EPOCH names its "
            f"sample), not read with --format {fmt}"
        )
    raise CannotRun(
        f"{arg}: no such file, and {file.name} is neither a LangGraph checkpointer database "
        "(DB#thread=ID names its thread) nor an Inspect AI log (LOG#ID:EPOCH names its sample)"
    )
