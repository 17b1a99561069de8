"""Timeline rows: what one ledger line looks like in a list, as plain data.

Kept out of the UI so that it is testable without a terminal and so the
widget only styles what this module has already made safe.
"""

from __future__ import annotations

from dataclasses import dataclass

from replay_tui.core.safe_text import compact_json, escape_controls, mask_secrets, safe_line
from replay_tui.formats.envelope import Event, LineError

#: Colour family of a kind, by its first word (run, model, tool, check, state).
FAMILIES = {
    "run": "run",
    "attempt": "run",
    "model": "model",
    "tool": "tool",
    "check": "check",
    "state": "state",
    # agent sessions (Claude Code, Codex): who speaks, and the tools
    "user": "run",
    "task": "run",
    "session": "run",
    "turn": "run",
    "assistant": "model",
    "agent": "model",
    "thinking": "model",
    "reasoning": "model",
    "function": "tool",
    "custom": "tool",
    "local": "tool",
    "exec": "tool",
    "patch": "tool",
    "web": "tool",
    "mcp": "tool",
    "token": "state",
    "compact": "state",
    "compacted": "state",
    "context": "state",
    "system": "state",
}


#: The same for Temporal's event types (PascalCase), by prefix.
TEMPORAL_FAMILIES = (
    ("WorkflowTask", "model"),  # the worker deciding what to do next
    ("WorkflowExecutionSignaled", "check"),
    ("WorkflowExecutionUpdate", "check"),
    ("WorkflowExecution", "run"),
    ("Activity", "tool"),
    ("Nexus", "tool"),
    ("Timer", "state"),
    ("ChildWorkflow", "tool"),
    ("StartChildWorkflow", "tool"),
)


def family(kind: str | None) -> str:
    if not kind:
        return "other"
    if kind[:1].isupper():
        return next((f for prefix, f in TEMPORAL_FAMILIES if kind.startswith(prefix)), "other")
    return FAMILIES.get(kind.split("_", 1)[0], "other")


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the ledger as the timeline shows it (all text escaped)."""

    index: int  # 0-based line index
    line: int
    seq: int | None
    kind: str  # escaped; "" for a line that has none
    family: str
    call_id: str  # "" when none
    summary: str  # one-line payload (or the raw line when it is not an event)
    ts: float | None  # seconds since the epoch, for offsets
    problem: str | None  # the line's own error code, when it is not an event

    def search_text(self) -> str:
        """What ``/`` matches against: kind, call_id and payload text."""
        return f"{self.kind} {self.call_id} {self.summary}".lower()


def make_row(
    index: int,
    parsed: Event | LineError,
    raw: bytes | None = None,
    *,
    limit: int = 400,
    payload_summary: bool = True,
) -> Row:
    """A row for line ``index``; ``raw`` is needed only for lines that failed.
    Without ``payload_summary`` the row has no one-line payload (a session's
    record, shown by what its rules say of it instead)."""
    if isinstance(parsed, Event):
        payload = (
            {k: v for k, v in parsed.payload.items() if k != "call_id"} if payload_summary else {}
        )
        cid = parsed.call_id or ""
        return Row(
            index=index,
            line=parsed.line,
            seq=parsed.seq,
            kind=escape_controls(parsed.kind),
            family=family(parsed.kind),
            call_id=escape_controls(cid),
            summary=compact_json(mask_secrets(payload), limit) if payload else "",
            ts=parsed.ts_s,
            problem=None,
        )
    return Row(
        index=index,
        line=parsed.line,
        seq=parsed.seq,
        kind=escape_controls(parsed.kind or ""),
        family=family(parsed.kind),
        call_id="",
        summary=safe_line(raw or b"", limit),
        ts=None,
        problem=parsed.code,
    )


def format_offset(seconds: float | None) -> str:
    """``+1.234s``, ``+12:03.5``, ``+2:01:07``: time since the first event."""
    if seconds is None:
        return ""
    sign = "-" if seconds < 0 else "+"
    s = abs(seconds)
    if s < 60:
        return f"{sign}{s:.3f}s"
    if s < 3600:
        return f"{sign}{int(s // 60)}:{s % 60:04.1f}"
    return f"{sign}{int(s // 3600)}:{int(s % 3600 // 60):02d}:{int(s % 60):02d}"
