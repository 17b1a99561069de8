"""Gemini CLI sessions given as a run: told by content whatever their name,
forced with ``--format gemini``, refused with the reason when they are not
one; lines Gemini CLI's loader skips are findings, never stops; a session
followed while it grows ends as a cold read of it."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from replay_tui.cli import main
from replay_tui.core.errors import CannotRun
from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import Replay
from replay_tui.formats.envelope import Event
from replay_tui.formats.run import RunPaths, locate_run
from replay_tui.reducers import rules_for_run
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "gemini-sessions"
REWIND = FIXTURES / "rewind-one.jsonl"
READ = FIXTURES / "read-file.jsonl"


def test_told_by_content_whatever_the_name(tmp_path: Path) -> None:
    renamed = tmp_path / "chat.log"
    shutil.copyfile(REWIND, renamed)
    assert locate_run(renamed).format == "gemini"
    assert locate_run(FIXTURES / "older-form.json").format == "gemini"
    assert locate_run(READ, fmt="gemini").format == "gemini"


def test_check_verifies_and_says_what_the_rewind_dropped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", str(REWIND)]) == 0
    said = capsys.readouterr().out
    assert "verified: 21 events" in said and "(gemini 1.0.0)" in said
    assert "2,726 tokens were spent in this session, 2,079 of them" in said


def test_the_rewind_is_an_edit_the_step_says() -> None:
    replay, _ = open_replay(str(REWIND), history=True)
    try:
        replay.verify()
        step = replay.step(16)
        assert step.explanation is not None
        assert step.explanation.startswith("rewind to 8226a913")
        assert "2 messages dropped" in step.explanation
        before, after = replay.state_at(15), replay.state_at(16)
        assert len(before["messages"]) - len(after["messages"]) == 2
        assert after["spent"] == before["spent"]  # what was spent stays spent
        assert after["tokens"]["total"] < before["tokens"]["total"]
    finally:
        replay.close()


def test_not_a_gemini_session_is_not_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "session-x.jsonl"
    other.write_text('{"a": 1}\n{"b": 2}\n')
    assert main(["check", "--format", "gemini", str(other)]) == 2
    said = capsys.readouterr().err
    assert "not a run: not a Gemini CLI session" in said
    assert "none of its first 2 is a Gemini CLI record" in said


def _damaged(tmp_path: Path, *inserted: bytes, at: int = 6) -> Path:
    lines = READ.read_bytes().splitlines(keepends=True)
    out = tmp_path / "session-damaged.jsonl"
    out.write_bytes(b"".join(lines[:at]) + b"".join(inserted) + b"".join(lines[at:]))
    return out


def test_lines_the_loader_skips_are_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = _damaged(
        tmp_path, b'{"id": "cut-short", "type": "us\n', b"42\n", b'{"$rewindTo": "nowhere"}\n'
    )
    assert main(["check", str(session)]) == 0
    said = capsys.readouterr().out
    assert "line 7 is not JSON" in said
    assert "line 8 is a JSON int, not a record" in said
    assert "$rewindTo nowhere: no message of that id is loaded" in said
    replay, _ = open_replay(str(session))
    try:
        replay.verify()
        assert replay.valid == 14
        assert replay.state_at(8)["messages"] == replay.state_at(6)["messages"] != []
        assert replay.state_at(9)["messages"] == []  # as Gemini CLI's loader does
        # after the clear, what the lines that follow write: a reply, its results, a reply
        assert [m["type"] for m in replay.state_at(14)["messages"]] == ["gemini", "user", "gemini"]
    finally:
        replay.close()


def test_a_cut_last_line_is_a_finding_when_cold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = READ.read_bytes()
    cut = tmp_path / "session-cut.jsonl"
    cut.write_bytes(data + b'{"id": "x", "type": "gem')
    assert main(["check", str(cut)]) == 0
    said = capsys.readouterr().out
    assert "line 12 is not JSON" in said
    replay, _ = open_replay(str(cut))
    try:
        replay.verify()
        whole, _ = open_replay(str(READ))
        whole.verify()
        assert replay.final_state() == whole.final_state()
        whole.close()
    finally:
        replay.close()


def test_followed_while_written_it_ends_as_a_cold_read(tmp_path: Path) -> None:
    lines = REWIND.read_bytes().splitlines(keepends=True)
    live = tmp_path / REWIND.name
    live.write_bytes(b"".join(lines[:2]))
    rules = rules_for_run(None, live, "gemini")
    followed = Replay(RunPaths(tmp_path, live, "gemini"), rules, following=True, history=True)
    followed.advance()
    assert followed.error is None and followed.valid == 2
    with live.open("ab") as out:
        for n, raw in enumerate(lines[2:], start=3):
            half = len(raw) // 2
            out.write(raw[:half])  # half-written: waited for, no finding
            out.flush()
            followed.advance()
            assert followed.error is None and followed.valid == n - 1
            assert followed.warning_count == 0
            out.write(raw[half:])
            out.flush()
            followed.advance()
            assert followed.error is None and followed.valid == n
    followed.finish()
    cold, _ = open_replay(str(REWIND))
    cold.verify()
    try:
        assert followed.valid == cold.valid
        assert followed.final_state() == cold.final_state()
        assert followed.warning_count == cold.warning_count == 0
    finally:
        cold.close()
        followed.close()


def test_a_document_is_not_followed() -> None:
    with pytest.raises(CannotRun, match="read once, complete"):
        open_replay(str(FIXTURES / "older-form.json"), following=True)


def test_the_inspector_shows_a_call_with_its_result() -> None:
    replay, _ = open_replay(str(FIXTURES / "failing-tools.jsonl"), history=True)
    try:
        replay.verify()
        event = replay.event(11)
        assert isinstance(event, Event)
        shown = replay.recorded_result(event, 12)
        assert shown is not None and shown.tool == "run_shell_command"
        assert shown.seq == 12 and shown.artifact == "failing-tools.jsonl:12"
        assert "Exit Code: 3" in orjson.dumps(shown.data).decode()
        reply = replay.event(12)
        assert isinstance(reply, Event)
        answer = replay.recorded_result(reply, 13)
        assert answer is not None and answer.seq == 13
    finally:
        replay.close()
