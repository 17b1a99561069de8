"""Gemini CLI's store beside Claude Code's and Codex's: ``sessions`` lists
it, ``usage`` counts its tokens (what was spent, rewinds included)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import orjson
import pytest

from replay_tui.cli import main
from replay_tui.engine.open import open_replay
from replay_tui.formats.session_stores.listing import list_sessions, stores
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "gemini-sessions"


@pytest.fixture
def gemini_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/`` holding fixture
    sessions under the names Gemini CLI gives them, a minute apart."""
    home = tmp_path / "gemini-home"
    chats = home / ".gemini" / "tmp" / "proj" / "chats"
    other = home / ".gemini" / "tmp" / "other" / "chats"
    chats.mkdir(parents=True)
    other.mkdir(parents=True)
    placed = [
        (FIXTURES / "rewind-one.jsonl", chats / "session-2026-12-06T10-43-5a32f5e4.jsonl"),
        (FIXTURES / "migrated.jsonl", chats / "session-2026-12-06T14-55-a031c9cd.jsonl"),
        (FIXTURES / "migrated.json", chats / "session-2026-12-06T14-55-a031c9cd.json"),
        (FIXTURES / "older-form.json", other / "session-2026-12-06T14-54-58ffb47a.json"),
    ]
    now = time.time() - 3600
    for i, (src, dest) in enumerate(placed):
        shutil.copyfile(src, dest)
        os.utime(dest, (now - 60 * i, now - 60 * i))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    return home


def test_the_store_is_listed_a_migrated_session_once(gemini_home: Path) -> None:
    listing = list_sessions("gemini")
    assert [s.path.name for s in listing.sessions] == [
        "session-2026-12-06T10-43-5a32f5e4.jsonl",
        "session-2026-12-06T14-55-a031c9cd.jsonl",
        "session-2026-12-06T14-54-58ffb47a.json",
    ]
    first, migrated, older = listing.sessions
    assert first.source == "gemini" and first.problem is None
    assert first.session_id == "5a32f5e4-7b20-498f-bfd9-28f360adc2a4"
    assert first.first_prompt == "List the folder"
    assert first.project is not None and first.project.endswith("/proj")
    assert first.records == 21
    assert migrated.first_prompt == "What is in notes.txt?"
    assert older.problem is None and older.session_id == "58ffb47a-6196-43ce-a272-65dd700ad120"
    assert older.first_prompt == "What is in notes.txt?"
    assert stores("gemini")[0].path == gemini_home / ".gemini" / "tmp"


def test_sessions_names_the_store_beside_the_others(
    gemini_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sessions", "--print"]) == 0
    said = capsys.readouterr().out
    assert said.count(" gemini ") == 3
    assert said.rstrip().endswith(f"and {gemini_home / '.gemini' / 'tmp'} (3 sessions)")
    assert main(["sessions", "--json", "--source", "gemini"]) == 0
    body = orjson.loads(capsys.readouterr().out)
    assert {b["source"] for b in body} == {"gemini"}


def test_usage_counts_what_was_spent(gemini_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["usage", "--json"]) == 0
    body = orjson.loads(capsys.readouterr().out)
    (source,) = body["sources"]
    assert source["source"] == "gemini"
    by_path = {Path(g["path"]).name: g for g in source["groups"]}
    rewound = by_path["session-2026-12-06T10-43-5a32f5e4.jsonl"]
    replay, _ = open_replay(str(FIXTURES / "rewind-one.jsonl"))
    try:
        replay.verify()
        spent = replay.final_state()["spent"]
    finally:
        replay.close()
    assert rewound["tokens"]["total"] == spent["total"] == 2726
    assert rewound["tokens"]["input"] == spent["input"]
    assert rewound["cost"]["usd"] > 0
    assert rewound["audit"]["copies"]["lines"] == 1


def test_usage_table_has_gemini_columns(
    gemini_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["usage", str(FIXTURES / "read-file.jsonl")]) == 0
    said = capsys.readouterr().out
    assert said.startswith("Gemini CLI, by session\n")
    assert "INPUT  CACHED  OUTPUT  THOUGHTS  TOOL  TOTAL" in said
    assert "2,050     300      30         7     0  2,087" in said
