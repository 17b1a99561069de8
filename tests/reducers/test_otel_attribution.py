"""Honest attribution of a trace's logs: a log is read at any severity and
by the event name it carries wherever it carries it; a log that cannot be
tied to one model call (no span id, and it could be either of two) is never
merged into a turn: the state lists it as ``unattributed``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.engine.open import open_replay
from replay_tui.reducers.base import State

TRACE = "cd" * 16
ROOT, CHAT1, CHAT2 = "a1" * 8, "b1" * 8, "b2" * 8
T0 = 1_760_000_000_000_000_000
SEC = 1_000_000_000


def _attrs(items: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key, value in items.items():
        typed = {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}
        out.append({"key": key, "value": typed})
    return out


def _span(sid: str, parent: str, name: str, start: int, end: int, **attrs: Any) -> dict[str, Any]:
    return {
        "traceId": TRACE,
        "spanId": sid,
        "parentSpanId": parent,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": _attrs(attrs),
        "status": {},
    }


def _body(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {
            "kvlistValue": {"values": [{"key": k, "value": _body(v)} for k, v in value.items()]}
        }
    return {"stringValue": value}


def _log(
    time: int, span: str, body: Any, name: str | None = None, trace: str = TRACE, **attrs: Any
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "timeUnixNano": str(time),
        "severityNumber": 5,  # DEBUG: read as any other
        "severityText": "DEBUG",
        "body": _body(body),
        "attributes": _attrs(attrs),
    }
    if name is not None:
        record["eventName"] = name
    if trace:
        record["traceId"] = trace
    if span:
        record["spanId"] = span
    return record


def _choice(text: str) -> dict[str, Any]:
    return {"index": "0", "message": {"role": "assistant", "content": text}}


def _doc(chat2_start: int, stray: list[dict[str, Any]]) -> dict[str, Any]:
    """An agent, its two model calls (the first 1 s to 2 s, the second from
    ``chat2_start`` for 1 s) and their logs, tied to their spans (the
    user's question named only by ``otel.event.name``), plus ``stray``."""
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    spans = [
        _span(
            ROOT,
            "",
            "invoke_agent helper",
            T0,
            T0 + 9 * SEC,
            **{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"},
        ),
        _span(CHAT1, ROOT, "chat m", T0 + SEC, T0 + 2 * SEC, **chat),
        _span(CHAT2, ROOT, "chat m", chat2_start, chat2_start + SEC, **chat),
    ]
    logs = [
        _log(
            T0 + SEC + 1,
            CHAT1,
            {"content": "What is the weather?"},
            None,
            **{"otel.event.name": "gen_ai.user.message"},
        ),
        _log(T0 + 2 * SEC - 1, CHAT1, _choice("Let me look."), "gen_ai.choice"),
        _log(chat2_start + SEC - 1, CHAT2, _choice("It is sunny."), "gen_ai.choice"),
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


def _state(tmp: Path, doc: dict[str, Any]) -> State:
    path = tmp / "trace.json"
    path.write_bytes(orjson.dumps(doc))
    replay, watchdog = open_replay(str(path), fmt="otel")
    try:
        replay.verify()
        return replay.final_state()
    finally:
        replay.close()
        if watchdog is not None:
            watchdog.stop()


def test_a_spanless_log_between_two_model_calls_is_unattributed(tmp_path: Path) -> None:
    stray = _log(T0 + 3 * SEC, "", _choice("Stray words."), "gen_ai.choice")
    state = _state(tmp_path, _doc(T0 + 4 * SEC, [stray]))
    [turn] = state["turns"]
    assert turn["user_text"] == "What is the weather?"  # named by otel.event.name, at DEBUG
    assert turn["intermediate_texts"] == ["Let me look."]
    assert turn["final_text"] == "It is sunny."
    [listed] = state["unattributed"]
    assert listed["name"] == "gen_ai.choice"
    assert listed["says"] == "assistant: Stray words."
    assert "no one model call can claim it" in listed["why"]
    assert isinstance(listed["seq"], int)


def test_a_spanless_log_while_two_calls_run_at_once_joins_neither(tmp_path: Path) -> None:
    """Two calls at once (the second starts while the first runs): a log
    with no span id in that time could be either's, so it is neither's
    (today's reader took it for the later call's answer)."""
    stray = _log(T0 + 18 * SEC // 10, "", _choice("Stray words."), "gen_ai.choice")
    state = _state(tmp_path, _doc(T0 + 15 * SEC // 10, [stray]))
    [turn] = state["turns"]
    assert "Stray words." not in [turn["final_text"], *turn["intermediate_texts"]]
    assert [u["says"] for u in state["unattributed"]] == ["assistant: Stray words."]


def test_a_log_with_no_trace_id_in_a_gap_is_unattributed_too(tmp_path: Path) -> None:
    stray = _log(T0 + 3 * SEC, "", _choice("Stray words."), "gen_ai.choice", trace="")
    state = _state(tmp_path, _doc(T0 + 4 * SEC, [stray]))
    assert [u["says"] for u in state["unattributed"]] == ["assistant: Stray words."]
    assert state["turns"][0]["final_text"] == "It is sunny."


def test_a_spanless_log_inside_one_call_is_that_calls(tmp_path: Path) -> None:
    """In the time of one call only: that call's (no doubt, nothing listed)."""
    inside = _log(T0 + 4 * SEC + 10, "", {"content": "Also: in Celsius."}, "gen_ai.user.message")
    state = _state(tmp_path, _doc(T0 + 4 * SEC, [inside]))
    assert state["unattributed"] == []


@given(
    gap=st.integers(min_value=1, max_value=2 * SEC - 1),
    traced=st.booleans(),
    name=st.sampled_from(["gen_ai.choice", "gen_ai.user.message", "gen_ai.assistant.message"]),
)
@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_an_unattributed_log_never_changes_a_turn(
    tmp_path: Path, gap: int, traced: bool, name: str
) -> None:
    """Whatever it says and wherever it falls between the calls, a log that
    no call can claim alone leaves every turn as it was, and is listed."""
    body = _choice("Stray.") if name == "gen_ai.choice" else {"content": "Stray."}
    stray = _log(T0 + 2 * SEC + gap, "", body, name, trace=TRACE if traced else "")
    without = _state(tmp_path, _doc(T0 + 4 * SEC, []))
    with_it = _state(tmp_path, _doc(T0 + 4 * SEC, [stray]))
    assert with_it["turns"] == without["turns"]
    assert len(with_it["unattributed"]) == 1 and without["unattributed"] == []
