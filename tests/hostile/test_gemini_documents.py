"""The older form of a Gemini CLI session (one JSON document) read as
Gemini CLI reads it: every digit of an integer kept, and a message nested
past what a line is written to a stop at that line, never an internal error."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.conftest import TESTS
from tests.helpers.cli import run_cli

OLDER = TESTS / "fixtures" / "gemini-sessions" / "older-form.json"


def test_integers_past_64_bits_keep_their_digits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = 123456789012345678901234567890
    doc = orjson.loads(OLDER.read_bytes())
    last = dict(doc["messages"][-1])
    assert last["type"] == "gemini"
    last["id"] = "big-tokens"
    last["tokens"] = {"input": "BIG", "output": 0, "cached": 0, "thoughts": 0, "tool": 0}
    doc["messages"].append(last)
    session = tmp_path / "session-big.json"
    session.write_bytes(
        orjson.dumps(doc, option=orjson.OPT_INDENT_2).replace(b'"BIG"', str(big).encode())
    )
    code, out, err = run_cli(capsys, "history", str(session), "tokens.input")
    assert code == 0, err
    total = int(out.splitlines()[-1].rsplit("→ ", 1)[1])  # the messages' inputs summed
    assert 0 < total - big < 10**6 and "e+29" not in out


def test_a_message_nested_past_a_line_stops_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """orjson reads 600 levels and writes 255: the message's line fails."""
    doc = orjson.loads(OLDER.read_bytes())
    doc["messages"].insert(1, "DEEP")
    session = tmp_path / "session-deep.json"
    session.write_bytes(
        orjson.dumps(doc, option=orjson.OPT_INDENT_2).replace(b'"DEEP"', b"[" * 600 + b"]" * 600)
    )
    code, out, err = run_cli(capsys, "check", str(session))
    assert code == 1, err
    assert "FAILED at line 3: bad_json: nested more than 200 levels deep" in out
