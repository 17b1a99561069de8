"""``when --json`` and ``history --json`` on a run that fails strict replay:
the JSON says whether the answer is whole and where the valid prefix ended,
as stderr does."""

from __future__ import annotations

import json

import pytest

from tests.conftest import DEMO, SAMPLES
from tests.helpers.cli import run_cli

BROKEN = SAMPLES / "broken-divergence"  # strict replay stops at seq 11
STOP = {"seq": 11, "line": 11, "code": "divergence", "valid": 10}


def test_when_all_on_a_broken_run_is_not_complete(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "when", str(BROKEN), "--all", "--json", 'phase == "running"')
    doc = json.loads(out)
    assert code == 0 and doc["seqs"] == [1]
    assert doc["complete"] is False and doc["stop"] == STOP and doc["searched"] == 10
    assert doc["error"]["code"] == "divergence"
    assert "searched the valid prefix only (events 1..10)" in err


def test_when_never_on_a_broken_run_is_not_complete(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "when", str(BROKEN), "--json", 'phase == "succeeded"')
    doc = json.loads(out)
    assert code == 1 and doc["seqs"] == []
    assert doc["complete"] is False and doc["stop"] == STOP
    assert "stopped at seq 11" in err


def test_a_first_answer_is_complete_and_still_names_the_stop(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The first seq found before the stop cannot change: complete; the run
    still stopped, and the JSON says where, as a reader of it would want."""
    code, out, err = run_cli(capsys, "when", str(BROKEN), "--json", 'phase == "retrying"')
    doc = json.loads(out)
    assert code == 0 and doc["seqs"] == [10] and doc["searched"] == 10
    assert doc["complete"] is True and doc["error"] is None
    assert doc["stop"] == STOP and err == ""


def test_history_json_says_the_prefix_it_searched(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "history", str(BROKEN), "phase", "--json")
    doc = json.loads(out)
    assert code == 0
    assert [c["seq"] for c in doc["changes"]] == [1, 10]
    assert doc["complete"] is False and doc["stop"] == STOP and doc["searched"] == 10
    assert doc["error"]["code"] == "divergence"
    assert "searched the valid prefix only" in err


def test_a_whole_run_is_complete_with_no_stop(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "history", str(DEMO), "phase", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["complete"] is True and doc["stop"] is None
    assert doc["searched"] == 14 and doc["error"] is None
    code, out, _ = run_cli(capsys, "when", str(DEMO), "--all", "--json", 'phase == "nope"')
    doc = json.loads(out)
    assert code == 1 and doc["complete"] is True and doc["stop"] is None
