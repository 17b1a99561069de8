"""A trace of one agent turn with two model calls, and log records with or
without a span id placed among them: what the attribution tests build."""

from __future__ import annotations

from typing import Any

TRACE = "cd" * 16
ROOT, CHAT1, CHAT2 = "a1" * 8, "b1" * 8, "b2" * 8
T0 = 1_760_000_000_000_000_000
SEC = 1_000_000_000


def attributes(items: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key, value in items.items():
        typed = {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}
        out.append({"key": key, "value": typed})
    return out


def span_record(
    sid: str, parent: str, name: str, start: int, end: int, **attrs: Any
) -> dict[str, Any]:
    return {
        "traceId": TRACE,
        "spanId": sid,
        "parentSpanId": parent,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": attributes(attrs),
        "status": {},
    }


def any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {
            "kvlistValue": {"values": [{"key": k, "value": any_value(v)} for k, v in value.items()]}
        }
    return {"stringValue": value}


def log_record(
    time: int, span: str, body: Any, name: str | None = None, trace: str = TRACE, **attrs: Any
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "timeUnixNano": str(time),
        "severityNumber": 5,  # DEBUG: read as any other
        "severityText": "DEBUG",
        "body": any_value(body),
        "attributes": attributes(attrs),
    }
    if name is not None:
        record["eventName"] = name
    if trace:
        record["traceId"] = trace
    if span:
        record["spanId"] = span
    return record


def choice(text: str) -> dict[str, Any]:
    return {"index": "0", "message": {"role": "assistant", "content": text}}


def doc(chat2_start: int, stray: list[dict[str, Any]]) -> dict[str, Any]:
    """An agent, its two model calls (the first 1 s to 2 s, the second from
    ``chat2_start`` for 1 s) and their logs, tied to their spans (the
    user's question named only by ``otel.event.name``), plus ``stray``."""
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    spans = [
        span_record(
            ROOT,
            "",
            "invoke_agent helper",
            T0,
            T0 + 9 * SEC,
            **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"},
        ),
        span_record(CHAT1, ROOT, "chat m", T0 + SEC, T0 + 2 * SEC, **chat),
        span_record(CHAT2, ROOT, "chat m", chat2_start, chat2_start + SEC, **chat),
    ]
    logs = [
        log_record(
            T0 + SEC + 1,
            CHAT1,
            {"content": "What is the weather?"},
            None,
            **{"otel.event.name": "gen_ai.user.message"},
        ),
        log_record(T0 + 2 * SEC - 1, CHAT1, choice("Let me look."), "gen_ai.choice"),
        log_record(chat2_start + SEC - 1, CHAT2, choice("It is sunny."), "gen_ai.choice"),
        *stray,
    ]
    return {
        "resourceSpans": [
            {"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}
        ],
        "resourceLogs": [
            {"resource": {}, "scopeLogs": [{"scope": {"name": "t"}, "logRecords": logs}]}
        ],
    }
