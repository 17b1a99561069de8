"""A ``SqliteSaver`` / ``AsyncSqliteSaver`` database, read and left as it was.

SqliteSaver puts its database in WAL mode, and SQLite creates ``-wal`` and
``-shm`` files beside a WAL database as soon as it is opened, even read
only. So: when no ``-wal`` file exists (no writer has it open, nothing
unmerged), the database is opened ``immutable=1``, which creates nothing
and takes no lock; when one exists, a writer is at work (or crashed) and
the database is opened ``mode=ro``, reading through its WAL as any reader
does: readers in WAL mode never block the writer. Nothing is ever written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from replay_tui.core.errors import CannotRun
from replay_tui.formats.langgraph.store import (
    SUBGRAPH_NAMESPACES,
    CheckpointRow,
    ThreadFacts,
    ThreadInfo,
    WriteRow,
    by_thread,
    facts_by_thread,
)

SQLITE_MAGIC = b"SQLite format 3\x00"
_CHECKPOINT_COLUMNS = {"thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint", "metadata"}
_WRITE_COLUMNS = {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "channel", "value"}


def is_sqlite(path: Path) -> bool:
    """The file starts with SQLite's header."""
    try:
        with path.open("rb") as fh:
            return fh.read(16) == SQLITE_MAGIC
    except OSError:
        return False


@contextmanager
def connect(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection that leaves the folder as it was (see module)."""
    wal = path.with_name(path.name + "-wal")
    uri = path.absolute().as_uri() + ("?mode=ro" if wal.exists() else "?immutable=1")
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=1.0, check_same_thread=False)
    except sqlite3.Error as exc:
        raise CannotRun(f"{path}: cannot open the SQLite database ({exc})") from None
    try:
        conn.execute("PRAGMA query_only = ON")
        yield conn
    except sqlite3.DatabaseError as exc:
        raise CannotRun(f"{path}: not a readable SQLite database ({exc})") from None
    finally:
        conn.close()


def _blob(kind: Any, value: Any) -> tuple[Any, bytes]:
    """A value column (and its type) as bytes, whatever SQLite holds there (a
    column of any declared type keeps a value of any type): NULL as nothing,
    text as its UTF-8; a number is no stored value at all, so its type says
    what it is, for the decoder to name and leave undecoded (``bytes(n)``
    would be n zero bytes, a huge n a huge allocation)."""
    if value is None:
        return kind, b""
    if isinstance(value, bytes):
        return kind, value
    if isinstance(value, str):
        return kind, value.encode("utf-8", "surrogatepass")
    return f"a number ({value!r}) where bytes belong", b""


def _metadata(value: Any) -> bytes | str | None:
    """A metadata column as JSON text or bytes (a number as its digits)."""
    return value if value is None or isinstance(value, bytes | str) else str(value)


def _idx(value: Any, where: str) -> int:
    """A write's ``idx``, which orders a task's writes: an integer, or the
    thread cannot be read in LangGraph's order."""
    if type(value) is int:
        return value
    raise CannotRun(f"{where} has idx {value!r}, not an integer (a damaged writes table)")


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")}


def why_not_checkpointer(path: Path) -> str | None:
    """Why the SQLite file ``path`` is not a LangGraph checkpointer's database
    (None: it is one)."""
    try:
        with connect(path) as conn:
            checkpoints = _columns(conn, "checkpoints")
            writes = _columns(conn, "writes")
    except CannotRun as exc:
        return str(exc).removeprefix(f"{path}: ")
    if not checkpoints and not writes:
        return "a SQLite database without a LangGraph checkpointer's tables (checkpoints, writes)"
    missing = sorted(_CHECKPOINT_COLUMNS - checkpoints) + sorted(_WRITE_COLUMNS - writes)
    if missing:
        return (
            "a SQLite database whose checkpoints/writes tables lack a LangGraph "
            f"checkpointer's columns ({', '.join(missing)})"
        )
    return None


_THREADS = (
    "SELECT thread_id, SUM(checkpoint_ns = ''), MAX(CASE WHEN checkpoint_ns = '' "
    "THEN checkpoint_id END), COUNT(DISTINCT checkpoint_ns) FROM checkpoints "
    "GROUP BY thread_id"
)
#: Each thread's latest checkpoint of the root namespace.
_LATEST = (
    "SELECT thread_id, MAX(checkpoint_id) AS last FROM checkpoints "
    "WHERE checkpoint_ns = '' GROUP BY thread_id"
)
#: The threads where a checkpoint has several children (root namespace).
_FORKED = (
    "SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = '' "
    "AND parent_checkpoint_id IS NOT NULL GROUP BY thread_id, parent_checkpoint_id "
    "HAVING COUNT(*) > 1"
)


def _infos(rows: list[Any]) -> list[ThreadInfo]:
    found = [ThreadInfo(str(t), int(n or 0), str(last or ""), int(ns)) for t, n, last, ns in rows]
    found.sort(key=lambda t: (t.last_id, t.thread_id), reverse=True)
    return found


def list_threads(path: Path) -> list[ThreadInfo]:
    """The threads of the database, by the time of their latest checkpoint
    (newest first)."""
    with connect(path) as conn:
        return _infos(conn.execute(_THREADS).fetchall())


def thread_facts(path: Path) -> list[ThreadFacts]:
    """Every thread as the picker lists it (:class:`ThreadFacts`), newest
    first, in one read transaction: a few queries for the whole database,
    whatever its size; the only values read are each latest checkpoint's."""
    with connect(path) as conn:
        conn.execute("BEGIN")
        infos = _infos(conn.execute(_THREADS).fetchall())
        kind = "c.type" if "type" in _columns(conn, "checkpoints") else "'msgpack'"
        last = {
            str(r[0]): CheckpointRow(
                str(r[1]), None if r[2] is None else str(r[2]), *_blob(r[3], r[4]), _metadata(r[5])
            )
            for r in conn.execute(
                f"SELECT c.thread_id, c.checkpoint_id, c.parent_checkpoint_id, {kind}, "
                f"c.checkpoint, c.metadata FROM ({_LATEST}) AS l JOIN checkpoints AS c "
                "ON c.thread_id = l.thread_id AND c.checkpoint_ns = '' "
                "AND c.checkpoint_id = l.last"
            )
        }
        pending = by_thread(
            conn.execute(
                f"SELECT DISTINCT w.thread_id, w.channel FROM ({_LATEST}) AS l JOIN writes AS w "
                "ON w.thread_id = l.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = l.last"
            )
        )
        spaces = by_thread(conn.execute(SUBGRAPH_NAMESPACES))
        trees: dict[str, list[CheckpointRow]] = {}
        for thread, cid, parent, metadata in conn.execute(
            "SELECT thread_id, checkpoint_id, parent_checkpoint_id, metadata FROM checkpoints "
            f"WHERE checkpoint_ns = '' AND thread_id IN ({_FORKED})"
        ):
            row = CheckpointRow(
                str(cid), None if parent is None else str(parent), None, b"", _metadata(metadata)
            )
            trees.setdefault(str(thread), []).append(row)
        conn.execute("COMMIT")
    return facts_by_thread(infos, last, pending, spaces, trees)


def namespaces(path: Path, thread: str) -> list[str]:
    """The checkpoint namespaces of ``thread`` (``""``: the root graph)."""
    with connect(path) as conn:
        rows = conn.execute(
            "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ? "
            "ORDER BY checkpoint_ns",
            (thread,),
        ).fetchall()
    return [str(r[0]) for r in rows]


def read_thread(path: Path, thread: str, ns: str) -> tuple[list[CheckpointRow], list[WriteRow]]:
    """Every checkpoint and write of ``thread`` in namespace ``ns``, in one
    read transaction (a consistent snapshot while a writer goes on)."""
    with connect(path) as conn:
        conn.execute("BEGIN")
        has_path = "task_path" in _columns(conn, "writes")
        has_type = "type" in _columns(conn, "checkpoints")
        checkpoints = [
            CheckpointRow(
                str(r[0]), None if r[1] is None else str(r[1]), *_blob(r[2], r[3]), _metadata(r[4])
            )
            for r in conn.execute(
                "SELECT checkpoint_id, parent_checkpoint_id, "
                + ("type" if has_type else "'msgpack'")
                + ", checkpoint, metadata FROM checkpoints "
                "WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id",
                (thread, ns),
            )
        ]
        writes = [
            WriteRow(
                str(r[0]),
                str(r[1]),
                str(r[2] or ""),
                _idx(r[3], f"{path}: thread {thread!r}: a write under checkpoint {r[0]}"),
                str(r[4]),
                *((r[5], None) if r[6] is None else _blob(r[5], r[6])),
            )
            for r in conn.execute(
                "SELECT checkpoint_id, task_id, "
                + ("task_path" if has_path else "''")
                + ", idx, channel, type, value FROM writes "
                "WHERE thread_id = ? AND checkpoint_ns = ?",
                (thread, ns),
            )
        ]
        conn.execute("COMMIT")
    # the order LangGraph applies a superstep's writes in: task path, task, index
    writes.sort(key=lambda w: (w.checkpoint_id, w.task_path, w.task_id, w.idx))
    return checkpoints, writes
