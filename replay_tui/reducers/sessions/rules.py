"""What the rules of agents' own sessions (``claude_code``, ``codex``)
share: a call in a few words, how long it took, the phase a session is in,
the calls still open at its end, and the rule in words with the phase it
moved to. Each source's rules subclass :class:`SessionRules`."""

from __future__ import annotations

import re
from typing import Any

from replay_tui.core.errors import RuleViolation
from replay_tui.formats.envelope import Event
from replay_tui.reducers.base import State, StateView

_SPACE = re.compile(r"\s+")


def illegal(message: str) -> RuleViolation:
    return RuleViolation("illegal_transition", message)


def one_line(text: str, limit: int = 120) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = _SPACE.sub(" ", text[: 4 * limit]).strip()  # a 12 MB result is not flattened whole
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def in_words(seconds: Any) -> str:
    """``74 ms``, ``1.2 s``: how long a call took (from the records' timestamps)."""
    if not isinstance(seconds, int | float):
        return "time not recorded"
    return f"{seconds * 1000:.0f} ms" if abs(seconds) < 1 else f"{seconds:.1f} s"


def label(call: dict[str, Any]) -> str:
    """``Bash ls -la``: the tool and what it was asked."""
    return f"{call['tool']} {call['input']}".strip()


class SessionRules:
    """The part of a session's rules that does not depend on its source."""

    #: A row says what the rules say of its record, not the record's JSON.
    row_summary_only = True
    #: How a record of a type these rules do not know is shown.
    ignored_words = "not interpreted (a record type these rules do not know)"
    #: What a call in flight has not got yet, as ``still_open`` says it.
    awaited = "result"

    def ignorable(self, event: Event) -> bool:
        """A record type these rules do not know: shown, changing nothing
        (how new versions of the tools add record types)."""
        return True

    def summary(self, state: StateView) -> str:
        return str(state["phase"])

    @staticmethod
    def _phase(state: State, phase: str) -> None:
        if state["in_flight"] > 0:
            phase = "tools_running"
        if state["phase"] != phase:
            state["phase"] = phase

    def still_open(self, state: StateView) -> list[str]:
        """Calls requested whose result is not recorded: in flight when the
        session ends."""
        return [
            f"{cid} {label(call)} requested at seq {call['seq']}, no {self.awaited} yet"
            for cid, call in state["calls"].items()
            if call["status"] == "requested"
        ]

    def explain(self, before: StateView, event: Event, after: StateView) -> str:
        words = self._explain(before, event, after)
        if before["phase"] != after["phase"]:
            words += f"; {before['phase']} -> {after['phase']}"
        return words

    def _explain(self, before: StateView, event: Event, after: StateView) -> str:
        raise NotImplementedError


#: Fields every record has, left out when a record of a new shape is worded.
_COMMON = frozenset(
    {
        "type", "subtype", "uuid", "parentUuid", "logicalParentUuid", "leafUuid", "sessionId",
        "timestamp", "cwd", "version", "gitBranch", "userType", "isSidechain", "isMeta",
        "requestId", "messageId", "agentId", "slug", "level", "toolUseID",
    }
)  # fmt: skip


def record_words(rec: dict[str, Any], head: str) -> str:
    """A record these rules read nothing from, by its own scalar fields
    (``turn_duration 64.6 s``, ``prNumber=12 prUrl=https://...``): new
    record types keep arriving, and a row should say what each holds."""
    words = [head] if head else []
    for key, value in rec.items():
        if key in _COMMON or isinstance(value, dict | list) or value is None:
            continue
        if key == "durationMs" and isinstance(value, int | float):
            words.append(f"{value / 1000:.1f} s")
        else:
            words.append(f"{key}={value}")
        if len(words) >= 5:
            break
    return one_line(" ".join(words), 200)
