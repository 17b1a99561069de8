"""The threads of a LangGraph database as the picker lists them: id,
checkpoints, last step, when it was last written, status (done,
interrupted, failed, paused: nodes still to run), its forks (branches that
leave the run) and its subgraphs' namespaces, each of which opens as a run
of its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replay_tui.formats.langgraph import postgres, sqlite
from replay_tui.formats.langgraph.source import Database, shown
from replay_tui.formats.langgraph.store import ThreadFacts, thread_run
from replay_tui.formats.langgraph.thread import checkpoint_payload, metadata_of, tree
from replay_tui.formats.langgraph.triggers import next_nodes


@dataclass(frozen=True, slots=True)
class Fork:
    """A branch leaving a thread's run (where it leaves, what it holds), or
    a subgraph's namespace of the thread (``ns``)."""

    run: str
    step: object
    checkpoints: int
    ns: str = ""

    @property
    def label(self) -> str:
        if self.ns:
            return f"subgraph {self.ns}"
        said = "checkpoint" if self.checkpoints == 1 else "checkpoints"
        return f"fork from step {self.step}: {self.checkpoints} {said}"


@dataclass(frozen=True, slots=True)
class ThreadRow:
    """One thread of the picker."""

    run: str
    thread_id: str
    checkpoints: int
    last_step: object
    last_ts: str
    status: str
    forks: list[Fork] = field(default_factory=list)
    #: The thread's subgraphs (namespaces other than the root's).
    subgraphs: list[Fork] = field(default_factory=list)


def thread_rows(database: Database) -> list[ThreadRow]:
    """Every thread of ``database`` (root namespace), newest first.

    What SQL can answer, a few queries for the whole database (counts,
    namespaces, the tree of a thread that forks); the only checkpoint
    decoded is each thread's latest, for its step, time and what it will
    run next, and of the writes under it only their channels are read: an
    error means failed, an interrupt interrupted. A full decode of every
    thread gives the same rows, at a cost that grows with the threads'
    length."""
    name = str(database)  # as RUN arguments name it (a URL with what connects it)
    facts = (
        postgres.thread_facts(database)
        if isinstance(database, str)
        else sqlite.thread_facts(database)
    )
    return [_row(name, f) for f in facts]


def _row(name: str, facts: ThreadFacts) -> ThreadRow:
    thread_id = facts.info.thread_id
    last: dict[str, Any] = checkpoint_payload(facts.last)[0] if facts.last is not None else {}
    if "__error__" in facts.pending_channels:
        status = "failed"
    elif "__interrupt__" in facts.pending_channels:
        status = "interrupted"
    elif last and next_nodes(last):
        status = "paused"
    else:
        status = "done"
    forks = []
    branch, parting = tree(list(facts.tree))
    for where in branch:
        own = {c.id for c in branch}
        for part in parting.get(where.id, []):
            if part["first"] in own:
                continue
            step = metadata_of(where.metadata)[0].get("step")
            forks.append(
                Fork(thread_run(name, thread_id, tip=part["tip"]), step, part["checkpoints"])
            )
    return ThreadRow(
        thread_run(name, thread_id),
        thread_id,
        facts.info.checkpoints,
        last.get("step"),
        str(last.get("ts") or ""),
        status,
        forks,
        [Fork(thread_run(name, thread_id, ns), None, 0, ns) for ns in facts.namespaces],
    )


__all__ = ["Fork", "ThreadRow", "shown", "thread_rows"]
