"""The threads of a LangGraph database as the picker lists them: id,
checkpoints, last step, when it was last written, status (done,
interrupted, failed, paused: nodes still to run), its forks (branches that
leave the run) and its subgraphs' namespaces, each of which opens as a run
of its own."""

from __future__ import annotations

from dataclasses import dataclass, field

from replay_tui.formats.langgraph.source import Database, list_namespaces, list_threads, shown
from replay_tui.formats.langgraph.store import thread_run
from replay_tui.formats.langgraph.thread import load_thread
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
    """Every thread of ``database`` (root namespace), newest first."""
    name = str(database)  # as RUN arguments name it (a URL with what connects it)
    rows = []
    for info in list_threads(database):
        thread = load_thread(database, info.thread_id)
        events = list(thread.events())
        checkpoints = [e["payload"] for e in events if e["kind"] == "checkpoint"]
        pending = [
            e["payload"] for e in events if e["kind"] == "write" and e["payload"].get("pending")
        ]
        last = checkpoints[-1] if checkpoints else {}
        channels = {w.get("channel") for w in pending}
        if "__error__" in channels:
            status = "failed"
        elif "__interrupt__" in channels:
            status = "interrupted"
        elif last and next_nodes(last):
            status = "paused"
        else:
            status = "done"
        forks = []
        for where in checkpoints:
            for branch in where.get("branches") or []:
                if branch["first"] in {c["checkpoint_id"] for c in checkpoints}:
                    continue
                forks.append(
                    Fork(
                        thread_run(name, info.thread_id, tip=branch["tip"]),
                        where.get("step"),
                        branch["checkpoints"],
                    )
                )
        rows.append(
            ThreadRow(
                thread_run(name, info.thread_id),
                info.thread_id,
                info.checkpoints,
                last.get("step"),
                str(last.get("ts") or ""),
                status,
                forks,
                [
                    Fork(thread_run(name, info.thread_id, ns), None, 0, ns)
                    for ns in (
                        list_namespaces(database, info.thread_id) if info.namespaces > 1 else []
                    )
                    if ns
                ],
            )
        )
    return rows


__all__ = ["Fork", "ThreadRow", "shown", "thread_rows"]
