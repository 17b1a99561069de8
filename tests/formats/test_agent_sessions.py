"""Claude Code transcripts and Codex rollouts as sources: the file is the ledger.

Every real sample (``tests/fixtures/agent-sessions/``, see its README)
verifies, with calls and usage equal to a count made here with plain json;
damaged copies fail at their line with the spec's code; what is only new
passes; the file is never touched; hostile text stays inert; a growing
session is followed.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.cli import main
from replay_tui.core.errors import CannotRun
from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import Replay
from replay_tui.formats.claude_records import MESSAGE_KINDS as MODEL
from replay_tui.formats.id_table import IdTable
from replay_tui.formats.run import RunPaths, locate_run
from replay_tui.formats.sessions import (
    CLAUDE_CODE,
    CODEX,
    claude_code_kind,
    codex_kind,
    session_format_of,
    subagent_transcript,
)
from replay_tui.reducers import load_reducer, rules_for_run
from replay_tui.views.runview import RunView
from tests.conftest import ROOT
from tests.corpus.make_corpus import HOSTILE
from tests.helpers.inert import assert_inert

FIXTURES = ROOT / "tests" / "fixtures" / "agent-sessions"
CLAUDE = sorted((FIXTURES / "claude-code").rglob("*.jsonl"))
CODEX_FILES = sorted((FIXTURES / "codex").glob("*.jsonl"))
SIMPLE = FIXTURES / "claude-code" / "viewer--1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
COMPACTED = FIXTURES / "claude-code" / "codemie--session-624a4a58.jsonl"
SIDECHAINS = FIXTURES / "claude-code" / "viewer--fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
SUBAGENTS = FIXTURES / "claude-code" / "codemie--incremental-subagents"
INCREMENTAL = FIXTURES / "claude-code" / "codemie--incremental-simple"
ROLLOUT = CODEX_FILES[0]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def write_records(path: Path, recs: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in recs))
    return path


def checked(path: Path) -> Replay:
    replay, _ = open_replay(str(path))
    return replay.verify()


def report_of(path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> tuple[int, Any]:
    code = main(["check", str(path), "--json"])
    return code, orjson.loads(capsysbinary.readouterr().out)


# -- independent counts, with plain json ---------------------------------------------


def claude_counts(path: Path) -> dict[str, Any]:
    """Calls (id -> tool, status), usage (each message once, its last line's)
    and turns, counted straight from the records."""
    calls: dict[str, tuple[str, str]] = {}
    last_usage: dict[str, dict[str, Any]] = {}
    turns = 0
    recs = records(path)
    sub_agent_file = all(r.get("isSidechain") is not False for r in recs)
    for r in recs:
        msg = r.get("message") if isinstance(r.get("message"), dict) else {}
        content = msg.get("content")
        blocks = content if isinstance(content, list) else []
        if r.get("type") == "assistant":
            for b in blocks:
                if b.get("type") == "tool_use":
                    calls[b["id"]] = (b["name"], "requested")
            if isinstance(msg.get("usage"), dict):
                last_usage[msg["id"]] = msg["usage"]
        if r.get("type") == "user":
            results = [b for b in blocks if b.get("type") == "tool_result"]
            for b in results:
                calls[b["tool_use_id"]] = (
                    calls[b["tool_use_id"]][0],
                    "error" if b.get("is_error") is True else "ok",
                )
            text = (
                content
                if isinstance(content, str)
                else " ".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            )
            if (
                not results
                and (isinstance(content, str) or any(b.get("type") == "text" for b in blocks))
                and not r.get("isMeta")
                and not r.get("isCompactSummary")
                and (not r.get("isSidechain") or sub_agent_file)
                and not text.lstrip().startswith(("<local-command-", "[Request interrupted"))
            ):
                turns += 1
    fields = (
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    )
    usage = {f: sum(u.get(f, 0) for u in last_usage.values()) for f in fields}
    return {"calls": calls, "usage": usage, "turns": turns}


def codex_counts(path: Path) -> dict[str, Any]:
    calls: dict[str, tuple[str, bool]] = {}  # call_id -> (tool, answered)
    usage: dict[str, Any] = {}
    turns = 0
    for r in records(path):
        p = r.get("payload", {})
        t = p.get("type")
        if r["type"] == "response_item" and t in ("function_call", "custom_tool_call"):
            calls[p["call_id"]] = (p["name"], False)
        elif r["type"] == "response_item" and t in (
            "function_call_output",
            "custom_tool_call_output",
        ):
            calls[p["call_id"]] = (calls[p["call_id"]][0], True)
        elif r["type"] == "event_msg" and t == "token_count" and p.get("info"):
            usage = p["info"]["total_token_usage"]
        elif r["type"] == "event_msg" and t == "user_message":
            turns += 1
    return {"calls": calls, "usage": usage, "turns": turns}


# -- every real sample ----------------------------------------------------------------


def test_the_fixtures_are_the_shared_samples_byte_for_byte() -> None:
    shared = ROOT.parent / "shared" / "agent-sessions"
    if not shared.is_dir():
        pytest.skip("../shared/ is not beside this clone")
    for path in [*CLAUDE, *CODEX_FILES]:
        assert path.read_bytes() == (shared / path.relative_to(FIXTURES)).read_bytes()


@pytest.mark.parametrize("path", CLAUDE, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_claude_code_sample_verifies_with_its_calls_and_usage(
    path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    code, report = report_of(path, capsysbinary)
    assert code == 0 and report["error"] is None, report["error"]
    assert report["rules"]["name"] == "claude_code"
    assert report["events"] == len(path.read_bytes().splitlines())
    assert report["events_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert report["receipts"] == 0
    state = checked(path).final_state()
    want = claude_counts(path)
    in_flight = {cid: c for cid, c in want["calls"].items() if c[1] == "requested"}
    assert {cid: (c["tool"], c["status"]) for cid, c in state["calls"].items()} == in_flight
    tools: dict[str, dict[str, int]] = {}
    for tool, status in want["calls"].values():
        counts = tools.setdefault(tool, {"calls": 0, "errors": 0})
        counts["calls"] += 1
        counts["errors"] += status == "error"
    assert state["tools"] == tools
    assert state["usage"] == want["usage"]
    assert state["turns"] == want["turns"]
    assert state["in_flight"] == sum(c == "requested" for _, c in want["calls"].values())


@pytest.mark.parametrize("path", CODEX_FILES, ids=lambda p: p.name)
def test_every_codex_sample_verifies_with_its_calls_and_usage(
    path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    code, report = report_of(path, capsysbinary)
    assert code == 0 and report["error"] is None, report["error"]
    assert report["rules"]["name"] == "codex"
    state = checked(path).final_state()
    want = codex_counts(path)
    got = {cid: (c["tool"], c["status"] != "requested") for cid, c in state["calls"].items()}
    assert got == want["calls"]
    assert state["usage"] == want["usage"] and state["usage"]["total_tokens"] > 0
    assert state["turns"] == want["turns"] == 2
    assert state["model"] == "gpt-5.5" and state["version"] == "0.125.0"
    assert [s["status"] for s in state["todos"]] == ["completed", "completed", "in_progress"]


def test_a_session_opens_by_its_content_whatever_its_name(tmp_path: Path) -> None:
    for src, fmt in ((SIMPLE, CLAUDE_CODE), (ROLLOUT, CODEX), (SIDECHAINS, CLAUDE_CODE)):
        for name in ("session.jsonl", "notes.log", "events.jsonl"):
            copy = tmp_path / fmt / name
            copy.parent.mkdir(exist_ok=True)
            shutil.copy(src, copy)
            assert locate_run(copy).format == fmt
    # --format forces: a session read as a ledger fails as one, and the reverse
    assert locate_run(SIMPLE, fmt="jsonl").format == "jsonl"
    assert locate_run(SIMPLE, fmt=CODEX).format == CODEX
    with pytest.raises(CannotRun, match="takes a session file"):
        locate_run(FIXTURES, fmt=CLAUDE_CODE)
    # an envelope ledger is still one
    assert locate_run(ROOT / "sample_runs" / "demo-001" / "events.jsonl").format == "jsonl"


def test_summary_records_first_still_open_as_claude_code(tmp_path: Path) -> None:
    assert records(SIDECHAINS)[0]["type"] == "summary"
    assert locate_run(SIDECHAINS).format == CLAUDE_CODE
    path = INCREMENTAL / "turn-1.jsonl"
    # only bookkeeping records in the head: still a transcript
    only = [r for r in records(path) if r["type"] == "summary"] * 6
    assert locate_run(write_records(tmp_path / "s.jsonl", only)).format == CLAUDE_CODE
    # a first record longer than the head read: told by its start
    long = records(SIMPLE)[:2]
    long[0]["message"]["content"] = "x" * (2 << 20)
    assert locate_run(write_records(tmp_path / "long.jsonl", long)).format == CLAUDE_CODE


def test_forced_formats_and_default_rules(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["check", str(SIMPLE), "--format", "jsonl"]) == 1
    assert b"bad_envelope: missing field seq" in capsysbinary.readouterr().out
    assert main(["check", str(SIMPLE), "--format", "claude-code"]) == 0
    capsysbinary.readouterr()
    assert rules_for_run(None, SIMPLE, CLAUDE_CODE).reducer.name == "claude_code"
    assert rules_for_run(None, ROLLOUT, CODEX).reducer.name == "codex"
    # rules for another source are never chosen for a ledger by its first kind
    for name in ("claude_code", "codex"):
        assert getattr(load_reducer(name).reducer, "source_format", None)


def test_what_the_state_holds_besides_calls_and_usage() -> None:
    state = checked(SIMPLE).final_state()
    assert state["model"] == "claude-sonnet-4-20250514" and state["version"] == "1.0.98"
    assert state["session"]["id"] == "1af7fc5e-8455-4414-9ccd-011d40f70b2a"
    assert state["todos"][0]["status"] == "completed"
    # calls leave the state once the model has read their results: counts per tool stay
    assert state["calls"] == {} and state["tools"]["Write"] == {"calls": 1, "errors": 1}
    replay = checked(SIMPLE)
    asked = replay.state_at(25)["calls"]["toolu_01LM7vfs6eMdhHJokVajzJA1"]
    assert (asked["tool"], asked["status"], asked["seq"]) == ("Write", "requested", 25)
    write = replay.state_at(26)["calls"]["toolu_01LM7vfs6eMdhHJokVajzJA1"]
    assert write["status"] == "error" and write["tool"] == "Write"
    assert write["input"] == "/path/to/Demo/CLAUDE.md" and "permissions" in write["error"]
    assert (write["seq"], write["result_seq"]) == (25, 26) and write["duration_s"] == 0.03
    read = next(n for n in range(27, replay.valid + 1) if replay.event(n - 1).kind in MODEL)
    assert "toolu_01LM7vfs6eMdhHJokVajzJA1" not in replay.state_at(read)["calls"]
    compacted = checked(COMPACTED).final_state()
    assert compacted["compactions"] == [
        {
            "seq": 158,
            "trigger": "auto",
            "pre_tokens": 155979,
            "logical_parent": "c199c148-d599-4171-a83b-3589965168df",
            "summary_seq": 159,
            "summary_chars": 13364,
            "post_tokens": 36541,
        }
    ]
    side = checked(SIDECHAINS).final_state()
    assert len(side["agents"]) == 5
    assert {a["description"] for a in side["agents"].values()} >= {"Setup Next.js project"}
    assert all(a["status"] == "ok" for a in side["agents"].values())
    task = checked(SUBAGENTS / "turn-2.jsonl").final_state()["agents"]
    assert [a["agent_id"] for a in task.values()] == ["a485154"]
    sub = checked(SUBAGENTS / "turn-2" / "subagents" / "agent-a485154.jsonl").final_state()
    assert sub["session"]["sidechain"] is True and sub["session"]["agent_id"] == "a485154"


def test_a_call_in_flight_is_still_open_and_the_summary_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", str(SUBAGENTS / "turn-1.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "state tools_running (claude_code 2.0.0)" in out
    assert "still open: toolu_bdrk_01NNGBKLENmr7j3TfUKZW7rz Bash find . -name" in out


def test_the_kinds_of_records() -> None:
    kinds = [claude_code_kind(r)[0] for r in records(COMPACTED)]
    assert {"user", "tool_result", "assistant", "thinking", "tool_use"} <= set(kinds)
    assert {"compact_boundary", "file-history-snapshot", "queue-operation"} <= set(kinds)
    assert claude_code_kind({"type": "new-in-3.0"}) == ("new-in-3.0", None)
    assert claude_code_kind({}) == ("unknown", None)
    kinds = [codex_kind(r) for r in records(ROLLOUT)]
    assert ("session_meta", None) in kinds and ("token_count", None) in kinds
    assert ("user", None) in kinds and ("developer", None) in kinds
    assert any(k == "function_call_output" and c for k, c in kinds)
    # the first rollouts wrote bare items after a header
    assert codex_kind({"id": "x", "timestamp": "t", "instructions": ""})[0] == "session_meta"
    assert codex_kind({"type": "function_call", "call_id": "c", "name": "shell"}) == (
        "function_call",
        "c",
    )
    assert codex_kind({"record_type": "state"})[0] == "state"


def test_rows_and_rules_speak_the_tools_language() -> None:
    replay, _ = open_replay(str(SIMPLE), history=True)
    replay.verify()
    view = RunView(replay)
    assert view.row(15).kind == "tool_use" and view.row(15).summary == "Bash ls -la"
    assert view.row(20).summary.startswith("ok · total 0")
    assert view.row(25).summary.startswith("error · Claude requested permissions")
    assert view.row(0).family == "run" and view.row(2).family == "model"
    assert view.row(15).family == "tool"
    step = replay.step(21)
    assert step.explanation is not None
    assert step.explanation.startswith("tool_result ok 74 ms: Bash ls -la (toolu_012Gbtu9")
    assert replay.step(16).explanation == (
        "tool_use: Bash ls -la (toolu_012Gbtu9wRFgVWjdDUHE3djw) requested; 1 in flight; "
        "awaiting_model -> tools_running"
    )


# -- receipts: the recorded results -------------------------------------------------------


PERSISTED_SID = "e9fb405b-169f-40eb-9396-7e75076f045d"
PERSISTED_CALL = "toolu_bdrk_01CaTZ658VzFpoM9YptVLjGg"


def _persisted_layout(tmp_path: Path) -> tuple[Path, Path]:
    """The real sub-agent transcript whose line 37 is a ``<persisted-output>``
    result, where Claude Code keeps it: ``<sid>/subagents/``; and where its
    saved result belongs: ``<sid>/tool-results/<tool_use_id>.txt``."""
    sub = tmp_path / PERSISTED_SID / "subagents"
    sub.mkdir(parents=True)
    transcript = sub / "agent-a485154.jsonl"
    shutil.copyfile(SUBAGENTS / "turn-2" / "subagents" / "agent-a485154.jsonl", transcript)
    return transcript, tmp_path / PERSISTED_SID / "tool-results" / f"{PERSISTED_CALL}.txt"


def _result_at(path: Path, seq: int) -> Any:
    replay, _ = open_replay(str(path), history=True)
    replay.verify()
    result = RunView(replay).line_view(seq - 1).result
    assert result is not None and result.seq == seq
    return result.data


def test_a_persisted_result_is_read_whole_from_beside_the_session(tmp_path: Path) -> None:
    transcript, saved = _persisted_layout(tmp_path)
    whole = "the whole output\n" * 10_000  # past the 2 KB preview
    saved.parent.mkdir()
    saved.write_text(whole)
    data = _result_at(transcript, 37)
    got = data["persisted_output"]
    assert got["file"] == f"{PERSISTED_SID}/tool-results/{PERSISTED_CALL}.txt"
    assert got["size"] == "126.7KB" and got["bytes"] == len(whole) and got["text"] == whole
    assert "<persisted-output>" in data["tool_result"]["content"]  # the preview, as recorded
    assert saved.read_text() == whole  # never written


def test_a_persisted_result_not_on_disk_says_so_and_keeps_the_preview(tmp_path: Path) -> None:
    transcript, saved = _persisted_layout(tmp_path)
    got = _result_at(transcript, 37)["persisted_output"]
    assert "text" not in got and "the tool_result holds its preview only" in got["missing"]
    # a symlink, for the file or for its folder, is never followed
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not the session's")
    saved.parent.mkdir()
    saved.symlink_to(outside)
    got = _result_at(transcript, 37)["persisted_output"]
    assert "text" not in got and "symlink" in got["missing"]
    saved.unlink()
    saved.parent.rmdir()
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / saved.name).write_text("not the session's")
    saved.parent.symlink_to(tmp_path / "results")
    assert "text" not in _result_at(transcript, 37)["persisted_output"]


def test_a_resumed_file_names_each_session_and_where_it_starts(tmp_path: Path) -> None:
    """claude --resume writes on in the same file under a new sessionId: the
    lineage is in the state, and the status line says which one is at the
    cursor."""
    recs = records(SIMPLE)
    first = recs[0]["sessionId"]
    for rec in recs[20:]:
        rec["sessionId"] = "2b7f0c1e-0000-4000-8000-000000000002"
    path = write_records(tmp_path / "s.jsonl", recs)
    replay, _ = open_replay(str(path), history=True)
    replay.verify()
    state = replay.final_state()
    assert state["session"]["lineage"] == [
        {"id": first, "from": 1},
        {"id": "2b7f0c1e-0000-4000-8000-000000000002", "from": 21},
    ]
    assert state["session"]["id"] == first  # the session the file is named after
    view = RunView(replay)
    assert view.line_view(10).where is None  # one session so far
    assert view.line_view(25).where == "session 2 in this file: 2b7f0c1e… from line 21"


def test_a_compaction_says_its_summary_and_the_tokens_after_it() -> None:
    replay, _ = open_replay(str(COMPACTED), history=True)
    replay.verify()
    (compaction,) = replay.final_state()["compactions"]
    at = compaction["seq"]
    summary = records(COMPACTED)[compaction["summary_seq"] - 1]
    assert compaction["summary_seq"] == at + 1 and summary["isCompactSummary"] is True
    assert compaction["summary_chars"] == len(summary["message"]["content"])
    assert compaction["pre_tokens"] == 155_979
    assert 0 < compaction["post_tokens"] < compaction["pre_tokens"]


def test_a_codex_fork_and_a_sub_agent_thread_name_their_origin(tmp_path: Path) -> None:
    recs = records(ROLLOUT)
    assert recs[0]["type"] == "session_meta"
    recs[0]["payload"]["forked_from_id"] = "019e0000-0000-7000-8000-00000000f0f0"
    recs[0]["payload"]["source"] = {"subagent": {"thread_spawn": {"parent_thread_id": "019e-p"}}}
    session = checked(write_records(tmp_path / "r.jsonl", recs)).final_state()["session"]
    assert session["forked_from"] == "019e0000-0000-7000-8000-00000000f0f0"
    assert session["parent_thread"] == "019e-p"
    assert checked(ROLLOUT).final_state()["session"]["forked_from"] is None


def test_a_calls_receipt_is_its_recorded_result() -> None:
    replay, _ = open_replay(str(SIMPLE), history=True)
    replay.verify()
    view = RunView(replay)
    # on the result's own line: the block, the structured result, where, how big
    at_result = view.line_view(25)
    result = at_result.result
    assert result is not None and at_result.receipt is None
    assert (result.call_id, result.tool, result.status) == (
        "toolu_01LM7vfs6eMdhHJokVajzJA1",
        "Write",
        "error",
    )
    assert result.seq == 26 and result.artifact == f"{SIMPLE.name}:26"
    raw = SIMPLE.read_bytes().splitlines()[25]
    assert result.size == len(raw)
    assert result.sha256 == hashlib.sha256(raw).hexdigest()
    assert result.data["tool_result"]["is_error"] is True
    assert result.data["toolUseResult"].startswith("Error: Claude requested permissions")
    assert at_result.record is not None and at_result.record[1] is result.data
    assert at_result.record[0].startswith("Write result · viewer--1af7fc5e")
    # on the request's line: not yet recorded there, recorded later
    at_request = view.line_view(24)
    assert at_request.result is not None and at_request.result.seq is None
    assert at_request.result_later is not None and at_request.result_later.seq == 26
    assert at_request.record is not None and "no result recorded yet" in at_request.record[0]
    assert at_request.record_later is not None
    assert at_request.record_later[1]["tool_result"]["tool_use_id"] == result.call_id
    # a line with no call has none
    assert view.line_view(0).result is None and view.line_view(0).record is None


def test_a_codex_calls_receipt_is_its_output_item() -> None:
    replay, _ = open_replay(str(ROLLOUT), history=True)
    replay.verify()
    view = RunView(replay)
    lv = view.line_view(8)  # function_call exec_command, answered at line 11
    assert lv.result is None or lv.result.seq is None
    assert lv.result_later is not None and lv.result_later.seq == 11
    assert lv.result_later.data["type"] == "function_call_output"
    assert lv.result_later.data["call_id"] == "call_Y2p6KmqwoTtpi6atpDPuxC5M"


# -- damaged copies fail at their line -------------------------------------------------------


def _error(path: Path) -> tuple[str, int | None]:
    replay = checked(path)
    assert replay.error is not None
    return replay.error.code, replay.error.line


def test_a_result_for_a_call_never_requested(tmp_path: Path) -> None:
    recs = records(SIMPLE)
    recs[25]["message"]["content"][0]["tool_use_id"] = "toolu_NEVER"
    assert _error(write_records(tmp_path / "s.jsonl", recs)) == ("illegal_transition", 26)
    recs = records(ROLLOUT)
    at = next(i for i, r in enumerate(recs) if r["payload"].get("type") == "function_call_output")
    recs[at]["payload"]["call_id"] = "call_NEVER"
    assert _error(write_records(tmp_path / "r.jsonl", recs)) == ("illegal_transition", at + 1)


def test_a_second_result_for_one_call(tmp_path: Path) -> None:
    recs = records(SIMPLE)
    again = dict(recs[25], uuid="11111111-2222-3333-4444-555555555555", parentUuid=recs[25]["uuid"])
    recs.insert(26, again)
    recs[27]["parentUuid"] = again["uuid"]
    assert _error(write_records(tmp_path / "s.jsonl", recs)) == ("illegal_transition", 27)
    recs = records(ROLLOUT)
    at = next(i for i, r in enumerate(recs) if r["payload"].get("type") == "function_call_output")
    recs.insert(at + 1, recs[at])
    assert _error(write_records(tmp_path / "r.jsonl", recs)) == ("illegal_transition", at + 2)


def test_a_record_repeated(tmp_path: Path) -> None:
    lines = SIMPLE.read_bytes().splitlines(keepends=True)
    (tmp_path / "s.jsonl").write_bytes(b"".join([*lines[:5], lines[4], *lines[5:]]))
    code, line = _error(tmp_path / "s.jsonl")
    assert (code, line) == ("seq_duplicate", 6)
    assert "already used at line 5" in checked(tmp_path / "s.jsonl").error.message  # type: ignore[union-attr]


def test_the_last_line_cut(tmp_path: Path) -> None:
    for src in (SIMPLE, ROLLOUT):
        data = src.read_bytes()
        (tmp_path / src.name).write_bytes(data[:-40])
        assert _error(tmp_path / src.name) == ("truncated_line", len(data.splitlines()))


def _findings(replay: Replay) -> list[tuple[str, int | None]]:
    return [(w.code, w.line) for w in replay.warnings if w.code != "ts_backwards"]


def test_a_parent_removed_is_a_finding_with_its_cost(tmp_path: Path) -> None:
    """Claude Code goes on writing after a parentUuid that names no record
    (most often after --resume): replay goes on too, and says what a later
    resume loses."""
    recs = records(SIMPLE)
    assert recs[3]["parentUuid"] == recs[2]["uuid"]
    del recs[2]  # a text reply lost: the next record names it
    replay = checked(write_records(tmp_path / "s.jsonl", recs))
    assert replay.error is None and replay.valid == len(recs)
    assert _findings(replay) == [("broken_chain", 3)]
    assert "the 2 records before it drop out" in replay.warnings[0].message
    chain = replay.final_state()["chain"]
    assert [(b["seq"], b["drops"]) for b in chain["breaks"]] == [(3, 2)]
    assert chain["resume"]["from"] == 3 and chain["resume"]["stops"] == "break"
    (note,) = replay.notes()
    assert "the chain breaks at line 3" in note and "the 2 records before it drop out" in note


def test_a_break_after_a_compaction_and_the_compaction_itself(tmp_path: Path) -> None:
    """A resume stops at a compaction by design (its summary stands for what
    came before): said as such, not as a loss. A parent never written after
    the compaction (the first prompt after resuming it) is a break, and the
    resume stops there instead."""
    replay = checked(COMPACTED)
    resume = replay.final_state()["chain"]["resume"]
    at = next(i for i, r in enumerate(records(COMPACTED)) if r.get("subtype") == "compact_boundary")
    assert (resume["from"], resume["stops"], resume["drops"]) == (at + 1, "compaction", 0)
    (note,) = replay.notes()
    assert f"from the compaction at line {at + 1}" in note and "summary stands for" in note
    recs = records(COMPACTED)
    later = next(
        i for i, r in enumerate(recs) if i > at + 2 and r.get("type") == "user" and r["parentUuid"]
    )
    recs[later]["parentUuid"] = "11111111-2222-4333-8444-555555555555"  # never written
    replay = checked(write_records(tmp_path / "s.jsonl", recs))
    assert replay.error is None
    assert _findings(replay) == [("broken_chain", later + 1)]
    resume = replay.final_state()["chain"]["resume"]
    assert (resume["from"], resume["stops"]) == (later + 1, "break") and resume["drops"] > 0


def test_timestamps_out_of_order_among_parallel_results_are_no_warning(tmp_path: Path) -> None:
    """Lines 6-10 request five calls at once, lines 11-15 are their results:
    results written a few milliseconds out of order say nothing; a result
    stamped before its request does (ts_backwards)."""
    recs = records(SIMPLE)
    assert [r["message"]["content"][0]["type"] for r in recs[5:15]] == ["tool_use"] * 5 + [
        "tool_result"
    ] * 5
    recs[10]["timestamp"], recs[11]["timestamp"] = recs[11]["timestamp"], recs[10]["timestamp"]
    replay = checked(write_records(tmp_path / "a.jsonl", recs))
    assert replay.error is None and not replay.warnings
    recs[12]["timestamp"] = recs[4]["timestamp"]  # before any of the five was requested
    replay = checked(write_records(tmp_path / "b.jsonl", recs))
    assert [(w.code, w.line) for w in replay.warnings] == [("ts_backwards", 13)]


def test_a_parent_written_after_its_child_is_mended_where_it_appears(tmp_path: Path) -> None:
    """Claude Code's reader reads the whole file before it walks: a parent
    written later is found. A finding at both lines; from the parent's line
    on, a resume walks through it to the session's start."""
    recs = records(SIMPLE)
    assert recs[2]["parentUuid"] == recs[1]["uuid"]
    recs[1], recs[2] = recs[2], recs[1]  # the child first
    replay = checked(write_records(tmp_path / "s.jsonl", recs))
    assert replay.error is None
    assert _findings(replay) == [("broken_chain", 2), ("chain_order", 3)]
    assert replay.state_at(2)["chain"]["resume"]["stops"] == "break"  # as the file stood
    chain = replay.final_state()["chain"]
    assert chain["breaks"][0]["mended_at"] == 3
    assert (chain["resume"]["from"], chain["resume"]["stops"]) == (1, "start")
    assert replay.notes() == []


def test_a_parent_chain_that_loops_is_said_and_left_broken(tmp_path: Path) -> None:
    recs = records(SIMPLE)
    recs[1]["parentUuid"] = recs[2]["uuid"]  # 2 -> 3 -> 2
    replay = checked(write_records(tmp_path / "t.jsonl", recs))
    assert replay.error is None
    assert _findings(replay) == [("broken_chain", 2), ("chain_loop", 3)]
    assert "a loop" in replay.warnings[-1].message
    assert replay.final_state()["chain"]["resume"]["stops"] == "break"


def test_check_fails_on_a_finding_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recs = records(SIMPLE)
    del recs[2]
    path = write_records(tmp_path / "s.jsonl", recs)
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "broken_chain: seq 3:" in out and "claude --resume from the last message" in out
    assert main(["check", str(path), "--fail-on", "broken_chain"]) == 1
    assert "failed: 1 warning of a code --fail-on names (broken_chain)" in capsys.readouterr().out
    assert main(["check", str(path), "--fail-on", "ts_backwards"]) == 0


def test_bad_json_and_encoding_as_for_any_ledger(tmp_path: Path) -> None:
    lines = SIMPLE.read_bytes().splitlines(keepends=True)
    (tmp_path / "a.jsonl").write_bytes(b"".join([*lines[:3], b'{"type": "user",\n', *lines[3:]]))
    assert _error(tmp_path / "a.jsonl") == ("bad_json", 4)
    (tmp_path / "b.jsonl").write_bytes(b"".join([*lines[:3], b'{"x": "\xff"}\n', *lines[3:]]))
    assert _error(tmp_path / "b.jsonl") == ("bad_encoding", 4)
    (tmp_path / "c.jsonl").write_bytes(b"".join([*lines[:3], b"\n", *lines[3:]]))
    assert _error(tmp_path / "c.jsonl") == ("blank_line", 4)
    (tmp_path / "d.jsonl").write_bytes(
        b"".join([*lines[:3], b'{"type": "x", "type": "y"}\n', *lines[3:]])
    )
    assert _error(tmp_path / "d.jsonl") == ("bad_json", 4)


def test_new_chains_the_format_allows(tmp_path: Path) -> None:
    # a compaction's boundary starts a new chain, even naming an unknown parent
    recs = records(COMPACTED)
    at = next(i for i, r in enumerate(recs) if r.get("subtype") == "compact_boundary")
    recs[at]["parentUuid"] = "not-in-this-file"
    assert checked(write_records(tmp_path / "c.jsonl", recs)).error is None
    # a sub-agent's transcript may name parents in the main session
    recs = records(SUBAGENTS / "turn-2" / "subagents" / "agent-a485154.jsonl")
    main_uuid = records(SUBAGENTS / "turn-2.jsonl")[5]["uuid"]
    recs[0]["parentUuid"] = main_uuid
    assert checked(write_records(tmp_path / "agent-a485154.jsonl", recs)).error is None
    # ... but a main session may not: a break in its chain (a finding)
    recs = records(SIMPLE)
    recs[5]["parentUuid"] = main_uuid
    assert _findings(checked(write_records(tmp_path / "s.jsonl", recs))) == [("broken_chain", 6)]


# -- tolerant where it is only new -----------------------------------------------------------


def test_new_record_shapes_are_rows_that_say_what_they_hold(tmp_path: Path) -> None:
    """Claude Code keeps adding record types (pr-link, mode, away_summary) and
    system subtypes (turn_duration, stop_hook_summary): inert, each row worded
    from its own fields."""
    recs = records(SIMPLE)
    base = {k: recs[5][k] for k in ("sessionId", "timestamp", "cwd", "version")}
    new = [
        {"type": "pr-link", "prNumber": 12, "prUrl": "https://example.com/pull/12", **base},
        {"type": "mode", "mode": "plan", **base},
        {"type": "system", "subtype": "turn_duration", "durationMs": 64567, **base},
    ]
    recs[6:6] = new
    replay = checked(write_records(tmp_path / "s.jsonl", recs))
    assert replay.error is None
    view = RunView(replay)
    assert [view.row(i).summary for i in (6, 7, 8)] == [
        "prNumber=12 prUrl=https://example.com/pull/12",
        "mode=plan",
        "turn_duration 64.6 s",
    ]


def test_unknown_record_types_and_fields_pass_and_change_nothing(tmp_path: Path) -> None:
    recs = records(SIMPLE)
    new = {
        "type": "brand-new-record",
        "uuid": "99999999-0000-0000-0000-000000000000",
        "parentUuid": recs[5]["uuid"],
        "sessionId": recs[5]["sessionId"],
        "timestamp": recs[5]["timestamp"],
        "payloadOfTheFuture": {"a": [1, 2, {"b": None}]},
    }
    recs.insert(6, new)
    recs[10]["aFieldFromTheFuture"] = {"x": 1}
    recs[10]["message"]["aFieldFromTheFuture"] = True
    path = write_records(tmp_path / "s.jsonl", recs)
    replay = checked(path)
    assert replay.error is None
    assert replay.state_at(7) == replay.state_at(6)

    def shape(state: dict[str, Any]) -> Any:  # seqs moved by one line
        calls = {cid: (c["tool"], c["status"], c["input"]) for cid, c in state["calls"].items()}
        return calls, state["usage"], state["turns"], state["todos"], state["phase"]

    assert shape(replay.final_state()) == shape(checked(SIMPLE).final_state())
    step = Replay(locate_run(path), rules_for_run(None, path, CLAUDE_CODE), history=True)
    step.verify()
    assert step.step(7).explanation == (
        "brand-new-record: not interpreted (a record type these rules do not know), no change"
    )
    assert RunView(step).row(6).problem == "not interpreted (a record type these rules do not know)"


def test_a_timestamp_going_back_is_a_warning(tmp_path: Path) -> None:
    recs = records(SIMPLE)
    recs[20]["timestamp"] = "2020-01-01T00:00:00Z"
    replay = checked(write_records(tmp_path / "s.jsonl", recs))
    assert replay.error is None
    assert any(w.code == "ts_backwards" and w.seq == 21 for w in replay.warnings)


# -- the file is evidence ----------------------------------------------------------------


def _fingerprint(root: Path) -> dict[str, tuple[int, int, int, bytes | None]]:
    seen = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            data = path.read_bytes() if stat.S_ISREG(st.st_mode) else None
            seen[str(path.relative_to(root))] = (st.st_mode, st.st_size, st.st_mtime_ns, data)
    return seen


def test_the_session_file_is_never_touched(tmp_path: Path) -> None:
    root = tmp_path / "evidence"
    root.mkdir()
    claude = root / SIMPLE.name
    codex = root / ROLLOUT.name
    shutil.copy2(SIMPLE, claude)
    shutil.copy2(ROLLOUT, codex)
    for path in (claude, codex):
        path.chmod(0o444)
    root.chmod(0o555)
    before = _fingerprint(root)
    cid = "toolu_01LM7vfs6eMdhHJokVajzJA1"
    commands = [
        ["check", str(claude)],
        ["check", str(claude), str(codex), "--json", "--jobs", "2"],
        ["check", str(root)],
        ["state", str(claude), "--at", "20", "--diff"],
        ["state", str(codex), "--at", "100", "--pretty"],
        ["when", str(claude), f'calls.{cid}.status == "error"'],
        ["history", str(codex), "usage.output_tokens"],
        ["report", str(claude), "--at", "26"],
        ["report", str(codex), "--at", "11", "--html", "--out", str(tmp_path / "r.html")],
        ["diff", str(claude), "--skip", "5"],
    ]
    try:
        for args in commands:
            out = subprocess.run(
                [sys.executable, "-m", "replay_tui", *args],
                capture_output=True,
                timeout=120,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            assert out.returncode in (0, 1) and b"Traceback" not in out.stderr, (args, out)
        assert _fingerprint(root) == before  # nothing written, touched or left behind
    finally:
        root.chmod(0o755)


def test_every_command_works_on_sessions(capsys: pytest.CaptureFixture[str]) -> None:
    cid = "toolu_01LM7vfs6eMdhHJokVajzJA1"
    assert main(["when", str(SIMPLE), f'calls.{cid}.status == "error"']) == 0
    assert capsys.readouterr().out.startswith(
        f'26  tool_result  calls.{cid}.status: "requested" → "error"'
    )
    assert main(["history", str(SIMPLE), "usage.output_tokens", "--json"]) == 0
    changes = json.loads(capsys.readouterr().out)["changes"]
    assert changes[-1]["new"] == claude_counts(SIMPLE)["usage"]["output_tokens"]
    assert main(["history", str(ROLLOUT), "usage.output_tokens"]) == 0
    capsys.readouterr()
    assert main(["state", str(SIMPLE), "--at", "26"]) == 0
    assert json.loads(capsys.readouterr().out)["calls"][cid]["status"] == "error"
    assert main(["report", str(SIMPLE), "--at", "25"]) == 0
    doc = capsys.readouterr().out
    assert "Write · no result recorded yet" in doc and "toolUseResult" in doc
    two = INCREMENTAL
    assert main(["diff", str(two / "turn-1.jsonl"), str(two / "turn-2.jsonl")]) == 1
    assert "first event difference: seq 21" in capsys.readouterr().out
    assert main(["diff", str(two / "turn-2.jsonl"), str(two / "turn-2.jsonl")]) == 0
    assert capsys.readouterr().out.endswith("same\n")
    assert main(["check", str(FIXTURES / "claude-code"), "--jobs", "2"]) == 0
    assert "9 runs: 9 verified" in capsys.readouterr().out  # and those of its subfolders


# -- hostile text ------------------------------------------------------------------------


def _hostile_session(path: Path) -> Path:
    bad = "".join(HOSTILE.values())
    recs = records(SIMPLE)
    recs[0]["message"]["content"] = f"prompt {bad}"
    use = recs[15]["message"]["content"][0]
    use["name"] = f"Bash{HOSTILE['osc52']}"
    use["input"] = {"command": f"ls {bad}", bad: bad}
    result = recs[20]["message"]["content"][0]
    result["content"] = f"out {bad}"
    recs[20]["toolUseResult"] = {"stdout": bad, HOSTILE["markup"]: HOSTILE["controls"]}
    recs[23]["message"]["content"][0]["text"] = f"reply {bad}"
    recs.insert(3, {"type": f"kind{HOSTILE['clear']}", "summary": bad})
    return write_records(path, recs)


def test_hostile_text_in_a_transcript_is_inert(tmp_path: Path) -> None:
    path = _hostile_session(tmp_path / "hostile.jsonl")
    cid = "toolu_012Gbtu9wRFgVWjdDUHE3djw"
    human = [
        ["check", str(path)],
        ["when", str(path), f'calls.{cid}.status == "ok"'],
        ["history", str(path), f"calls.{cid}.tool"],
        ["report", str(path), "--at", "17", "--at", "22", "--at", "4"],
        ["diff", str(path), "--skip", "1"],
    ]
    for args in human:
        out = subprocess.run(
            [sys.executable, "-m", "replay_tui", *args],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
        )
        assert out.returncode in (0, 1), (args, out.stderr)
        assert_inert(out.stdout + out.stderr)
    replay, _ = open_replay(str(path), history=True)
    replay.verify()
    assert replay.error is None
    view = RunView(replay)
    for index in range(len(replay.ledger)):
        row = view.row(index)
        for text in (row.kind, row.summary, row.call_id):
            assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    # the JSON outputs stay JSON: every control escaped
    out = subprocess.run(
        [sys.executable, "-m", "replay_tui", "state", str(path), "--at", "22"],
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert b"\x1b" not in out.stdout and b"\x07" not in out.stdout
    assert json.loads(out.stdout)["tools"][f"Bash{HOSTILE['osc52']}"]["calls"] == 1


# -- following a growing session ---------------------------------------------------------------


def _follow(src: Path, tmp_path: Path, fmt: str) -> None:
    data = src.read_bytes()
    lines = data.splitlines(keepends=True)
    live = tmp_path / src.name
    live.write_bytes(b"".join(lines[:3]))
    rules = rules_for_run(None, live, fmt)
    followed = Replay(RunPaths(tmp_path, live, fmt), rules, following=True, history=True)
    followed.advance()
    assert followed.error is None and followed.valid == 3
    with live.open("ab") as out:
        for n, raw in enumerate(lines[3:], start=4):
            half = len(raw) // 2
            out.write(raw[:half])  # half-written: waits as pending, never an error
            out.flush()
            followed.ledger.check_unchanged()
            followed.advance()
            assert followed.error is None and followed.valid == n - 1
            assert followed.ledger.tail_size() == half
            out.write(raw[half:])
            out.flush()
            followed.ledger.check_unchanged()
            followed.advance()
            assert followed.error is None, followed.error
            assert followed.valid == n
    followed.finish()
    whole = checked(src)
    assert followed.error is None and followed.valid == whole.valid
    assert followed.final_state() == whole.final_state()
    assert followed.ledger.sha256() == whole.ledger.sha256()


def test_following_a_growing_claude_code_session(tmp_path: Path) -> None:
    _follow(SUBAGENTS / "turn-2.jsonl", tmp_path, CLAUDE_CODE)


def test_following_a_growing_codex_rollout(tmp_path: Path) -> None:
    _follow(ROLLOUT, tmp_path, CODEX)


def test_a_session_read_twice_as_it_grew(tmp_path: Path) -> None:
    """turn-1 is a byte prefix of turn-2: the same session followed from one to the other."""
    one, two = (
        (INCREMENTAL / "turn-1.jsonl").read_bytes(),
        (INCREMENTAL / "turn-2.jsonl").read_bytes(),
    )
    assert two.startswith(one)
    live = tmp_path / "session.jsonl"
    live.write_bytes(one)
    followed = Replay(
        locate_run(live), rules_for_run(None, live, CLAUDE_CODE), following=True, history=True
    )
    followed.advance()
    assert followed.valid == len(one.splitlines())
    with live.open("ab") as out:
        out.write(two[len(one) :])
    followed.ledger.check_unchanged()
    followed.advance()
    followed.finish()
    assert followed.error is None
    assert followed.final_state() == checked(INCREMENTAL / "turn-2.jsonl").final_state()
    # a call in flight at the end of turn-1 is answered in turn-2
    first = checked(SUBAGENTS / "turn-1.jsonl").final_state()
    second = checked(SUBAGENTS / "turn-2.jsonl").final_state()
    cid = "toolu_bdrk_01NNGBKLENmr7j3TfUKZW7rz"
    assert first["calls"][cid]["status"] == "requested"
    replay = checked(SUBAGENTS / "turn-2.jsonl")
    answer = next(
        n
        for n, r in enumerate(records(SUBAGENTS / "turn-2.jsonl"), start=1)
        if cid in json.dumps(r) and r.get("type") == "user"
    )
    assert replay.state_at(answer)["calls"][cid]["status"] == "ok"
    assert cid not in second["calls"]


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(0, 10_000))
def test_followed_in_any_chunks_equals_check_of_the_final_file(
    tmp_path_factory: pytest.TempPathFactory, seed: int
) -> None:
    src = SUBAGENTS / "turn-2.jsonl"
    data = src.read_bytes()
    tmp = tmp_path_factory.mktemp("follow")
    live = tmp / "session.jsonl"
    live.write_bytes(data[:1])
    followed = Replay(
        RunPaths(tmp, live, CLAUDE_CODE),
        rules_for_run(None, live, CLAUDE_CODE),
        following=True,
        checkpoint_every=7,
    )
    rng = random.Random(seed)
    pos, valid = 1, 0
    with live.open("ab") as out:
        while pos < len(data):
            piece = data[pos : pos + rng.randint(1, 30_000)]
            out.write(piece)
            out.flush()
            pos += len(piece)
            followed.ledger.check_unchanged()
            followed.advance()
            assert followed.error is None, followed.error
            assert followed.valid >= valid  # history only grows
            valid = followed.valid
            assert valid == data[:pos].count(b"\n")  # every complete line, no more
    followed.finish()
    assert followed.final_state() == checked(src).final_state()


def test_uuids_sharing_a_hash_are_never_taken_for_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(IdTable, "key", staticmethod(lambda text: 7))  # every id collides
    assert checked(SIMPLE).error is None
    lines = SIMPLE.read_bytes().splitlines(keepends=True)
    (tmp_path / "s.jsonl").write_bytes(b"".join([*lines[:9], lines[2], *lines[9:]]))
    assert _error(tmp_path / "s.jsonl") == ("seq_duplicate", 10)


def test_the_table_of_uuids_grows_and_finds_them_all() -> None:
    uuids = [f"{i:08x}-0000-0000-0000-000000000000" for i in range(5000)]
    lines = [orjson.dumps({"uuid": u}) for u in uuids]
    seen = IdTable(lambda index: lines[index], lambda rec, text: rec.get("uuid") == text)
    for n, u in enumerate(uuids, start=1):
        key = IdTable.key(u)
        assert not seen.has(key)
        seen.add(key, n)
    assert all(seen.line_of(u, IdTable.key(u)) == n for n, u in enumerate(uuids, start=1))
    assert not seen.has(IdTable.key("not-seen"))


def test_a_sub_agents_transcript_is_found_by_its_id(tmp_path: Path) -> None:
    session = SUBAGENTS / "turn-2.jsonl"
    agent = next(iter(checked(session).final_state()["agents"].values()))
    found = subagent_transcript(session, agent["agent_id"])
    assert found == SUBAGENTS / "turn-2" / "subagents" / "agent-a485154.jsonl"
    assert checked(found).final_state()["session"]["agent_id"] == agent["agent_id"]
    beside = tmp_path / "s.jsonl"
    shutil.copy(session, beside)
    shutil.copy(found, tmp_path / "agent-a485154.jsonl")
    assert subagent_transcript(beside, "a485154") == tmp_path / "agent-a485154.jsonl"
    assert subagent_transcript(beside, "../a485154") is None
    assert subagent_transcript(beside, "nope") is None


def test_codex_tolerates_what_is_new_and_reads_the_first_rollouts(tmp_path: Path) -> None:
    recs = records(ROLLOUT)
    ts = recs[20]["timestamp"]
    recs.insert(21, {"timestamp": ts, "type": "event_msg", "payload": {"type": "brand_new"}})
    recs.insert(22, {"timestamp": ts, "type": "a_new_record", "payload": {"x": [1]}, "y": 2})
    recs[30]["payload"]["a_new_field"] = {"z": None}
    replay = checked(write_records(tmp_path / "new.jsonl", recs))
    assert replay.error is None
    assert replay.state_at(23)["calls"] == replay.state_at(21)["calls"]
    # the first rollouts: a header, bare items, state records, JSON text outputs
    old = [
        {"id": "0b1c", "timestamp": "2025-05-01T10:00:00.000Z", "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command": ["bash", "-lc", "ls -la"]}',
            "call_id": "call_1",
        },
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": '{"output": "x", "metadata": {"exit_code": 2, "duration_seconds": 0.1}}',
        },
        {"record_type": "state"},
    ]
    path = write_records(tmp_path / "rollout-2025-05-01.jsonl", old)
    assert locate_run(path).format == CODEX
    state = checked(path).final_state()
    assert state["calls"]["call_1"]["input"] == "bash -lc ls -la"
    assert state["calls"]["call_1"]["status"] == "error"
    assert state["calls"]["call_1"]["exit_code"] == 2
    assert state["turns"] == 1


def test_a_message_whole_on_one_line_with_several_calls(tmp_path: Path) -> None:
    """Older versions wrote a message whole: text and several tool_use blocks
    on one line, several tool_result blocks on the next."""
    base = {"sessionId": "s1", "isSidechain": False, "version": "0.2.9"}
    recs = [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None,
         "timestamp": "2025-03-01T10:00:00.000Z", "message": {"role": "user", "content": "go"}},
        {**base, "type": "assistant", "uuid": "u2", "parentUuid": "u1",
         "timestamp": "2025-03-01T10:00:01.000Z",
         "message": {"id": "msg_1", "role": "assistant", "model": "claude-3-7-sonnet",
                     "usage": {"input_tokens": 5, "output_tokens": 7},
                     "content": [{"type": "text", "text": "two calls"},
                                 {"type": "tool_use", "id": "t1", "name": "Read",
                                  "input": {"file_path": "a.py"}},
                                 {"type": "tool_use", "id": "t2", "name": "Bash",
                                  "input": {"command": "false"}}]}},
        {**base, "type": "user", "uuid": "u3", "parentUuid": "u2",
         "timestamp": "2025-03-01T10:00:03.500Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t1", "content": "print(1)"},
             {"type": "tool_result", "tool_use_id": "t2", "content": "exit 1", "is_error": True}]}},
    ]  # fmt: skip
    path = write_records(tmp_path / "old.jsonl", recs)
    assert locate_run(path).format == CLAUDE_CODE
    replay, _ = open_replay(str(path), history=True)
    replay.verify()
    state = replay.final_state()
    assert {c: (v["tool"], v["status"]) for c, v in state["calls"].items()} == {
        "t1": ("Read", "ok"),
        "t2": ("Bash", "error"),
    }
    assert state["tools"]["Bash"] == {"calls": 1, "errors": 1}
    assert state["calls"]["t2"]["duration_s"] == 2.5 and state["turns"] == 1
    assert state["usage"]["output_tokens"] == 7 and state["phase"] == "awaiting_model"
    assert RunView(replay).row(1).summary == "Read a.py; Bash false"
    assert replay.step(3).explanation == (
        "tool_result ok 2.5 s: Read a.py (t1, requested at seq 2); "
        "tool_result error 2.5 s: Bash false (t2, requested at seq 2); "
        "tools_running -> awaiting_model"
    )


def test_at_a_message_line_the_inspector_says_which_line_s_usage_counted() -> None:
    """One API message written as several lines, its usage growing: at each
    of its lines, the lines it spans, the one whose usage counts after this
    prefix, what the earlier ones said (left out) and the lines still to come."""
    replay, _ = open_replay(str(SIMPLE), history=True)
    replay.verify()
    view = RunView(replay)
    recs = records(SIMPLE)
    by_id: dict[str, list[int]] = {}
    for i, rec in enumerate(recs):
        if rec.get("type") == "assistant":
            by_id.setdefault(rec["message"]["id"], []).append(i + 1)

    def texts(lines: list[int]) -> list[int]:  # the lines of no call (a call's show its result)
        return [n for n in lines if recs[n - 1]["message"]["content"][0]["type"] != "tool_use"]

    mid, lines = next((m, ls) for m, ls in by_id.items() if len(ls) >= 2 and texts(ls))
    at = texts(lines)[-1]
    title, value = view.line_view(at - 1).record  # type: ignore[misc]
    assert value["message"] == mid and value["lines"] == lines
    assert value["counted"] == at and value["usage"] == recs[at - 1]["message"]["usage"]
    assert sorted(map(int, value["left out"])) == [n for n in lines if n < at]
    assert value.get("later", []) == [n for n in lines if n > at]
    assert title.startswith(f"API message {mid} · {len(lines)} lines · the usage of line {at}")


def test_a_first_record_longer_than_the_head_is_told_by_the_records_after_it(
    tmp_path: Path,
) -> None:
    """Claude Code often starts a transcript with a file-history snapshot,
    which can be huge: the session is still told as one, by what follows."""
    recs = records(SIMPLE)
    snapshot = {
        "type": "file-history-snapshot",
        "messageId": "m1",
        "snapshot": {"trackedFileBackups": {f"f{k}.py": "x" * 600 for k in range(3_000)}},
        "isSnapshotUpdate": False,
    }
    path = write_records(tmp_path / "s.jsonl", [snapshot, *recs])
    assert path.read_bytes().index(b"\n") > 1 << 20  # longer than the head read
    assert session_format_of(path) == CLAUDE_CODE
    replay = checked(path)
    assert replay.error is None and replay.valid == len(recs) + 1


def test_a_big_line_keeps_its_place_in_the_chain_in_the_app(tmp_path: Path) -> None:
    """A line of 1 MiB or more is kept parsed for the app: with what the
    checks found of it (a broken chain there stays one on a rebuild)."""
    recs = records(SIMPLE)
    recs[2]["parentUuid"] = "99999999-9999-4999-8999-999999999999"  # never written
    recs[2]["message"]["content"][0]["text"] = "x" * (1 << 20)
    replay, _ = open_replay(str(write_records(tmp_path / "s.jsonl", recs)), history=True)
    replay.verify()
    event = replay.event(2)
    assert getattr(event, "chain_why", None) == 3  # BROKEN
    assert replay.final_state()["chain"]["breaks"][0]["seq"] == 3


def test_a_result_before_a_later_request_of_its_batch_is_no_warning(tmp_path: Path) -> None:
    """Five calls at once (lines 6-10), their results after (11-15): the
    first call's result (line 13) stamped before the later requests but
    after its own is no warning; before its own request it is."""
    recs = records(SIMPLE)
    first_use, result = recs[5], recs[12]
    assert (
        result["message"]["content"][0]["tool_use_id"] == first_use["message"]["content"][0]["id"]
    )

    def stamp(at: str) -> list[tuple[str, int | None]]:
        for rec in recs[:5]:
            rec["timestamp"] = "2025-09-03T00:00:01.000Z"
        first_use["timestamp"] = "2025-09-03T00:00:10.000Z"
        for rec in recs[6:12]:
            rec["timestamp"] = "2025-09-03T00:00:12.000Z"
        result["timestamp"] = at
        for rec in recs[13:]:
            rec["timestamp"] = "2025-09-03T00:00:14.000Z"
        replay = checked(write_records(tmp_path / f"s{at[17:19]}.jsonl", recs))
        return [(w.code, w.line) for w in replay.warnings]

    assert stamp("2025-09-03T00:00:11.000Z") == []
    assert stamp("2025-09-03T00:00:09.000Z") == [("ts_backwards", 13)]


def test_a_recorded_path_never_leaves_the_session_s_folder(tmp_path: Path) -> None:
    from replay_tui.formats.persisted import read_persisted

    session = tmp_path / "project" / "s1.jsonl"
    session.parent.mkdir()
    session.write_text("{}\n")
    (tmp_path / "project" / "tool-results").mkdir()
    (tmp_path / "project" / "tool-results" / "x.txt").write_text("not this session's")
    for recorded in ("/home/u/../tool-results/x.txt", "C:\\Users\\u\\..\\tool-results\\x.txt"):
        text = f"<persisted-output>\nOutput too large (1KB). Full output saved to: {recorded}\n"
        got = read_persisted(session, text)
        assert got is not None and "text" not in got and "missing" in got
