"""A ``#`` after a file names one run of it: a LangGraph checkpointer
database's thread (``DB#thread=ID``) or an Inspect AI log's sample
(``LOG#ID:EPOCH``). Which one is decided by the file, never by the text
after the ``#``, and a fragment the file cannot hold is one line, exit 2,
saying how that file's runs are named."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.conftest import TESTS
from tests.helpers.cli import run_cli

DB = TESTS / "fixtures" / "langgraph" / "agent.sqlite"
LOG = TESTS / "fixtures" / "inspect-logs" / "generated" / "calculator.eval"


def _one_line_exit_2(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = run_cli(capsys, *args)
    assert code == 2 and out == "", (args, out, err)
    assert err.startswith("replay-tui: ") and err.count("\n") == 1, (args, err)
    return err.rstrip("\n")


def test_a_thread_and_a_sample_are_checked_side_by_side(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(
        capsys, "check", "--json", "--jobs", "1", f"{DB}#thread=agent-weather", f"{LOG}#single:2"
    )
    assert code == 0, err
    runs = [orjson.loads(line) for line in out.splitlines()]
    assert [(r["run"], r["exit"]) for r in runs] == [
        (f"{DB}#thread=agent-weather", 0),
        (f"{LOG}#single:2", 0),
    ]
    assert runs[0]["report"]["rules"]["name"] == "langgraph"
    assert runs[1]["report"]["rules"]["name"] == "inspect_ai"


def test_a_sample_fragment_on_a_database_says_how_its_threads_are_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for command in (["check"], ["state", "--at", "1"], ["report"]):
        err = _one_line_exit_2(capsys, command[0], f"{DB}#single:2", *command[1:])
        assert "agent.sqlite is a LangGraph checkpointer database" in err
        assert "DB#thread=ID" in err and "--thread ID" in err and "not #single:2" in err


def test_a_thread_fragment_on_an_inspect_log_is_a_sample_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The log decides: ``#thread=x`` is the sample named so, and there is none."""
    err = _one_line_exit_2(capsys, "check", f"{LOG}#thread=agent-weather")
    assert "calculator.eval is an Inspect AI log, whose runs are its samples" in err
    assert "parallel:1, parallel:2, single:1, single:2" in err
    assert "#thread= is for a LangGraph checkpointer database" in err


def test_a_missing_sample_or_thread_is_named_by_its_own_source(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _one_line_exit_2(capsys, "check", f"{LOG}#nope:1")
    assert "no sample 'nope:1'" in err and "single:2" in err
    err = _one_line_exit_2(capsys, "check", f"{DB}#thread=nope")
    assert "no checkpoint of thread 'nope'" in err
    err = _one_line_exit_2(capsys, "check", f"{LOG}#")
    assert "no sample after '#'" in err and "LOG#ID[:EPOCH]" in err


def test_a_fragment_on_a_file_that_holds_no_runs_says_neither(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# notes\n")
    err = _one_line_exit_2(capsys, "check", f"{notes}#thread=a")
    assert "not a SQLite database" in err
    err = _one_line_exit_2(capsys, "check", f"{notes}#1:1")
    assert "no such file, and notes.md is neither a LangGraph checkpointer database" in err
    assert "nor an Inspect AI log" in err


def test_thread_and_sample_options_go_to_their_own_source(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _one_line_exit_2(capsys, "check", str(LOG), "--thread", "agent-weather")
    assert "an Inspect AI log, whose runs are its samples, not threads" in err
    assert "--sample ID[:EPOCH]" in err
    err = _one_line_exit_2(capsys, "check", str(DB), "--sample", "single:2")
    assert "a LangGraph checkpointer database, whose runs are its threads, not samples" in err
    assert "--thread ID" in err
    # a URL's password is never said, whichever message names the URL
    url = "postgresql://reader:s3cret-pw@127.0.0.1:1/agents"
    err = _one_line_exit_2(capsys, "check", url, "--sample", "single:2")
    assert "s3cret-pw" not in err and "postgresql://reader:***@127.0.0.1:1/agents" in err
    err = _one_line_exit_2(
        capsys, "check", str(DB), "--thread", "agent-weather", "--sample", "single:2"
    )
    assert "--thread names a LangGraph database's thread and --sample" in err
    code, out, _ = run_cli(capsys, "check", str(LOG), "--sample", "single:2")
    assert code == 0 and out.startswith("calculator.eval#single:2: verified")
    code, out, _ = run_cli(capsys, "check", str(DB), "--thread", "agent-weather")
    assert code == 0 and out.startswith("agent.sqlite#thread=agent-weather: verified")


def test_a_forced_format_keeps_the_fragment_to_its_source(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _one_line_exit_2(capsys, "check", f"{LOG}#single:2", "--format", "langgraph")
    assert "calculator.eval is an Inspect AI log" in err and "--format langgraph" in err


def test_a_folder_checks_each_thread_and_each_sample_of_its_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A database and a log found in a folder are read as given alone: a
    line for each thread and each sample (a database of two threads is not
    one run that cannot be checked)."""
    (tmp_path / DB.name).write_bytes(DB.read_bytes())
    (tmp_path / LOG.name).write_bytes(LOG.read_bytes())
    code, out, err = run_cli(capsys, "check", str(tmp_path), "--json", "--jobs", "1")
    assert code == 0, (out, err)
    runs = sorted(orjson.loads(line)["run"] for line in out.splitlines())
    assert [Path(r).name for r in runs] == [
        "agent.sqlite#thread=agent-two-turns",
        "agent.sqlite#thread=agent-weather",
        "calculator.eval#parallel:1",
        "calculator.eval#parallel:2",
        "calculator.eval#single:1",
        "calculator.eval#single:2",
    ]


def test_a_log_of_no_sample_in_a_folder_is_skipped_saying_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An eval that stopped before its first sample is no run that cannot
    be checked: it is skipped, with its status; named alone, it says so, exit 2."""
    log = orjson.loads((LOG.parent.parent / "upstream" / "log_read_sample.json").read_bytes())
    empty = tmp_path / "empty.json"
    empty.write_bytes(orjson.dumps(log | {"samples": [], "status": "error"}))
    (tmp_path / LOG.name).write_bytes(LOG.read_bytes())
    code, out, err = run_cli(capsys, "check", str(tmp_path), "--jobs", "1")
    assert code == 0, (out, err)
    assert f"{empty}: skipped: an Inspect log with no sample in it (status error)" in out
    assert "4 runs: 4 verified, 0 failed, 0 could not be checked; 1 skipped" in out
    err = _one_line_exit_2(capsys, "check", str(empty))
    assert "an Inspect log with no sample in it (status error)" in err
