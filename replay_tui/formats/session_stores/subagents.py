"""Where a Claude Code session's sub-agents wrote their transcripts: in
``<session-id>/subagents/`` (2.x), or beside the session as
``agent-*.jsonl`` naming its ``sessionId`` (1.x)."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from replay_tui.core import strict_json
from replay_tui.formats.sessions import run_id_of

#: Lines of a sub-agent's transcript read, at most, to find its session id.
_HEAD_LINES = 16


class SubagentIndex:
    """The sub-agents' transcripts written beside sessions (Claude Code 1.x:
    ``agent-*.jsonl`` in the project folder), by folder and session id; each
    folder's are looked at once, by their first records' ``sessionId``."""

    def __init__(self) -> None:
        self._folders: dict[Path, dict[str, list[Path]]] = {}

    def beside(self, folder: Path, session_id: str) -> list[Path]:
        known = self._folders.get(folder)
        if known is None:
            known = self._folders[folder] = {}
            try:
                names = sorted(n for n in os.listdir(folder) if _is_agent_file(n))
            except OSError:
                names = []
            for name in names:
                sid = _session_id_of(folder / name)
                if sid is not None:
                    known.setdefault(sid, []).append(folder / name)
        return known.get(session_id, [])


def _is_agent_file(name: str) -> bool:
    return name.startswith("agent-") and name.endswith(".jsonl")


def _session_id_of(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            for _, raw in zip(range(_HEAD_LINES), f, strict=False):
                try:
                    rec = strict_json.loads_written(raw)
                except orjson.JSONDecodeError:
                    continue
                if type(rec) is dict and isinstance(rec.get("sessionId"), str):
                    return str(rec["sessionId"])
    except OSError:
        return None
    return None


def subagent_files(session: Path, session_id: str | None, index: SubagentIndex) -> list[Path]:
    """A Claude Code session's sub-agent transcripts: every
    ``<session-id>/subagents/agent-*.jsonl`` (2.x), then the ``agent-*.jsonl``
    beside it whose records name its session id (1.x); one per agent (file
    name), the 2.x one first."""
    found: dict[str, Path] = {}
    folder = session.parent / run_id_of(session) / "subagents"
    try:
        names = sorted(n for n in os.listdir(folder) if _is_agent_file(n))
    except OSError:
        names = []
    for name in names:
        if (folder / name).is_file():
            found[name] = folder / name
    if session_id is not None and not _is_agent_file(session.name):
        for path in index.beside(session.parent, session_id):
            found.setdefault(path.name, path)
    return list(found.values())
