"""Sub-agents: which calls of a session have their own transcript on disk,
and where: a Claude Code ``Task`` call's (``formats.sessions.
subagent_transcript``), a Codex ``spawn_agent`` call's thread (its rollout,
in the same store: :func:`rollout_of`).

The rules record a ``Task`` call's agent id once its result names it
(``agents.<call_id>.agent_id``); this looks it up in the state after the
validated prefix, so a request row learns of its transcript once the
result is read (while the run is still being proved, in the last state
kept before it). Looked up again only when that state is another.

A LangGraph node that is a compiled subgraph checkpoints under the namespace
``NODE:TASK_ID`` (below a subgraph's own namespace ``NS``:
``NS|NODE:TASK_ID``), opened as a run of its own (``t``, as a sub-agent's
transcript is): :func:`subgraph_runs`. A write names its task (``task``,
``task_id``), so the write rows of the task that ran a subgraph lead to it;
a checkpoint row leads to the subgraphs of the tasks whose writes made it
(the writes just before it), or else, at the thread's latest checkpoint, of
the tasks still pending from it (its pending writes just after it).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

import orjson

from replay_tui.engine.replay import Replay
from replay_tui.formats.envelope import Event
from replay_tui.formats.langgraph.source import LANGGRAPH, list_namespaces
from replay_tui.formats.langgraph.store import thread_run
from replay_tui.formats.sessions import CLAUDE_CODE, CODEX, subagent_transcript


class SubAgents:
    """The transcripts of a Claude Code session's sub-agents, by call id."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        self._known: tuple[int, dict[str, Path]] = (-1, {})

    def transcripts(self) -> dict[str, Path]:
        """Call id -> the sub-agent's transcript (Claude Code) or the spawned
        thread's rollout (Codex ``spawn_agent``, in the same store)."""
        r = self.replay
        if r.paths.format not in (CLAUDE_CODE, CODEX) or r.history is None or r.valid <= 0:
            return {}
        n = r.valid
        if not r.finished:
            # while the run is proved: the last state kept, not the state at
            # the prefix (made again each time it grew: the rules run over
            # hundreds of events for every row drawn, a twentieth of the
            # app's time opening a session); a request row is made again
            # until the proof is done, so it learns of its transcript then
            kept, _ = r.history.last_kept()
            if 0 < kept <= n:
                n = kept
        if self._known[0] != n:
            agents = r.frozen_at(n).get("agents")
            found: dict[str, Path] = {}
            for call_id, agent in agents.items() if isinstance(agents, Mapping) else ():
                agent_id = agent.get("agent_id") if isinstance(agent, Mapping) else None
                if not isinstance(agent_id, str):
                    continue
                if r.paths.format == CODEX:
                    path = rollout_of(r.paths.events, agent_id)
                else:
                    path = subagent_transcript(r.paths.events, agent_id)
                if path is not None:
                    found[str(call_id)] = path
            self._known = (n, found)
        return self._known[1]

    def at(self, event: Event | None) -> Path | None:
        """The transcript of the sub-agent this event calls or answers, if on disk."""
        if event is None or not event.call_id:
            return None
        return self.transcripts().get(event.call_id)

    def origin(self, event: Event | None) -> Path | None:
        """A Codex rollout's ``session_meta``: the rollout it was forked from,
        or the thread that spawned it, if that file is on disk beside it."""
        r = self.replay
        if event is None or r.paths.format != CODEX or event.kind != "session_meta":
            return None
        if r.history is None or r.valid <= 0:
            return None
        session = r.frozen_at(min(event.seq, r.valid)).get("session")
        if not isinstance(session, Mapping):
            return None
        for key in ("forked_from", "parent_thread"):
            thread = session.get(key)
            if isinstance(thread, str):
                found = rollout_of(r.paths.events, thread)
                if found is not None:
                    return found
        return None


#: The most read of a sub-agent's ``.meta.json``.
_META_BYTES = 64 << 10


def meta_words(transcript: Path) -> str:
    """What ``agent-<id>.meta.json`` beside a sub-agent's transcript says
    (Claude Code 2.x writes one: the agent's type, its model, ...), as its
    scalar fields, ``key=value``; empty where there is none. Read as a
    receipt: a regular file, no symlink, a few KB."""
    meta = transcript.with_suffix(".meta.json")
    try:
        info = os.lstat(meta)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _META_BYTES:
            return ""
        data = orjson.loads(meta.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return ""
    if not isinstance(data, dict):
        return ""
    said = [f"{k}={v}" for k, v in data.items() if isinstance(v, str | int | float | bool)]
    return " ".join(said[:4])


#: Rollouts looked at, at most, to find another thread's.
_LOOKED = 20_000
_THREAD = re.compile(r"[0-9A-Za-z-]{8,64}\Z")


def rollout_of(near: Path, thread: str) -> Path | None:
    """The rollout of Codex thread ``thread`` in the store ``near`` is in
    (``sessions/YYYY/MM/DD/rollout-*-<thread>.jsonl``, or its archive)."""
    if not _THREAD.match(thread):
        return None
    here = near.resolve()
    parents = here.parents
    if len(parents) > 3 and parents[3].name == "sessions":
        home = parents[4]
    elif here.parent.name == "archived_sessions":
        home = here.parent.parent
    else:
        return None  # not in a Codex store: nothing to search (never a whole home)
    looked = 0
    for folder in (home / "sessions", home / "archived_sessions"):
        if not folder.is_dir():
            continue
        for path in folder.rglob(f"rollout-*{thread}.jsonl"):
            if path.is_file() and not path.is_symlink() and path.resolve() != here:
                return path
            looked += 1
            if looked > _LOOKED:
                return None
    return None


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
