"""An Inspect AI log's samples as runs: ``--sample ID[:EPOCH]`` (or
``LOG#ID:EPOCH``) for every command that takes a run; ``check LOG`` checks
them all."""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import TESTS
from tests.helpers.cli import run_cli

LOGS = TESTS / "fixtures" / "inspect-logs"
CALC = str(LOGS / "generated" / "calculator.eval")
NOTEBOOK = str(LOGS / "generated" / "notebook.eval")
HELPER = str(LOGS / "generated" / "helper.eval")
FAILING = str(LOGS / "generated" / "failing.eval")


def test_check_a_log_checks_every_sample(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "check", CALC)
    assert code == 0
    for key in ("parallel:1", "parallel:2", "single:1", "single:2"):
        assert f"calculator.eval#{key}: verified" in out
    assert "4 runs: 4 verified" in out
    code, out, _ = run_cli(capsys, "check", CALC, "--json")
    lines = [orjson.loads(line) for line in out.splitlines()]
    assert len(lines) == 4 and all(line["exit"] == 0 for line in lines)


def test_the_sample_option_names_one_epoch_one_by_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(capsys, "check", CALC, "--sample", "single")
    assert code == 0 and out.startswith("calculator.eval#single: verified")
    code, one, _ = run_cli(capsys, "state", CALC, "--sample", "parallel", "--at", "0")
    code, also, _ = run_cli(capsys, "state", f"{CALC}#parallel:1@0")
    assert one == also


def test_state_has_inspects_names_and_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "state", f"{CALC}@999", "--sample", "parallel:2")
    assert code == 2  # past the end: said, not a crash
    code, out, _ = run_cli(capsys, "report", CALC, "--sample", "parallel:2")
    events = int(out.split("verified: ")[1].split(" events")[0])
    code, out, _ = run_cli(capsys, "state", CALC, "--sample", "parallel:2", "--at", str(events))
    state = orjson.loads(out)
    roles = [m["role"] for m in state["messages"]]
    assert roles == ["user", "assistant", "tool", "tool", "tool", "assistant"]
    assert [c["function"] for c in state["messages"][1]["tool_calls"]] == ["add", "add", "divide"]
    assert state["messages"][4]["error"]["message"] == "cannot divide by zero"
    assert state["store"]["sums"] == [11, 12]
    assert state["scores"]["includes"]["value"] == "C"
    assert state["tokens"]["total"] > 0 and state["output"]["completion"].endswith("5.")


def test_when_and_history_find_a_store_key(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "history", NOTEBOOK, "store.answer", "--sample", "1", "--json")
    (change,) = orjson.loads(out)["changes"]
    assert change["op"] == "added" and change["new"] == "You said: Remember blue."
    # the solver set "draft" and deleted it: its span's changes hold neither
    code, out, _ = run_cli(capsys, "history", NOTEBOOK, "store.draft", "--sample", "1", "--json")
    assert orjson.loads(out)["changes"] == []
    code, out, _ = run_cli(
        capsys, "when", NOTEBOOK, "--sample", "1", "store.notes.depth.level == 2"
    )
    assert code == 0 and int(out.split()[0]) == change["seq"]


def test_a_subtask_keeps_its_own_store(capsys: pytest.CaptureFixture[str]) -> None:
    _code, out, _ = run_cli(capsys, "report", HELPER, "--sample", "word")
    events = int(out.split("verified: ")[1].split(" events")[0])
    _code, out, _ = run_cli(capsys, "state", f"{HELPER}@{events}")  # one sample: none to name
    state = orjson.loads(out)
    assert state["store"] == {"found": "OWL"}
    (sub,) = state["subtasks"].values()
    assert sub["name"] == "look_up" and sub["store"] == {"looked_up": "owl", "count": 1}


def test_an_error_mid_solver_is_a_finding_and_the_record(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(capsys, "check", FAILING, "--sample", "boom")
    assert code == 0
    assert "state error" in out
    assert "the record adds assistant: 'You said: Please fail.'" in out


def test_diff_the_same_sample_across_two_logs(capsys: pytest.CaptureFixture[str]) -> None:
    json_log = str(LOGS / "generated" / "notebook.json")
    _code, out, _ = run_cli(capsys, "diff", NOTEBOOK, json_log, "--sample", "2")
    assert "A: notebook.eval#2: verified" in out and "B: notebook.json#2: verified" in out
    _code, out, _ = run_cli(capsys, "diff", f"{CALC}#single:1", f"{CALC}#single:2")
    assert "first event difference" in out


def test_sample_on_a_run_that_is_no_log(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "check", str(TESTS / "conftest.py"), "--sample", "1")
    assert code == 2 and "--sample names a sample of an Inspect log, and this is none" in err


def test_usage_per_sample_and_per_log(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "usage", FAILING, CALC)
    assert code == 0
    assert "failing.eval: Inspect AI log, 2 samples:" in out
    assert "calculator.eval: Inspect AI log, 4 samples:" in out
    boom = next(line for line in out.splitlines() if line.strip().startswith("boom:1"))
    assert boom.rstrip().endswith("RuntimeError('the solver fails on purpose')")
    code, out, _ = run_cli(capsys, "usage", CALC, "--json")
    (log,) = orjson.loads(out)["inspect_logs"]
    per_sample = sum(s["tokens"]["total_tokens"] for s in log["samples"])
    assert per_sample == log["tokens"]["total_tokens"] > 0
    assert log["by_model"]["mockllm/model"]["total_tokens"] == per_sample


def test_a_sample_link_opens_where_it_points(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "state", f"{CALC}#single:2@2")
    assert code == 0 and orjson.loads(out)["messages"][0]["role"] == "user"
