"""The Collector's JSON lines followed as they are written: each recording
exported span by span (as an exporter sends them, when each span ends),
appended in odd pieces while the replay follows, ends in its truth; the
seqs given while following are those of the complete file read at once."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.core.errors import CannotRun
from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import OTEL, RunPaths, locate_run
from replay_tui.reducers import load_reducer
from replay_tui.ui.launch import make_app
from tests.conftest import TESTS
from tests.helpers.otel_truth import compare
from tests.helpers.waiting import until

TRACES = TESTS / "fixtures" / "otel-traces"
FILES = sorted(
    p
    for p in TRACES.rglob("*.json")
    if not p.name.endswith(".truth.json") and b"resourceSpans" in p.read_bytes()[:200]
)
RULES = load_reducer("otel_genai")


def exported(doc: dict[str, Any]) -> list[bytes]:
    """The export requests an SDK's batch processor of size one would send:
    a span when it ends, a log record when it is emitted, one a line."""
    requests: list[tuple[int, int, dict[str, Any]]] = []
    for rs in doc.get("resourceSpans", []):
        resource = rs.get("resource", {})
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                one = {
                    "resource": resource,
                    "scopeSpans": [{"scope": ss.get("scope"), "spans": [span]}],
                }
                at = int(span.get("endTimeUnixNano") or 0)
                requests.append((at, len(requests), {"resourceSpans": [one]}))
    for rl in doc.get("resourceLogs", []):
        resource = rl.get("resource", {})
        for sl in rl.get("scopeLogs", []):
            for record in sl.get("logRecords", []):
                one = {
                    "resource": resource,
                    "scopeLogs": [{"scope": sl.get("scope"), "logRecords": [record]}],
                }
                at = int(record.get("timeUnixNano") or record.get("observedTimeUnixNano") or 0)
                requests.append((at, len(requests), {"resourceLogs": [one]}))
    requests.sort(key=lambda r: r[:2])
    return [orjson.dumps(r[2]) + b"\n" for r in requests]


def _truth(path: Path) -> Any:
    return orjson.loads(path.with_name(path.stem + ".truth.json").read_bytes())


def _lines_of(replay: Replay) -> list[bytes]:
    return [replay.ledger.raw_line(i) for i in range(len(replay.ledger))]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(TRACES)))
def test_a_recording_exported_as_it_ran_and_followed_ends_in_its_truth(
    path: Path, tmp_path: Path
) -> None:
    lines = exported(orjson.loads(path.read_bytes()))
    data = b"".join(lines)
    live = tmp_path / "live.jsonl"
    paths = locate_run(live, fmt=OTEL, may_be_empty=True)
    followed = Replay(paths, RULES, following=True, checkpoint_every=5)
    assert followed.advance() == 0  # not written yet: waited for
    rng = random.Random(path.name)
    pos = 0
    with open(live, "ab") as out:
        while pos < len(data):  # pieces cut anywhere, even inside a line
            piece = data[pos : pos + rng.randint(1, 3000)]
            out.write(piece)
            out.flush()
            pos += len(piece)
            followed.advance()
            assert followed.error is None, followed.error
    followed.finish()
    assert followed.error is None, followed.error
    assert compare(_truth(path), followed.final_state()) == []
    whole, _ = open_replay(str(live))
    try:
        whole.verify()
        assert whole.ledger.sha256() == followed.ledger.sha256()
        assert _lines_of(whole) == _lines_of(followed)  # the same seq for each record
        assert whole.final_state() == followed.final_state()
    finally:
        whole.close()
        followed.close()


def _live(tmp_path: Path, name: str = "adk_py/v1_default/S2.json") -> tuple[Path, list[bytes]]:
    return tmp_path / "traces.jsonl", exported(orjson.loads((TRACES / name).read_bytes()))


def test_a_line_being_written_waits_and_is_read_once_the_file_is_complete(
    tmp_path: Path,
) -> None:
    live, lines = _live(tmp_path)
    live.write_bytes(b"".join(lines[:-1]) + lines[-1][:-1])  # the last line has no newline yet
    followed = Replay(RunPaths(tmp_path, live, OTEL), RULES, following=True)
    followed.advance()
    waiting = followed.valid
    followed.finish()  # complete: the last line parses, so it counts
    assert followed.error is None and followed.valid > waiting
    assert compare(_truth(TRACES / "adk_py/v1_default/S2.json"), followed.final_state()) == []
    followed.close()


def test_a_cut_last_line_fails_as_truncated_once_complete(tmp_path: Path) -> None:
    live, lines = _live(tmp_path)
    live.write_bytes(b"".join(lines) + b'{"resourceSpans": [{"scopeSp')
    replay, _ = open_replay(str(live))
    replay.verify()
    assert replay.error is not None and replay.error.code == "truncated_line"
    # every complete line replayed before it; the cut one is the last event
    assert replay.error.line == len(replay.ledger) == replay.valid + 1
    replay.close()


def test_a_line_that_is_no_export_request_stops_there_naming_its_line(tmp_path: Path) -> None:
    live, lines = _live(tmp_path)
    live.write_bytes(b"".join(lines[:3]) + b"{not json\n" + b'{"other": 1}\n' + b"".join(lines[3:]))
    replay, _ = open_replay(str(live))
    replay.verify()
    assert replay.error is not None and replay.error.code == "bad_json"
    assert "traces.jsonl: line 4 is not JSON" in replay.error.message
    assert replay.error.line == replay.valid + 1
    assert replay.ledger.artifact(replay.error.line).startswith("traces.jsonl: line 4, event ")
    replay.close()
    live.write_bytes(b"".join(lines[:3]) + b'{"other": 1}\n')
    replay, _ = open_replay(str(live), fmt=OTEL)
    replay.verify()
    assert replay.error is not None and replay.error.code == "bad_envelope"
    assert "line 4 is not an OTLP export request" in replay.error.message
    replay.close()


def test_a_trace_document_is_not_followed_and_says_why(tmp_path: Path) -> None:
    pretty = TRACES / "hand" / "mcp_tool_call.json"
    with pytest.raises(CannotRun, match="following is for the Collector's JSON lines"):
        Replay(locate_run(pretty), RULES, following=True)


def test_an_artifact_names_the_file_the_line_and_the_span(tmp_path: Path) -> None:
    live, lines = _live(tmp_path)
    live.write_bytes(b"".join(lines))
    replay, _ = open_replay(str(live))
    replay.verify()
    span = orjson.loads(replay.ledger.raw_line(0))["payload"]["span_id"]
    assert replay.ledger.artifact(1) == f"traces.jsonl: line 1, event 1, span {span}"
    replay.close()
    whole, _ = open_replay(str(TRACES / "hand" / "mcp_tool_call.json"))
    whole.verify()
    span = orjson.loads(whole.ledger.raw_line(0))["payload"]["span_id"]
    assert whole.ledger.artifact(1) == f"mcp_tool_call.json: event 1, span {span}"
    whole.close()


async def test_the_app_follows_a_trace_as_it_is_exported(tmp_path: Path) -> None:
    path = TRACES / "hand" / "openai_agents_handoff.json"
    live = tmp_path / "traces.jsonl"
    lines = exported(orjson.loads(path.read_bytes()))
    app = make_app(live, follow=True, fmt=OTEL)
    async with app.run_test(size=(140, 40)) as pilot:
        with open(live, "ab") as out:
            for line in lines:
                out.write(line)
                out.flush()
                await pilot.pause(0.05)  # not a wait: the writer's pace
        truth = _truth(path)  # every span written: the state comes to be the trace's
        await until(pilot, lambda: compare(truth, app.replay.final_state()) == [])
        await until(pilot, lambda: app.replay.valid == len(app.replay.ledger) > 0)
        await until(pilot, lambda: app.main.timeline.cursor_index == app.replay.valid - 1)
        assert app.main.riding  # rode the tail as spans came
        assert app.replay.error is None
