"""The threads picker's rows made the slow way, by decoding every thread
whole (as the listing did before it asked SQL): the truth the listing is
compared with in the tests, and its cost in benchmarks/bench_thread_listing.py."""

from __future__ import annotations

from replay_tui.formats.langgraph.listing import Fork, ThreadRow
from replay_tui.formats.langgraph.source import Database, list_namespaces, list_threads
from replay_tui.formats.langgraph.store import thread_run
from replay_tui.formats.langgraph.thread import load_thread
from replay_tui.formats.langgraph.triggers import next_nodes


def decoded_thread_rows(database: Database) -> list[ThreadRow]:
    """Every thread of ``database`` (root namespace), newest first, each
    read and decoded in full: its events give the rows' columns."""
    name = str(database)
    rows = []
    for info in list_threads(database):
        events = list(load_thread(database, info.thread_id).events())
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
        on_branch = {c["checkpoint_id"] for c in checkpoints}
        forks = [
            Fork(
                thread_run(name, info.thread_id, tip=branch["tip"]),
                where.get("step"),
                branch["checkpoints"],
            )
            for where in checkpoints
            for branch in where.get("branches") or []
            if branch["first"] not in on_branch
        ]
        spaces = list_namespaces(database, info.thread_id) if info.namespaces > 1 else []
        rows.append(
            ThreadRow(
                thread_run(name, info.thread_id),
                info.thread_id,
                info.checkpoints,
                last.get("step"),
                str(last.get("ts") or ""),
                status,
                forks,
                [Fork(thread_run(name, info.thread_id, ns), None, 0, ns) for ns in spaces if ns],
            )
        )
    return rows
