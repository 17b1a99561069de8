"""Gemini CLI's store: ``$GEMINI_CLI_HOME/.gemini/tmp`` (default
``~/.gemini/tmp``), a folder per project (``<project>/chats/``), a session
per ``session-<time>-<id8>.jsonl`` (``.json``: the older form, before 0.39).

A newer Gemini CLI that resumes an older session writes it again as
``.jsonl`` beside the ``.json`` and leaves the ``.json`` in place: the two
are one session, listed once (as its ``.jsonl``). Its project is where the
session ran (the ``directories`` of its metadata, else the workspace the
CLI wrote into its first message, else the project folder's name); its
first prompt the first user message that is not the CLI's own context.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from replay_tui.formats.gemini.document import is_document
from replay_tui.formats.gemini.records import content_text, function_responses, record_kind

#: The part of a session's file name that names it: ``session-<time>-<id8>``.
_NAME = re.compile(r"\Asession-.*-([0-9a-fA-F]{8})\.jsonl?\Z")
#: What Gemini CLI writes into the first user message about where it runs.
_WORKSPACE = re.compile(r"Workspace Directories:\*\*\s*\n\s*-\s*(\S[^\n]*)")
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*("(?:[^"\\]|\\.)*")')
#: The CLI's own context, written as the user's first message.
_CONTEXT = "<session_context>"


def _entries(folder: Path, notes: list[str]) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        notes.append(f"{folder}: cannot look in it: {exc.strerror or exc}")
        return []


def gemini_files(store: Path, notes: list[str]) -> Iterator[Path]:
    """``<project>/chats/session-*.jsonl`` and ``session-*.json``; a ``.json``
    with a ``.jsonl`` of the same session beside it is that session's
    older copy, passed over."""
    for project in _entries(store, notes):
        try:
            if not project.is_dir():
                continue
        except OSError:
            continue
        chats = Path(project.path) / "chats"
        names = [
            e
            for e in _entries(chats, notes)
            if e.name.startswith("session-") and e.name.endswith((".jsonl", ".json"))
        ]
        lines = {
            m.group(1).lower()
            for e in names
            if e.name.endswith(".jsonl") and (m := _NAME.match(e.name)) is not None
        }
        for entry in names:
            found = _NAME.match(entry.name)
            if entry.name.endswith(".json") and found and found.group(1).lower() in lines:
                continue  # migrated: the .jsonl beside it is this session
            yield Path(entry.path)


def _prompt(rec: Any) -> str | None:
    """The text of a user message the user typed, else None."""
    if type(rec) is not dict or rec.get("type") != "user":
        return None
    if function_responses(rec.get("content")):
        return None
    text = content_text(rec.get("content"))
    if not text.strip() or text.lstrip().startswith(_CONTEXT):
        return None
    return text


def _workspace(rec: Any) -> str | None:
    if type(rec) is not dict or rec.get("type") != "user":
        return None
    found = _WORKSPACE.search(content_text(rec.get("content"))[:65536])
    return found.group(1).strip() if found else None


class GeminiHead:
    """What a Gemini CLI session's first bytes say: its id, project, first
    prompt, and the first problem seen (the whole file given for the older
    form, if it is all in ``head``)."""

    def __init__(self, head: bytes, path: Path, complete: bool) -> None:
        self.session_id: str | None = None
        self.project: str | None = None
        self.prompt: str | None = None
        self.problem: str | None = None
        if is_document(head):
            self._document(head, complete)
        else:
            self._lines(head)
        if self.project is None:
            self.project = path.parent.parent.name or None

    def _take(self, rec: Any) -> None:
        if type(rec) is not dict:
            return
        if self.session_id is None and type(rec.get("sessionId")) is str:
            self.session_id = rec["sessionId"]
        dirs = rec.get("directories")
        if self.project is None and type(dirs) is list and dirs and type(dirs[0]) is str:
            self.project = dirs[0]
        listed = rec.get("messages")
        if type(listed) is list:
            for msg in listed:
                self._take(msg)
        if self.project is None:
            self.project = _workspace(rec)
        if self.prompt is None:
            self.prompt = _prompt(rec)

    def _lines(self, head: bytes) -> None:
        lines = head.removeprefix(b"\xef\xbb\xbf").split(b"\n")[:-1]
        for number, raw in enumerate(lines[:256], 1):
            if not raw.strip():
                continue
            try:
                rec = orjson.loads(raw)
            except orjson.JSONDecodeError:
                if self.problem is None:
                    self.problem = f"line {number} is not JSON (Gemini CLI skips it)"
                continue
            if type(rec) is dict and record_kind(rec) == "snapshot":
                rec = {"messages": rec["$set"]["messages"]}
            self._take(rec)
            if self.session_id and self.prompt is not None and self.project is not None:
                return

    def _document(self, head: bytes, complete: bool) -> None:
        if not complete:
            found = _SESSION_ID.search(head)
            if found:
                with contextlib.suppress(orjson.JSONDecodeError):
                    self.session_id = orjson.loads(found.group(1))
            return
        try:
            doc = orjson.loads(head.removeprefix(b"\xef\xbb\xbf"))
        except orjson.JSONDecodeError as exc:
            self.problem = f"the session document is not JSON ({exc})"
            return
        self._take(doc)
