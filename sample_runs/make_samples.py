"""(Re)write every sample run under sample_runs/, byte for byte the same each time.

Run from anywhere: ``python sample_runs/make_samples.py``. The samples are the
demo, small valid runs, and one broken run per error code of the spec (each
the demo with ONE corruption), the agent sessions of ``agent-sessions/``
(``replay_tui.synth.sessions``), an OpenTelemetry GenAI trace copied
from the test corpus (``traces/``), plus ``expected.json``: what strict
``replay-tui check`` must say of each. No clock, no unseeded randomness: the
same script gives the same bytes on every machine.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "sample_runs"
DEMO_COPY = ROOT / "replay_tui" / "demo" / "demo-001"  # shipped inside the package
sys.path.insert(0, str(ROOT))

from replay_tui.synth.runs import receipt_bytes, write_agent_run  # noqa: E402
from replay_tui.synth.sessions import (  # noqa: E402
    write_claude_code_session,
    write_codex_rollout,
)

Event = dict[str, Any]
DEMO_TASK = "fix the failing test in tests/test_parser.py"
MODEL = "claude-sonnet-4-5"
BUDGET = {"max_attempts": 3, "max_tool_calls": 5, "max_cost": 1.0}
REDUCER_FILE = "sample_runs/broken-reducer_error/rules.py:REDUCER"


def event(seq: int, kind: str, ts: str, payload: dict[str, Any], run_id: str = "demo-001") -> Event:
    """An envelope v1 event with the keys in the usual order."""
    return {
        "seq": seq,
        "run_id": run_id,
        "kind": kind,
        "ts": f"2026-11-01T{ts}Z",
        "payload": payload,
    }


def line(ev: Event) -> bytes:
    return orjson.dumps(ev) + b"\n"


def ledger(events: list[Event]) -> bytes:
    return b"".join(line(ev) for ev in events)


def pretty(obj: Any) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- the demo: 14 events, 1 receipt, phase retrying ----------------------------
DEMO_RECEIPT = {
    "call_id": "call-001",
    "tool": "read_file",
    "ok": True,
    "output": 'def test_parse_empty_line():\n    assert parse("") is None\n\n\n'
    'def test_parse_comment():\n    assert parse("# note") is None',
    "cost": 0.002,
}
DEMO_RECEIPT_BYTES = receipt_bytes(DEMO_RECEIPT)
DEMO_RECEIPTS = {"call-001.json": DEMO_RECEIPT_BYTES}


def demo_events() -> list[Event]:
    """The showcase: a first attempt fails its tests, the second is under way."""
    patch = "@@ -12,2 +12,4 @@\n-    return Event(line)\n+    if not line.strip():\n"
    patch += "+        return None\n+    return Event(line)"
    return [
        event(1, "run_started", "09:00:00.000", {"task": DEMO_TASK, "model": MODEL}),
        event(2, "attempt_started", "09:00:00.412", {"attempt": 1}),
        event(
            3,
            "model_proposed",
            "09:00:03.871",
            {
                "call_id": "call-001",
                "tool": "read_file",
                "args": {"path": "tests/test_parser.py"},
                "tokens": 812,
            },
        ),
        event(4, "tool_allowed", "09:00:03.902", {"call_id": "call-001"}),
        event(5, "tool_started", "09:00:03.915", {"call_id": "call-001"}),
        event(
            6,
            "tool_finished",
            "09:00:04.188",
            {
                "call_id": "call-001",
                "ok": True,
                "cost": 0.002,
                "receipt_sha256": sha256(DEMO_RECEIPT_BYTES),
            },
        ),
        event(
            7,
            "model_proposed",
            "09:00:09.634",
            {
                "call_id": "call-002",
                "tool": "shell",
                "args": {"cmd": "rm -rf build/"},
                "tokens": 236,
            },
        ),
        event(
            8,
            "tool_denied",
            "09:00:09.651",
            {"call_id": "call-002", "reason": "destructive shell command needs human approval"},
        ),
        event(9, "model_finished", "09:00:14.207", {"tokens": 1490}),
        event(10, "check_finished", "09:00:31.550", {"name": "tests", "passed": False}),
        event(11, "state_changed", "09:00:31.561", {"to": "retrying"}),
        event(12, "attempt_started", "09:00:32.004", {"attempt": 2}),
        event(
            13,
            "model_proposed",
            "09:00:36.779",
            {
                "call_id": "call-003",
                "tool": "edit_file",
                "args": {"path": "src/parser.py", "patch": patch},
                "tokens": 944,
            },
        ),
        event(14, "tool_allowed", "09:00:36.801", {"call_id": "call-003"}),
    ]


# -- small valid runs -------------------------------------------------------------
def refund_events() -> list[Event]:
    """Spec section 7: requested 180, approved, refund recorded as refund-42."""
    rid = "refund-180"
    return [
        {"seq": 1, "run_id": rid, "kind": "requested", "ts": "2026-10-05T10:00:00.000Z",
         "payload": {"amount": 180}},
        {"seq": 2, "run_id": rid, "kind": "approved", "ts": "2026-10-05T10:04:12.250Z",
         "payload": {}},
        {"seq": 3, "run_id": rid, "kind": "refund_recorded", "ts": "2026-10-05T10:04:13.020Z",
         "payload": {"receipt": "refund-42"}},
    ]  # fmt: skip


SUCCEEDS_RECEIPTS = [
    {
        "call_id": "call-001",
        "tool": "read_file",
        "ok": True,
        "output": "@click.command()\n@click.option('--format', type=click.Choice(['csv', 'tsv']))"
        "\ndef export(format: str) -> None:",
        "cost": 0.001,
    },
    {
        "call_id": "call-003",
        "tool": "edit_file",
        "ok": True,
        "output": "applied 1 hunk (+4 -1)",
        "cost": 0.001,
    },
]


def succeeds_events() -> list[Event]:
    """Two attempts: the first fails its tests, the second edits the file and passes."""
    rid = "agent-succeeds"
    r1, r3 = (receipt_bytes(r) for r in SUCCEEDS_RECEIPTS)
    steps: list[tuple[str, str, dict[str, Any]]] = [
        ("run_started", "10:15:00.000", {"task": "add a --json flag to the export command",
                                         "model": MODEL}),
        ("attempt_started", "10:15:00.318", {"attempt": 1}),
        ("model_proposed", "10:15:02.940", {"call_id": "call-001", "tool": "read_file",
                                            "args": {"path": "src/cli/export.py"},
                                            "tokens": 655}),
        ("tool_allowed", "10:15:02.961", {"call_id": "call-001"}),
        ("tool_started", "10:15:02.970", {"call_id": "call-001"}),
        ("tool_finished", "10:15:03.104", {"call_id": "call-001", "ok": True, "cost": 0.001,
                                           "receipt_sha256": sha256(r1)}),
        ("model_proposed", "10:15:07.488", {"call_id": "call-002", "tool": "shell",
                                            "args": {"cmd": "pip install --upgrade click"},
                                            "tokens": 190}),
        ("tool_denied", "10:15:07.502", {"call_id": "call-002",
                                         "reason": "network access is off"}),
        ("model_finished", "10:15:11.230", {"tokens": 1210}),
        ("check_finished", "10:15:24.871", {"name": "tests", "passed": False}),
        ("state_changed", "10:15:24.880", {"to": "retrying"}),
        ("attempt_started", "10:15:25.117", {"attempt": 2}),
        ("model_proposed", "10:15:30.402", {"call_id": "call-003", "tool": "edit_file",
                                            "args": {"path": "src/cli/export.py",
                                                     "patch": "@@ -2,1 +2,2 @@\n"
                                                     "+@click.option('--json', is_flag=True)"},
                                            "tokens": 1034}),
        ("tool_allowed", "10:15:30.433", {"call_id": "call-003"}),
        ("tool_started", "10:15:30.441", {"call_id": "call-003"}),
        ("tool_finished", "10:15:30.690", {"call_id": "call-003", "ok": True, "cost": 0.001,
                                           "receipt_sha256": sha256(r3)}),
        ("model_finished", "10:15:33.015", {"tokens": 870}),
        ("check_finished", "10:15:47.662", {"name": "tests", "passed": True}),
        ("state_changed", "10:15:47.670", {"to": "succeeded"}),
    ]  # fmt: skip
    return [event(i, k, ts, p, rid) for i, (k, ts, p) in enumerate(steps, 1)]


# -- one broken run per error code ------------------------------------------------
BUGGY_RULES = '''"""A deliberately buggy reducer for sample_runs/broken-reducer_error.

It is agent_run, except that its apply divides by zero on every tool_denied:
a bug in the rules, not a rule violation. Strict replay must report
``reducer_error`` at the first tool_denied (seq 8), with the traceback, and
never crash. Check the run with this option, from the repository root:

    --reducer sample_runs/broken-reducer_error/rules.py:REDUCER
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replay_tui.reducers.agent_run import REDUCER as BASE

if TYPE_CHECKING:
    from replay_tui.envelope import Event
    from replay_tui.reducers.base import Context


class BuggyAgentRun:
    """agent_run with a division by zero on tool_denied."""

    name = "buggy_agent_run"
    version = "0.0.1"
    kinds: frozenset[str] = BASE.kinds

    def initial_state(self) -> dict[str, Any]:
        return BASE.initial_state()

    def apply(self, state: dict[str, Any], event: Event, ctx: Context) -> dict[str, Any]:
        if event.kind == "tool_denied":
            denied_per_allowed = 1 / 0  # the bug: meant to divide by the allowed calls
            state["denied_per_allowed"] = denied_per_allowed
        return BASE.apply(state, event, ctx)

    def summary(self, state: dict[str, Any]) -> str:
        return BASE.summary(state)


REDUCER = BuggyAgentRun()
'''


def with_line(events: list[Event], seq: int, new: bytes) -> bytes:
    """The demo ledger with the line of ``seq`` replaced by raw bytes."""
    return b"".join(new if ev["seq"] == seq else line(ev) for ev in events)


def changed(events: list[Event], seq: int, **fields: Any) -> bytes:
    """The demo ledger with top-level fields of event ``seq`` changed (order kept)."""
    return with_line(events, seq, line({**events[seq - 1], **fields}))


def broken_runs() -> dict[str, dict[str, Any]]:
    """code -> the broken ledger, other files, and where strict replay stops.

    ``at`` is the physical line of the failing event; ``seq``/``kind`` are what
    that line says (None when it has no usable seq/kind).
    """
    d = demo_events()
    demo = ledger(d)
    runs: dict[str, dict[str, Any]] = {}

    def add(code: str, data: bytes, at: int | None, seq: int | None = None, **more: Any) -> None:
        kind = more.pop("kind", None if seq is None else d[seq - 1]["kind"])
        runs[code] = {"ledger": data, "line": at, "seq": seq, "kind": kind, **more}

    # Line 7 is hand-built JSON whose string holds unescaped quotes.
    unquoted = line(d[6]).replace(b"rm -rf build/", b'rm -rf "build/"')
    add("bad_json", with_line(d, 7, unquoted), 7)
    # The whole ledger as a PowerShell '>' redirect writes it: UTF-16 LE, BOM, CRLF.
    add("bad_encoding", b"\xff\xfe" + demo.decode().replace("\n", "\r\n").encode("utf-16-le"), 1)
    # An empty line 8, between seq 7 and seq 8.
    add("blank_line", demo.replace(line(d[6]), line(d[6]) + b"\n"), 8)
    # Line 8: the payload was JSON-encoded twice (a string, not an object).
    add("bad_envelope", changed(d, 8, payload=orjson.dumps(d[7]["payload"]).decode()), 8, 8)
    # seq 7 is lost: line 7 holds seq 8.
    add("seq_gap", with_line(d, 7, b""), 7, 8)
    # seq 8 appended twice (a retried write): line 9 repeats it.
    add("seq_duplicate", with_line(d, 8, line(d[7]) * 2), 9, 8)
    # Line 9 comes from another run.
    add("mixed_run_ids", changed(d, 9, run_id="demo-002"), 9, 9)
    # Line 9: a kind these rules do not know (a newer host renamed model_finished).
    add("unknown_kind", changed(d, 9, kind="model_completed"), 9, 9, kind="model_completed")
    # Line 10 says envelope version 2.
    add("unsupported_version", with_line(d, 10, line({"v": 2, **d[9]})), 10, 10)
    # Valid parent_seq on seq 4-6; seq 8 names itself as its parent (must be < 8).
    parented = [dict(ev) for ev in d]
    for i, parent in ((3, 3), (4, 4), (5, 5), (7, 8)):
        payload = parented[i].pop("payload")
        parented[i].update(parent_seq=parent, payload=payload)
    add("bad_parent", ledger(parented), 8, 8)
    # seq 7 (and 8) call the call "../../etc/passwd": a path, never a receipt name.
    evil = [dict(ev) for ev in d]
    for i in (6, 7):
        evil[i]["payload"] = {**evil[i]["payload"], "call_id": "../../etc/passwd"}
    add("bad_call_id", ledger(evil), 7, 7)
    # receipts/call-001.json is gone; seq 6 (its tool_finished) needs it.
    add("missing_receipt", demo, 6, 6, receipts={})
    # receipts/call-001.json says call_id "call-1"; the ledger pins these very bytes.
    renamed = receipt_bytes({**DEMO_RECEIPT, "call_id": "call-1"})
    pinned = changed(d, 6, payload={**d[5]["payload"], "receipt_sha256": sha256(renamed)})
    add("receipt_name_mismatch", pinned, 6, 6, receipts={"call-001.json": renamed})
    # receipts/call-001.json edited after the run (cost zeroed): the pin no longer matches.
    zeroed = receipt_bytes({**DEMO_RECEIPT, "cost": 0.0})
    add("receipt_tampered", demo, 6, 6, receipts={"call-001.json": zeroed})
    # budget.json is not JSON (a trailing comma): reported before any line.
    bad_budget = b'{"max_attempts": 3, "max_tool_calls": 5, "max_cost": 1.0,}\n'
    add("bad_budget", demo, None, budget=bad_budget)
    # Line 9: the host started call-002, which was denied at seq 8.
    started = event(9, "tool_started", "09:00:09.700", {"call_id": "call-002"})
    add("illegal_transition", with_line(d, 9, line(started)), 9, 9, kind="tool_started")
    # budget.json allows $0.001; call-001 costs $0.002 (seq 6).
    add("budget_exceeded", demo, 6, 6, budget=pretty({**BUDGET, "max_cost": 0.001}))
    # Line 11: the host recorded "succeeded" after a failed check; the rules derive retrying.
    add("divergence", changed(d, 11, payload={"to": "succeeded"}), 11, 11)
    # The demo unchanged, replayed with rules.py, whose apply divides by zero on tool_denied.
    add("reducer_error", demo, 8, 8, rules=BUGGY_RULES.encode(), reducer=REDUCER_FILE)
    # A crash while writing seq 10: nine lines, then half a line and no newline.
    half = line(d[9])[: line(d[9]).index(b'"tests"') + 3]
    add("truncated_line", ledger(d[:9]) + half, 10)
    return runs


# -- agent sessions: Claude Code transcripts and Codex rollouts ------------------------
SESSIONS = HERE / "agent-sessions"
#: name -> (format, the writer's options): see agent-sessions/README.md.
SESSION_SAMPLES: dict[str, tuple[str, dict[str, Any]]] = {
    "claude-code-short": ("claude-code", {"turns": 2, "seed": 1, "errors": 0}),
    "claude-code-error": ("claude-code", {"turns": 1, "seed": 2, "errors": 1}),
    "claude-code-subagent": ("claude-code", {"turns": 1, "seed": 3, "errors": 0, "subagents": 1}),
    # the Edit request (line 15) lost: its result names a parent that is not
    # there (a broken chain) and answers a call never requested (a stop)
    "claude-code-damaged": (
        "claude-code",
        {"turns": 1, "seed": 4, "errors": 0, "plant": "lost_line", "at": 15},
    ),
    # the second prompt names a parent never written, as Claude Code writes
    # after --resume: a finding, not a stop; a resume drops what came before
    "claude-code-broken-chain": (
        "claude-code",
        {"turns": 2, "seed": 6, "errors": 0, "plant": "broken_chain", "at": 20},
    ),
    "codex-rollout": ("codex", {"turns": 2, "seed": 5, "errors": 1}),
}


def write_sessions(folder: Path = SESSIONS) -> list[dict[str, Any]]:
    """Write the sample sessions into ``folder`` (what else is there, such as
    its README.md, stays) and return the writer's facts of each file, the
    sub-agents' transcripts after their sessions."""
    written = []
    for name, (fmt, options) in SESSION_SAMPLES.items():
        (folder / f"{name}.jsonl").unlink(missing_ok=True)
        if (folder / name).is_dir():
            shutil.rmtree(folder / name)
        if fmt == "codex":
            written.append(write_codex_rollout(folder, name=name, **options))
        else:
            facts = write_claude_code_session(folder, name=name, **options)
            written.append(facts)
            written.extend(facts["subagents"].values())
    return written


def session_expected(written: list[dict[str, Any]], folder: Path = SESSIONS) -> dict[str, Any]:
    """What check must say of each session file, keyed by its path under
    sample_runs/ (``agent-sessions/...``)."""
    expected = {}
    for facts in written:
        error = facts.get("error")
        name = Path(facts["path"]).relative_to(folder).as_posix()
        expected[f"{SESSIONS.name}/{name}"] = {
            "verdict": "verified" if error is None else "error",
            "events": facts["lines"] if error is None else error["line"] - 1,
            "state": facts["phase"],
            "error": error,
            "reducer": None,
        }
    return expected


# -- an OpenTelemetry GenAI trace, copied from the test corpus ---------------------------
TRACES = HERE / "traces"
CORPUS = ROOT / "tests" / "fixtures" / "otel-traces"
#: name -> (the corpus file it is a byte-for-byte copy of, what check says of it):
#: see traces/README.md for where the corpus comes from.
TRACE_SAMPLES: dict[str, tuple[Path, dict[str, Any]]] = {
    # an ADK agent over three turns, the second calling a tool; tokens on each model span
    "agentevals--adk_py-v2_span_only-S3.json": (
        CORPUS / "adk_py" / "v2_span_only" / "S3.json",
        {"events": 34, "state": "done"},
    ),
}


def write_traces(folder: Path = TRACES) -> dict[str, Any]:
    """Copy the sample traces (and the corpus's license) into ``folder``
    (its README.md stays) and return what check must say of each."""
    folder.mkdir(exist_ok=True)
    (folder / "LICENSE").write_bytes((CORPUS / "LICENSE").read_bytes())
    expected = {}
    for name, (source, facts) in TRACE_SAMPLES.items():
        (folder / name).write_bytes(source.read_bytes())
        expected[f"{TRACES.name}/{name}"] = {
            "verdict": "verified",
            "error": None,
            "reducer": None,
            **facts,
        }
    return expected


# -- writing ------------------------------------------------------------------------
def write_run(
    folder: Path,
    events: bytes,
    receipts: dict[str, bytes] | None = None,
    budget: bytes | None = None,
    rules: bytes | None = None,
) -> None:
    """Replace ``folder`` with exactly these files."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_bytes(events)
    if receipts:
        (folder / "receipts").mkdir()
        for name, data in sorted(receipts.items()):
            (folder / "receipts" / name).write_bytes(data)
    if budget is not None:
        (folder / "budget.json").write_bytes(budget)
    if rules is not None:
        (folder / "rules.py").write_bytes(rules)


def main() -> int:
    expected: dict[str, Any] = {}

    def verified(name: str, events: int, state: str, reducer: str | None = None) -> None:
        expected[name] = {
            "verdict": "verified",
            "events": events,
            "state": state,
            "error": None,
            "reducer": reducer,
        }

    demo = ledger(demo_events())
    for folder in (HERE / "demo-001", DEMO_COPY):
        write_run(folder, demo, DEMO_RECEIPTS, pretty(BUDGET))
    verified("demo-001", 14, "retrying")

    write_run(HERE / "refund-180", ledger(refund_events()))
    verified("refund-180", 3, "completed", "refund")

    receipts = {f"{r['call_id']}.json": receipt_bytes(r) for r in SUCCEEDS_RECEIPTS}
    write_run(HERE / "agent-succeeds", ledger(succeeds_events()), receipts, pretty(BUDGET))
    verified("agent-succeeds", 19, "succeeded")

    long_run = HERE / "long-300"
    if long_run.exists():
        shutil.rmtree(long_run)
    facts = write_agent_run(long_run, 300, seed=7, run_id="long-300")
    verified("long-300", facts["events"], facts["phase"])

    for code, run in broken_runs().items():
        name = f"broken-{code}"
        write_run(
            HERE / name,
            run["ledger"],
            run.get("receipts", DEMO_RECEIPTS),
            run.get("budget", pretty(BUDGET)),
            run.get("rules"),
        )
        error = {"code": code, "seq": run["seq"], "line": run["line"], "kind": run["kind"]}
        expected[name] = {
            "verdict": "error",
            "events": (run["line"] or 1) - 1,  # the valid prefix: the lines before the bad one
            "state": None,  # strict replay proves no state once it stops
            "error": error,
            "reducer": run.get("reducer"),
        }

    expected.update(session_expected(write_sessions()))
    expected.update(write_traces())
    (HERE / "expected.json").write_bytes(
        orjson.dumps(expected, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    )
    for name, exp in sorted(expected.items()):
        err = exp["error"]
        said = exp["state"] if err is None else f"{err['code']} at line {err['line']}"
        print(f"{name:32s} {exp['verdict']:9s} {said}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
