"""Subgraphs of a LangGraph thread: the namespace a task's subgraph kept its
checkpoints in, opened as a run of its own (``t``, as a sub-agent's
transcript is).

A node that is a compiled subgraph checkpoints under the namespace
``NODE:TASK_ID`` (below a subgraph's own namespace ``NS``:
``NS|NODE:TASK_ID``). A write names its task (``task``, ``task_id``), so
the write rows of the task that ran a subgraph lead to it; a checkpoint
row leads to the subgraphs of the tasks whose writes made it (the writes
just before it), or else, at the thread's latest checkpoint, of the tasks
still pending from it (its pending writes just after it).
"""

from __future__ import annotations

from replay_tui.engine.replay import Replay
from replay_tui.formats.envelope import Event
from replay_tui.formats.langgraph.source import LANGGRAPH, list_namespaces
from replay_tui.formats.langgraph.store import thread_run

#: The most rows looked at around a checkpoint for its superstep's writes.
_SUPERSTEP_ROWS = 10_000


def subgraph_runs(replay: Replay, event: Event | None) -> list[str]:
    """The RUN arguments (``DB#thread=ID&ns=NS``) of the subgraphs the task
    at ``event`` ran, in the order their tasks wrote (empty: none)."""
    paths = replay.paths
    if event is None or paths.format != LANGGRAPH or paths.thread is None:
        return []
    tasks = _tasks_at(replay, event)
    if not tasks:
        return []
    database = paths.url or paths.events
    prefix = f"{paths.ns}|" if paths.ns else ""
    children = set(list_namespaces(database, paths.thread))
    found = [f"{prefix}{name}:{task_id}" for name, task_id in tasks]
    return [
        thread_run(str(database), paths.thread, ns) for ns in dict.fromkeys(found) if ns in children
    ]


def _tasks_at(replay: Replay, event: Event) -> list[tuple[str, str]]:
    """(task name, task id) of the tasks ``event`` belongs to (see the module)."""
    if event.kind == "write":
        got = _task(event)
        return [got] if got is not None else []
    if event.kind != "checkpoint":
        return []
    index = event.seq - 1
    before = [t for e in _writes(replay, index, -1) if (t := _task(e)) is not None]
    if before:
        return before[::-1]
    return [
        t
        for e in _writes(replay, index, 1)
        if e.payload.get("pending") and (t := _task(e)) is not None
    ]


def _writes(replay: Replay, index: int, step: int) -> list[Event]:
    """The write rows next to line ``index``, going ``step`` (up to the
    checkpoint before or after)."""
    out: list[Event] = []
    at = index + step
    while 0 <= at < replay.valid and len(out) < _SUPERSTEP_ROWS:
        e = replay.event(at)
        if not isinstance(e, Event) or e.kind != "write":
            break
        out.append(e)
        at += step
    return out


def _task(event: Event) -> tuple[str, str] | None:
    name, task_id = event.payload.get("task"), event.payload.get("task_id")
    if isinstance(name, str) and isinstance(task_id, str):
        return name, task_id
    return None
