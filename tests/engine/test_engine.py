"""Strict replay on hand-made runs: each rule of the spec, one at a time."""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay_tui.engine.replay import Replay, verify
from replay_tui.formats.ledger import Ledger, LedgerRewritten
from replay_tui.formats.run import locate_run
from replay_tui.reducers import load_reducer
from tests.conftest import ROOT, RunFactory, agent_lines, line, receipt, sha


def check(run: Path, reducer: str | None = None) -> Replay:
    return verify(locate_run(run), load_reducer(reducer))


def good_run(run_factory: RunFactory, **kw: object) -> Path:
    rc = receipt("c1")
    return run_factory(agent_lines(sha(rc)), receipts={"c1": rc}, **kw)


def test_valid_run_verifies(run_factory: RunFactory) -> None:
    r = check(good_run(run_factory))
    assert r.error is None
    assert r.valid == 8
    assert r.final_state()["phase"] == "retrying"
    assert r.final_state()["spent"] == {"tool_calls": 1, "cost": 0.5, "tokens": 5}


def test_crlf_and_bom_are_accepted(run_factory: RunFactory) -> None:
    rc = receipt("c1")
    data = b"\xef\xbb\xbf" + b"".join(x.replace(b"\n", b"\r\n") for x in agent_lines(sha(rc)))
    r = check(run_factory(data, receipts={"c1": rc}))
    assert r.error is None and r.valid == 8


@pytest.mark.parametrize(
    ("mutate", "code", "seq", "line_no"),
    [
        (lambda ls: [*ls[:3], b"{not json\n", *ls[4:]], "bad_json", None, 4),
        (lambda ls: [*ls[:3], b"\n", *ls[3:]], "blank_line", None, 4),
        (lambda ls: [*ls[:3], b"   \n", *ls[3:]], "blank_line", None, 4),
        (
            lambda ls: [*ls[:3], b'{"seq":4,"run_id":"r1","kind":"x\xff"}\n'],
            "bad_encoding",
            None,
            4,
        ),
        (lambda ls: [*ls[:3], b"[1,2]\n"], "bad_envelope", None, 4),
        (lambda ls: [*ls[:3], line(4, "tool_allowed", payload=[])], "bad_envelope", 4, 4),
        (
            lambda ls: [*ls[:3], b'{"seq":"4","run_id":"r1","kind":"tool_allowed"}\n'],
            "bad_envelope",
            None,
            4,
        ),
        (
            lambda ls: [*ls[:3], b'{"seq":true,"run_id":"r1","kind":"tool_allowed"}\n'],
            "bad_envelope",
            None,
            4,
        ),
        (
            lambda ls: [*ls[:3], b'{"seq":4.0,"run_id":"r1","kind":"tool_allowed"}\n'],
            "bad_envelope",
            None,
            4,
        ),
        (lambda ls: [*ls[:3], b'{"seq":4,"kind":"tool_allowed"}\n'], "bad_envelope", 4, 4),
        (lambda ls: [*ls[:3], line(4, "tool_allowed", ts="yesterday")], "bad_envelope", 4, 4),
        (lambda ls: ls[:3] + ls[4:], "seq_gap", 5, 4),
        (lambda ls: [*ls[:4], ls[3], *ls[4:]], "seq_duplicate", 4, 5),
        (lambda ls: [line(0, "run_started"), *ls[1:]], "seq_gap", 0, 1),
        (
            lambda ls: [*ls[:3], line(4, "tool_allowed", run_id="r2"), *ls[4:]],
            "mixed_run_ids",
            4,
            4,
        ),
        (lambda ls: [*ls[:3], line(4, "tool_exploded"), *ls[4:]], "unknown_kind", 4, 4),
        (lambda ls: [*ls[:3], line(4, "tool_allowed", v=2), *ls[4:]], "unsupported_version", 4, 4),
        (
            lambda ls: [
                *ls[:3],
                line(4, "tool_allowed", parent_seq=4, payload={"call_id": "c1"}),
                *ls[4:],
            ],
            "bad_parent",
            4,
            4,
        ),
        (
            lambda ls: [
                *ls[:3],
                line(4, "tool_allowed", parent_seq=0, payload={"call_id": "c1"}),
                *ls[4:],
            ],
            "bad_parent",
            4,
            4,
        ),
        (
            lambda ls: [
                *ls[:2],
                line(3, "model_proposed", payload={"call_id": "../x", "tool": "t"}),
            ],
            "bad_call_id",
            3,
            3,
        ),
        (
            lambda ls: [*ls[:3], line(4, "tool_started", payload={"call_id": "c1"}), *ls[4:]],
            "illegal_transition",
            4,
            4,
        ),
        (
            lambda ls: [*ls[:7], line(8, "state_changed", payload={"to": "failed"})],
            "divergence",
            8,
            8,
        ),
        (lambda ls: [*ls[:7], ls[7].rstrip(b"\n")[:-9]], "truncated_line", None, 8),
    ],
)
def test_each_error_code_at_its_seq_and_line(
    run_factory: RunFactory,
    mutate,
    code: str,
    seq: int | None,
    line_no: int,  # type: ignore[no-untyped-def]
) -> None:
    rc = receipt("c1")
    run = run_factory(mutate(agent_lines(sha(rc))), receipts={"c1": rc})
    r = check(run)
    assert r.error is not None
    assert (r.error.code, r.error.seq, r.error.line) == (code, seq, line_no), r.error
    assert r.error.artifact == f"events.jsonl:{line_no}"
    assert r.valid == line_no - 1


def test_utf16_is_refused_with_a_hint(run_factory: RunFactory) -> None:
    data = b"".join(agent_lines()).decode().encode("utf-16")
    r = check(run_factory(data))
    assert r.error is not None and r.error.code == "bad_encoding"
    assert "UTF-16" in r.error.message and r.error.line == 1


def test_last_line_without_newline_that_parses_is_a_warning(run_factory: RunFactory) -> None:
    rc = receipt("c1")
    lines = agent_lines(sha(rc))
    lines[-1] = lines[-1].rstrip(b"\n")
    r = check(run_factory(lines, receipts={"c1": rc}))
    assert r.error is None and r.valid == 8
    assert [w.code for w in r.warnings] == ["no_final_newline"]


def test_missing_receipt(run_factory: RunFactory) -> None:
    r = check(run_factory(agent_lines()))
    assert r.error is not None
    assert (r.error.code, r.error.seq, r.error.artifact) == (
        "missing_receipt",
        6,
        "receipts/c1.json",
    )


def test_receipt_tampered(run_factory: RunFactory) -> None:
    r = check(run_factory(agent_lines("0" * 64), receipts={"c1": receipt("c1")}))
    assert r.error is not None and (r.error.code, r.error.seq) == ("receipt_tampered", 6)


def test_receipt_name_mismatch(run_factory: RunFactory) -> None:
    r = check(run_factory(agent_lines(), receipts={"c1": receipt("c2")}))
    assert r.error is not None and (r.error.code, r.error.seq) == ("receipt_name_mismatch", 6)


def test_symlinked_receipt_is_never_read(run_factory: RunFactory, tmp_path: Path) -> None:
    outside = tmp_path / "secret.json"
    outside.write_bytes(receipt("c1"))
    run = run_factory(agent_lines(), receipts={})
    os.symlink(outside, run / "receipts" / "c1.json")
    r = check(run)
    assert r.error is not None and r.error.code == "missing_receipt"
    assert "symlink" in r.error.message


def test_orphan_receipt_is_a_warning(run_factory: RunFactory) -> None:
    rc = receipt("c1")
    r = check(run_factory(agent_lines(sha(rc)), receipts={"c1": rc, "zz": receipt("zz")}))
    assert r.error is None
    assert [(w.code, w.artifact) for w in r.warnings] == [("orphan_receipt", "receipts/zz.json")]


@pytest.mark.parametrize("budget", [b"{", b"[]", b'{"max_attempts": "3"}', b'{"max_cost": -1}'])
def test_bad_budget(run_factory: RunFactory, budget: bytes) -> None:
    r = check(run_factory(agent_lines(), budget=budget))
    assert r.error is not None
    assert (r.error.code, r.error.seq, r.error.line, r.error.artifact) == (
        "bad_budget",
        None,
        None,
        "budget.json",
    )
    assert r.valid == 0


@pytest.mark.parametrize(
    ("budget", "seq"),
    [({"max_tool_calls": 0}, 4), ({"max_cost": 0.1}, 6), ({"max_attempts": 0}, 2)],
)
def test_budget_exceeded(run_factory: RunFactory, budget: dict[str, float], seq: int) -> None:
    rc = receipt("c1")
    r = check(run_factory(agent_lines(sha(rc)), receipts={"c1": rc}, budget=budget))
    assert r.error is not None and (r.error.code, r.error.seq) == ("budget_exceeded", seq)


def test_last_attempt_failing_check_fails_the_run(run_factory: RunFactory) -> None:
    rc = receipt("c1")
    lines = [*agent_lines(sha(rc))[:7], line(8, "state_changed", payload={"to": "failed"})]
    r = check(run_factory(lines, receipts={"c1": rc}, budget={"max_attempts": 1}))
    assert r.error is None and r.final_state()["phase"] == "failed"
    more = [*lines, line(9, "attempt_started", payload={"attempt": 2})]
    r = check(run_factory(more, receipts={"c1": rc}, budget={"max_attempts": 1}))
    assert r.error is not None and (r.error.code, r.error.seq) == ("illegal_transition", 9)


def test_reducer_error_keeps_traceback_and_prefix(run_factory: RunFactory, tmp_path: Path) -> None:
    rules = tmp_path / "rules.py"
    rules.write_text(
        "from replay_tui.reducers.refund import RefundRules\n"
        "class Buggy(RefundRules):\n"
        "    def apply(self, state, event, ctx):\n"
        "        if event.kind == 'approved':\n"
        "            state['status'] = 'half-done'\n"
        "            return {}['boom']\n"
        "        return super().apply(state, event, ctx)\n"
        "REDUCER = Buggy()\n"
    )
    run = run_factory([line(1, "requested", payload={"amount": 5}), line(2, "approved")])
    r = check(run, f"{rules}:REDUCER")
    assert r.error is not None and (r.error.code, r.error.seq) == ("reducer_error", 2)
    assert "KeyError" in r.error.message and r.error.traceback and "boom" in r.error.traceback
    # the rules' frames, none of replay-tui's engine around them
    files = re.findall(r'File "([^"]+)"', r.error.traceback)
    assert files == [str(rules)], r.error.traceback
    # the half-applied event does not leak into the valid prefix's state
    assert r.final_state() == {"status": "waiting", "amount": 5, "receipt": None}


def test_a_built_in_rules_packages_frames_stay_in_the_traceback(
    run_factory: RunFactory, tmp_path: Path
) -> None:
    """The built-in rules live in packages (reducers/temporal/, ...): their
    frames are the rules' own, kept; the engine's and the callers' are not."""
    rules = tmp_path / "rules.py"
    rules.write_text(
        "from replay_tui.reducers.refund import RefundRules\n"
        "from replay_tui.reducers.temporal import REDUCER as TEMPORAL\n"
        "class Borrowing(RefundRules):\n"
        "    def apply(self, state, event, ctx):\n"
        "        if event.kind == 'approved':\n"
        "            return TEMPORAL.apply({}, event, ctx)\n"
        "        return super().apply(state, event, ctx)\n"
        "REDUCER = Borrowing()\n"
    )
    run = run_factory([line(1, "requested", payload={"amount": 5}), line(2, "approved")])
    r = check(run, f"{rules}:REDUCER")
    assert r.error is not None and r.error.code == "reducer_error" and r.error.traceback
    files = re.findall(r'File "([^"]+)"', r.error.traceback)
    temporal = ROOT / "replay_tui" / "reducers" / "temporal" / "rules.py"
    assert files == [str(rules), str(temporal)], r.error.traceback


def test_state_that_is_not_json_is_a_reducer_error(run_factory: RunFactory, tmp_path: Path) -> None:
    rules = tmp_path / "rules.py"
    rules.write_text(
        "from replay_tui.reducers.refund import RefundRules\n"
        "class Sets(RefundRules):\n"
        "    def apply(self, state, event, ctx):\n"
        "        state = super().apply(state, event, ctx)\n"
        "        if event.seq == 2: state['seen'] = {1, 2}\n"
        "        return state\n"
        "REDUCER = Sets()\n"
    )
    run = run_factory(
        [
            line(1, "requested", payload={"amount": 5}),
            line(2, "approved"),
            line(3, "refund_recorded", payload={"receipt": "x"}),
        ]
    )
    r = Replay(locate_run(run), load_reducer(f"{rules}:REDUCER"), checkpoint_every=3).verify()
    assert r.error is not None and (r.error.code, r.error.seq) == ("reducer_error", 2)
    assert "not JSON" in r.error.message


def test_refund_prefixes(run_factory: RunFactory) -> None:
    run = run_factory(
        [
            line(1, "requested", payload={"amount": 180}),
            line(2, "approved"),
            line(3, "refund_recorded", payload={"receipt": "refund-42"}),
        ]
    )
    r = check(run, "refund")
    got = [(s["status"], s["amount"], s["receipt"]) for s in map(r.state_at, range(4))]
    assert got == [
        ("new", 0, None),
        ("waiting", 180, None),
        ("approved", 180, None),
        ("completed", 180, "refund-42"),
    ]
    bad = check(
        run_factory(
            [
                line(1, "requested", payload={"amount": 180}),
                line(2, "refund_recorded", payload={"receipt": "r"}),
            ]
        ),
        "refund",
    )
    assert bad.error is not None and (bad.error.code, bad.error.seq) == ("illegal_transition", 2)


def test_step_gives_changes_and_rule(run_factory: RunFactory) -> None:
    r = check(good_run(run_factory))
    step = r.step(4)
    paths = {c.path: (c.old, c.new) for c in step.changes}
    assert paths == {
        ("calls", "c1", "status"): ("proposed", "allowed"),
        ("spent", "tool_calls"): (0, 1),
    }
    assert step.explanation == "tool_allowed: c1 proposed -> allowed; spent.tool_calls +1"


def test_ledger_reads_appends_without_rereading(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":')
    with Ledger(path) as ledger:
        assert [i for i, _ in ledger.scan()] == [0]
        assert ledger.tail() == b'{"b":'
        with path.open("ab") as fh:
            fh.write(b'2}\n{"c":3}\n')
        assert list(ledger.scan()) == [(1, b'{"b":2}'), (2, b'{"c":3}')]
        assert ledger.raw_line(1) == b'{"b":2}'
        assert len(ledger) == 3
        ledger.check_unchanged()
        path.write_bytes(b'{"a":1}\n')
        with pytest.raises(LedgerRewritten):
            ledger.check_unchanged()


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(
        st.text(st.characters(codec="utf-8", exclude_characters="\n\x00"), max_size=40).map(
            str.encode
        ),
        max_size=30,
    ),
    crlf=st.lists(st.booleans(), min_size=30, max_size=30),
    data=st.data(),
)
def test_lines_read_together_are_the_lines_read_one_by_one(
    lines: list[bytes], crlf: list[bool], data: st.DataObject
) -> None:
    """A span made again reads its lines in one go: each the bytes
    ``raw_line`` gives, CRLF endings and empty lines included."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "events.jsonl"
        path.write_bytes(
            b"".join(
                line + (b"\r\n" if cr else b"\n") for line, cr in zip(lines, crlf, strict=False)
            )
        )
        with Ledger(path) as ledger:
            for _ in ledger.scan():
                pass
            n = len(ledger)
            assert n == len(lines)
            start = data.draw(st.integers(0, n))
            count = data.draw(st.integers(0, n - start))
            together = ledger.raw_lines(start, count)
            assert together == [ledger.raw_line(i) for i in range(start, start + count)]


def test_events_sha256_covers_every_byte(run_factory: RunFactory) -> None:
    run = good_run(run_factory)
    data = (run / "events.jsonl").read_bytes()
    r = check(run)
    assert r.ledger.sha256() == sha(data)


def test_checkpoints_thin_out_and_still_seek_right(tmp_path: Path) -> None:
    """Dense checkpoints (a replay that seeks: the app with rules that take
    plain dicts) thin out past their budget; check's are spaced as far as
    the events before them. Either way every prefix is rebuilt right."""
    from replay_tui.engine.checkpoints import JsonCheckpoints
    from replay_tui.synth.runs import write_agent_run

    dense = JsonCheckpoints({}, every=4, budget_bytes=2_000)
    for n in range(4, 400, 4):
        dense.keep(n, {"xs": list(range(n // 4))})
    assert dense._every > 4  # thinned because the budget was small
    assert all(
        orjson.loads(dense.nearest(n)[1]) == {"xs": list(range(dense.nearest(n)[0] // 4))}
        for n in range(4, 400, 4)
        if dense.nearest(n)[0]
    )

    run = tmp_path / "gen"
    write_agent_run(run, 400, seed=3)
    paths = locate_run(run)
    full = Replay(paths, load_reducer(None), checkpoint_every=1_000_000).verify()
    thin = Replay(paths, load_reducer(None), checkpoint_every=4, checkpoint_budget=20_000).verify()
    assert thin.error is None and full.error is None
    keys = thin.checkpoints.keys()
    assert all(b - a >= a for a, b in itertools.pairwise(keys[1:]))  # each after as many again
    for n in range(0, 401, 7):
        assert thin.state_at(n) == full.state_at(n)
    assert orjson.dumps(thin.final_state()) == orjson.dumps(full.final_state())


def test_a_state_bigger_than_half_the_budget_is_kept_once(tmp_path: Path) -> None:
    """``check`` at 1M events: the state is 40 MB of JSON, its budget 8 MiB;
    one checkpoint, the newest, stays beside the initial state, and the
    state after an error is still rebuilt right from it."""
    from replay_tui.synth.runs import write_agent_run

    run = tmp_path / "gen"
    write_agent_run(run, 3000, seed=5, plant="divergence", plant_seq=2990)
    paths = locate_run(run)
    r = Replay(paths, load_reducer(None), checkpoint_every=64, checkpoint_budget=30_000).verify()
    kept = r.checkpoints.keys()  # a list of prefixes, not a dict's keys
    sizes = [len(r.checkpoints.get(k) or b"") for k in kept]
    assert sizes[-1] > 15_000 and len(sizes) == 2  # the initial state and the newest
    assert r.error is not None and r.error.seq == 2990
    full = Replay(paths, load_reducer(None), checkpoint_every=1_000_000).verify()
    assert orjson.dumps(r.final_state()) == orjson.dumps(full.final_state())


def test_reducer_by_module_and_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    import replay_tui.reducers as reducers

    by_module = load_reducer("replay_tui.reducers.refund:REDUCER")
    assert by_module.reducer.name == "refund"
    # the rules module and the rules package's modules it imports: their manifest's digest
    here = Path(reducers.__file__).parent
    manifest = "".join(
        f"{sha((here / name).read_bytes())}  replay_tui/reducers/{name}\n"
        for name in ("base.py", "refund.py")
    )
    assert by_module.rules_sha256 == sha(manifest.encode())
    assert by_module.rules_sha256 == load_reducer("refund").rules_sha256
    ep = EntryPoint("refund_plugin", "replay_tui.reducers.refund:REDUCER", "replay_tui.reducers")
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [ep])
    assert "refund_plugin" in reducers.available()
    assert load_reducer("refund_plugin").reducer.name == "refund"


def test_rules_file_that_fails_to_import_says_why(tmp_path: Path) -> None:
    from replay_tui.core.errors import CannotRun

    rules = tmp_path / "rules.py"
    rules.write_text("raise RuntimeError('broken rules')\n")
    with pytest.raises(CannotRun, match="broken rules"):
        load_reducer(f"{rules}:REDUCER")


def test_the_rules_say_what_is_still_open() -> None:
    """Why a run ended as it did: each built-in rule set names what is unfinished."""
    from replay_tui.reducers import load_reducer as load

    agent = load("agent_run").reducer
    state = agent.initial_state()
    state.update(phase="running", attempt=1)
    state["calls"] = {
        "a": {"status": "proposed"},
        "b": {"status": "allowed"},
        "c": {"status": "started"},
        "d": {"status": "finished"},
    }
    assert agent.still_open(state) == [
        "a proposed (neither allowed nor denied)",
        "b allowed (never started)",
        "c started (never finished)",
        "attempt 1 has no check yet",
    ]
    state["phase"] = "succeeded"
    assert agent.still_open(state) == []
    refund = load("refund").reducer
    assert refund.still_open({"status": "approved", "amount": 180, "receipt": None}) == [
        "refund of 180 approved, not yet recorded"
    ]
    temporal = load("temporal").reducer
    wf = temporal.initial_state()
    wf["status"] = "running"
    wf["activities"] = {"5": {"type": "greet", "status": "started"}}
    wf["timers"] = {"t1": {"status": "started"}}
    assert temporal.still_open(wf) == ["activity 5 (greet) started", "timer t1 started"]


def test_a_scan_let_go_of_after_its_ledger_closed_says_nothing(tmp_path: Path) -> None:
    """A replay closed while its pass held a scan (a reload, a rewrite): the
    scan, let go of later, has nothing left to hash or remember, and raises
    nothing (it said "Exception ignored ... Bad file descriptor")."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(orjson.dumps({"seq": i}) + b"\n" for i in range(1, 4)))
    ledger = Ledger(path)
    scan = ledger.scan_chunks()
    first, lines = next(scan)
    assert first == 0 and len(lines) == 3
    ledger.close()
    scan.close()  # as the collector closes a generator let go of
