"""Temporal workflow histories: the importer, the ``temporal`` rules, the app."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.cli import main
from replay_tui.core.errors import CannotRun
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.formats.temporal import decode_payload, normalise_kind
from replay_tui.reducers import rules_for_run
from replay_tui.ui.launch import make_app
from tests.conftest import SAMPLES
from tests.helpers.screen import pane_text, seq_at_cursor, settle, status

HISTORIES = SAMPLES / "temporal"
RESEARCH = HISTORIES / "sdk-python--research-workflow-history.json"
TRACING = HISTORIES / "sdk-python--test_replayer_event_tracing.json"
COMPLETE = HISTORIES / "sdk-python--test_replayer_complete_history.json"
NONDETERMINISTIC = HISTORIES / "sdk-python--test_replayer_nondeterministic_history.json"


def replay_of(path: Path) -> Replay:
    paths = locate_run(path)
    return Replay(paths, rules_for_run(None, paths.events, paths.format)).verify()


def final_state(path: Path) -> dict[str, Any]:
    replay = replay_of(path)
    try:
        assert replay.error is None, replay.error
        return replay.final_state()
    finally:
        replay.close()


# -- the real histories --------------------------------------------------------


@pytest.mark.parametrize("path", sorted(HISTORIES.glob("*.json")), ids=lambda p: p.stem)
def test_every_history_is_verified_and_completed(
    path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert main(["check", str(path), "--json"]) == 0
    report = orjson.loads(capsysbinary.readouterr().out)
    assert report["error"] is None and report["state"] == "completed"
    assert report["rules"]["name"] == "temporal"
    assert report["receipts"] == 0
    # events_sha256 is the digest of the file as exported, not of our conversion
    assert report["events_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_research_workflow_state() -> None:
    replay = replay_of(RESEARCH)
    # ActivityTaskStarted is written when the attempt ends, stamped with its
    # start: earlier than the events before it, by design, so no warning
    assert replay.warnings == []
    replay.close()
    state = final_state(RESEARCH)
    assert state["workflow"]["type"] == "ResearchWorkflow"
    assert state["workflow"]["input"] == [
        "Caribbean vacation spots in April, optimizing for surfing, hiking and water sports"
    ]
    activities = state["activities"]
    assert len(activities) == 12
    assert {a["type"] for a in activities.values()} == {"invoke_model_activity"}
    assert all(a["status"] == "completed" and a["result"] for a in activities.values())
    assert state["result"].startswith("# Caribbean Vacation Spots in April")
    assert state["workflow_tasks"]["completed"] == 13 and state["workflow_tasks"]["current"] is None


def test_signals_timers_updates_and_activity_of_the_tracing_workflow() -> None:
    state = final_state(TRACING)
    assert [s["input"] for s in state["signals"]] == [["before"], ["1"]]
    assert state["timers"]["1"]["status"] == "fired"
    (update,) = state["updates"].values()
    assert update["name"] == "doupdate" and update["status"] == "completed"
    assert update["input"] == ["1"] and update["result"] is None  # binary/null
    (activity,) = state["activities"].values()
    assert activity["input"] == ["Enchi"] and activity["result"] == "Hello, Enchi!"


def test_state_at_each_prefix_of_a_history(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """A teacher's view: the activity is scheduled, then started, then done."""
    statuses = []
    for n in (5, 6, 7):
        assert main(["state", str(COMPLETE), "--at", str(n)]) == 0
        state = orjson.loads(capsysbinary.readouterr().out)
        statuses.append([a["status"] for a in state["activities"].values()])
    assert statuses == [["scheduled"], ["started"], ["completed"]]
    assert main(["state", str(COMPLETE), "--at", "11"]) == 0
    assert orjson.loads(capsysbinary.readouterr().out)["result"] == "Hello, Temporal!"


def test_the_nondeterministic_history_is_a_consistent_history() -> None:
    """The SDK's replayer fails on it because its workflow code changed; the
    history itself is in order, so strict replay of the history verifies."""
    assert final_state(NONDETERMINISTIC)["status"] == "completed"


# -- synthetic histories ------------------------------------------------------------


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def payloads(*values: Any) -> dict[str, Any]:
    return {
        "payloads": [
            {"metadata": {"encoding": b64("json/plain")}, "data": b64(orjson.dumps(v).decode())}
            for v in values
        ]
    }


def ev(event_id: Any, event_type: str, **attributes: Any) -> dict[str, Any]:
    """One history event; attributes under ``<camelCase type>EventAttributes``."""
    name = normalise_kind(event_type)
    key = name[0].lower() + name[1:] + "EventAttributes"
    return {
        "eventId": str(event_id) if isinstance(event_id, int) else event_id,
        "eventTime": f"2026-01-01T00:00:{int(str(event_id)) if str(event_id).isdigit() else 0:02d}Z",
        "eventType": event_type,
        key: attributes,
    }


def one_activity(upper: bool = False) -> list[dict[str, Any]]:
    def t(name: str) -> str:
        if not upper:
            return name
        snake = "".join(f"_{c}" if c.isupper() else c for c in name).lstrip("_").upper()
        return "EVENT_TYPE_" + snake

    return [
        ev(1, t("WorkflowExecutionStarted"), workflowType={"name": "Wf"}, input=payloads("in")),
        ev(2, t("WorkflowTaskScheduled"), attempt=1),
        ev(3, t("WorkflowTaskStarted"), scheduledEventId="2"),
        ev(4, t("WorkflowTaskCompleted"), scheduledEventId="2", startedEventId="3"),
        ev(5, t("ActivityTaskScheduled"), activityId="1", activityType={"name": "greet"},
           input=payloads("Ada"), workflowTaskCompletedEventId="4"),
        ev(6, t("ActivityTaskStarted"), scheduledEventId="5", attempt=1),
        ev(7, t("ActivityTaskCompleted"), scheduledEventId="5", startedEventId="6",
           result=payloads("Hello, Ada!")),
        ev(8, t("WorkflowTaskScheduled"), attempt=1),
        ev(9, t("WorkflowTaskStarted"), scheduledEventId="8"),
        ev(10, t("WorkflowTaskCompleted"), scheduledEventId="8", startedEventId="9"),
        ev(11, t("WorkflowExecutionCompleted"), result=payloads("done"),
           workflowTaskCompletedEventId="10"),
    ]  # fmt: skip


def history(tmp_path: Path, events: list[Any], name: str = "history.json") -> Path:
    path = tmp_path / name
    path.write_bytes(orjson.dumps({"events": events}, option=orjson.OPT_INDENT_2))
    return path


def check_json(path: Path, capsysbinary: pytest.CaptureFixture[bytes], *args: str) -> Any:
    code = main(["check", str(path), "--json", *args])
    report = orjson.loads(capsysbinary.readouterr().out)
    return code, report


def test_both_spellings_give_the_same_states(tmp_path: Path) -> None:
    pascal = history(tmp_path, one_activity(upper=False), "pascal.json")
    upper = history(tmp_path, one_activity(upper=True), "upper.json")
    assert normalise_kind("EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED") == (
        "WorkflowExecutionUpdateAccepted"
    )
    a, b = replay_of(pascal), replay_of(upper)
    try:
        assert a.error is None and b.error is None
        for n in range(12):
            assert a.state_at(n) == b.state_at(n)
        assert [a.event(i).kind for i in range(11)] == [b.event(i).kind for i in range(11)]  # type: ignore[union-attr]
        assert a.final_state()["activities"]["5"]["result"] == "Hello, Ada!"
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize(
    ("edit", "code", "seq", "line"),
    [
        (lambda es: es.pop(5), "seq_gap", 7, 6),  # eventId 6 missing
        (lambda es: es.insert(3, es[2]), "seq_duplicate", 3, 4),
        (lambda es: es[4].update(eventId="five"), "bad_envelope", None, 5),
        (lambda es: es[4].update(eventType="EVENT_TYPE_SOMETHING_NEW"), "unknown_kind", 5, 5),
        (lambda es: es.pop(4), "seq_gap", 6, 5),
    ],
    ids=["gap", "duplicate", "eventId not a number", "unknown type", "scheduled event missing"],
)
def test_envelope_rules_hold_for_histories(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], edit: Any, code: str,
    seq: int | None, line: int,
) -> None:  # fmt: skip
    events = one_activity()
    edit(events)
    exit_code, report = check_json(history(tmp_path, events), capsysbinary)
    assert exit_code == 1
    error = report["error"]
    assert (error["code"], error["seq"], error["line"]) == (code, seq, line)
    assert error["artifact"] == f"history.json: event {line}"


def renumber(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for i, e in enumerate(events, 1):
        e["eventId"] = str(i)
    return events


@pytest.mark.parametrize(
    ("edit", "seq", "words"),
    [
        (lambda es: es.__setitem__(4, ev(5, "MarkerRecorded", markerName="m")), 6,
         "activity 5, which was never scheduled"),
        (lambda es: es.append(ev(12, "TimerStarted", timerId="1")), 12, "after the workflow closed"),
        (lambda es: es.insert(0, ev(0, "WorkflowTaskScheduled")) or renumber(es), 1,
         "before WorkflowExecutionStarted"),
        (lambda es: es.__setitem__(
            6, ev(7, "ActivityTaskCompleted", scheduledEventId="4", startedEventId="6")), 7,
         "activity 4, which was never scheduled"),
        (lambda es: es.__setitem__(8, ev(9, "WorkflowTaskStarted", scheduledEventId="2")), 9,
         "not the one scheduled"),
    ],
    ids=["activity never scheduled", "event after close", "before start",
         "completes another event's id", "wrong workflow task"],
)  # fmt: skip
def test_illegal_orders_are_illegal_transitions(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], edit: Any, seq: int, words: str
) -> None:
    events = one_activity()
    result = edit(events)
    events = result if isinstance(result, list) else events
    exit_code, report = check_json(history(tmp_path, events), capsysbinary)
    assert exit_code == 1
    assert report["error"]["code"] == "illegal_transition" and report["error"]["seq"] == seq
    assert words in report["error"]["message"]


def test_payloads_are_decoded_for_display() -> None:
    def payload(encoding: str, data: bytes | None, **meta: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "metadata": {"encoding": b64(encoding), **{k: b64(v) for k, v in meta.items()}}
        }
        if data is not None:
            out["data"] = base64.b64encode(data).decode()
        return out

    assert decode_payload(payload("json/plain", b'{"a":[1,2]}')) == {
        "encoding": "json/plain",
        "value": {"a": [1, 2]},
    }
    assert decode_payload(payload("binary/null", None))["value"] is None
    assert decode_payload(payload("binary/plain", b"plain words"))["text"] == "plain words"
    proto = decode_payload(payload("binary/protobuf", b"\x08\x96\x01", messageType="x.Msg"))
    assert proto == {
        "encoding": "binary/protobuf",
        "metadata": {"messageType": "x.Msg"},
        "base64": "CJYB",
        "size": 3,
    }
    broken = decode_payload({"metadata": {"encoding": b64("json/plain")}, "data": "!!not base64"})
    assert broken["note"] == "data is not valid base64"
    not_json = decode_payload(payload("json/plain", b"{oops"))
    assert "not JSON" in not_json["note"] and not_json["size"] == 5


def test_detection_and_format_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = history(tmp_path, one_activity(), "export.txt")  # any name: detected by shape
    assert locate_run(path).format == "temporal"
    assert locate_run(path, fmt="jsonl").format == "jsonl"
    compact = tmp_path / "compact.json"
    compact.write_bytes(orjson.dumps({"events": one_activity()}))
    assert locate_run(compact).format == "temporal"
    # forced the other way, a history is not a ledger: a verdict, not a crash
    assert main(["check", str(path), "--format", "jsonl"]) == 1
    out = capsys.readouterr().out
    assert "bad_json" in out  # pretty JSON is not one object a line
    assert "artifact: export.txt:1" in out  # the file itself is named, not events.jsonl
    not_history = tmp_path / "x.json"
    not_history.write_bytes(b'{"events": 3}')
    assert main(["check", str(not_history), "--format", "temporal"]) == 2
    assert 'no "events" list' in capsys.readouterr().err
    with pytest.raises(CannotRun, match="read once"):
        make_app(str(path), follow=True)


# -- the app ------------------------------------------------------------------------------


async def test_app_shows_activity_input_and_result_in_the_inspector() -> None:
    app = make_app(str(TRACING))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        assert "verified" in status(app) and "temporal" in status(app)
        await pilot.press("colon", "7", "enter")  # ActivityTaskScheduled
        await settle(app, pilot)
        assert seq_at_cursor(app) == 7
        shown = pane_text(app, "receipt")
        assert "activity say_hello" in shown
        assert '"Enchi"' in shown and '"Hello, Enchi!"' in shown  # input and later result
        assert app.query_one("#receipt").border_title == "activity say_hello"
        await pilot.press("colon", "2", "6", "enter")
        await settle(app, pilot)
        assert "state completed" in status(app)


def test_snapshot_research_workflow_mid_way(snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def to_22(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot.app, pilot)
        await pilot.press("colon", "2", "2", "enter")
        await settle(pilot.app, pilot)

    assert snap_compare(make_app(str(RESEARCH)), terminal_size=(140, 40), run_before=to_22)


def test_cli_payload_shorthand_is_read_as_plain_values(tmp_path: Path) -> None:
    """``temporal workflow show`` may print payloads as their plain JSON; a
    value that happens to have a "value" key is still the user's value."""
    events = one_activity()
    attrs = events[0]["workflowExecutionStartedEventAttributes"]
    attrs["input"] = {"payloads": [{"value": 42, "unit": "ms"}, {"text": "hi", "lang": "en"}]}
    assert final_state(history(tmp_path, events))["workflow"]["input"] == [
        {"unit": "ms", "value": 42},
        {"lang": "en", "text": "hi"},
    ]


def test_history_nested_too_deep_is_bad_json_at_its_event(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    cause = '{"message":"m","cause":' * 600 + '{"message":"leaf"}' + "}" * 600
    path = tmp_path / "deep.json"
    path.write_text(
        '{"events":[{"eventId":"1","eventType":"WorkflowExecutionStarted",'
        '"workflowExecutionStartedEventAttributes":{"workflowType":{"name":"W"}}},'
        '{"eventId":"2","eventType":"WorkflowExecutionFailed",'
        '"workflowExecutionFailedEventAttributes":{"failure":' + cause + "}}]}"
    )
    code, report = check_json(path, capsysbinary)
    assert code == 1 and report["error"]["code"] == "bad_json" and report["error"]["line"] == 2
    assert "200 levels" in report["error"]["message"]


@pytest.mark.parametrize("path", sorted(HISTORIES.glob("*.json")), ids=lambda p: p.stem)
async def test_every_history_opens_in_the_app(path: Path) -> None:
    app = make_app(str(path))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        assert "✓ verified" in status(app) and app.replay.error is None
        await pilot.press("G")  # the last event: the workflow closed
        await settle(app, pilot)
        assert "state completed" in status(app)


async def test_the_inspector_shows_what_is_known_at_the_prefix() -> None:
    """At event 1 the workflow is running; that it completed is later news."""
    app = make_app(str(RESEARCH))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("home")
        await settle(app, pilot)
        view = app.main.line_view
        assert view is not None and view.record is not None
        assert view.record[1]["status"] == "running"
        assert view.record_later is not None and view.record_later[1]["status"] == "completed"
        shown = pane_text(app, "receipt")
        now, _, later = shown.partition("later in this run")
        assert '"status": "running"' in now and '"status": "completed"' in later


@pytest.mark.parametrize("upper", [False, True])
def test_a_command_completed_by_a_later_workflow_task_is_not_a_bad_parent(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], upper: bool
) -> None:
    """Commands buffered while an update runs name the workflow task completed
    after them (a forward reference Temporal writes): kept as data."""
    events = one_activity(upper)
    attrs = next(v for k, v in events[4].items() if k.endswith("EventAttributes"))
    attrs["workflowTaskCompletedEventId"] = "10"  # event 5 names event 10
    code, report = check_json(history(tmp_path, events), capsysbinary)
    assert code == 0 and report["error"] is None and report["state"] == "completed"
    paths = locate_run(history(tmp_path, events, "again.json"))
    replay = Replay(paths, rules_for_run(None, paths.events, paths.format)).verify()
    fifth = replay.event(4)
    assert fifth.parent_seq is None  # type: ignore[union-attr]
    assert fifth.payload["workflowTaskCompletedEventId"] == "10"  # type: ignore[union-attr]
    words = "completed by the workflow task at event 10"
    assert words in (replay.step(5).explanation or "")
    from replay_tui.views.runview import RunView

    view = RunView(replay).line_view(4)
    assert view.record is not None and view.record[0].endswith(words)
    assert words not in (replay.step(6).explanation or "")  # names an earlier task: no words
    replay.close()


@pytest.mark.parametrize("upper", [False, True])
def test_an_update_accepted_without_its_request_is_keyed_by_its_protocol_instance(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], upper: bool
) -> None:
    def t(name: str) -> str:
        if not upper:
            return name
        return (
            "EVENT_TYPE_" + "".join(f"_{c}" if c.isupper() else c for c in name).lstrip("_").upper()
        )

    events = [
        *one_activity(upper)[:4],
        ev(5, t("WorkflowExecutionUpdateAccepted"), protocolInstanceId="upd-1",
           acceptedRequestMessageId="upd-1/request", acceptedRequestSequencingEventId="2"),
        ev(6, t("WorkflowExecutionUpdateCompleted"), acceptedEventId="5",
           meta={"updateId": "upd-1"}, outcome={"success": payloads("ok")}),
        ev(7, t("WorkflowTaskScheduled"), attempt=1),
        ev(8, t("WorkflowTaskStarted"), scheduledEventId="7"),
        ev(9, t("WorkflowTaskCompleted"), scheduledEventId="7", startedEventId="8"),
        ev(10, t("WorkflowExecutionCompleted"), result=payloads("done"),
           workflowTaskCompletedEventId="9"),
    ]  # fmt: skip
    code, report = check_json(history(tmp_path, events), capsysbinary)
    assert code == 0 and report["error"] is None, report["error"]
    paths = locate_run(history(tmp_path, events, "again.json"))
    replay = Replay(paths, rules_for_run(None, paths.events, paths.format)).verify()
    update = replay.final_state()["updates"]["upd-1"]
    assert update["status"] == "completed" and update["result"] == "ok"
    replay.close()


@pytest.mark.parametrize("upper", [False, True])
def test_an_unknown_event_a_worker_may_ignore_is_skipped(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], upper: bool
) -> None:
    """Servers add event types flagged workerMayIgnore; SDKs skip them on replay."""
    events = one_activity(upper)
    kind = "EVENT_TYPE_SOMETHING_NEWER" if upper else "SomethingNewer"
    novel = ev(8, kind, detail="x")
    novel["workerMayIgnore"] = True
    for e in events[7:]:
        e["eventId"] = str(int(e["eventId"]) + 1)
        for k, v in e.items():
            if k.endswith("EventAttributes"):
                for field in ("scheduledEventId", "startedEventId", "workflowTaskCompletedEventId"):
                    if field in v and int(v[field]) >= 8:
                        v[field] = str(int(v[field]) + 1)
    events.insert(7, novel)
    code, report = check_json(history(tmp_path, events), capsysbinary)
    assert code == 0 and report["error"] is None and report["state"] == "completed"
    paths = locate_run(history(tmp_path, events, "again.json"))
    replay = Replay(paths, rules_for_run(None, paths.events, paths.format), history=True).verify()
    from replay_tui.views.runview import RunView

    view = RunView(replay)
    assert view.row(7).problem == "ignored (workerMayIgnore)"
    step = replay.step(8)
    assert step.changes == [] and "ignored (workerMayIgnore)" in (step.explanation or "")
    replay.close()
    del novel["workerMayIgnore"]  # without the flag, an unknown type stays unknown
    code, report = check_json(history(tmp_path, events, "strict.json"), capsysbinary)
    assert code == 1 and report["error"]["code"] == "unknown_kind" and report["error"]["seq"] == 8


def test_rows_of_a_history_read_as_temporal_sums_events_up() -> None:
    from replay_tui.views.runview import RunView

    paths = locate_run(RESEARCH)
    replay = Replay(paths, rules_for_run(None, paths.events, paths.format), history=True).verify()
    rows = RunView(replay)
    assert rows.row(0).summary.startswith("ResearchWorkflow on ")
    assert rows.row(4).summary.startswith("invoke_model_activity #1  {")  # payload still after
    assert rows.row(5).summary.startswith("activity of event 5 attempt 1")
    assert "invoke_model_activity" in rows.row(4).search_text()
    replay.close()


@pytest.mark.parametrize("upper", [False, True], ids=["PascalCase", "EVENT_TYPE_"])
def test_a_check_stricter_than_temporal_is_a_warning_not_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], upper: bool
) -> None:
    """A cancel request for an activity that already completed: these rules
    doubt it, Temporal's server is not known never to write it. The history
    verifies, and the check shows as a warning at that event."""
    events = one_activity(upper)
    kind = "EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED" if upper else "ActivityTaskCancelRequested"
    events.insert(7, ev(8, kind, scheduledEventId="5", workflowTaskCompletedEventId="4"))
    renumber(events)
    for e in events[8:]:
        for k, v in e.items():
            if k.endswith("EventAttributes"):
                for field in ("scheduledEventId", "startedEventId", "workflowTaskCompletedEventId"):
                    if field in v and int(v[field]) >= 8:
                        v[field] = str(int(v[field]) + 1)
    path = history(tmp_path, events)
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 warning:" in out
    assert "seq 8" in out and "rule_warning" in out and "stricter than Temporal" in out
    replay = replay_of(path)
    try:
        assert replay.error is None and replay.final_summary()[0] == "completed"
        (warning,) = replay.warnings
        assert (warning.code, warning.seq) == ("rule_warning", 8)
        act = replay.state_at(8)["activities"]["5"]
        assert act["status"] == "completed" and act["cancel_requested"] is False
    finally:
        replay.close()


def test_an_update_accepted_again_is_a_warning_and_completes(tmp_path: Path) -> None:
    accepted = {"protocolInstanceId": "upd-1", "acceptedRequestMessageId": "upd-1/request"}
    events = [
        *one_activity()[:4],
        ev(5, "WorkflowExecutionUpdateAccepted", **accepted),
        ev(6, "WorkflowExecutionUpdateAccepted", **accepted),
        ev(7, "WorkflowExecutionUpdateCompleted", acceptedEventId="6",
           meta={"updateId": "upd-1"}, outcome={"success": payloads("ok")}),
    ]  # fmt: skip
    replay = replay_of(history(tmp_path, events))
    try:
        assert replay.error is None
        assert [(w.code, w.seq) for w in replay.warnings] == [("rule_warning", 6)]
        assert "upd-1, which is already accepted" in replay.warnings[0].message
        assert replay.final_state()["updates"]["upd-1"]["result"] == "ok"
    finally:
        replay.close()
