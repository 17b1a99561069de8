"""The ``otel_genai`` rules' words for values and messages: a few words
for a row, a receipt or an unattributed log."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replay_tui.core import strict_json
from replay_tui.reducers.otel_genai.messages import (
    parse_json,
    text_of,
    tool_calls_of,
    tool_responses_of,
)
from replay_tui.reducers.sessions.rules import one_line


def short(value: Any, limit: int = 60) -> str:
    """A value in a few words for a row: a string as it is, else compact JSON."""
    value = parse_json(value)
    if value is None:
        return ""
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    text = value if isinstance(value, str) else strict_json.dumps(value).decode()
    return one_line(text, limit)


def msg_words(msgs: list[dict[str, Any]]) -> str:
    """Messages in a few words: their text, else the tools asked for or answered."""
    text = text_of(msgs)
    if text:
        return one_line(text, 120)
    calls = [f"{c['name']} {short(c['arguments'], 40)}".strip() for c in tool_calls_of(msgs)]
    if calls:
        return one_line("; ".join(calls), 120)
    return "; ".join(short(r["response"], 60) for r in tool_responses_of(msgs))


def fact_words(fact: Mapping[str, Any]) -> str:
    """What a kept log or event says, in a few words."""
    msg = fact.get("msg")
    if msg is not None:
        words = msg_words([msg])
        return f"{msg['role']}: {words}" if words else str(msg["role"])
    got = fact.get("pair") or [None, None]
    inp, out = got
    if out is not None and (out["text"] or out["calls"]):
        calls = "; ".join(c["name"] for c in out["calls"])
        return one_line(f"assistant: {out['text'] or calls}", 120)
    if inp is not None:
        return one_line(f"user: {inp['user'] or inp['text'] or ''}".strip(), 120)
    return ""
