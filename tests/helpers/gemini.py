"""Gemini CLI sessions in tests: a state summed up the way the reference
script (``tests/fixtures/gemini-sessions/tools/gemini_oracle.mjs``) sums up
what Gemini CLI's ``loadConversationRecord`` returns, so the two compare."""

from __future__ import annotations

from typing import Any

from replay_tui.formats.gemini.records import TOKEN_FIELDS, content_text


def _js(value: Any) -> bool:
    """JavaScript's truth (an empty object or list is true)."""
    return isinstance(value, dict | list) or bool(value)


def _message(m: dict[str, Any]) -> dict[str, Any]:
    o: dict[str, Any] = {
        "id": m.get("id"),
        "type": m.get("type"),
        "text": content_text(m.get("content")),
    }
    if _js(m.get("toolCalls")):
        o["toolCalls"] = [
            {
                "id": t.get("id"),
                "name": t.get("name"),
                "args": t.get("args"),
                "status": t.get("status"),
                "result": t.get("result"),
            }
            for t in m["toolCalls"]
        ]
    if m.get("thoughts"):
        o["thoughts"] = [t.get("subject") or "" for t in m["thoughts"]]
    if _js(m.get("tokens")):
        o["tokens"] = m["tokens"]
    if "model" in m:
        o["model"] = m["model"]
    return o


def loader_record(state: dict[str, Any]) -> dict[str, Any] | None:
    """The state as the reference script prints a loaded record (None:
    the loader returns nothing for this prefix)."""
    if not state["loaded"]:
        return None
    meta = state["meta"]
    tokens = state["tokens"]
    return {
        "meta": {
            "sessionId": meta.get("sessionId"),
            "projectHash": meta.get("projectHash"),
            "startTime": meta.get("startTime"),
            "lastUpdated": meta.get("lastUpdated"),
            "kind": meta.get("kind"),
            "summary": meta.get("summary"),
            "directories": meta.get("directories"),
        },
        "messages": [_message(m) for m in state["messages"]],
        "tokens": {
            "total": {k: tokens[k] for k in TOKEN_FIELDS},
            "by_model": tokens["by_model"],
        },
    }
