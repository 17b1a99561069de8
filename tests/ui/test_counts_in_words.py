"""A count of one reads as one: ``1 valid event``, ``1 byte``, ``1 change``,
never ``1 valid events`` (the messages count with ``core.words.plural``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from replay_tui.cli.usage import amounts
from replay_tui.engine.open import open_replay
from replay_tui.engine.results import RecordedResult
from replay_tui.ui.features.run.controller import RunSession
from tests.conftest import DEMO


def _one_event_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(DEMO, run)
    ledger = run / "events.jsonl"
    ledger.write_bytes(ledger.read_bytes().splitlines(keepends=True)[0])
    return run


def test_a_run_read_again_with_one_event_says_1_valid_event(tmp_path: Path) -> None:
    run = _one_event_run(tmp_path)
    replay, _ = open_replay(str(run), watchdog=False, history=True, following=True)
    session = RunSession(replay)
    replay.advance()
    fresh = session.rewritten("ledger rewritten at byte 0", (1,))
    session.swap(fresh).close()
    fresh.advance()
    said, _ = session.after_rewrite() or ("", None)
    assert said.endswith(": read again, 1 valid event")
    with pytest.raises(IndexError, match=r"the valid prefix has 1 event$"):
        fresh.state_at(5)
    with pytest.raises(IndexError, match=r"the valid prefix has 1 event$"):
        fresh.step(2)
    fresh.close()


def test_a_one_byte_result_and_a_lone_token_are_singular() -> None:
    result = RecordedResult("c1", "Read", "ok", "{}", 1, seq=2, artifact="s.jsonl:2", size=1)
    assert result.record()[0] == "Read result · s.jsonl:2 · 1 byte · ok"
    assert amounts([0, 1, 0, 0], "claude-code") == "1 output token"
    assert amounts([1, 1, 0, 0], "claude-code") == "1 input and 1 output tokens"
