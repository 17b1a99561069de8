"""The CLI contract: what `check`, `state` and `compare` print and exit with."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from replay_tui.cli import main
from tests.conftest import DEMO, ROOT, SAMPLES, RunFactory, agent_lines, line, receipt, sha

REFUND = SAMPLES / "refund-180"


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "replay_tui", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def test_demo_check_json_matches_the_article() -> None:
    out = cli("check", str(DEMO), "--json")
    assert out.returncode == 0, out.stderr
    report = orjson.loads(out.stdout)
    assert (report["events"], report["receipts"], report["state"]) == (14, 1, "retrying")
    assert report["error"] is None and report["partial"] is False
    assert report["rules"] == {"name": "agent_run", "version": "1.0.0"}
    assert sorted(report) == sorted(
        [
            "run_id",
            "events",
            "receipts",
            "state",
            "state_sha256",
            "events_sha256",
            "reader_version",
            "line_core",
            "rules_core",
            "rules",
            "rules_sha256",
            "rules_files",
            "partial",
            "error",
        ]
    )
    # the files the rules digest covers, each with its own sha256
    assert report["rules_files"] == {
        f"replay_tui/reducers/{name}": sha((ROOT / "replay_tui" / "reducers" / name).read_bytes())
        for name in ("agent_run.py", "base.py")
    }
    assert report["events_sha256"] == sha((DEMO / "events.jsonl").read_bytes())


def test_demo_human_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(DEMO)]) == 0
    out = capsys.readouterr().out
    assert "verified: 14 events, 1 receipt, state retrying" in out


@pytest.mark.parametrize(
    ("n", "expect"),
    [
        (1, ("waiting", 180, None)),
        (2, ("approved", 180, None)),
        (3, ("completed", 180, "refund-42")),
    ],
)
def test_refund_state_at_each_prefix(
    n: int, expect: tuple[object, ...], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert main(["state", str(REFUND), "--at", str(n)]) == 0
    state = orjson.loads(capsysbinary.readouterr().out)
    assert (state["status"], state["amount"], state["receipt"]) == expect


def test_rules_are_chosen_by_the_first_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(REFUND)]) == 0
    assert "state completed (refund 1.0.0)" in capsys.readouterr().out
    # asked for explicitly, the agent_run rules do not know "requested"
    assert main(["check", str(REFUND), "--reducer", "agent_run"]) == 1
    assert "unknown_kind" in capsys.readouterr().out


def test_state_diff(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["state", str(DEMO), "--at", "4", "--diff"]) == 0
    out = orjson.loads(capsysbinary.readouterr().out)
    assert out["kind"] == "tool_allowed"
    assert {"path": "spent.tool_calls", "op": "changed", "old": 0, "new": 1} in out["changes"]
    assert out["rule"].startswith("tool_allowed: call-001 proposed -> allowed")


def test_state_at_zero_is_initial_state(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["state", str(DEMO), "--at", "0"]) == 0
    assert orjson.loads(capsysbinary.readouterr().out)["phase"] == "new"


def test_state_past_valid_prefix_exits_1(run_factory: RunFactory) -> None:
    run = run_factory([*agent_lines()[:3], line(5, "tool_allowed")])
    out = cli("state", str(run), "--at", "4")
    assert out.returncode == 1
    assert "seq_gap" in out.stderr and out.stderr.count("\n") == 1
    ok = cli("state", str(run), "--at", "3")
    assert ok.returncode == 0


@pytest.mark.parametrize(
    "args",
    [
        ["check", "/no/such/run"],
        ["check"],
        ["check", "."],  # a folder without events.jsonl
        ["state", str(DEMO)],  # --at missing
        ["state", str(DEMO), "--at", "99"],
        ["state", str(DEMO), "--at", "-1"],
        ["check", str(DEMO), "--reducer", "nope"],
        ["check", str(DEMO), "--reducer", "/no/rules.py:R"],
        ["compare", "/no/a.json", "/no/b.json"],
        ["frobnicate", "--x"],
    ],
)
def test_cannot_run_is_exit_2_with_one_line(args: list[str], tmp_path: Path) -> None:
    out = cli(*args)
    assert out.returncode == 2, out
    assert out.stderr.startswith("replay-tui: ") and out.stderr.count("\n") == 1, out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


def test_check_failure_names_seq_line_code_artifact(run_factory: RunFactory) -> None:
    rc = receipt("c1")
    run = run_factory(agent_lines("f" * 64), receipts={"c1": rc})
    out = cli("check", str(run))
    assert out.returncode == 1
    assert "FAILED at seq 6, line 6, tool_finished: receipt_tampered" in out.stdout
    assert "artifact: receipts/c1.json" in out.stdout


def test_out_writes_atomically_and_never_inside_the_run(run_factory: RunFactory) -> None:
    rc = receipt("c1")
    run = run_factory(agent_lines(sha(rc)), receipts={"c1": rc})
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    out = cli("check", str(run), "--out", str(run / "events.jsonl"))
    assert out.returncode == 2 and "refusing" in out.stderr
    out = cli("check", str(run), "--out", str(run / "receipts" / "c1.json"))
    assert out.returncode == 2
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before
    # nothing under the run folder, ever: not even a new file (as report refuses)
    out = cli("check", str(run), "--out", str(run / "replay_report.json"), "--json")
    assert out.returncode == 2 and "inside the run folder" in out.stderr and out.stdout == ""
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before
    outside = run.parent / "replay_report.json"
    out = cli("check", str(run), "--out", str(outside), "--json")
    assert out.returncode == 0 and outside.read_text() == out.stdout
    assert [p.name for p in run.parent.iterdir() if p.name.startswith(".replay_report")] == []


def test_partial_mode_labels_everything(run_factory: RunFactory) -> None:
    run = run_factory([*agent_lines()[:4], line(9, "tool_started")])
    strict = orjson.loads(cli("check", str(run), "--json").stdout)
    partial = orjson.loads(cli("check", str(run), "--json", "--partial").stdout)
    assert strict["partial"] is False and strict["state"] is None
    assert partial["partial"] is True and partial["state"] == "running"
    assert partial["events"] == strict["events"] == 4
    assert (
        partial["error"]
        == strict["error"]
        == {
            "seq": 9,
            "line": 5,
            "kind": "tool_started",
            "code": "seq_gap",
            "message": "seq 9 follows seq 4: expected 5",
            "artifact": "events.jsonl:5",
        }
    )
    human = cli("check", str(run), "--partial").stdout
    assert "(partial)" in human


def test_compare_same_different_and_migration(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    assert cli("check", str(DEMO), "--out", str(a)).returncode == 0
    assert cli("check", str(DEMO), "--out", str(b)).returncode == 0
    same = cli("compare", str(a), str(b))
    assert same.returncode == 0 and same.stdout.startswith("same")
    # made on the two line cores (two machines): still the same run
    python = cli("check", str(DEMO), "--json", env={"REPLAY_TUI_LINE_CORE": "python"})
    (tmp_path / "python.json").write_text(python.stdout)
    made = orjson.loads(python.stdout)
    assert made["line_core"] == made["rules_core"] == "python"
    made["line_core"] = made["rules_core"] = "native"
    (tmp_path / "other-core.json").write_bytes(orjson.dumps(made))
    same = cli("compare", str(tmp_path / "python.json"), str(tmp_path / "other-core.json"))
    assert same.returncode == 0 and same.stdout.startswith("same"), same.stdout
    other = orjson.loads(b.read_bytes())
    other.update(state="failed", rules_sha256="0" * 64)
    b.write_bytes(orjson.dumps(other))
    diff = cli("compare", str(a), str(b))
    assert diff.returncode == 1
    assert "state" in diff.stdout and "rules_sha256" in diff.stdout
    assert "migration" in diff.stdout


def test_reports_identical_across_hash_seeds(tmp_path: Path) -> None:
    outs = {
        cli("check", str(SAMPLES / "long-300"), "--json", env={"PYTHONHASHSEED": seed}).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(outs) == 1 and '"state"' in next(iter(outs))


def test_events_jsonl_path_works_like_the_folder() -> None:
    a = cli("check", str(DEMO / "events.jsonl"), "--json")
    b = cli("check", str(DEMO), "--json")
    assert a.returncode == b.returncode == 0 and a.stdout == b.stdout


def test_check_many_runs_in_parallel_one_line_each(tmp_path: Path) -> None:
    names = ["demo-001", "long-300", "broken-seq_gap", "agent-succeeds"]
    for name in names:
        shutil.copytree(SAMPLES / name, tmp_path / name)
    out = cli("check", str(tmp_path), "--jobs", "2")
    assert out.returncode == 1  # one run fails
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 5 and lines[-1] == "4 runs: 3 verified, 1 failed, 0 could not be checked"
    assert [line.split(":")[0].rsplit("/", 1)[-1] for line in lines[:4]] == sorted(names)
    serial = cli("check", str(tmp_path), "--jobs", "1")
    assert serial.stdout == out.stdout
    as_json = cli("check", *(str(tmp_path / n) for n in names), "--json", "--jobs", "2")
    rows = [orjson.loads(line) for line in as_json.stdout.splitlines()]
    assert [r["exit"] for r in rows] == [0, 0, 1, 0]
    assert rows[2]["report"]["error"]["code"] == "seq_gap"
    assert rows[0]["report"] == orjson.loads(
        cli("check", str(tmp_path / names[0]), "--json").stdout
    )


def test_check_many_with_a_missing_run_exits_2(tmp_path: Path) -> None:
    out = cli("check", str(DEMO), str(tmp_path / "nope"))
    assert out.returncode == 2
    assert "cannot check" in out.stdout and "1 could not be checked" in out.stdout
    refused = cli("check", str(DEMO), str(REFUND), "--out", str(tmp_path / "r.json"))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1


def test_a_ledger_of_another_name_is_named_in_the_artifact(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Support gets ``prod-7731.jsonl``: the report names that file, not events.jsonl."""
    ledger = tmp_path / "prod-7731.jsonl"
    lines = agent_lines()
    lines[4] = lines[4].replace(b"tool_started", b"tool_finished")  # illegal here
    ledger.write_bytes(b"".join(lines))
    assert main(["check", "--json", str(ledger)]) == 1
    report = orjson.loads(capsysbinary.readouterr().out)
    assert report["error"]["artifact"] == "prod-7731.jsonl:5"


def test_rules_that_failed_are_not_a_migration(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    assert cli("check", str(DEMO), "--out", str(a)).returncode == 0
    broken = orjson.loads(a.read_bytes())
    broken.update(
        state=None,
        state_sha256=None,
        rules_sha256="0" * 64,
        error={"code": "reducer_error", "message": "boom", "seq": 3},
    )
    b.write_bytes(orjson.dumps(broken))
    out = cli("compare", str(a), str(b))
    assert out.returncode == 1
    assert "migration" not in out.stdout
    assert "its rules failed (reducer_error)" in out.stdout


def test_a_folder_of_runs_includes_its_temporal_histories() -> None:
    out = cli("check", str(SAMPLES))
    lines = out.stdout.splitlines()
    histories = [ln for ln in lines if ln.startswith(str(SAMPLES / "temporal") + "/")]
    assert len(histories) == 6 and all(": verified:" in ln for ln in histories[:5])
    assert histories[5].startswith(f"{SAMPLES / 'temporal' / 'README.md'}: skipped: it looks like")
    assert lines[-1].startswith(
        "36 runs:"
    )  # 6 session files of agent-sessions/, the trace of traces/
    alone = cli("check", str(SAMPLES / "temporal"))
    assert alone.returncode == 0 and alone.stdout.splitlines()[-1].startswith("5 runs: 5 verified")


def test_check_says_what_a_run_that_stops_mid_way_leaves_open() -> None:
    out = cli("check", str(DEMO))
    assert out.returncode == 0
    assert (
        "  still open: call-003 allowed (never started); attempt 2 has no check yet" in out.stdout
    )
    done = cli("check", str(SAMPLES / "agent-succeeds"))
    assert "still open" not in done.stdout


def test_importing_the_main_module_runs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second process started with multiprocessing's spawn imports the
    parent's ``__main__`` (``python -m replay_tui``) as ``__mp_main__``: it
    must not run the command line again."""
    import runpy

    import replay_tui.cli

    ran: list[object] = []
    monkeypatch.setattr(replay_tui.cli, "main", lambda *a, **k: ran.append(a) or 0)
    spawned = runpy.run_module("replay_tui.__main__", run_name="__mp_main__")
    assert spawned["main"] is replay_tui.cli.main  # it imported the command line...
    assert ran == []  # ...and did not run it
    with pytest.raises(SystemExit):  # as the main module it does
        runpy.run_module("replay_tui.__main__", run_name="__main__")
    assert len(ran) == 1


#: What each command brings that ``check`` does not need: the questions, the
#: report's renderer, the receiver's HTTP server, the sessions list, the app.
OTHERS = (
    "replay_tui.questions",
    "replay_tui.handover",
    "replay_tui.cli.receive",
    "replay_tui.cli.sessions",
    "replay_tui.ui",
    "http.server",
    "textual",
)


def test_a_command_imports_only_what_it_runs() -> None:
    """``check`` starts without importing the other commands' modules (about
    twice as fast for a small run); ``--help`` still lists every command."""
    code = (
        "import sys\n"
        "from replay_tui.cli.commands import main\n"
        f"assert main(['check', {str(DEMO)!r}]) == 0\n"
        "print('|'.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    loaded = done.stdout.strip().splitlines()[-1].split("|")
    brought = [m for m in loaded if any(m == o or m.startswith(o + ".") for o in OTHERS)]
    assert brought == []
    shown = subprocess.run(
        [sys.executable, "-m", "replay_tui", "--help"], capture_output=True, text=True, cwd=ROOT
    ).stdout
    for command in ("check", "state", "when", "history", "report", "diff", "receive", "serve"):
        assert f"    {command}" in shown, command
