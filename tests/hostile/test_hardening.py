"""Odd input and buggy rules get a verdict, never a crash or a terminal escape."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from replay_tui.engine.replay import verify
from replay_tui.formats.run import locate_run
from replay_tui.reducers import load_reducer
from replay_tui.views.runview import RunView
from tests.conftest import RunFactory, agent_lines, line, receipt, sha


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "replay_tui", *args], capture_output=True, text=True, timeout=120
    )


def rules_file(tmp_path: Path, body: str) -> str:
    path = tmp_path / "rules.py"
    path.write_text(
        "from replay_tui.reducers.refund import RefundRules\n"
        "class Rules(RefundRules):\n" + body + "REDUCER = Rules()\n"
    )
    return f"{path}:REDUCER"


REFUND = [line(1, "requested", payload={"amount": 5}), line(2, "approved")]


@pytest.mark.parametrize(
    ("body", "seq", "words"),
    [
        ("    def apply(self, state, event, ctx):\n        raise SystemExit(0)\n", 1, "SystemExit"),
        (
            "    def apply(self, state, event, ctx):\n        state = super().apply(state, event, ctx)\n"
            "        state['x'] = {1}\n        return state\n",
            1,
            "not JSON",
        ),
        (
            "    def summary(self, state):\n        raise ValueError('no words')\n",
            None,
            "summary()",
        ),
    ],
)
def test_buggy_rules_are_reducer_errors(
    run_factory: RunFactory, tmp_path: Path, body: str, seq: int | None, words: str
) -> None:
    out = cli("check", str(run_factory(REFUND)), "--reducer", rules_file(tmp_path, body))
    assert out.returncode == 1, out
    assert "reducer_error" in out.stdout and words in out.stdout
    if seq is not None:
        assert f"at seq {seq}," in out.stdout


def test_deep_payload_is_bad_json_not_a_crash(run_factory: RunFactory) -> None:
    deep = (
        b'{"seq":1,"run_id":"r1","kind":"run_started","payload":{"a":'
        + b"[" * 300
        + b"]" * 300
        + b"}}\n"
    )
    out = cli("check", str(run_factory([deep])))
    assert out.returncode == 1 and "bad_json" in out.stdout and "levels deep" in out.stdout


def test_out_refuses_special_files_and_folders(run_factory: RunFactory, tmp_path: Path) -> None:
    run = run_factory(REFUND)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in (fifo, tmp_path):
        out = cli("check", str(run), "--out", str(target))
        assert out.returncode == 2 and "not a regular file" in out.stderr
    assert fifo.is_fifo()
    report = tmp_path / "report.json"
    assert cli("check", str(run), "--out", str(report)).returncode == 0
    assert report.stat().st_mode & 0o044  # readable by others, like any report


def test_terminal_escapes_in_data_never_reach_the_cli_output(run_factory: RunFactory) -> None:
    run = run_factory([line(1, "run_\x1b]0;pwned\x07started\x1b[2J")])
    (run / "receipts").mkdir()
    (run / "receipts" / "x\x1b[31m.json").write_text("{}")
    out = cli("check", str(run))
    assert out.returncode == 1
    assert "\x1b" not in out.stdout + out.stderr and "\x07" not in out.stdout
    assert "\\e]0;pwned" in out.stdout


def test_last_line_of_spaces_is_truncated(run_factory: RunFactory) -> None:
    r = verify(locate_run(run_factory([*REFUND, b"   "])), load_reducer("refund"))
    assert r.error is not None and (r.error.code, r.error.line) == ("truncated_line", 3)


def test_cost_comes_from_the_event_not_the_receipt(run_factory: RunFactory) -> None:
    rc = receipt("c1", cost=7.5)
    r = verify(
        locate_run(run_factory(agent_lines(sha(rc)), receipts={"c1": rc})), load_reducer(None)
    )
    assert r.error is None and r.final_state()["spent"]["cost"] == 0.5


def test_attempt_must_be_an_integer(run_factory: RunFactory) -> None:
    lines = agent_lines()
    lines[1] = line(2, "attempt_started", payload={"attempt": 1.0})
    r = verify(locate_run(run_factory(lines)), load_reducer(None))
    assert r.error is not None and (r.error.code, r.error.seq) == ("illegal_transition", 2)


def test_ledger_changed_after_validation_is_shown_not_raised(run_factory: RunFactory) -> None:
    rc = receipt("c1")
    run = run_factory(agent_lines(sha(rc)), receipts={"c1": rc})
    r = verify(locate_run(run), load_reducer(None))
    assert r.error is None
    data = (run / "events.jsonl").read_bytes().replace(b'"tokens":5', b'"tokens":9')
    with open(run / "events.jsonl", "r+b") as fh:  # same inode, rewritten in place
        fh.write(data)
    view = RunView(r).line_view(3)
    assert view.mode == "broken" and "changed since it was validated" in (view.raw or "")


def test_leap_second_is_a_valid_ts_and_null_ts_is_not(run_factory: RunFactory) -> None:
    ok = verify(
        locate_run(
            run_factory([line(1, "requested", payload={"amount": 5}, ts="2016-12-31T23:59:60Z")])
        ),
        load_reducer("refund"),
    )
    assert ok.error is None
    bad = verify(
        locate_run(run_factory([line(1, "requested", payload={"amount": 5}, ts=None)])),
        load_reducer("refund"),
    )
    assert bad.error is not None and bad.error.code == "bad_envelope"


def test_huge_lines_are_not_kept_in_the_line_cache(run_factory: RunFactory) -> None:
    big = line(2, "approved", payload={"note": "x" * 200_000})
    r = verify(locate_run(run_factory([REFUND[0], big])), load_reducer("refund"))
    assert r.error is None
    r.event(0)
    r.event(1)
    assert 0 in r.ledger._cache and 1 not in r.ledger._cache
