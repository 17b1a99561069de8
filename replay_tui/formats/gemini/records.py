"""What a Gemini CLI session's records are, read as Gemini CLI reads them.

Gemini CLI (0.39 and later) writes a session to
``~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl``, one JSON value a
line, appended while it works. Its loader (``loadConversationRecord`` in
``@google/gemini-cli-core``) reads every line and sorts it, in this order:

- ``{"$rewindTo": id}`` (a string): a rewind (``/rewind``);
- a record with a string ``id``: a message (``type``: ``user``, ``gemini``,
  ``info``, ``error``, ``warning``), written again whole each time it changes;
- ``{"$set": {...}}`` (any object): a metadata update; with a ``messages``
  list, a whole snapshot of the conversation;
- a record with string ``sessionId`` and ``projectHash``: session metadata
  (one first, another on each resume; each merged over the one before);
- anything else (another JSON value, a line that does not parse): skipped.

:func:`record_kind` names each line the same way; :func:`gemini_format_of_head`
tells such a file from its first lines; :func:`looks_like_gemini_json` tells
the older single-document form (``session-*.json``, before 0.39).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

#: The message types Gemini CLI writes.
MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
#: Kinds of lines besides the messages' own types.
SESSION = "session"
SET = "set"
SNAPSHOT = "snapshot"
REWIND = "rewind"
#: A message of a type Gemini CLI does not write (yet): loaded as any message.
MESSAGE = "message"
#: A user message that only answers tool calls (``functionResponse`` parts).
TOOL_RESULT = "tool_result"
#: A line Gemini CLI's loader skips: not JSON, or JSON it does not use.
UNREADABLE = "unreadable"
IGNORED = "ignored"
KINDS = frozenset(
    {SESSION, SET, SNAPSHOT, REWIND, MESSAGE, TOOL_RESULT, UNREADABLE, IGNORED} | MESSAGE_TYPES
)

#: The token counts a ``gemini`` message carries, as Gemini CLI names them.
TOKEN_FIELDS = ("input", "output", "cached", "thoughts", "tool", "total")
#: The session's metadata as the loader returns it.
META_FIELDS = (
    "sessionId",
    "projectHash",
    "startTime",
    "lastUpdated",
    "kind",
    "summary",
    "directories",
    "memoryScratchpad",
)


def is_object(value: Any) -> bool:
    """What JavaScript's ``typeof v === "object" && v !== null`` says: a
    JSON object or array."""
    return type(value) is dict or type(value) is list


def _has_text(rec: dict[str, Any], key: str) -> bool:
    return type(rec.get(key)) is str


def record_kind(rec: Any) -> str:
    """The kind of one parsed line, in the order Gemini CLI's loader tests
    them (see the module)."""
    if type(rec) is not dict:
        return IGNORED
    if _has_text(rec, "$rewindTo"):
        return REWIND
    if _has_text(rec, "id"):
        t = rec.get("type")
        if t == "user" and function_responses(rec.get("content")):
            return TOOL_RESULT
        return t if t in MESSAGE_TYPES else MESSAGE
    if is_object(rec.get("$set")):
        got = rec["$set"]
        return SNAPSHOT if type(got) is dict and type(got.get("messages")) is list else SET
    if _has_text(rec, "sessionId") and _has_text(rec, "projectHash"):
        return SESSION
    return IGNORED


def content_text(content: Any) -> str:
    """A message's text: a string as it is, the ``text`` of each part of a
    list joined (other parts say nothing), a single part's ``text``."""
    if type(content) is str:
        return content
    if type(content) is list:
        return "".join(
            p
            if type(p) is str
            else (p["text"] if type(p) is dict and type(p.get("text")) is str else "")
            for p in content
        )
    if type(content) is dict and type(content.get("text")) is str:
        return str(content["text"])
    return ""


def function_responses(content: Any) -> list[dict[str, Any]]:
    """The ``functionResponse`` parts of a user message's content: how the
    results of tool calls go back to the model."""
    if type(content) is not list:
        return []
    return [
        p["functionResponse"]
        for p in content
        if type(p) is dict and type(p.get("functionResponse")) is dict
    ]


def tool_calls(rec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A message's ``toolCalls`` that are objects (of a record, or of a
    state's message, frozen or a draft)."""
    calls = rec.get("toolCalls")
    if not isinstance(calls, Sequence) or isinstance(calls, str):
        return []
    return [c for c in calls if isinstance(c, Mapping)]


def first_call_id(rec: dict[str, Any]) -> str | None:
    """The call a line is part of: a ``gemini`` message's first tool call,
    or the first call a user message answers."""
    for call in tool_calls(rec):
        if type(call.get("id")) is str:
            return str(call["id"])
    for resp in function_responses(rec.get("content")):
        if type(resp.get("id")) is str:
            return str(resp["id"])
    return None


# -- telling what a file is ------------------------------------------------------

#: Lines looked at to tell a session.
_HEAD_LINES = 64
#: The older form: one pretty-printed document that starts with the session's ids.
_JSON_SHAPE = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"projectHash"\s*:'
)


def _gemini_like(rec: dict[str, Any]) -> int:
    """2: a line only Gemini CLI writes (its metadata, ``$set``, ``$rewindTo``),
    1: a message record as Gemini CLI writes them, 0: neither."""
    if "uuid" in rec or "payload" in rec or "seq" in rec:
        return 0  # Claude Code, Codex, a ledger
    kind = record_kind(rec)
    if kind == REWIND or (kind in (SET, SNAPSHOT) and len(rec) == 1):
        return 2
    if kind == SESSION and ("startTime" in rec or "lastUpdated" in rec or "kind" in rec):
        return 2
    if kind in MESSAGE_TYPES or kind == TOOL_RESULT:
        return 1 if "timestamp" in rec and "content" in rec else 0
    return 0


def gemini_format_of_head(head: bytes) -> bool:
    """True if the first complete lines of ``head`` are a Gemini CLI
    session's: a line only Gemini CLI writes, or messages as it writes them,
    and no line of another kind of file (lines that do not parse are left
    to the replay to judge)."""
    lines = head.removeprefix(b"\xef\xbb\xbf").split(b"\n")[:-1][:_HEAD_LINES]
    strong = weak = 0
    for raw in lines:
        if not raw.strip():
            continue
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if type(rec) is not dict:
            return False
        like = _gemini_like(rec)
        if like == 0:
            return False
        strong += like == 2
        weak += like == 1
    return strong > 0 or weak >= 2


def looks_like_gemini_json(head: bytes) -> bool:
    """True if ``head`` starts like the older form: a JSON document
    ``{"sessionId": ..., "projectHash": ..., ..., "messages": [...]}``."""
    return _JSON_SHAPE.match(head) is not None


#: The kinds of line only a Gemini CLI session holds (what the loader takes).
_LOADED = frozenset({SESSION, SET, SNAPSHOT, REWIND, MESSAGE, TOOL_RESULT} | MESSAGE_TYPES)


def why_not_gemini(head: bytes) -> str | None:
    """Why a file whose first bytes are ``head`` is no Gemini CLI session
    (given as one with ``--format gemini``), or None: it may be one (a line
    the loader takes among its first, the older single document, nothing
    written yet, or a first line too long to tell)."""
    body = head.removeprefix(b"\xef\xbb\xbf")
    if not body.strip() or looks_like_gemini_json(body):
        return None
    lines = [raw for raw in body.split(b"\n")[:-1][:_HEAD_LINES] if raw.strip()]
    if not lines:
        return None
    parsed = 0
    for raw in lines:
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        parsed += 1
        if record_kind(rec) in _LOADED:
            return None
    if not parsed:
        return f"it is not JSON lines: none of its first {len(lines)} lines is JSON"
    return (
        f"it is JSON lines, but none of its first {len(lines)} is a Gemini CLI record (session "
        "metadata with a sessionId and a projectHash, a message with an id, a $set or a "
        "$rewindTo): Gemini CLI's loader would load nothing from it"
    )
