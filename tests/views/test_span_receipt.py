"""A trace's span as its own receipt: at any record of a span the inspector
shows the span (attributes, events, logs) as known after the prefix at the
cursor, never what only a later record says."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.reducers import rules_for_run
from replay_tui.ui.launch import make_app
from replay_tui.views import span_receipt
from replay_tui.views.runview import RunView
from replay_tui.views.span_receipt import span_record
from tests.conftest import TESTS
from tests.helpers.screen import goto, pane_text, settle

HAND = TESTS / "fixtures" / "otel-traces" / "hand"
HANDOFF = HAND / "openai_agents_handoff.json"  # seq 9: execute_tool issue_refund starts, 10 ends
LOGS = HAND / "openai_v2_logs_span_id.json"  # seq 7: a chat span starts, 8-12 its logs, 13 its end
COPIES = HAND / "duplicate_span_ids.json"
TRACE = "ab" * 16
T0 = 1_760_000_000_000_000_000


def _replay(path: Path) -> Replay:
    paths = locate_run(path)
    return Replay(paths, rules_for_run(None, paths.events, paths.format), history=True).verify()


@pytest.fixture
def handoff() -> Iterator[Replay]:
    replay = _replay(HANDOFF)
    yield replay
    replay.close()


def _at(replay: Replay, seq: int, n: int | None = None) -> tuple[str, Any]:
    event = replay.event(seq - 1)
    found = span_record(replay, event, seq if n is None else n)  # type: ignore[arg-type]
    assert found is not None
    return found


def _text(value: Any) -> str:
    return orjson.dumps(value).decode()


def _span(sid: str, name: str, start: int, end: int, attrs: dict[str, str]) -> dict[str, Any]:
    return {
        "traceId": TRACE,
        "spanId": sid,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(T0 + start),
        "endTimeUnixNano": str(T0 + end),
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }


def _log(sid: str, at: int, name: str, text: str) -> dict[str, Any]:
    found: dict[str, Any] = {
        "timeUnixNano": str(T0 + at),
        "eventName": name,
        "body": {"stringValue": text},
        "traceId": TRACE,
    }
    if sid:
        found["spanId"] = sid
    return found


def _trace(tmp_path: Path, spans: list[dict[str, Any]], logs: list[dict[str, Any]]) -> Path:
    doc = {
        "resourceSpans": [
            {"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}
        ],
        "resourceLogs": [
            {"resource": {}, "scopeLogs": [{"scope": {"name": "t"}, "logRecords": logs}]}
        ],
    }
    path = tmp_path / "trace.json"
    path.write_bytes(orjson.dumps(doc))
    return path


# -- the receipt, on the replay -------------------------------------------------------------


def test_a_tool_span_shows_its_arguments_at_its_start_and_its_result_at_its_end(
    handoff: Replay,
) -> None:
    title, value = _at(handoff, 9)
    assert title == "execute_tool issue_refund · span 9e69… · running"
    assert value["status"] == "running" and "not in events 1..9" in value["end"]
    assert "duration" not in value and value["end_seq"] is None
    attrs = value["attributes"]
    assert attrs["gen_ai.tool.call.arguments"] == '{"order_id":"42"}'
    assert "refunded" not in _text(value)  # the result is the end's news
    assert value["held_back_until_it_ends"] == ["gen_ai.tool.call.result"]
    assert value["span_id"] == "9e69aa064e5f651b" and value["parent_id"] == "6f0111ab285346ef"
    assert value["start"] == "2025-10-09T08:53:20.051000000Z" and value["start_seq"] == 9
    assert value["resource"] == {"service.name": "fixture-agent", "service.version": "1.0.0"}

    title, value = _at(handoff, 10)
    assert title == "execute_tool issue_refund · span 9e69… · ok · 9.0 ms"
    assert value["attributes"]["gen_ai.tool.call.result"] == '{"status":"refunded","order_id":"42"}'
    assert value["end"] == "2025-10-09T08:53:20.060000000Z" and value["duration"] == "9.0 ms"
    assert value["status"] == "UNSET" and (value["start_seq"], value["end_seq"]) == (9, 10)
    assert "held_back_until_it_ends" not in value


def test_the_start_seen_from_a_shorter_prefix_says_nothing_of_the_end(handoff: Replay) -> None:
    """The same record, asked after fewer events (a view past the valid prefix)."""
    title, value = _at(handoff, 10, n=9)
    assert title.endswith("· running") and "refunded" not in _text(value)


def test_logs_and_their_content_are_listed_as_they_come() -> None:
    replay = _replay(LOGS)
    try:
        title, value = _at(replay, 9)
        assert title == "chat gpt-4.1-mini · span e43d… · running"
        assert [lg["seq"] for lg in value["logs"]] == [8, 9]  # 10-12 are later news
        assert value["this_record"]["body"] == {"content": "What is the weather in Paris?"}
        assert "sunny" not in _text(value)
        _, value = _at(replay, 11)
        assert value["this_record"]["event_name"] == "gen_ai.tool.message"
        assert "sunny" in _text(value["this_record"]["body"])
        title, value = _at(replay, 13)
        assert title == "chat gpt-4.1-mini · span e43d… · ok · 0.03 s"
        assert [lg["seq"] for lg in value["logs"]] == [8, 9, 10, 11, 12]
        assert value["logs"][-1]["body"]["message"]["content"] == "It is sunny and 21C in Paris."
        assert "this_record" not in value  # the cursor is on the end itself
    finally:
        replay.close()


def test_a_span_exported_twice_shows_the_copy_the_rules_keep() -> None:
    replay = _replay(COPIES)
    try:
        title, value = _at(replay, 3)  # the second copy's start
        assert value["start_seq"] == 2 and "2 copies" in value["exported_again"]
        assert title.endswith("running")
        title, _ = _at(replay, 4)
        assert "· ok ·" in title
    finally:
        replay.close()


def test_a_span_of_many_logs_is_read_at_its_ends_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A span with many logs (and logs timed after its end): only its first
    and last records are read; the receipt says how many it did not list,
    and still finds the end back among the last records."""
    monkeypatch.setattr(span_receipt, "HEAD", 8)
    monkeypatch.setattr(span_receipt, "TAIL", 4)
    sid = "1111111111111111"
    logs = [_log(sid, 1000 + i, "gen_ai.user.message", f"message {i}") for i in range(60)]
    logs += [_log(sid, 2_000_000 + i, "late", f"late {i}") for i in range(10)]
    path = _trace(tmp_path, [_span(sid, "chat big", 0, 1_000_000, {})], logs)
    replay = _replay(path)
    reads: list[int] = []
    event = replay.event

    def counted(index: int) -> Any:
        reads.append(index)
        return event(index)

    try:
        assert replay.valid == 72  # start, 60 logs, end, 10 late logs
        monkeypatch.setattr(replay, "event", counted)
        title, value = _at(replay, 40)  # a log mid-way: running
        assert title == "chat big · span 1111… · running"
        assert len(value["logs"]) == 8 - 1 + 4 and value["this_record"]["seq"] == 40
        assert value["not_listed"].startswith("28 more records of this span")
        assert len(reads) <= 1 + 8 + 4

        reads.clear()
        title, value = _at(replay, 72)  # the last late log: the end is 10 records back
        assert title == "chat big · span 1111… · ok · 1.0 ms"
        assert value["end_seq"] == 62 and value["this_record"]["body"] == "late 9"
        assert value["not_listed"].startswith("60 more records")
        assert len(reads) <= 1 + 8 + 4 + 10
    finally:
        replay.close()


def test_a_log_tied_to_no_span_is_its_own_receipt(tmp_path: Path) -> None:
    sid = "2222222222222222"
    path = _trace(
        tmp_path,
        [_span(sid, "chat", 0, 100, {})],
        [_log("", 50, "gen_ai.user.message", "hello there")],
    )
    replay = _replay(path)
    try:
        title, value = _at(replay, 2)
        # the span is no model call: the rules tie the log to no turn, and say so
        assert title == "log gen_ai.user.message · tied to no span · unattributed"
        assert value["body"] == "hello there" and value["seq"] == 2
        assert value["unattributed"].endswith("not merged into any turn")
    finally:
        replay.close()


def test_the_run_view_gives_the_span_as_the_record_of_every_line(handoff: Replay) -> None:
    view = RunView(handoff)
    for index in range(handoff.valid):
        record = view.line_view(index).record
        assert record is not None and " · span " in record[0]
        assert view.line_view(index).record_later is None  # never what a later record says


# -- the app ---------------------------------------------------------------------------------


async def test_the_receipt_pane_shows_a_tool_span_running_then_its_result() -> None:
    app = make_app(str(HANDOFF))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await goto(app, pilot, 9)
        shown = pane_text(app, "receipt")
        assert "no call at this event" not in shown
        assert "execute_tool issue_refund · span 9e69… · running" in shown
        assert '"status": "running"' in shown and "order_id" in shown and "42" in shown
        assert "refunded" not in shown
        assert app.query_one("#receipt").border_title == "execute_tool issue_refund"
        await goto(app, pilot, 10)
        shown = pane_text(app, "receipt")
        assert "execute_tool issue_refund · span 9e69… · ok · 9.0 ms" in shown
        assert "refunded" in shown and '"duration": "9.0 ms"' in shown
        await goto(app, pilot, 1)  # the workflow: running until seq 14
        shown = pane_text(app, "receipt")
        assert "invoke_workflow Agent workflow · span ca9a… · running" in shown


async def test_the_receipt_pane_shows_a_log_in_its_span() -> None:
    app = make_app(str(LOGS))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await goto(app, pilot, 11)
        shown = pane_text(app, "receipt")
        assert "chat gpt-4.1-mini · span e43d… · running" in shown
        assert "gen_ai.tool.message" in shown and "sunny" in shown
        assert "It is sunny and 21C" not in shown  # seq 12's answer: later news
        await goto(app, pilot, 13)
        shown = pane_text(app, "receipt")
        assert "It is sunny and 21C in Paris." in shown and "· ok ·" in shown


async def test_secret_looking_attributes_are_masked_until_revealed(tmp_path: Path) -> None:
    sid = "3333333333333333"
    attrs = {"gen_ai.operation.name": "execute_tool", "openai.api_key": "sk-live-hunter2"}
    app = make_app(str(_trace(tmp_path, [_span(sid, "execute_tool x", 0, 100, attrs)], [])))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        shown = pane_text(app, "receipt")
        assert "execute_tool x" in shown and "hunter2" not in shown
        await pilot.press("r")
        await settle(app, pilot)
        assert "hunter2" in pane_text(app, "receipt")
