"""A ``PostgresSaver`` database, given as a ``postgresql://`` URL, read in
one read-only transaction.

Its tables: ``checkpoints`` (the checkpoint as JSONB, simple values inline
in its ``channel_values``), ``checkpoint_blobs`` (every other value, by
channel and version: the checkpoint's ``channel_versions`` name the one
each channel holds; type ``empty`` is a channel with no value),
``checkpoint_writes`` and ``checkpoint_migrations``. The driver (psycopg 3)
is the ``postgres`` extra; without it, a URL says how to install it.

The password: libpq's conventions pass it (``PGPASSWORD``, ``~/.pgpass``, a
service file), and a password written in the URL is never shown:
:func:`redact` gives the URL every message, title and link uses.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from replay_tui.core.errors import CannotRun
from replay_tui.formats.langgraph.decode import decode_typed
from replay_tui.formats.langgraph.store import (
    SUBGRAPH_NAMESPACES,
    CheckpointRow,
    ThreadFacts,
    ThreadInfo,
    WriteRow,
    by_thread,
    facts_by_thread,
)

SCHEMES = ("postgresql://", "postgres://")
INSTALL = "pip install 'replay-tui[postgres]'"


def is_url(arg: str) -> bool:
    return arg.startswith(SCHEMES)


def redact(url: str) -> str:
    """``url`` with its password as ``***`` (in the user part, and a
    ``password=`` parameter)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.split("://", 1)[0] + "://***"
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        if ":" in user:
            user = user.split(":", 1)[0] + ":***"
        netloc = f"{user}@{host}"
    query = "&".join(
        ("password=***" if kv.lower().startswith("password=") else kv)
        for kv in parts.query.split("&")
        if kv
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def shown_run(run: str) -> str:
    """A RUN as it may be shown: a ``postgresql://`` one without its password."""
    return redact(run) if is_url(run) else run


def _why(exc: BaseException, url: str) -> str:
    """A driver's error in one line, the password never in it."""
    said = " ".join(str(exc).split()) or type(exc).__name__
    parts = urlsplit(url)
    if parts.password:
        said = said.replace(parts.password, "***")
    return said


@contextmanager
def connect(url: str) -> Iterator[Any]:
    """A read-only connection whose transaction reads one snapshot
    (``REPEATABLE READ``): a thread is read in several statements, and a turn
    a graph commits between two of them must be seen whole or not at all
    (read committed, its checkpoints came without their values)."""
    try:
        import psycopg
    except ImportError:
        raise CannotRun(f"{redact(url)}: reading PostgreSQL needs the driver: {INSTALL}") from None
    try:
        conn = psycopg.connect(url, connect_timeout=10, autocommit=False)
    except psycopg.Error as exc:
        raise CannotRun(f"{redact(url)}: cannot connect: {_why(exc, url)}") from None
    try:
        conn.read_only = True
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        yield conn
    except psycopg.Error as exc:
        raise CannotRun(f"{redact(url)}: {_why(exc, url)}") from None
    finally:
        conn.close()


def why_not_checkpointer(url: str) -> str | None:
    """Why the database is not a PostgresSaver's (None: it is one)."""
    with connect(url) as conn:
        found = {
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_name = ANY(%s)",
                (["checkpoints", "checkpoint_blobs", "checkpoint_writes"],),
            )
        }
        conn.rollback()
    missing = sorted({"checkpoints", "checkpoint_blobs", "checkpoint_writes"} - found)
    if missing:
        return f"no LangGraph checkpointer's tables ({', '.join(missing)} missing)"
    return None


_THREADS = (
    "SELECT thread_id, count(*) FILTER (WHERE checkpoint_ns = ''), "
    "max(checkpoint_id) FILTER (WHERE checkpoint_ns = ''), "
    "count(DISTINCT checkpoint_ns) FROM checkpoints GROUP BY thread_id"
)
#: Each thread's latest checkpoint of the root namespace, whole.
_LATEST = (
    "SELECT DISTINCT ON (thread_id) thread_id, checkpoint_id, parent_checkpoint_id, "
    "checkpoint, metadata FROM checkpoints WHERE checkpoint_ns = '' "
    "ORDER BY thread_id, checkpoint_id DESC"
)


def _infos(rows: list[Any]) -> list[ThreadInfo]:
    found = [ThreadInfo(str(t), int(n or 0), str(last or ""), int(ns)) for t, n, last, ns in rows]
    found.sort(key=lambda t: (t.last_id, t.thread_id), reverse=True)
    return found


def list_threads(url: str) -> list[ThreadInfo]:
    with connect(url) as conn:
        rows = conn.execute(_THREADS).fetchall()
        conn.rollback()
    return _infos(rows)


def thread_facts(url: str) -> list[ThreadFacts]:
    """Every thread as the picker lists it (:class:`ThreadFacts`), newest
    first, in one read-only transaction: a few queries for the whole
    database; the only blobs read are those each latest checkpoint holds."""
    with connect(url) as conn:
        infos = _infos(conn.execute(_THREADS).fetchall())
        latest = conn.execute(_LATEST).fetchall()
        blobs: dict[str, dict[tuple[str, str], tuple[str, bytes]]] = {}
        for thread, channel, version, kind, blob in conn.execute(
            f"SELECT l.thread_id, b.channel, b.version, b.type, b.blob FROM ({_LATEST}) AS l "
            "CROSS JOIN LATERAL jsonb_each_text(l.checkpoint -> 'channel_versions') AS v "
            "JOIN checkpoint_blobs AS b ON b.thread_id = l.thread_id "
            "AND b.checkpoint_ns = '' AND b.channel = v.key AND b.version = v.value"
        ):
            blobs.setdefault(str(thread), {})[(str(channel), str(version))] = (
                str(kind),
                bytes(blob or b""),
            )
        pending = by_thread(
            conn.execute(
                f"SELECT DISTINCT w.thread_id, w.channel FROM ({_LATEST}) AS l "
                "JOIN checkpoint_writes AS w ON w.thread_id = l.thread_id "
                "AND w.checkpoint_ns = '' AND w.checkpoint_id = l.checkpoint_id"
            )
        )
        spaces = by_thread(conn.execute(SUBGRAPH_NAMESPACES))
        trees: dict[str, list[CheckpointRow]] = {}
        for thread, cid, parent, metadata in conn.execute(
            "SELECT thread_id, checkpoint_id, parent_checkpoint_id, metadata FROM checkpoints "
            "WHERE checkpoint_ns = '' AND thread_id IN (SELECT thread_id FROM checkpoints "
            "WHERE checkpoint_ns = '' AND parent_checkpoint_id IS NOT NULL "
            "GROUP BY thread_id, parent_checkpoint_id HAVING count(*) > 1)"
        ):
            meta = metadata if isinstance(metadata, dict) else None
            row = CheckpointRow(str(cid), None if parent is None else str(parent), None, b"", meta)
            trees.setdefault(str(thread), []).append(row)
        conn.rollback()
    last = {
        str(thread): _assembled(str(cid), parent, body, metadata, blobs.get(str(thread), {}))
        for thread, cid, parent, body, metadata in latest
    }
    return facts_by_thread(infos, last, pending, spaces, trees)


def namespaces(url: str, thread: str) -> list[str]:
    """The checkpoint namespaces of ``thread`` (``""``: the root graph)."""
    with connect(url) as conn:
        rows = conn.execute(
            "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = %s "
            "ORDER BY checkpoint_ns",
            (thread,),
        ).fetchall()
        conn.rollback()
    return [str(r[0]) for r in rows]


def read_thread(url: str, thread: str, ns: str) -> tuple[list[CheckpointRow], list[WriteRow]]:
    """Every checkpoint of ``thread`` (its values joined from the blobs) and
    every write, in one read-only transaction."""
    with connect(url) as conn:
        blobs: dict[tuple[str, str], tuple[str, bytes]] = {
            (str(c), str(v)): (str(t), bytes(b or b""))
            for c, v, t, b in conn.execute(
                "SELECT channel, version, type, blob FROM checkpoint_blobs "
                "WHERE thread_id = %s AND checkpoint_ns = %s",
                (thread, ns),
            )
        }
        checkpoints = []
        for cid, parent, body, metadata in conn.execute(
            "SELECT checkpoint_id, parent_checkpoint_id, checkpoint, metadata FROM checkpoints "
            "WHERE thread_id = %s AND checkpoint_ns = %s ORDER BY checkpoint_id",
            (thread, ns),
        ):
            checkpoints.append(_assembled(str(cid), parent, body, metadata, blobs))
        writes = [
            WriteRow(str(r[0]), str(r[1]), str(r[2] or ""), int(r[3]), str(r[4]), r[5], r[6])
            for r in conn.execute(
                "SELECT checkpoint_id, task_id, task_path, idx, channel, type, blob "
                "FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_ns = %s",
                (thread, ns),
            )
        ]
        conn.rollback()
    writes.sort(key=lambda w: (w.checkpoint_id, w.task_path, w.task_id, w.idx))
    return checkpoints, writes


def _assembled(
    cid: str,
    parent: Any,
    body: Any,
    metadata: Any,
    blobs: dict[tuple[str, str], tuple[str, bytes]],
) -> CheckpointRow:
    """A checkpoint with its values: the inline ones, and each channel's blob
    at the version it holds (``empty``: none)."""
    body = dict(body) if isinstance(body, dict) else {}
    values = dict(body.get("channel_values") or {})
    warnings: list[str] = []
    versions = body.get("channel_versions")
    for channel, version in versions.items() if isinstance(versions, dict) else []:
        found = blobs.get((str(channel), str(version)))
        if found is None or found[0] == "empty":
            continue
        decoded = decode_typed(found[0], found[1])
        values[str(channel)] = decoded.value
        warnings += decoded.warnings
    body["channel_values"] = values
    return CheckpointRow(
        cid,
        None if parent is None else str(parent),
        "assembled",
        b"",
        metadata if isinstance(metadata, dict) else None,
        body=body,
        warnings=tuple(warnings),
    )
