"""Gemini CLI sessions as a source: the state after every line is what
Gemini CLI's own loader gives for that prefix of the file.

The fixtures (``tests/fixtures/gemini-sessions/``, see its README) were
written by the real Gemini CLI; each ``NAME.truth.json`` is what its
``loadConversationRecord`` returned for the file's first k lines, k = 1..N.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.engine.open import open_replay
from tests.conftest import ROOT
from tests.helpers.gemini import loader_record

FIXTURES = ROOT / "tests" / "fixtures" / "gemini-sessions"
SESSIONS = sorted(FIXTURES.glob("*.jsonl"))


def truth_of(session: Path) -> dict[str, Any]:
    truth: dict[str, Any] = orjson.loads(
        session.with_name(session.stem + ".truth.json").read_bytes()
    )
    return truth


def test_there_are_fixtures() -> None:
    assert len(SESSIONS) >= 4


@pytest.mark.parametrize("history", [False, True], ids=["check", "app"])
@pytest.mark.parametrize("session", SESSIONS, ids=lambda p: p.stem)
def test_state_equals_the_loader_at_every_prefix(session: Path, history: bool) -> None:
    truth = truth_of(session)
    replay, _ = open_replay(str(session), history=history)
    try:
        replay.verify()
        assert replay.error is None, replay.error
        assert replay.paths.format == "gemini"
        assert replay.valid == truth["lines"] == len(truth["prefixes"])
        for prefix in truth["prefixes"]:
            got = loader_record(replay.state_at(prefix["k"]))
            assert got == prefix["record"], f"{session.name}: after line {prefix['k']}"
    finally:
        replay.close()
