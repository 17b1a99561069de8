"""What a LangGraph checkpointer stores, whatever the database: its rows as
plain records (:class:`CheckpointRow`, :class:`WriteRow`, :class:`ThreadInfo`),
and how a thread is named in a RUN argument (``DB#thread=ID&ns=NS``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

FORMAT = "langgraph"
#: Between a database and the thread it names in a RUN argument.
THREAD_MARK = "#thread="


@dataclass(frozen=True, slots=True)
class CheckpointRow:
    """One row of ``checkpoints``: the checkpoint still encoded."""

    id: str
    parent: str | None
    type: str | None
    checkpoint: bytes
    metadata: bytes | str | dict[str, Any] | None
    #: Already decoded (PostgreSQL: JSONB with its blobs joined), else None.
    body: dict[str, Any] | None = None
    #: What decoding its blobs said.
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class WriteRow:
    """One row of ``writes`` (``checkpoint_writes`` in PostgreSQL): a value a
    task wrote to a channel, stored under the checkpoint the task ran from."""

    checkpoint_id: str
    task_id: str
    task_path: str
    idx: int
    channel: str
    type: str | None
    value: bytes | None


@dataclass(frozen=True, slots=True)
class ThreadInfo:
    """A thread as the picker and ``check DB`` list it."""

    thread_id: str
    checkpoints: int
    last_id: str
    namespaces: int


def thread_run(database: str, thread: str, ns: str = "", tip: str | None = None) -> str:
    """The RUN argument naming ``thread`` (in namespace ``ns``) of ``database``;
    ``tip``: the branch ending at that checkpoint (a fork), not the latest."""
    query = {"thread": thread}
    if ns:
        query["ns"] = ns
    if tip:
        query["tip"] = tip
    return database + "#" + urlencode(query, quote_via=quote, safe="")


def split_thread(arg: str) -> tuple[str, str | None, str | None, str | None]:
    """``DB#thread=ID&ns=NS&tip=CHECKPOINT`` as (DB, ID, NS, TIP); anything
    else as (arg, None, None, None)."""
    head, mark, tail = arg.rpartition(THREAD_MARK)
    if not mark or not head:
        return arg, None, None, None
    fields = dict(parse_qsl("thread=" + tail, keep_blank_values=True))
    return head, fields.get("thread"), fields.get("ns"), fields.get("tip")


@dataclass(frozen=True, slots=True)
class ThreadFacts:
    """What the picker lists of a thread, as SQL gives it without decoding
    the thread: its counts, its latest checkpoint (root namespace) still
    encoded, the channels of the writes stored under that one, its other
    namespaces, and (only for a thread whose checkpoints fork) every
    checkpoint's id, parent and metadata, its values left out."""

    info: ThreadInfo
    last: CheckpointRow | None
    pending_channels: frozenset[str]
    namespaces: tuple[str, ...]
    tree: tuple[CheckpointRow, ...] = ()


#: Every thread's subgraph namespaces: the same SQL for SQLite and PostgreSQL.
SUBGRAPH_NAMESPACES = (
    "SELECT DISTINCT thread_id, checkpoint_ns FROM checkpoints WHERE checkpoint_ns != '' "
    "ORDER BY thread_id, checkpoint_ns"
)


def by_thread(rows: Iterable[tuple[Any, Any]]) -> dict[str, list[Any]]:
    """``(thread, value)`` rows as each thread's values, in their order."""
    out: dict[str, list[Any]] = {}
    for thread, value in rows:
        out.setdefault(str(thread), []).append(value)
    return out


def facts_by_thread(
    infos: Iterable[ThreadInfo],
    last: Mapping[str, CheckpointRow],
    pending: Mapping[str, list[Any]],
    spaces: Mapping[str, list[Any]],
    trees: Mapping[str, list[CheckpointRow]],
) -> list[ThreadFacts]:
    """Each thread's facts from what a store's listing queries gave, by thread."""
    return [
        ThreadFacts(
            info,
            last.get(info.thread_id),
            frozenset(map(str, pending.get(info.thread_id, ()))),
            tuple(map(str, spaces.get(info.thread_id, ()))),
            tuple(trees.get(info.thread_id, ())),
        )
        for info in infos
    ]
