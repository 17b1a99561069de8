"""A LangGraph checkpointer database as a RUN: found by its content (the
SQLite header and the checkpointer's tables), its thread chosen by
``--thread`` / ``--ns`` or ``DB#thread=ID&ns=NS``, and read as a ledger
converted from the thread (:class:`ThreadLedger`)."""

from __future__ import annotations

from pathlib import Path

from replay_tui.core.errors import CannotRun
from replay_tui.formats.langgraph.sqlite import is_sqlite, list_threads, why_not_checkpointer
from replay_tui.formats.langgraph.store import FORMAT, split_thread, thread_run
from replay_tui.formats.langgraph.thread import load_thread
from replay_tui.formats.ledger.converted import ConvertedLedger

LANGGRAPH = FORMAT


def locate_langgraph(
    arg: str, fmt: str, thread: str | None, ns: str | None
) -> tuple[Path, str | None, str, str | None] | None:
    """(database, thread, namespace, fork tip) if ``arg`` names a LangGraph database
    (None: it is some other source); raises :class:`CannotRun` for one that
    cannot be read, or a file forced as one that is not."""
    path = Path(arg)
    tip = None
    if not path.exists():
        head, named, named_ns, tip = split_thread(arg)
        if named is None or not Path(head).is_file():
            if fmt == LANGGRAPH and (thread is not None or ns is not None):
                raise CannotRun(f"{arg}: no such file")
            return None
        path = Path(head)
        if thread is not None and thread != named:
            raise CannotRun(f"{arg} and --thread {thread} name two threads: give one")
        thread, ns = named, (named_ns if ns is None else ns)
    elif fmt not in ("auto", LANGGRAPH):
        return None
    if not path.is_file():
        if fmt == LANGGRAPH:
            raise CannotRun(f"{arg}: --format langgraph takes a checkpointer's database file")
        return None
    if not is_sqlite(path):
        if fmt == LANGGRAPH or thread is not None:
            raise CannotRun(f"{path}: not a SQLite database, so no LangGraph checkpointer's")
        return None
    why = why_not_checkpointer(path)
    if why is not None:
        raise CannotRun(f"{path}: not a LangGraph checkpointer's database: {why}")
    return path, thread, ns or "", tip


def database_threads(arg: str) -> list[str] | None:
    """A LangGraph database given with no thread: a RUN for each of its
    threads' root namespace (newest first). None for anything else."""
    path = Path(arg)
    if not path.is_file() or not is_sqlite(path) or why_not_checkpointer(path) is not None:
        return None
    return [thread_run(arg, t.thread_id) for t in list_threads(path)]


def choose_thread(database: Path, thread: str | None) -> str:
    """``thread``, or the database's only thread; several, or none, say so."""
    if thread is not None:
        return thread
    threads = list_threads(database)
    if len(threads) == 1:
        return threads[0].thread_id
    if not threads:
        raise CannotRun(
            f"{database}: a LangGraph checkpointer's database with no thread (0 threads)"
        )
    shown = ", ".join(t.thread_id for t in threads[:5]) + (", ..." if len(threads) > 5 else "")
    raise CannotRun(
        f"{database}: {len(threads)} threads ({shown}): choose one with --thread ID "
        f"(e.g. {thread_run(str(database), threads[0].thread_id)})"
    )


class ThreadLedger(ConvertedLedger):
    """A thread's events, converted as they are scanned; errors name the
    database, the thread and the event."""

    def __init__(
        self, database: Path, thread: str | None, ns: str = "", tip: str | None = None
    ) -> None:
        chosen = choose_thread(database, thread)
        loaded = load_thread(database, chosen, ns, tip)
        if not loaded.branch:
            where = f" in namespace {ns!r}" if ns else ""
            raise CannotRun(f"{database}: no checkpoint of thread {chosen!r}{where}")
        if tip is not None and loaded.branch[-1].id != tip:
            raise CannotRun(f"{database}: thread {chosen!r} has no checkpoint {tip}")
        self.thread_id = chosen
        self.ns = ns
        self.tip = tip
        super().__init__(database, loaded.envelope_lines(), loaded.sha256, total=loaded.count)

    def artifact(self, line: int) -> str:
        return f"{thread_run(self.path.name, self.thread_id, self.ns, self.tip)}: event {line}"
