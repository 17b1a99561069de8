"""Tool results Claude Code keeps beside the session, not in it.

Since Claude Code 2.1.2 a tool result over about 50K characters is saved to
``<session-id>/tool-results/<tool_use_id>.txt`` next to the transcript, and
the transcript's ``tool_result`` holds a ``<persisted-output>`` block: the
size, the absolute path the file had on the machine that wrote it, and a
preview of its first 2 KB. The preview is not the result.

The recorded path is from another machine (or another home); what it names
is found again relative to the session file: ``<project>/<session-id>.jsonl``
keeps its results in ``<project>/<session-id>/tool-results/``, and a
sub-agent's transcript ``<session-id>/subagents/agent-*.jsonl`` in
``<session-id>/tool-results/``. It is read as receipts are: a regular file
in that folder, opened without following a symlink (neither the folder nor
the file), never written, at most :data:`MAX_BYTES`.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path
from typing import Any

from replay_tui.formats.receipts import (  # opened as receipts are
    O_CLOEXEC,
    O_DIRECTORY,
    O_NOFOLLOW,
    O_NONBLOCK,
)

#: What a ``<persisted-output>`` block says: the size, and where it was saved.
_BLOCK = re.compile(
    r"<persisted-output>\s*Output too large \(([^)\n]*)\)\.\s*Full output saved to:\s*([^\n]+)"
)
#: A file name Claude Code gives a saved result (a tool_use id and ``.txt``).
_NAME = re.compile(r"[A-Za-z0-9._-]{1,200}\Z")
#: The most read of one saved result.
MAX_BYTES = 64 << 20


def persisted_block(text: str) -> tuple[str, str] | None:
    """(the size as recorded, the recorded path) of a ``<persisted-output>``
    result, or None if ``text`` is not one."""
    if "<persisted-output>" not in text[:64]:
        return None
    found = _BLOCK.search(text)
    return (found.group(1), found.group(2).strip()) if found else None


def _parts(recorded: str) -> tuple[str, str] | None:
    """(session id, file name) from a recorded ``.../<sid>/tool-results/<name>``."""
    parts = [p for p in re.split(r"[\\/]", recorded) if p]
    if len(parts) < 3 or parts[-2] != "tool-results":
        return None
    sid, name = parts[-3], parts[-1]
    if not _NAME.match(name) or not _NAME.match(sid) or name.startswith(".") or sid.startswith("."):
        return None  # never ".." or a hidden name: only a session's own folder
    return sid, name


def _folder(session: Path, sid: str) -> Path | None:
    """The session's own folder (``<sid>/``) beside the transcript, or the
    one a sub-agent's transcript sits in."""
    here = session.parent
    for candidate in (here / sid, here.parent if here.name == "subagents" else None):
        if candidate is not None and candidate.name == sid:
            with contextlib.suppress(OSError):
                if stat.S_ISDIR(os.lstat(candidate).st_mode):  # not through a symlink
                    return candidate
    return None


def read_persisted(session: Path, text: str) -> dict[str, Any] | None:
    """What a ``<persisted-output>`` result stands for: ``{"file", "size",
    "bytes", "text"}`` when the saved file is on disk beside ``session``,
    else ``{"file", "size", "missing"}``; None if ``text`` is not one."""
    block = persisted_block(text)
    if block is None:
        return None
    size, recorded = block
    parts = _parts(recorded)
    if parts is None:
        return {
            "file": recorded,
            "size": size,
            "missing": "its recorded path names no saved result",
        }
    sid, name = parts
    shown = f"{sid}/tool-results/{name}"
    folder = _folder(session, sid)
    if folder is None:
        why = f"{sid}/ is not beside the session: the tool_result holds its preview only"
        return {"file": shown, "size": size, "missing": why}
    data, why = _read(folder / "tool-results", name)
    if data is None:
        return {
            "file": shown,
            "size": size,
            "missing": f"{why}: the tool_result holds its preview only",
        }
    return {
        "file": shown,
        "size": size,
        "bytes": len(data),
        "text": data.decode("utf-8", errors="replace"),
    }


def _read(folder: Path, name: str) -> tuple[bytes | None, str]:
    """The bytes of ``folder/name`` (a regular file, no symlink on the
    way from ``folder``), or None and why not."""
    try:
        dir_fd = os.open(folder, os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    except OSError:
        return None, "its tool-results folder is not there (or is a symlink)"
    try:
        try:
            fd = os.open(name, os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, dir_fd=dir_fd)
        except OSError:
            return None, f"tool-results/{name} is not on disk (or is a symlink)"
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None, f"tool-results/{name} is not a regular file"
            if info.st_size > MAX_BYTES:
                return None, f"tool-results/{name} is over {MAX_BYTES >> 20} MiB"
            chunks, got = [], 0
            while got <= MAX_BYTES and (chunk := os.read(fd, 1 << 20)):
                chunks.append(chunk)
                got += len(chunk)
            if got > MAX_BYTES:  # it grew while read
                return None, f"tool-results/{name} is over {MAX_BYTES >> 20} MiB"
            return b"".join(chunks), ""
        finally:
            os.close(fd)
    finally:
        os.close(dir_fd)
