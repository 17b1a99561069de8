"""Reading a Claude Code record for the ``claude_code`` rules: the kinds they
know, what a call does in a few words, whether a user record is a prompt,
a call's duration and the ids a record's blocks name."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from replay_tui.formats.claude_records import block_ids
from replay_tui.formats.envelope import ts_seconds
from replay_tui.reducers.sessions.rules import one_line

if TYPE_CHECKING:
    from replay_tui.envelope import Event

#: Kinds these rules interpret, or know and read nothing from.
KINDS = frozenset(
    {
        "user",
        "tool_result",
        "assistant",
        "thinking",
        "tool_use",
        "compact_boundary",
        "system",
        "summary",
        "progress",
        "file-history-snapshot",
        "queue-operation",
    }
)
#: Tools that run a sub-agent, and tools that set the todo list.
AGENT_TOOLS = frozenset({"Task", "Agent"})
TODO_TOOLS = frozenset({"TodoWrite"})
#: The input field that says what a call does, by tool.
_INPUT_KEYS = {
    "Bash": "command",
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
    "NotebookRead": "notebook_path",
    "Glob": "pattern",
    "Grep": "pattern",
    "LS": "path",
    "WebFetch": "url",
    "WebSearch": "query",
    "Task": "description",
    "Agent": "description",
    "BashOutput": "bash_id",
    "KillBash": "shell_id",
    "KillShell": "shell_id",
    "Skill": "skill",
    "SlashCommand": "command",
}
_NOT_PROMPTS = ("<local-command-", "[Request interrupted")
AGENT_ID = re.compile(r"agentId: ([A-Za-z0-9_-]+)")


def text_of(content: Any) -> str:
    """The text of a message's or a tool result's content (a string, or the
    text of its text blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def input_summary(tool: str, args: Any) -> str:
    """What a call does, in a few words: Bash's command, Read's path, ..."""
    if not isinstance(args, dict):
        return ""
    if tool in TODO_TOOLS and isinstance(args.get("todos"), list):
        return f"{len(args['todos'])} todos"
    key = _INPUT_KEYS.get(tool)
    value = args.get(key) if key else None
    if not isinstance(value, str):
        value = next((v for v in args.values() if isinstance(v, str)), None)
    return one_line(value) if value else ""


def is_prompt(rec: dict[str, Any], sidechain_file: bool) -> bool:
    """A user record that is a prompt of the user: not a tool result, not a
    meta message (``isMeta``: a command's expansion), not a compaction's
    summary (``isCompactSummary``), not a sub-agent's task (``isSidechain``,
    unless the file is the sub-agent's own transcript), and not a command's
    output or an interruption (text starting ``<local-command-`` or
    ``[Request interrupted``)."""
    if rec.get("type") != "user" or rec.get("isMeta") is True:
        return False
    if rec.get("isCompactSummary") is True:
        return False
    if rec.get("isSidechain") is True and not sidechain_file:
        return False
    msg = rec.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return False
        if not any(isinstance(b, dict) and b.get("type") in ("text", "image") for b in content):
            return False
    elif not isinstance(content, str):
        return False
    return not text_of(content).lstrip().startswith(_NOT_PROMPTS)


def _seconds(text: Any) -> float | None:
    return ts_seconds(text) if isinstance(text, str) else None


def duration(call: dict[str, Any], event: Event) -> float | None:
    start = _seconds(call.get("at"))
    if start is None or event.ts_s is None:
        return None
    return round(event.ts_s - start, 3)


def ids(event: Event, block_type: str, key: str) -> list[str]:
    """The ids of the event's blocks of ``block_type`` (``key`` of each)."""
    return block_ids(event.payload, block_type, key)
