"""``RUN@SEQ`` on every command that takes a run, as the app takes it: the
link ``c`` copies in the app works in a shell, from any folder."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay_tui.core.links import link_to, split_link
from replay_tui.engine.open import open_replay
from replay_tui.views.runview import RunView
from tests.conftest import DEMO, SAMPLES
from tests.helpers.cli import run_cli

REFUND = SAMPLES / "refund-180"
BROKEN = SAMPLES / "broken-divergence"  # fails at seq 11


def test_state_takes_a_link_instead_of_at(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "state", f"{REFUND}@2")
    assert code == 0 and out == '{"amount":180,"receipt":null,"status":"approved"}\n'
    assert run_cli(capsys, "state", f"{REFUND}@2", "--at", "2")[:2] == (0, out)
    code, out, err = run_cli(capsys, "state", f"{REFUND}@2", "--at", "1")
    assert code == 2 and out == "" and "name two seqs: give one" in err
    code, out, err = run_cli(capsys, "state", str(REFUND))
    assert code == 2 and f"state needs a seq: {REFUND}@N or --at N" in err


def test_check_a_link_checks_that_prefix(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "check", f"{BROKEN}@10")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("broken-divergence@10: verified: 10 events")
    assert lines[1] == "  checked the prefix up to seq 10 only: the events after it were not read"
    code, out, _ = run_cli(capsys, "check", f"{BROKEN}@10", "--json")
    report = json.loads(out)
    assert code == 0 and report["prefix"] == 10 and report["events"] == 10
    assert report["error"] is None and report["state"] == "retrying"
    code, out, _ = run_cli(capsys, "check", f"{BROKEN}@11", "--json")
    assert code == 1 and json.loads(out)["error"]["code"] == "divergence"
    code, out, err = run_cli(capsys, "check", f"{DEMO}@15")
    assert code == 2 and out == "" and "@15: the run has only 14 events" in err
    # whole, the same run fails; a link among several runs is checked as a prefix too
    code, out, _ = run_cli(capsys, "check", f"{BROKEN}@10", str(BROKEN), "--jobs", "1")
    lines = out.splitlines()
    assert code == 1 and lines[0].endswith("(the prefix up to seq 10 only)")
    assert ": FAILED at seq 11" in lines[1]


def test_when_and_history_search_the_linked_prefix(capsys: pytest.CaptureFixture[str]) -> None:
    status = "calls.call-003.status"
    code, out, err = run_cli(capsys, "history", f"{DEMO}@12", status)
    assert code == 1 and out == "" and f"{status} never changed in events 1..12" in err
    code, out, _ = run_cli(capsys, "history", f"{DEMO}@13", status, "--json")
    doc = json.loads(out)
    assert code == 0 and [c["seq"] for c in doc["changes"]] == [13] and doc["prefix"] == 13
    code, out, _ = run_cli(capsys, "when", f"{BROKEN}@10", "--all", "--json", "phase exists")
    doc = json.loads(out)
    assert doc["complete"] is True and doc["stop"] is None and doc["searched"] == 10


def test_report_takes_a_link_as_its_seq(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "report", f"{DEMO}@3")
    assert code == 0 and "## Seq 3" in out
    code, out, err = run_cli(capsys, "report", f"{DEMO}@99")
    assert code == 2 and out == "" and f"{DEMO}@99: seq 99 is past the end of the run" in err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["diff", f"{DEMO}@3", str(REFUND)], "diff compares whole runs"),
        (["compare", f"{DEMO}@3", str(REFUND)], "diff compares whole runs"),
        (["usage", f"{SAMPLES}/agent-sessions/codex-rollout.jsonl@3"], "usage counts"),
    ],
)
def test_a_link_where_a_seq_means_nothing_is_refused(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, *args)
    assert code == 2 and out == "" and words in err and "drop the @3" in err


def test_a_path_with_an_at_sign_that_exists_is_a_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = tmp_path / "run@3"
    shutil.copytree(DEMO, odd)
    code, out, _ = run_cli(capsys, "check", str(odd))
    assert code == 0 and out.startswith("run@3: verified: 14 events")
    code, out, _ = run_cli(capsys, "state", f"{odd}@2")
    assert code == 0 and out == run_cli(capsys, "state", str(DEMO), "--at", "2")[1]


def test_the_app_copies_an_absolute_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``c``'s link, made in one folder, opens the run from another."""
    shutil.copytree(DEMO, tmp_path / "runs" / "demo")
    monkeypatch.chdir(tmp_path / "runs")
    replay, dog = open_replay("demo", None)
    try:
        link = RunView(replay).link(5)
    finally:
        replay.close()
        if dog is not None:
            dog.stop()
    assert link == f"{tmp_path / 'runs' / 'demo'}@5" and Path(link.rpartition("@")[0]).is_absolute()
    monkeypatch.chdir(tmp_path)
    assert split_link(link) == (str(tmp_path / "runs" / "demo"), 5)
    code, out, _ = run_cli(capsys, "state", link)
    assert code == 0 and out == run_cli(capsys, "state", str(DEMO), "--at", "5")[1]
    assert link_to(Path("a/../b"), 0) == f"{tmp_path / 'b'}@0"


@settings(max_examples=200, deadline=None)
@given(
    name=st.text(alphabet="ab9@._-", min_size=1, max_size=12).filter(
        lambda n: n not in (".", "..") and "/" not in n
    ),
    seq=st.integers(min_value=0, max_value=10**12),
)
def test_a_copied_link_reads_back_as_its_run_and_seq(name: str, seq: int) -> None:
    """Whatever the run's name (``@`` and digits in it too), the link ``c``
    copies splits back into that run and that seq, unless the link itself
    names a path that exists (which is then a path, as documented)."""
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / name
        run.mkdir()
        link = link_to(run, seq)
        if Path(link).exists():
            assert split_link(link) == (link, None)
        else:
            assert split_link(link) == (str(run), seq)
