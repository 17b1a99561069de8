"""A LangGraph checkpointer database as a RUN: found by its content (the
SQLite header and the checkpointer's tables), its thread chosen by
``--thread`` / ``--ns`` or ``DB#thread=ID&ns=NS``, and read as a ledger
converted from the thread (:class:`ThreadLedger`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.core.errors import CannotRun
from replay_tui.formats.langgraph import postgres, sqlite
from replay_tui.formats.langgraph.sqlite import is_sqlite
from replay_tui.formats.langgraph.store import FORMAT, ThreadInfo, split_thread, thread_run
from replay_tui.formats.langgraph.thread import load_thread
from replay_tui.formats.ledger.converted import ConvertedLedger

LANGGRAPH = FORMAT


def _line(event: dict[str, Any]) -> bytes:
    """One event's envelope line; a value nested past what JSON is written
    to (metadata, a stored JSON value) gives a line that fails as
    ``bad_json`` at its seq, not an exception."""
    try:
        return strict_json.dumps(event)
    except (RecursionError, TypeError, orjson.JSONEncodeError):
        head = {k: event[k] for k in ("seq", "run_id", "kind")}
        return orjson.dumps(head)[:-1] + b',"payload":' + b"[" * 201 + b"]" * 201 + b"}"


#: A checkpointer's database: a SQLite file, or a PostgreSQL URL.
Database = Path | str


def list_threads(database: Database) -> list[ThreadInfo]:
    if isinstance(database, str):
        return postgres.list_threads(database)
    return sqlite.list_threads(database)


def list_namespaces(database: Database, thread: str) -> list[str]:
    """The checkpoint namespaces of ``thread`` (``""``: the root graph)."""
    if isinstance(database, str):
        return postgres.namespaces(database, thread)
    return sqlite.namespaces(database, thread)


def _url_of(
    arg: str, fmt: str, thread: str | None, ns: str | None
) -> tuple[str, str | None, str, str | None] | None:
    """A ``postgresql://`` RUN: (URL, thread, namespace, tip)."""
    head, named, named_ns, tip = split_thread(arg)
    if not postgres.is_url(head):
        return None
    if fmt not in ("auto", LANGGRAPH):
        raise CannotRun(
            f"{postgres.redact(head)}: a PostgreSQL URL is read as a LangGraph database only"
        )
    if named is not None and thread is not None and thread != named:
        raise CannotRun(f"{postgres.redact(arg)} and --thread {thread} name two threads: give one")
    why = postgres.why_not_checkpointer(head)
    if why is not None:
        raise CannotRun(f"{postgres.redact(head)}: not a LangGraph checkpointer's database: {why}")
    return head, thread or named, (named_ns if ns is None else ns) or "", tip


def locate_langgraph(
    arg: str, fmt: str, thread: str | None, ns: str | None
) -> tuple[Database, str | None, str, str | None] | None:
    """(database, thread, namespace, fork tip) if ``arg`` names a LangGraph database
    (None: it is some other source); raises :class:`CannotRun` for one that
    cannot be read, or a file forced as one that is not."""
    url = _url_of(arg, fmt, thread, ns)
    if url is not None:
        return url
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
    why = sqlite.why_not_checkpointer(path)
    if why is not None:
        raise CannotRun(f"{path}: not a LangGraph checkpointer's database: {why}")
    return path, thread, ns or "", tip


def database_threads(arg: str) -> list[str] | None:
    """A LangGraph database given with no thread: a RUN for each of its
    threads' root namespace (newest first). None for anything else."""
    if postgres.is_url(arg) and "#" not in arg:
        if postgres.why_not_checkpointer(arg) is not None:
            return None
        return [thread_run(arg, t.thread_id) for t in postgres.list_threads(arg)]
    path = Path(arg)
    if not path.is_file() or not is_sqlite(path) or sqlite.why_not_checkpointer(path) is not None:
        return None
    return [thread_run(arg, t.thread_id) for t in sqlite.list_threads(path)]


def shown(database: Database) -> str:
    """How messages name the database: a URL without its password."""
    return postgres.redact(database) if isinstance(database, str) else str(database)


def choose_thread(database: Database, thread: str | None) -> str:
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
    names = ", ".join(t.thread_id for t in threads[:5]) + (", ..." if len(threads) > 5 else "")
    raise CannotRun(
        f"{shown(database)}: {len(threads)} threads ({names}): choose one with --thread ID "
        f"(e.g. {thread_run(shown(database), threads[0].thread_id)})"
    )


class ThreadLedger(ConvertedLedger):
    """A thread's events, converted as they are scanned; errors name the
    database, the thread and the event.

    ``following`` (a SQLite thread a graph is writing): once every event is
    converted, each scan reads the thread again and appends what is new,
    when the run's branch grew (a checkpoint after its last, writes under
    it): writes already given (as pending) are not given again. A branch that
    no longer ends the thread (a fork became the latest) is followed no more.
    """

    def __init__(
        self,
        database: Database,
        thread: str | None,
        ns: str = "",
        tip: str | None = None,
        *,
        following: bool = False,
    ) -> None:
        chosen = choose_thread(database, thread)
        loaded = load_thread(database, chosen, ns, tip)
        if not loaded.branch:
            where = f" in namespace {ns!r}" if ns else ""
            raise CannotRun(f"{shown(database)}: no checkpoint of thread {chosen!r}{where}")
        if tip is not None and loaded.branch[-1].id != tip:
            raise CannotRun(f"{shown(database)}: thread {chosen!r} has no checkpoint {tip}")
        self.thread_id = chosen
        self.ns = ns
        self.tip = tip
        self.shown = shown(database)
        self._database = database
        self._following = following and tip is None
        #: What was given: checkpoints (the branch, in order) and writes.
        self._given_checkpoints: list[str] = []
        self._given_writes: set[tuple[str, str, int]] = set()
        self._seq = 0
        source = database if isinstance(database, Path) else Path(self.shown)
        lines = self._lines_of(loaded.events())
        super().__init__(source, lines, loaded.sha256, total=loaded.count)

    def _lines_of(self, events: Iterator[dict[str, Any]], batch: int = 512) -> Iterator[bytes]:
        """Envelope lines of ``events``, each one's key kept as given."""
        chunk: list[bytes] = []
        for event in events:
            p = event["payload"]
            if event["kind"] == "checkpoint":
                self._given_checkpoints.append(p["checkpoint_id"])
            else:
                self._given_writes.add((p["checkpoint_id"], p["task_id"], p["idx"]))
            self._seq = event["seq"]
            chunk.append(_line(event))
            if len(chunk) >= batch:
                yield b"\n".join(chunk) + b"\n"
                chunk = []
        if chunk:
            yield b"\n".join(chunk) + b"\n"

    def _convert_more(self) -> bool:
        if super()._convert_more():
            return True
        if not self._following:
            return False
        return self._read_on()

    def _read_on(self) -> bool:
        """The thread read again: what its branch gained, appended."""
        try:
            loaded = load_thread(self._database, self.thread_id, self.ns)
        except CannotRun:
            return False  # a writer mid-transaction, a busy file: next time
        ids = [c.id for c in loaded.branch]
        given = self._given_checkpoints
        if ids[: len(given)] != given:
            self._following = False  # the latest checkpoint is on another branch now
            return False
        fresh = []
        for event in loaded.events():
            p = event["payload"]
            if event["kind"] == "checkpoint":
                if p["checkpoint_id"] in given:
                    continue
            elif (p["checkpoint_id"], p["task_id"], p["idx"]) in self._given_writes:
                continue
            fresh.append(event)
        if not fresh:
            return False
        for event in fresh:
            event["seq"] = self._seq + 1
            self._seq += 1
        with self._convert_lock:
            for chunk in self._lines_of(iter(fresh)):
                self._write(chunk)
        return True

    def prefix_changed(self) -> bool:
        return False

    def stop_growing(self) -> None:
        self._following = False
        super().stop_growing()

    def artifact(self, line: int) -> str:
        name = (
            self.path.name
            if isinstance(self.path, Path) and not self.shown.startswith(postgres.SCHEMES)
            else self.shown
        )
        return f"{thread_run(name, self.thread_id, self.ns, self.tip)}: event {line}"
