"""One thread of a LangGraph checkpointer as events.

A thread's checkpoints form a tree (a fork, ``update_state`` on an earlier
checkpoint, a replay: each starts a branch from an older checkpoint). The
run is the branch ending at the thread's latest checkpoint (what
``graph.get_state`` shows); the other branches are named where they leave
it. Events, in order, for each checkpoint of the branch: the writes that
produced it (``write``: the task, the channel, the value), then the
checkpoint (``checkpoint``: its values, versions, source and step). The
writes stored under the last checkpoint (tasks that ran from it and made
no checkpoint: an interrupt, an error, the tasks beside a failed one) come
after it, marked ``pending``.

A write is stored under the checkpoint its task ran *from*: a checkpoint
made by the loop is produced by its parent's writes; one made by
``update_state`` by its parent's writes under the update's own task ids
(``uuid5(parent, "__interrupt__")``); a fork or an input checkpoint by none.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID, uuid5

import orjson

from replay_tui.core import strict_json
from replay_tui.formats.langgraph.decode import OVERWRITE, Decoded, decode_msgpack, decode_typed
from replay_tui.formats.langgraph.store import CheckpointRow, WriteRow

#: Channels the writes under a checkpoint name for what the tasks did, not state.
SPECIAL_CHANNELS = frozenset({"__interrupt__", "__error__", "__resume__", "__no_writes__"})
_UPDATE = "__interrupt__"


def update_task_ids(checkpoint_id: str, count: int = 16) -> frozenset[str]:
    """The task ids ``update_state`` gives its writes on ``checkpoint_id``."""
    try:
        base = UUID(checkpoint_id)
    except ValueError:
        return frozenset()
    return frozenset(
        str(uuid5(base, _UPDATE if i == 0 else f"{_UPDATE}:{i}")) for i in range(count)
    )


def metadata_of(raw: bytes | str | dict[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    """A checkpoint's metadata: JSON in SQLite (JSONB in PostgreSQL, a dict)."""
    if raw is None:
        return {}, []
    if isinstance(raw, dict):
        return raw, []
    data = raw.encode() if isinstance(raw, str) else bytes(raw)
    try:
        got = orjson.loads(data)
    except orjson.JSONDecodeError:
        decoded = decode_msgpack(data)
        got, warnings = decoded.value, decoded.warnings
        return (got if isinstance(got, dict) else {"metadata": got}), warnings
    return (got if isinstance(got, dict) else {"metadata": got}), []


def _task_name(path: str, task_id: str, parent_values: dict[str, Any]) -> str:
    """The node a task ran: ``~__pregel_pull, agent`` is ``agent``; a pushed
    task (``Send``) the node its packet names; an update ``update_state``."""
    parts = [p.strip() for p in path.removeprefix("~").split(",")]
    if len(parts) >= 2 and parts[0] == "__pregel_pull":
        return parts[1]
    if len(parts) >= 2 and parts[0] == "__pregel_push":
        sends = parent_values.get("__pregel_tasks")
        try:
            packet = sends[int(parts[1])] if isinstance(sends, list) else None
        except (ValueError, IndexError):
            packet = None
        if isinstance(packet, list) and packet and isinstance(packet[0], str):
            return packet[0]
        return "send"
    if parts and parts[0] == _UPDATE:
        return "update_state"
    return f"task {task_id[:8]}" if task_id else "task"


@dataclass
class Thread:
    """A thread's rows, its branch chosen; :meth:`envelope_lines` converts it."""

    thread_id: str
    ns: str
    checkpoints: list[CheckpointRow]
    writes: list[WriteRow]
    #: The checkpoint the branch ends at (None: the thread's latest).
    tip: str | None = None
    branch: list[CheckpointRow] = field(default_factory=list)
    #: Where branches part: checkpoint id -> each branch from it (first
    #: checkpoint, newest tip, checkpoints), the run's own among them.
    forks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    sha256: str = ""

    def __post_init__(self) -> None:
        self.branch, self.forks = tree(self.checkpoints, self.tip)
        #: Format 1 keeps no task path: a task that wrote its node's own
        #: trigger channel (the node's name, as its value) is that node.
        self._node_of: dict[str, str] = {}
        self._step_of: dict[str, Any] = {}
        self._seen_of: dict[str, Any] = {}
        for w in self.writes:
            if not w.task_path and w.type == "msgpack" and w.value:
                value = decode_typed(w.type, w.value).value
                if value == w.channel:
                    self._node_of[w.task_id] = w.channel
        digest = hashlib.sha256()
        for c in self.branch:
            digest.update(orjson.dumps([c.id, c.parent, c.type]))
            digest.update(c.checkpoint)
            if c.body is not None:
                digest.update(orjson.dumps(c.body, option=orjson.OPT_SORT_KEYS))
            if isinstance(c.metadata, dict):
                digest.update(orjson.dumps(c.metadata, option=orjson.OPT_SORT_KEYS))
            elif c.metadata is not None:
                digest.update(c.metadata.encode() if isinstance(c.metadata, str) else c.metadata)
        for w in self.writes:
            digest.update(
                orjson.dumps([w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type])
            )
            digest.update(bytes(w.value or b""))
        self.sha256 = digest.hexdigest()

    @property
    def count(self) -> int:
        """Events the thread makes: its checkpoints and their writes."""
        on_branch = {c.id for c in self.branch}
        return len(self.branch) + sum(1 for w in self.writes if w.checkpoint_id in on_branch)

    def events(self) -> Iterator[dict[str, Any]]:
        """The thread's events as envelope objects (see the module)."""
        writes: dict[str, list[WriteRow]] = {}
        for w in self.writes:
            writes.setdefault(w.checkpoint_id, []).append(w)
        seq = 0
        parent_values: dict[str, Any] = {}
        previous: CheckpointRow | None = None
        for row in self.branch:
            checkpoint, warnings = self._checkpoint(row)
            if previous is None and row.parent is not None:
                warnings.append(_first_parent(row.parent, self.branch))
            metadata = checkpoint["metadata"]
            source = metadata.get("source")
            if previous is not None and source in ("loop", "update"):
                updates = update_task_ids(previous.id)
                for w in writes.get(previous.id, []):
                    if (w.task_id in updates) == (source == "update"):
                        seq += 1
                        yield self._write(seq, w, parent_values, pending=False)
            seq += 1
            self._step_of[row.id] = checkpoint.get("step")
            self._seen_of[row.id] = checkpoint.get("seen")
            yield self._event(seq, "checkpoint", checkpoint, warnings, ts=checkpoint.get("ts"))
            parent_values = checkpoint["values"]
            previous = row
        if previous is not None:
            for w in writes.get(previous.id, []):
                seq += 1
                yield self._write(seq, w, parent_values, pending=True)

    def _event(
        self, seq: int, kind: str, payload: dict[str, Any], warnings: list[str], ts: Any = None
    ) -> dict[str, Any]:
        if warnings:
            payload["warnings"] = warnings
        out: dict[str, Any] = {"seq": seq, "run_id": self.thread_id, "kind": kind}
        if isinstance(ts, str) and ts:
            out["ts"] = ts
        out["payload"] = payload
        return out

    def _checkpoint(self, row: CheckpointRow) -> tuple[dict[str, Any], list[str]]:
        out, warnings = checkpoint_payload(row)
        if row.id in self.forks:
            out["branches"] = self.forks[row.id]
        return out, warnings

    def _write(
        self, seq: int, w: WriteRow, parent_values: dict[str, Any], *, pending: bool
    ) -> dict[str, Any]:
        decoded = decode_typed(w.type, w.value)
        name = _task_name(w.task_path, w.task_id, parent_values)
        if not w.task_path and w.task_id in self._node_of:
            name = self._node_of[w.task_id]
        elif not w.task_path:
            name = (
                _v1_pull_task(
                    w.task_id,
                    w.checkpoint_id,
                    self._step_of.get(w.checkpoint_id),
                    self.ns,
                    parent_values,
                    self._seen_of.get(w.checkpoint_id),
                )
                or name
            )
        payload: dict[str, Any] = {
            "task": name,
            "task_id": w.task_id,
            "task_path": w.task_path,
            "checkpoint_id": w.checkpoint_id,
            "idx": w.idx,
            "channel": w.channel,
            "value": decoded.value,
        }
        if decoded.cls is not None:
            payload["class"] = decoded.cls
        if decoded.cls == OVERWRITE and isinstance(decoded.value, dict):
            payload["value"] = decoded.value.get("value")
            payload["overwrite"] = True
        if pending:
            payload["pending"] = True
        return self._event(seq, "write", payload, decoded.warnings)

    def envelope_lines(self, batch: int = 512) -> Iterator[bytes]:
        """Envelope lines, ``batch`` events a chunk (each chunk ends with a newline)."""
        chunk: list[bytes] = []
        for event in self.events():
            chunk.append(strict_json.dumps(event))
            if len(chunk) >= batch:
                yield b"\n".join(chunk) + b"\n"
                chunk = []
        if chunk:
            yield b"\n".join(chunk) + b"\n"


def checkpoint_payload(row: CheckpointRow) -> tuple[dict[str, Any], list[str]]:
    """A checkpoint row decoded as the ``checkpoint`` event's payload (its
    branches aside), and what decoding it said."""
    if row.body is not None:
        decoded = Decoded(row.body, None, list(row.warnings))
    else:
        decoded = decode_typed(row.type or "msgpack", row.checkpoint)
    metadata, meta_warnings = metadata_of(row.metadata)
    body = decoded.value if isinstance(decoded.value, dict) else {}
    warnings = [*decoded.warnings, *meta_warnings]
    unreadable = not isinstance(body.get("channel_values"), dict)
    if unreadable:
        warnings.append("this checkpoint's values could not be read: its step is not proved")
    values = body.get("channel_values")
    source = metadata.get("source")
    if source is not None and not isinstance(source, str):  # a damaged row
        warnings.append(
            f"this checkpoint's metadata gives source {source!r}, not the name of what made "
            "it (input, loop, update or fork): its step is not proved"
        )
        source = None
    out: dict[str, Any] = {
        "checkpoint_id": row.id,
        "parent_id": row.parent,
        "source": source,
        "step": metadata.get("step"),
        "format": body.get("v"),
        "values": values if isinstance(values, dict) else {},
        "versions": body.get("channel_versions") or {},
        "seen": body.get("versions_seen") or {},
    }
    if "ts" in body:
        out["ts"] = body["ts"]
    if body.get("updated_channels") is not None:
        out["updated"] = body["updated_channels"]
    if body.get("pending_sends"):
        out["pending_sends"] = body["pending_sends"]
    out["metadata"] = metadata
    if unreadable:
        out["unreadable"] = decoded.value
    elif source is None and metadata.get("source") is not None:
        out["unreadable"] = {"source": metadata.get("source")}
    return out, warnings


def tree(
    checkpoints: list[CheckpointRow], tip: str | None = None
) -> tuple[list[CheckpointRow], dict[str, list[dict[str, Any]]]]:
    """The branch ending at ``tip`` (None, or one not found: the latest
    checkpoint), root first, and where branches part on it: checkpoint id ->
    each branch from it (first checkpoint, newest tip, checkpoints), the
    branch's own among them."""
    if not checkpoints:
        return [], {}
    by_id = {c.id: c for c in checkpoints}
    children: dict[str | None, list[str]] = {}
    for c in checkpoints:
        children.setdefault(c.parent, []).append(c.id)
    # ids are time-ordered (uuid6): the latest checkpoint, unless a fork's is asked
    chain = []
    seen: set[str] = set()
    node: CheckpointRow | None = by_id[tip if tip in by_id else max(by_id)]
    while node is not None and node.id not in seen:
        seen.add(node.id)
        chain.append(node)
        node = by_id.get(node.parent) if node.parent else None
    branch = chain[::-1]
    forks = {}
    for c in branch:
        below = sorted(children.get(c.id, []))
        if len(below) > 1:  # every branch from here, the run's too: alike on each
            forks[c.id] = [_fork(child, children) for child in below]
    return branch, forks


def _v1_pull_task(
    task_id: str, checkpoint_id: str, step: Any, ns: str, values: dict[str, Any], seen: Any
) -> str | None:
    """The node of a format-1 task (no task path kept) whose id matches
    LangGraph's: ``sha1(checkpoint id bytes, ns|node, step + 1, node,
    "__pregel_pull", *triggers)``, tried for each node and trigger the
    checkpoint names (a task that wrote nothing else, as one that raised)."""
    if type(step) is not int:
        return None
    try:
        base = bytes.fromhex(checkpoint_id.replace("-", ""))
    except ValueError:
        return None
    channels = sorted(
        set(values) | {c for s in (seen or {}).values() if isinstance(s, dict) for c in s}
    )
    nodes = {c.rsplit(":", 1)[-1] for c in channels if c.startswith(("start:", "branch:"))}
    nodes |= {n for n in (seen or {}) if not n.startswith("__")} | {
        c for c in channels if ":" not in c and not c.startswith("__")
    }
    for node in sorted(nodes):
        where = f"{ns}|{node}" if ns else node
        for triggers in [(c,) for c in channels] + [(node,)]:
            sha = hashlib.sha1(base, usedforsecurity=False)
            sha.update("".join((where, str(step + 1), node, "__pregel_pull", *triggers)).encode())
            hexed = sha.hexdigest()
            if f"{hexed[:8]}-{hexed[8:12]}-{hexed[12:16]}-{hexed[16:20]}-{hexed[20:32]}" == task_id:
                return node
    return None


def _first_parent(parent: str, branch: list[CheckpointRow]) -> str:
    """What a finding says of the first checkpoint of a branch that names a
    parent: the branch starts there for a reason the table gives wrong."""
    if any(c.id == parent for c in branch):
        return (
            f"the parent ids loop: this checkpoint's parent {parent!r} comes after it on this "
            "branch, so the thread's history before it cannot be told"
        )
    return (
        f"this checkpoint's parent {parent!r} is not in the thread: what came before it is "
        "missing, and the run starts here"
    )


def _fork(start: str, children: dict[str | None, list[str]]) -> dict[str, Any]:
    """A branch leaving the run at ``start``: its first checkpoint, its
    newest tip and how many checkpoints it holds."""
    count, stack, tip = 0, [start], start
    seen: set[str] = set()
    while stack:
        node = stack.pop()
        if node in seen:  # parent ids that loop (a damaged table): each counted once
            continue
        seen.add(node)
        count += 1
        tip = max(tip, node)
        stack.extend(children.get(node, []))
    return {"first": start, "tip": tip, "checkpoints": count}


def load_thread(database: Path | str, thread: str, ns: str = "", tip: str | None = None) -> Thread:
    """Read ``thread`` of ``database`` (a SQLite file, :mod:`.sqlite`, or a
    ``postgresql://`` URL, :mod:`.postgres`): the branch ending at ``tip``
    (None: at its latest checkpoint)."""
    if isinstance(database, str):
        from replay_tui.formats.langgraph import postgres

        checkpoints, writes = postgres.read_thread(database, thread, ns)
        return Thread(thread, ns, checkpoints, writes, tip)
    from replay_tui.formats.langgraph.sqlite import read_thread

    checkpoints, writes = read_thread(database, thread, ns)
    return Thread(thread, ns, checkpoints, writes, tip)
