"""Input from outside: fuzzed bytes, buggy user rules, a run folder as evidence.

See tests/hostile/test_corpus.py for the named hostile cases; this file covers what
no list of cases can: arbitrary byte damage (hypothesis), rules that raise,
change their event or never return, a ledger that keeps growing, and the
promise that nothing under a run folder is ever written.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.cli import main
from replay_tui.core.errors import ERROR_CODES
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.reducers import load_reducer
from replay_tui.synth.runs import write_agent_run
from replay_tui.ui.launch import make_app
from tests.conftest import SAMPLES
from tests.corpus.make_corpus import hostile_everywhere
from tests.helpers.files import make_read_only
from tests.helpers.inert import assert_inert
from tests.helpers.screen import pane_text, screen_text, seq_at_cursor, settle, status
from tests.helpers.waiting import until

FUZZ_BASE = Path(tempfile.mkdtemp(prefix="replay-fuzz-base-"))
atexit.register(shutil.rmtree, FUZZ_BASE, True)
write_agent_run(FUZZ_BASE / "run", 60, seed=3)
BASE_RUN = FUZZ_BASE / "run"
BASE_LEDGER = (BASE_RUN / "events.jsonl").read_bytes()
BASE_RECEIPTS = sorted((BASE_RUN / "receipts").iterdir())

#: Bytes that break JSON, UTF-8 or the line structure in interesting ways.
NASTY = st.sampled_from(
    [b"\n", b"\r", b"\x00", b"\xff", b"\xc3", b"{", b"}", b'"', b"\\", b",", b"1", b"-", b"\x1b"]
)


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` after one to three byte-level edits."""
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        op = draw(st.sampled_from(["flip", "insert", "delete", "duplicate", "truncate"]))
        if op == "flip" and data:
            byte = draw(st.one_of(NASTY, st.binary(min_size=1, max_size=1)))
            data = data[:at] + byte + data[at + 1 :]
        elif op == "insert":
            data = data[:at] + draw(st.one_of(NASTY, st.binary(min_size=1, max_size=4))) + data[at:]
        elif op == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 40)) :]
        elif op == "duplicate":
            end = at + draw(st.integers(1, 200))
            data = data[:end] + data[at:end] + data[end:]
        else:
            data = data[:at]
    return data


def fuzzed_run(dest: Path, ledger: bytes, receipt_edit: tuple[int, bytes] | None) -> Path:
    shutil.copytree(BASE_RUN, dest)
    (dest / "events.jsonl").write_bytes(ledger)
    if receipt_edit is not None:
        index, raw = receipt_edit
        (dest / "receipts" / BASE_RECEIPTS[index % len(BASE_RECEIPTS)].name).write_bytes(raw)
    return dest


@st.composite
def fuzz_case(draw: st.DrawFn) -> tuple[bytes, tuple[int, bytes] | None]:
    ledger = draw(damaged(BASE_LEDGER))
    receipt_edit = None
    if draw(st.booleans()):
        index = draw(st.integers(0, len(BASE_RECEIPTS) - 1))
        receipt_edit = (index, draw(damaged(BASE_RECEIPTS[index].read_bytes())))
    return ledger, receipt_edit


@given(case=fuzz_case())
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_fuzzed_bytes_always_get_a_verdict(
    case: tuple[bytes, tuple[int, bytes] | None], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = fuzzed_run(Path(tmp) / "run", *case)
        code = main(["check", str(run), "--json"])
        out, err = capsysbinary.readouterr()
        assert code in (0, 1), err
        assert b"Traceback" not in err and b"internal error" not in err
        report = orjson.loads(out)
        if code == 1:
            assert report["error"]["code"] in ERROR_CODES
        else:
            assert report["error"] is None


@given(case=fuzz_case())
@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_fuzzed_bytes_in_the_app_land_on_the_failing_seq(
    case: tuple[bytes, tuple[int, bytes] | None],
) -> None:
    async def scenario(run: Path) -> None:
        app = make_app(str(run))
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(app, pilot)
            assert_inert(screen_text(app))
            error = app.replay.error
            if error is None:
                assert "verified" in status(app)
                return
            if error.seq is not None:
                assert f"error at seq {error.seq}" in status(app)
                assert seq_at_cursor(app) == error.seq
            else:
                assert "error at" in status(app)

    with tempfile.TemporaryDirectory() as tmp:
        run = fuzzed_run(Path(tmp) / "run", *case)
        asyncio.run(scenario(run))


# -- buggy user rules ----------------------------------------------------------


def rules_file(tmp_path: Path, body: str) -> str:
    """A rules file: the refund rules with ``apply`` misbehaving at seq 2."""
    path = tmp_path / "buggy_rules.py"
    path.write_text(
        "import time\n"
        "from replay_tui.reducers.refund import RefundRules\n"
        "class Rules(RefundRules):\n"
        "    def apply(self, state, event, ctx):\n"
        "        if event.seq == 2:\n"
        + "".join(f"            {ln}\n" for ln in body.splitlines())
        + "        return super().apply(state, event, ctx)\n"
        "REDUCER = Rules()\n"
    )
    return f"{path}:REDUCER"


REFUND = SAMPLES / "refund-180"
BUGS = {
    "raises": ("raise KeyError('amount_cents')", "KeyError"),
    "changes its event": ("event.payload['approved_by'] = 'rules'", "changed the event"),
    "loops forever": ("while True:\n    pass", "did not return within 1 s"),
    "swallows the interrupt": (
        "while True:\n    try:\n        time.sleep(0.01)\n    except Exception:\n        pass",
        "did not return within 1 s",
    ),
    "sleeps forever": ("time.sleep(10**6)", "did not return within 1 s"),
}


@pytest.mark.parametrize("bug", list(BUGS))
def test_buggy_rules_fail_at_their_seq(tmp_path: Path, bug: str) -> None:
    body, words = BUGS[bug]
    rules = ["--reducer", rules_file(tmp_path, body)]
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "replay_tui", "check", str(REFUND), "--rules-timeout", "1", *rules],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - started < 30  # never a hang
    assert out.returncode == 1, out
    assert "at seq 2," in out.stdout and "reducer_error" in out.stdout and words in out.stdout
    assert "Traceback" not in out.stdout + out.stderr


def test_rules_that_change_receipt_data_cannot_change_the_next_replay(tmp_path: Path) -> None:
    """Rules get a private copy of a receipt: the cached one stays as read."""
    src = tmp_path / "rules.py"
    src.write_text(
        "from replay_tui.reducers.agent_run import AgentRunRules\n"
        "class Rules(AgentRunRules):\n"
        "    def apply(self, state, event, ctx):\n"
        "        if event.kind == 'tool_finished':\n"
        "            ctx.receipt(event.payload['call_id']).data['output'] = 'changed'\n"
        "        return super().apply(state, event, ctx)\n"
        "REDUCER = Rules()\n"
    )
    replay = Replay(locate_run(str(SAMPLES / "demo-001")), load_reducer(f"{src}:REDUCER"))
    replay.verify()
    assert replay.error is None
    got = replay.receipts.read("call-001")
    assert not isinstance(got, Exception) and getattr(got, "data", {}).get("output") != "changed"
    replay.close()


async def test_app_shows_the_rules_traceback(tmp_path: Path) -> None:
    app = make_app(str(REFUND), reducer=rules_file(tmp_path, BUGS["raises"][0]))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        assert "error at seq 2: reducer_error" in status(app)
        assert seq_at_cursor(app) == 2
        shown = pane_text(app, "state")
        assert "traceback (a bug in the rules)" in shown and "buggy_rules.py" in shown
        assert "KeyError" in shown


async def test_app_stays_responsive_and_says_the_rules_are_stuck(tmp_path: Path) -> None:
    app = make_app(
        str(REFUND), reducer=rules_file(tmp_path, BUGS["loops forever"][0]), rules_timeout=4
    )
    async with app.run_test(size=(140, 40)) as pilot:
        # the clock looks every 0.5 s: said, and drawn amber
        await until(pilot, lambda: "rules busy" in status(app) and app.main.stuck)
        assert "on seq 2, stopped at 4 s" in status(app)
        assert app.main.stuck and app.main.has_class("-stuck")
        # still usable while the rules spin: keys move the cursor
        before = app.main.timeline.cursor_index
        await pilot.press("j")
        assert app.main.timeline.cursor_index != before
        # then stopped at the timeout: a verdict
        await until(pilot, lambda: app.replay.error is not None and not app.main.validating)
        error = app.replay.error
        assert error is not None and error.code == "reducer_error" and error.seq == 2
        assert "did not return within 4 s" in error.message
        await until(pilot, lambda: not app.main.stuck)  # the clock looks again
        assert "error at seq 2: reducer_error" in status(app)


# -- a ledger that grows without end -------------------------------------------


def test_memory_follows_the_index_not_the_file(tmp_path: Path) -> None:
    """Following a ledger that keeps growing (1 KB lines): memory grows by a
    few bytes an event, not by the bytes of the file."""
    run = tmp_path / "growing"
    run.mkdir()
    pad = "x" * 1000
    first = [
        {"seq": 1, "run_id": "g", "kind": "run_started", "payload": {"task": "t"}},
        {"seq": 2, "run_id": "g", "kind": "attempt_started", "payload": {"attempt": 1}},
    ]
    ledger = run / "events.jsonl"
    ledger.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in first))
    replay = Replay(locate_run(str(run), may_be_empty=True), load_reducer(None), following=True)
    seq = 2
    per_batch = 4000

    def grow() -> None:
        nonlocal seq
        with ledger.open("ab") as fh:
            for _ in range(per_batch):
                seq += 1
                event = {"seq": seq, "run_id": "g", "kind": "model_finished"}
                fh.write(orjson.dumps({**event, "payload": {"tokens": 1, "note": pad}}) + b"\n")

    tracemalloc.start()
    try:
        for _ in range(3):  # warm up: caches fill to their bounds
            grow()
            replay.advance()
        base, _ = tracemalloc.get_traced_memory()
        size_before = ledger.stat().st_size
        for _ in range(10):
            grow()
            replay.advance()
        now, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        replay.close()
    assert replay.error is None and replay.valid == seq
    grown_file = ledger.stat().st_size - size_before  # about 40 MB
    grown_memory = now - base
    # offsets (8 bytes), crc32 (4) and checkpoints of the small state: tens of
    # bytes an event, against the 1 KB each line adds to the file
    assert grown_memory / (10 * per_batch) < 64, grown_memory
    assert grown_memory < grown_file / 15, (grown_memory, grown_file)


# -- the run folder is evidence ---------------------------------------------


def fingerprint(root: Path) -> dict[str, tuple[int, int, int, bytes | None]]:
    """Every path under ``root``: mode, size, mtime (ns) and file bytes."""
    seen: dict[str, tuple[int, int, int, bytes | None]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st_ = path.lstat()
            data = path.read_bytes() if stat.S_ISREG(st_.st_mode) else None
            seen[str(path.relative_to(root))] = (st_.st_mode, st_.st_size, st_.st_mtime_ns, data)
    return seen


@pytest.fixture
def evidence(tmp_path: Path) -> Any:
    """Read-only copies of a good, a broken and a hostile run (and rules inside one)."""
    root = tmp_path / "evidence"
    root.mkdir()
    shutil.copytree(SAMPLES / "demo-001", root / "demo-001")
    shutil.copytree(SAMPLES / "broken-receipt_tampered", root / "tampered")
    hostile_everywhere(root / "hostile")
    (root / "hostile" / "rules.py").write_text(
        "from replay_tui.reducers.agent_run import AgentRunRules\nREDUCER = AgentRunRules()\n"
    )
    make_read_only(root)
    yield root
    for dirpath, _, _ in os.walk(root):
        Path(dirpath).chmod(0o755)


def test_check_and_state_leave_every_byte_and_mtime(evidence: Path, tmp_path: Path) -> None:
    before = fingerprint(evidence)
    runs = [str(evidence / name) for name in ("demo-001", "tampered", "hostile")]
    commands = [
        ["check", *runs, "--jobs", "2"],
        ["check", runs[0], "--json", "--out", str(tmp_path / "report.json")],
        ["check", runs[1], "--partial"],
        ["check", runs[2], "--reducer", f"{runs[2]}/rules.py:REDUCER"],
        ["state", runs[0], "--at", "6", "--diff"],
        ["state", runs[2], "--at", "7", "--pretty"],
    ]
    for args in commands:
        out = subprocess.run(
            [sys.executable, "-m", "replay_tui", *args], capture_output=True, timeout=120
        )
        assert out.returncode in (0, 1) and b"Traceback" not in out.stderr, (args, out)
    assert (tmp_path / "report.json").exists()
    assert fingerprint(evidence) == before  # nothing written, touched or left behind


async def test_the_app_leaves_every_byte_and_mtime(evidence: Path) -> None:
    before = fingerprint(evidence)
    for name in ("demo-001", "tampered", "hostile"):
        reducer = f"{evidence / name}/rules.py:REDUCER" if name == "hostile" else None
        app = make_app(str(evidence / name), reducer=reducer)
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(app, pilot)
            for key in ("j", "G", "g", "d", "x", "r", "y", "e", "slash", "a", "enter"):
                await pilot.press(key)
            await settle(app, pilot)
    assert fingerprint(evidence) == before


def test_out_never_overwrites_the_evidence(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(SAMPLES / "demo-001", run)
    before = fingerprint(run)
    for target in ("events.jsonl", "receipts/call-001.json", "budget.json", "receipts"):
        out = subprocess.run(
            [sys.executable, "-m", "replay_tui", "check", str(run), "--out", str(run / target)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 2 and out.stderr.count("\n") == 1, (target, out)
    assert fingerprint(run) == before


# -- found in review: each once slipped through -----------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b'{"max_attempts" : 1, "max_attempts": 3}',  # a space before one colon
        b'{"a":1,"a":"\\u0022:"}',  # an escaped quote and colon inside a value
        b'{"a":1,"a":2,"x":' + b"[" * 1000 + b"]" * 1000 + b"}",  # too deep to check
    ],
)
def test_careful_json_refuses(raw: bytes) -> None:
    from replay_tui.core.strict_json import JSONDoubt, loads

    with pytest.raises(JSONDoubt):
        loads(raw)


def test_careful_json_accepts_what_only_looks_odd() -> None:
    from replay_tui.core.strict_json import loads

    for raw in (
        b'{\n  "a": "x",\n  "b": {"c" : 1}\n}',
        b'{"a":"x\\" :y"}',
        b'{"t":"12345678901234567890123"}',
        b'{"a":18446744073709551615,"b":-9223372036854775808}',
        b'{"a":-9223372036854775809}',  # one below the 64-bit minimum: 19 digits, exact
        b'{"a":18446744073709551616, "b" : [1.5]}',  # one past the maximum, exact
    ):
        assert loads(raw) == json.loads(raw), raw  # the value the standard reader gives


def rules_with(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(
        "from replay_tui.reducers.agent_run import AgentRunRules\n"
        "class Rules(AgentRunRules):\n" + body + "REDUCER = Rules()\n"
    )
    return f"{path}:REDUCER"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "replay_tui", *args], capture_output=True, text=True, timeout=90
    )


def test_rules_stuck_outside_apply_get_one_line_not_a_hang(tmp_path: Path) -> None:
    demo = str(SAMPLES / "demo-001")
    loops = "        while True:\n            pass\n"
    init = rules_with(tmp_path, "init", "    def initial_state(self):\n" + loops)
    out = run_cli("check", demo, "--rules-timeout", "1", "--reducer", init)
    assert out.returncode == 2 and "initial_state()" in out.stderr and "within 1 s" in out.stderr
    assert out.stderr.count("\n") == 1
    explain = rules_with(tmp_path, "explain", "    def explain(self, b, e, a):\n" + loops)
    out = run_cli(
        "state", demo, "--at", "2", "--diff", "--rules-timeout", "1", "--reducer", explain
    )
    assert out.returncode == 2 and "within 1 s" in out.stderr and "Traceback" not in out.stderr
    summary = rules_with(tmp_path, "summary", "    def summary(self, state):\n" + loops)
    broken = str(SAMPLES / "broken-seq_gap")
    out = run_cli("check", broken, "--partial", "--rules-timeout", "1", "--reducer", summary)
    assert out.returncode == 1 and "seq_gap" in out.stdout
    assert "Traceback" not in out.stdout + out.stderr
    at_import = tmp_path / "at_import.py"
    at_import.write_text("while True:\n    pass\n")
    out = run_cli("check", demo, "--rules-timeout", "1", "--reducer", f"{at_import}:REDUCER")
    assert out.returncode == 2 and "failed to import" in out.stderr


def test_one_run_with_unstoppable_rules_loses_only_itself(tmp_path: Path) -> None:
    """Rules that swallow every interrupt end their process: the other runs
    of the batch are still checked."""
    rules = tmp_path / "picky.py"
    rules.write_text(
        "from replay_tui.reducers.agent_run import AgentRunRules\n"
        "class Rules(AgentRunRules):\n"
        "    def apply(self, state, event, ctx):\n"
        "        while event.run_id == 'demo-001':\n"
        "            try:\n"
        "                while True:\n"
        "                    pass\n"
        "            except BaseException:\n"
        "                pass\n"
        "        return super().apply(state, event, ctx)\n"
        "REDUCER = Rules()\n"
    )
    runs = [str(SAMPLES / n) for n in ("agent-succeeds", "demo-001", "long-300")]
    out = run_cli(
        "check", *runs, "--jobs", "2", "--rules-timeout", "1", "--reducer", f"{rules}:REDUCER"
    )
    lines = out.stdout.splitlines()
    assert "agent-succeeds: verified" in lines[0] and "long-300: verified" in lines[2]
    assert "demo-001: cannot check: the process checking it stopped" in lines[1]
    assert out.returncode == 2 and "Traceback" not in out.stderr


def test_rules_stuck_in_one_c_call_are_killed_not_waited_for(tmp_path: Path) -> None:
    """sum(range(...)) holds the interpreter's lock: nothing in its process
    can stop it, so check runs it in a child that a silent heartbeat gets
    killed (after the timeout plus 20 s)."""
    rules = rules_with(
        tmp_path,
        "c_stuck",
        "    def apply(self, state, event, ctx):\n"
        "        if event.seq == 3:\n"
        "            sum(range(10**15))\n"
        "        return super().apply(state, event, ctx)\n",
    )
    started = time.monotonic()
    out = run_cli("check", str(SAMPLES / "demo-001"), "--rules-timeout", "1", "--reducer", rules)
    assert time.monotonic() - started < 60
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "stopped responding" in out.stderr and "Traceback" not in out.stderr
