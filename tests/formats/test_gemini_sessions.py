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


DOCUMENTS = [
    p for p in sorted(FIXTURES.glob("*.json")) if not p.name.endswith((".truth.json", ".gen.json"))
]


def truth_of(session: Path) -> dict[str, Any]:
    name = session.stem if session.suffix == ".jsonl" else session.name
    truth: dict[str, Any] = orjson.loads(session.with_name(name + ".truth.json").read_bytes())
    return truth


def test_there_are_fixtures() -> None:
    assert len(SESSIONS) >= 6
    assert len(DOCUMENTS) >= 2


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


@pytest.mark.parametrize("history", [False, True], ids=["check", "app"])
@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_older_form_ends_as_the_loader_loads_it(document: Path, history: bool) -> None:
    """The single-document form: one event for the document, one per
    message; the last state is what the loader gives for the file."""
    truth = truth_of(document)
    replay, _ = open_replay(str(document), history=history)
    try:
        replay.verify()
        assert replay.error is None, replay.error
        assert replay.paths.format == "gemini"
        assert replay.valid == 1 + len(truth["final"]["messages"])
        assert loader_record(replay.state_at(replay.valid)) == truth["final"]
        assert replay.state_at(1)["messages"] == []
        assert replay.state_at(1)["meta"]["sessionId"] == truth["final"]["meta"]["sessionId"]
    finally:
        replay.close()
