"""Two histories side by side: ``diff`` of two runs, of one run under two
rules, and of a run against a what-if branch; ``state --skip``; ``compare``
of run folders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.questions.sidebyside import Side, side_by_side
from replay_tui.reducers import rules_for_run
from replay_tui.synth.runs import write_agent_run
from tests.conftest import DEMO, SAMPLES
from tests.helpers.cli import run_cli

REFUND = SAMPLES / "refund-180"


def test_the_teaching_example_a_refund_without_its_approval(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(capsys, "diff", str(REFUND), "--skip", "2", "--json")
    result = json.loads(out)
    assert code == 1 and result["same"] is False
    assert result["hypothetical"] is True and result["skipped"] == [2]
    assert result["first_event_difference"]["seq"] == 2
    assert result["first_event_difference"]["b"] is None  # left out
    assert result["first_state_difference"] == {"seq": 2, "a_state": True, "b_state": True}
    assert result["changes"] == [{"path": "status", "op": "changed", "old": "approved",
                                  "new": "waiting"}]  # fmt: skip
    assert result["a"]["error"] is None
    assert (result["b"]["error"]["seq"], result["b"]["error"]["code"]) == (3, "illegal_transition")
    code, out, _ = run_cli(capsys, "diff", str(REFUND), "--skip", "2")
    lines = out.splitlines()
    about_b = [ln for ln in lines if ln.startswith(("B:", "  B:", "first", "  A → B"))]
    assert about_b and all("hypothetical: without seq 2" in ln for ln in about_b)
    assert lines[-1] == "different"


def test_state_of_a_branch_is_labelled_hypothetical(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "state", str(REFUND), "--at", "2", "--skip", "2")
    assert code == 0 and json.loads(out)["status"] == "waiting"
    assert "hypothetical: without seq 2" in err
    code, out, err = run_cli(capsys, "state", str(REFUND), "--at", "2")
    assert json.loads(out)["status"] == "approved" and err == ""


def test_a_run_against_itself_and_a_branch_that_skips_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(capsys, "diff", str(DEMO), str(DEMO))
    assert code == 0 and out.splitlines()[-1] == "same"
    result = side_by_side(Side(str(DEMO)), Side(str(DEMO), skip=()))
    assert result["same"] and result["first_state_difference"] is None
    assert "hypothetical" not in result


def test_run_id_and_ts_are_ignored_unless_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other-customer"
    shutil.copytree(DEMO, other)
    lines = []
    for raw in (other / "events.jsonl").read_bytes().splitlines():
        obj = orjson.loads(raw)
        obj["run_id"] = "customer-2"
        obj["ts"] = obj["ts"].replace("2026-11-01", "2026-11-02")
        lines.append(orjson.dumps(obj) + b"\n")
    (other / "events.jsonl").write_bytes(b"".join(lines))
    code, out, _ = run_cli(capsys, "diff", str(DEMO), str(other), "--json")
    assert code == 0 and json.loads(out)["same"] is True
    code, out, _ = run_cli(capsys, "diff", str(DEMO), str(other), "--json", "--strict-events")
    result = json.loads(out)
    assert code == 1 and result["first_event_difference"]["seq"] == 1
    assert result["first_state_difference"] is None  # the same states all along


def test_one_run_under_two_versions_of_its_rules(capsys: pytest.CaptureFixture[str]) -> None:
    buggy = SAMPLES / "broken-reducer_error" / "rules.py"
    code, out, _ = run_cli(
        capsys, "diff", str(DEMO), str(DEMO), "--rules-b", f"{buggy}:REDUCER", "--json"
    )
    result = json.loads(out)
    assert code == 1
    assert result["first_event_difference"] is None  # the same events
    assert result["b"]["error"]["code"] == "reducer_error" and result["b"]["error"]["seq"] == 8
    assert result["first_state_difference"] == {"seq": 8, "a_state": True, "b_state": False}


def test_compare_of_run_folders_is_a_diff(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "compare", str(DEMO), str(SAMPLES / "broken-divergence"))
    assert code == 1 and "first event difference: seq 11" in out


def test_cannot_run_is_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "diff", str(DEMO))
    assert code == 2 and "needs a run B" in err
    code, _, err = run_cli(capsys, "diff", str(DEMO), str(tmp_path / "nope"))
    assert code == 2 and err.count("\n") == 1
    code, _, err = run_cli(capsys, "diff", str(DEMO), "--skip", "0")
    assert code == 2 and "numbered from 1" in err


def test_a_branch_replays_strictly_but_for_what_it_leaves_out() -> None:
    """Skipping is the rules not seeing the event: the lines are still read
    and checked, and what the rules refuse without it is refused."""
    paths = locate_run(REFUND)
    rules = rules_for_run(None, paths.events)
    for history in (False, True):
        branch = Replay(paths, rules, skip={2}, history=history).verify()
        assert branch.valid == 2 and branch.error is not None and branch.error.seq == 3
        assert branch.state_at(2) == branch.state_at(1)
        branch.close()
    whole = Replay(paths, rules, skip=(), history=True).verify()
    plain = Replay(paths, rules, history=True).verify()
    assert [whole.state_at(n) for n in range(4)] == [plain.state_at(n) for n in range(4)]
    whole.close()
    plain.close()


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 1000), n=st.integers(12, 80), where=st.floats(0, 1, exclude_max=True))
def test_a_single_changed_payload_is_found_at_its_seq(
    tmp_path_factory: pytest.TempPathFactory, seed: int, n: int, where: float
) -> None:
    base = tmp_path_factory.mktemp("pair")
    a = base / "a"
    write_agent_run(a, n, seed=seed)
    b = base / "b"
    shutil.copytree(a, b)
    lines = (b / "events.jsonl").read_bytes().splitlines(keepends=True)
    tokens = [i for i, raw in enumerate(lines) if b'"model_finished"' in raw]
    if not tokens:
        return
    k = tokens[int(where * len(tokens))]
    obj = orjson.loads(lines[k])
    obj["payload"]["tokens"] = obj["payload"]["tokens"] + 7
    lines[k] = orjson.dumps(obj) + b"\n"
    (b / "events.jsonl").write_bytes(b"".join(lines))
    assert side_by_side(Side(str(a)), Side(str(a)))["same"]  # a run with itself
    result = side_by_side(Side(str(a)), Side(str(b)))
    seq = obj["seq"]
    assert result["first_event_difference"]["seq"] == seq
    assert result["first_state_difference"]["seq"] == seq  # tokens are counted
    assert any(c["path"] == "spent.tokens" for c in result["changes"])


def test_receipts_that_differ_are_walked_past_when_the_rules_keep_nothing_of_them(
    tmp_path: Path,
) -> None:
    """Two runs with the same events, but a receipt no event pins holds other
    bytes: the events are the same, and so are the states."""
    a = tmp_path / "a"
    lines = [
        {"seq": 1, "run_id": "r", "kind": "run_started", "payload": {"task": "t"}},
        {"seq": 2, "run_id": "r", "kind": "attempt_started", "payload": {"attempt": 1}},
        {"seq": 3, "run_id": "r", "kind": "model_proposed",
         "payload": {"call_id": "c1", "tool": "read_file", "args": {}}},
        {"seq": 4, "run_id": "r", "kind": "tool_allowed", "payload": {"call_id": "c1"}},
        {"seq": 5, "run_id": "r", "kind": "tool_started", "payload": {"call_id": "c1"}},
        {"seq": 6, "run_id": "r", "kind": "tool_finished",
         "payload": {"call_id": "c1", "ok": True, "cost": 0.5}},
    ]  # fmt: skip
    (a / "receipts").mkdir(parents=True)
    (a / "events.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    receipt = {"call_id": "c1", "tool": "read_file", "ok": True, "output": "x", "cost": 0.5}
    (a / "receipts" / "c1.json").write_bytes(orjson.dumps(receipt))
    b = tmp_path / "b"
    shutil.copytree(a, b)
    (b / "receipts" / "c1.json").write_bytes(orjson.dumps({**receipt, "output": "y"}))
    result = side_by_side(Side(str(a)), Side(str(b)))
    # the inputs part at seq 6 (the receipt read there differs), so the two
    # walk on from there comparing states: agent_run keeps the receipt's
    # name, not its output, so the states never part
    assert result["first_event_difference"] is None
    assert result["first_state_difference"] is None and result["same"]
    import replay_tui.questions.sidebyside as sbs

    assert sbs.WALK_LIMIT > 0


def test_a_long_walk_falls_back_to_the_patch_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the fast way would walk too long, both sides replay keeping
    their patches: the answer is the same."""
    import replay_tui.questions.sidebyside as sbs

    b = tmp_path / "b"
    shutil.copytree(DEMO, b)
    data = (b / "events.jsonl").read_bytes().replace(b'"tokens":1490', b'"tokens":1491')
    (b / "events.jsonl").write_bytes(data)
    quick = side_by_side(Side(str(DEMO)), Side(str(b)))
    monkeypatch.setattr(sbs, "WALK_LIMIT", 0)
    sure = side_by_side(Side(str(DEMO)), Side(str(b)))
    assert quick == sure
    assert quick["first_event_difference"]["seq"] == 9
    assert quick["first_state_difference"]["seq"] == 9
    assert [c["path"] for c in quick["changes"]] == ["spent.tokens"]
