"""``check FOLDER``: every file any source reads is checked (run folders,
Temporal histories, sessions, traces, the Collector's lines, gzip copies),
the rest counted as skipped with the reason; each run's line hints at its
warnings; ``sessions`` lists a Codex rollout whatever its name."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import orjson
import pytest

from tests.conftest import DEMO, SAMPLES, TESTS, AgentHomes, line
from tests.helpers.cli import run_cli

HISTORY = SAMPLES / "temporal" / "sdk-python--test_replayer_complete_history.json"
TRACES = TESTS / "fixtures" / "otel-traces" / "hand"
TRACE = TRACES / "mcp_tool_call.json"
CHAIN = SAMPLES / "agent-sessions" / "claude-code-broken-chain.jsonl"
ROLLOUT = SAMPLES / "agent-sessions" / "codex-rollout.jsonl"


def _collector_lines(trace: Path) -> bytes:
    """The trace as the Collector's file exporter writes it: an export
    request a line."""
    doc = orjson.loads(trace.read_bytes())
    return b"".join(orjson.dumps({"resourceSpans": [rs]}) + b"\n" for rs in doc["resourceSpans"])


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """A Temporal history, a trace, a Collector file, a gzip ledger and
    things that are no run."""
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(HISTORY, folder / "history.json")
    shutil.copy(TRACE, folder / "trace.json")
    (folder / "collector.jsonl").write_bytes(_collector_lines(TRACE))
    plain = [
        line(1, "run_started", payload={"task": "t"}),
        line(2, "attempt_started", payload={"attempt": 1}),
    ]
    (folder / "agent.jsonl.gz").write_bytes(gzip.compress(b"".join(plain)))
    (folder / "notes.md").write_text("# what happened\n\n- the agent looped\n")
    (folder / "config.json").write_text('{"retries": 3}\n')
    (folder / "session.jsonl.gz").write_bytes(gzip.compress(CHAIN.read_bytes()))
    return folder


def test_every_source_in_a_folder_is_checked(
    mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "check", str(mixed), "--jobs", "1")
    lines = out.splitlines()
    assert err == "" and code == 0
    checked = [ln.partition(": ")[0] for ln in lines if ": verified: " in ln]
    assert checked == [
        str(mixed / "agent.jsonl.gz"),
        str(mixed / "collector.jsonl"),
        str(mixed / "history.json"),
        str(mixed / "trace.json"),
    ]
    assert f"{mixed / 'notes.md'}: skipped: it looks like Markdown text" in out
    assert f"{mixed / 'config.json'}: skipped: it looks like a JSON document" in out
    assert f"{mixed / 'session.jsonl.gz'}: skipped: a gzip-compressed claude-code session" in out
    assert lines[-1] == (
        "4 runs: 4 verified, 0 failed, 0 could not be checked; 3 skipped "
        "(1 Markdown text, 1 a JSON document, "
        "1 a gzip-compressed claude-code session: sessions are read in place, gunzip it)"
    )


def test_the_json_has_a_line_per_run_and_per_skipped_file(
    mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "check", str(mixed), "--json", "--jobs", "2")
    rows = [json.loads(line) for line in out.splitlines()]
    runs = [r for r in rows if "run" in r]
    skipped = {r["skipped"]: r["reason"] for r in rows if "skipped" in r}
    assert code == 0 and len(runs) == 4 and {r["exit"] for r in runs} == {0}
    assert sorted(Path(p).name for p in skipped) == ["config.json", "notes.md", "session.jsonl.gz"]
    assert skipped[str(mixed / "notes.md")].startswith("it looks like Markdown text")


def test_a_folder_of_traces_is_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("mcp_tool_call.json", "adk_go_main.json", "two_span_cycle.json"):
        shutil.copy(TRACES / name, tmp_path / name)
    code, out, _ = run_cli(capsys, "check", str(tmp_path), "--jobs", "1")
    assert code == 0 and out.splitlines()[-1].startswith("3 runs: 3 verified")


def test_a_folder_with_no_run_says_what_it_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "README.md").write_text("# runs go here\n")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "run").mkdir()
    shutil.copy(DEMO / "events.jsonl", tmp_path / "old" / "run" / "events.jsonl")
    code, out, err = run_cli(capsys, "check", str(tmp_path))
    assert (
        code == 2
        and out == ""
        and err
        == (
            f"replay-tui: {tmp_path}: not a run folder (no events.jsonl in it), and no run in it "
            "that a source reads: 2 skipped (1 Markdown text, 1 a run folder in a subfolder: "
            "check the folder that holds it)\n"
        )
    )


def test_a_link_to_a_folder_of_runs_is_refused(
    mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "check", f"{mixed}@3")
    assert code == 2 and out == "" and "a folder of runs takes no @SEQ" in err


def test_a_batch_line_hints_at_the_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(CHAIN, tmp_path / "chain.jsonl")
    shutil.copytree(DEMO, tmp_path / "demo")
    code, out, _ = run_cli(capsys, "check", str(tmp_path), "--jobs", "1")
    lines = out.splitlines()
    assert code == 0
    assert lines[0].endswith("(claude_code 2.0.0); 1 warning (broken_chain)")
    assert "warning" not in lines[1]
    assert lines[-1] == "2 runs: 2 verified, 0 failed, 0 could not be checked; 1 with warnings"
    code, out, _ = run_cli(capsys, "check", str(tmp_path), "--json", "--jobs", "1")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["warnings"] for r in rows] == [{"broken_chain": 1}, {}]


def test_a_rollout_named_otherwise_is_listed(
    agent_homes: AgentHomes, capsys: pytest.CaptureFixture[str]
) -> None:
    day = agent_homes.sessions[1][0].parent
    renamed = day / "my-session.jsonl"
    shutil.copy(ROLLOUT, renamed)
    (day / "notes.txt").write_text("not a rollout\n")
    (day / "old.jsonl.gz").write_bytes(gzip.compress(ROLLOUT.read_bytes()))
    code, out, err = run_cli(capsys, "sessions", "--json", "--source", "codex")
    assert code == 0 and str(renamed) in [s["path"] for s in json.loads(out)]
    assert f"{day / 'notes.txt'}: passed over: not a Codex rollout: not a .jsonl file" in err
    assert f"{day / 'old.jsonl.gz'}: passed over: not a Codex rollout: compressed" in err


def test_a_folder_with_no_run_among_others_says_what_it_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.md").write_text("# nothing here\n")
    code, out, _ = run_cli(capsys, "check", str(DEMO), str(tmp_path), "--jobs", "1")
    assert code == 2
    assert out.splitlines()[1] == (
        f"{tmp_path}: cannot check: not a run folder (no events.jsonl in it), and no run in it "
        "that a source reads: 1 skipped (1 Markdown text)"
    )
