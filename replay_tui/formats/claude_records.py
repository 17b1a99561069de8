"""What a Claude Code record holds that more than one reader needs: the
blocks of its message, the ids those blocks name, an API message's usage.

The rules (:mod:`replay_tui.reducers.claude_code`) read these to build the
state; the line checks (:mod:`replay_tui.formats.session_checks`) read the
same to know which call and which message a line continues, so both agree
on what a line is.
"""

from __future__ import annotations

from typing import Any

#: The kinds whose records are lines of an API message (carry its usage).
MESSAGE_KINDS = frozenset({"assistant", "thinking", "tool_use"})
USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
Usage = tuple[int, int, int, int]


def count(value: Any) -> int:
    """A token count as recorded (anything but a whole number >= 0 is 0)."""
    return value if type(value) is int and value >= 0 else 0


def blocks(rec: dict[str, Any]) -> list[Any]:
    """The content blocks of the record's message (none: [])."""
    msg = rec.get("message")
    content = msg.get("content") if type(msg) is dict else None
    return list(content) if type(content) is list else []


def block_ids(rec: dict[str, Any], block_type: str, key: str) -> list[str]:
    """The ``key`` of each ``block_type`` block: a tool_use's ``id``, a
    tool_result's ``tool_use_id``."""
    return [
        b[key]
        for b in blocks(rec)
        if type(b) is dict and b.get("type") == block_type and type(b.get(key)) is str
    ]


def message_usage(rec: dict[str, Any]) -> tuple[str | None, Usage] | None:
    """(message id, its four token counts) of an API message's line with a
    usage; None without one."""
    msg = rec.get("message")
    if type(msg) is not dict:
        return None
    usage = msg.get("usage")
    if type(usage) is not dict:
        return None
    mid = msg.get("id")
    counts = (
        count(usage.get("input_tokens")),
        count(usage.get("output_tokens")),
        count(usage.get("cache_creation_input_tokens")),
        count(usage.get("cache_read_input_tokens")),
    )
    return (mid if type(mid) is str else None), counts


def holds_message(rec: dict[str, Any], mid: str) -> bool:
    msg = rec.get("message")
    return type(msg) is dict and msg.get("id") == mid


def requests_call(rec: dict[str, Any], cid: str) -> bool:
    return cid in block_ids(rec, "tool_use", "id")


def answers_call(rec: dict[str, Any], cid: str) -> bool:
    return cid in block_ids(rec, "tool_result", "tool_use_id")
