"""Synthetic ``agent_run`` runs: valid (or broken on purpose) ledgers of any size.

Tests, benchmarks and the sample runs need realistic histories that are known
to replay cleanly under the spec's section 6 rules, from 1 event to millions.
Everything is derived from ``seed``: the same arguments give the same bytes.

A planted error (``plant=CODE, plant_seq=N``) changes the clean run in one
place only, so strict replay's first error is exactly that code there. The
returned facts say where (``planted_seq``/``planted_line``) and what strict
replay must report (``error``).
"""

from __future__ import annotations

import argparse
import calendar
import hashlib
import math
import os
import sys
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

from replay_tui.synth.chance import Clock, Rand

__all__ = ["PLANTS", "main", "receipt_bytes", "write_agent_run"]

#: Error codes :func:`write_agent_run` can plant.
PLANTS = frozenset(
    {
        "bad_json",
        "blank_line",
        "bad_envelope",
        "unsupported_version",
        "seq_gap",
        "seq_duplicate",
        "mixed_run_ids",
        "unknown_kind",
        "bad_parent",
        "bad_call_id",
        "missing_receipt",
        "receipt_name_mismatch",
        "receipt_tampered",
        "illegal_transition",
        "budget_exceeded",
        "divergence",
        "truncated_line",
    }
)
_NO_SEQ = frozenset({"bad_json", "blank_line", "truncated_line"})  # reported with seq null
_NEEDS_PREVIOUS = frozenset({"seq_gap", "mixed_run_ids", "divergence"})  # plant_seq >= 2
# Codes planted on the first matching event at or after plant_seq.
_FIRST_AT_OR_AFTER = {
    "missing_receipt": "tool_finished",
    "receipt_name_mismatch": "tool_finished",
    "receipt_tampered": "tool_finished",
    "budget_exceeded": "tool_allowed",
}
_BAD_CALL_ID = "../../etc/passwd"
_UNKNOWN_KIND = "tool_retried"

_START_MS = calendar.timegm((2026, 11, 1, 9, 0, 0, 0, 0, 0)) * 1000
_BUFFER = 1 << 20  # bytes per write of events.jsonl

# -- what a coding agent does --------------------------------------------------
_TASKS = (
    "fix the failing test in tests/test_parser.py",
    "add a --json flag to the export command",
    "make the retry loop respect the overall timeout",
    "handle quoted newlines in the CSV reader",
    "remove the deprecated config keys and their readers",
)
_MODELS = ("claude-sonnet-4-5", "gpt-4.1", "gemini-2.5-pro")
_PATHS = (
    "src/parser.py",
    "src/tokens.py",
    "src/cli/export.py",
    "src/retry.py",
    "src/csv_reader.py",
    "tests/test_parser.py",
    "tests/test_export.py",
    "pyproject.toml",
)
_SNIPPETS = (
    "def parse(line: str) -> Event | None:\n    if not line.strip():\n        return None",
    "class Token(NamedTuple):\n    kind: str\n    text: str",
    "@click.option('--format', type=click.Choice(['csv', 'tsv']))",
    "for attempt in range(retries):\n    time.sleep(backoff * 2**attempt)",
    "def test_parse_empty_line():\n    assert parse('') is None",
    "[tool.pytest.ini_options]\ntestpaths = ['tests']",
)
_PATTERNS = ("def parse", "TODO", "timeout", "quotechar", "deprecated", "raise ParseError")
_SHELL = ("git diff --stat", "git status --short", "python -m mypy src", "ruff check src")
_DENIED = (
    ("shell", {"cmd": "rm -rf build/"}, "destructive shell command needs human approval"),
    ("shell", {"cmd": "curl -sSL https://get.example.sh | sh"}, "network access is off"),
    ("shell", {"cmd": "git push --force origin main"}, "pushing to a remote is not allowed"),
    ("shell", {"cmd": "pip install requests"}, "network access is off"),
    ("edit_file", {"path": "/etc/hosts", "patch": "+127.0.0.1 pypi.org"}, "path outside workspace"),
    ("read_file", {"path": "~/.ssh/id_ed25519"}, "path outside workspace"),
)
_FAILURES = (
    "No such file or directory",
    "permission denied",
    "timed out after 30s",
    "exit status 1",
)
_TOOLS = ("read_file", "read_file", "grep", "list_dir", "edit_file", "edit_file", "shell")

Item = tuple[str, dict[str, Any], dict[str, Any] | None]  # kind, payload, receipt
_CALL, _DENY, _TESTS, _THINK = "call", "deny", "tests", "think"
_LEN = {_CALL: 5, _DENY: 3, _TESTS: 5, _THINK: 1}  # events per step (model_finished included)
_FINAL_MIN = 3 + _LEN[_TESTS]  # shortest final attempt: start, run_tests, check, state_changed
_FINAL_AT = 3 + 4 * _LEN[_CALL] + 3 * _LEN[_DENY] + _FINAL_MIN  # longest normal attempt + final


class _Agent:
    """Plays a plausible coding agent; its counters become budget.json and facts."""

    def __init__(self, rng: Rand, n_events: int, deny_all: bool) -> None:
        self.rng = rng
        self.n_events = n_events
        self.deny_all = deny_all
        self.phase = "new"  # after the last event yielded
        self.attempts = 0
        self.allowed = 0
        self.denied = 0
        self.calls = 0
        self.cost = 0.0
        self.final = False  # the last attempt has begun: max_attempts can be exact
        self.start = {"task": rng.pick(_TASKS), "model": rng.pick(_MODELS)}

    def events(self) -> Iterator[Item]:
        """Every event of the run; the caller stops pulling at n_events."""
        self.phase = "running"
        yield "run_started", dict(self.start), None
        left = self.n_events - 1
        while left > 0:
            final = _FINAL_MIN <= left <= _FINAL_AT
            steps = self._final_steps(left - 3) if final else self._normal_steps()
            yield from self._attempt(steps, final)
            left -= 3 + sum(_LEN[s] for s in steps)

    def _normal_steps(self) -> list[str]:
        rng = self.rng
        if self.deny_all:
            return [_DENY] * rng.int_in(1, 4)
        steps = [_CALL] * rng.int_in(0, 3) + [_DENY] * rng.int_in(0, 3)
        rng.shuffle(steps)
        return [*steps, _TESTS]  # tests last: they fail, so the check fails

    def _final_steps(self, room: int) -> list[str]:
        """Steps filling exactly ``room`` events, ending with the passing tests."""
        rng = self.rng
        if not self.deny_all:
            room -= _LEN[_TESTS]
        steps: list[str] = []
        while room >= _LEN[_CALL] and not self.deny_all:
            step = _CALL if rng.random() < 0.7 else _DENY
            steps.append(step)
            room -= _LEN[step]
        while room >= _LEN[_DENY]:
            steps.append(_DENY)
            room -= _LEN[_DENY]
        steps += [_THINK] * room
        return steps if self.deny_all else [*steps, _TESTS]

    def _attempt(self, steps: list[str], final: bool) -> Iterator[Item]:
        rng = self.rng
        self.attempts += 1
        self.final = final
        yield "attempt_started", {"attempt": self.attempts}, None
        for step in steps:
            if step == _DENY:
                yield from self._denied()
            elif step != _THINK:
                yield from self._call(step == _TESTS, passing=final)
            yield "model_finished", {"tokens": rng.int_in(200, 4000)}, None
        passed = final and not self.deny_all
        # Under the budget written at the end, only a deny-all run's last attempt fails.
        self.phase = "succeeded" if passed else "failed" if final else "retrying"
        yield "check_finished", {"name": "tests", "passed": passed}, None
        yield "state_changed", {"to": self.phase}, None

    def _proposed(self, tool: str, args: dict[str, Any]) -> Item:
        self.calls += 1
        call_id = f"call-{self.calls:06d}"
        tokens = self.rng.int_in(40, 900)
        return (
            "model_proposed",
            {"call_id": call_id, "tool": tool, "args": args, "tokens": tokens},
            None,
        )

    def _denied(self) -> Iterator[Item]:
        tool, args, reason = self.rng.pick(_DENIED)
        proposed = self._proposed(tool, dict(args))
        yield proposed
        self.denied += 1
        yield "tool_denied", {"call_id": proposed[1]["call_id"], "reason": reason}, None

    def _call(self, tests: bool, passing: bool) -> Iterator[Item]:
        rng = self.rng
        tool = "run_tests" if tests else rng.pick(_TOOLS)
        args, output, ok = self._tool_result(tool, passing)
        proposed = self._proposed(tool, args)
        yield proposed
        call_id = proposed[1]["call_id"]
        self.allowed += 1
        yield "tool_allowed", {"call_id": call_id}, None
        yield "tool_started", {"call_id": call_id}, None
        high = 0.02 if tests else 0.002
        cost = round(rng.uniform(0.0001, high), 4)
        self.cost += cost
        receipt = {"call_id": call_id, "tool": tool, "ok": ok, "output": output, "cost": cost}
        yield "tool_finished", {"call_id": call_id, "ok": ok, "cost": cost}, receipt

    def _tool_result(self, tool: str, passing: bool) -> tuple[dict[str, Any], str, bool]:
        """Arguments, a short output and ok for one tool call."""
        rng = self.rng
        path = rng.pick(_PATHS)
        if tool == "run_tests":
            total = rng.int_in(12, 240)
            failed = 0 if passing else rng.int_in(1, 4)
            secs = rng.uniform(0.3, 9.0)
            return (
                {"cmd": "pytest -q"},
                f"{failed} failed, {total - failed} passed in {secs:.2f}s",
                True,
            )
        args, output = self._tool_output(tool, path)
        if rng.random() < 0.07:
            return args, f"error: {rng.pick(_FAILURES)}", False
        return args, output, True

    def _tool_output(self, tool: str, path: str) -> tuple[dict[str, Any], str]:
        rng = self.rng
        if tool == "read_file":
            return {"path": path}, rng.pick(_SNIPPETS)
        if tool == "grep":
            pattern = rng.pick(_PATTERNS)
            hit = f"{path}:{rng.int_in(1, 400)}: {pattern}"
            return {"pattern": pattern, "path": "src/"}, hit
        if tool == "list_dir":
            return {"path": "src/"}, "cli/\n__init__.py\nparser.py\nretry.py\ntokens.py"
        if tool == "edit_file":
            a, b = rng.int_in(1, 9), rng.int_in(0, 5)
            patch = f"@@ -{rng.int_in(1, 300)},{b + 1} +{rng.int_in(1, 300)},{a + 1} @@"
            return {"path": path, "patch": patch}, f"applied 1 hunk (+{a} -{b})"
        cmd = rng.pick(_SHELL)
        return {"cmd": cmd}, f"$ {cmd}\nexit 0"


def receipt_bytes(receipt: dict[str, Any]) -> bytes:
    """A receipt file's bytes (indented JSON, final newline): what receipt_sha256 pins."""
    return orjson.dumps(receipt, option=orjson.OPT_INDENT_2) + b"\n"


def _check_args(n_events: int, plant: str | None, plant_seq: int | None) -> None:
    if n_events < 1:
        raise ValueError("n_events must be >= 1")
    if plant is None:
        if plant_seq is not None:
            raise ValueError("plant_seq needs plant")
        return
    if plant not in PLANTS:
        raise ValueError(f"cannot plant {plant!r}; one of: {', '.join(sorted(PLANTS))}")
    if plant_seq is None or not 1 <= plant_seq <= n_events:
        raise ValueError(f"plant {plant} needs plant_seq in 1..{n_events}")
    if plant in _NEEDS_PREVIOUS and plant_seq < 2:
        raise ValueError(f"plant {plant} needs plant_seq >= 2")


def write_agent_run(
    dest: Path,
    n_events: int,
    *,
    seed: int = 0,
    run_id: str | None = None,
    plant: str | None = None,
    plant_seq: int | None = None,
    pin_receipts: bool = True,
    deny_all: bool = False,
    budget: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write ``events.jsonl``, ``receipts/`` and ``budget.json`` of an agent run into ``dest``.

    ``dest`` must be absent or empty. A caller's ``budget`` is written verbatim
    (the events are the same: a tight one makes replay fail). Planting
    missing_receipt, receipt_* or budget_exceeded hits the first tool_finished
    (tool_allowed) at or after ``plant_seq``; ValueError if there is none (the
    files are written all the same). Returns facts: run_id, events
    (lines), receipts, phase (of the clean run), attempts, tool_calls, denied,
    and with a plant: planted_seq, planted_line and the expected ``error``.
    """
    _check_args(n_events, plant, plant_seq)
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty")
    (dest / "receipts").mkdir(parents=True, exist_ok=True)
    rid = run_id or f"synth-{seed}-{n_events}"
    agent = _Agent(Rand(seed), n_events, deny_all)
    clock = Clock(Rand(f"{seed}/ts"), _START_MS)
    lines, receipts, hit, max_calls = _write_ledger(
        dest, agent, clock, rid, n_events, plant, plant_seq or 0, pin_receipts
    )
    _write_budget(dest, agent, budget, max_calls)
    facts: dict[str, Any] = {
        "run_id": rid,
        "events": lines,
        "receipts": receipts,
        "phase": agent.phase,
        "attempts": agent.attempts,
        "tool_calls": agent.allowed,
        "denied": agent.denied,
    }
    if plant is not None:
        facts.update(_planted_facts(plant, plant_seq, hit))
    return facts


def _write_ledger(
    dest: Path,
    agent: _Agent,
    clock: Clock,
    rid: str,
    n_events: int,
    plant: str | None,
    at: int,
    pin_receipts: bool,
) -> tuple[int, int, dict[str, Any], int | None]:
    """Write ``events.jsonl`` (with the plant, if any, at or after seq ``at``)
    and the receipts. Returns (lines, receipts, where the plant went: seq, line
    and kind, or empty; the max_tool_calls a budget_exceeded plant needs)."""
    folder = str(dest / "receipts")
    pending = plant is not None  # a plant still to place
    hit: dict[str, Any] = {}  # where the plant went: seq, line, kind
    max_calls: int | None = None  # budget_exceeded plant
    receipts = lines = 0
    phase_before = "new"

    # One buffered writer: orjson's newline option and 1 MiB writes beat joining batches.
    with open(dest / "events.jsonl", "wb", buffering=_BUFFER) as out:
        write = out.write
        for seq, (kind, payload, receipt) in enumerate(islice(agent.events(), n_events), 1):
            ts = clock.next()
            here = pending and seq >= at and _is_target(plant, seq, at, kind, payload)
            code = plant if here else None
            if receipt is not None:
                receipts += _write_receipt(folder, receipt, payload, pin_receipts, code)
            ev = {"seq": seq, "run_id": rid, "kind": kind, "ts": ts, "payload": payload}
            if not here:  # the fast path: almost every line
                if not (plant == "seq_gap" and seq == at - 1):  # else a lost line
                    write(orjson.dumps(ev, option=orjson.OPT_APPEND_NEWLINE))
                    lines += 1
                phase_before = agent.phase
                continue
            pending = False
            if code == "budget_exceeded":
                max_calls = agent.allowed - 1  # the calls allowed before this one
            line, kind = _plant_line(code or "", ev, phase_before, agent.start)
            hit = {"seq": seq, "line": lines + 1, "kind": kind}
            if code == "blank_line":  # the blank line is the bad one; the event follows
                write(b"\n")
                lines += 1
            if code == "truncated_line":  # a crash mid-write: no newline, nothing after
                write(line)
                lines += 1
                break
            write(line + b"\n")
            lines += 1
            if code == "seq_duplicate":  # a retried append: the same line twice
                write(line + b"\n")
                lines += 1
                hit["line"] = lines
            phase_before = agent.phase
    return lines, receipts, hit, max_calls


def _write_budget(
    dest: Path, agent: _Agent, budget: dict[str, Any] | None, max_calls: int | None
) -> None:
    """``budget.json``: the caller's, or one the clean run keeps within; a
    budget_exceeded plant lowers max_tool_calls to ``max_calls``."""
    if budget is None:
        budget = {
            "max_attempts": agent.attempts + (0 if agent.final else 1),
            "max_tool_calls": agent.allowed,
            "max_cost": float(math.ceil(agent.cost) + 1),
        }
    if max_calls is not None:
        budget = {**budget, "max_tool_calls": max_calls}
    (dest / "budget.json").write_bytes(orjson.dumps(budget, option=orjson.OPT_INDENT_2) + b"\n")


def _planted_facts(plant: str, plant_seq: int | None, hit: dict[str, Any]) -> dict[str, Any]:
    """Where ``plant`` went and the error strict replay must report there."""
    if not hit:
        raise ValueError(f"no place for {plant} at or after seq {plant_seq}")
    no_seq = plant in _NO_SEQ
    return {
        "planted_seq": hit["seq"],
        "planted_line": hit["line"],
        "error": {
            "code": plant,
            "seq": None if no_seq else hit["seq"],
            "line": hit["line"],
            "kind": None if no_seq else hit["kind"],
        },
    }


def _is_target(plant: str | None, seq: int, at: int, kind: str, payload: dict[str, Any]) -> bool:
    """Whether this event (seq >= at, nothing planted yet) is where ``plant`` goes."""
    if plant == "bad_call_id":
        return "call_id" in payload
    if plant in _FIRST_AT_OR_AFTER:
        return kind == _FIRST_AT_OR_AFTER[plant]
    return plant is not None and seq == at


def _write_receipt(
    folder: str, receipt: dict[str, Any], payload: dict[str, Any], pin: bool, code: str | None
) -> int:
    """Write one receipt (with planted error ``code``, if any), pin its sha256 in
    the tool_finished payload, and return the number of files written."""
    data = receipt_bytes(receipt)
    sha = hashlib.sha256(data).hexdigest()
    if code == "receipt_tampered":  # edited after the fact: ok flipped
        data = receipt_bytes({**receipt, "ok": not receipt["ok"]})
    elif code == "receipt_name_mismatch":  # only the name is wrong: the pin matches
        data = receipt_bytes({**receipt, "call_id": receipt["call_id"] + "-b"})
        sha = hashlib.sha256(data).hexdigest()
    if pin or code == "receipt_tampered":
        payload["receipt_sha256"] = sha
    if code == "missing_receipt":
        return 0
    with open(os.path.join(folder, receipt["call_id"] + ".json"), "wb") as fh:
        fh.write(data)
    return 1


def _plant_line(
    code: str, ev: dict[str, Any], phase: str, start: dict[str, Any]
) -> tuple[bytes, str]:
    """The planted version of one event line, and the kind it now claims."""
    line = orjson.dumps(ev)
    if code == "bad_json":
        return line[:-1] + b",}", ev["kind"]  # a trailing comma
    if code == "truncated_line":
        return line[: len(line) // 2], ev["kind"]  # a crash mid-write
    ev = dict(ev)
    if code == "bad_envelope":  # a host that JSON-encoded the payload twice
        ev["payload"] = orjson.dumps(ev["payload"]).decode()
    elif code == "unsupported_version":
        ev = {"v": 2, **ev}
    elif code == "mixed_run_ids":
        ev["run_id"] += "-b"
    elif code == "unknown_kind":
        ev["kind"] = _UNKNOWN_KIND
    elif code == "bad_parent":  # points at itself: a parent must come earlier
        payload = ev.pop("payload")
        ev["parent_seq"] = ev["seq"]
        ev["payload"] = payload
    elif code == "bad_call_id":
        ev["payload"] = {**ev["payload"], "call_id": _BAD_CALL_ID}
    elif code == "illegal_transition":  # a restarted host logging run_started again
        restart = ev["seq"] > 1
        ev["kind"] = "run_started" if restart else "attempt_started"
        ev["payload"] = dict(start) if restart else {"attempt": 1}
    elif code == "divergence":  # the host claims an outcome the rules do not derive
        ev["kind"] = "state_changed"
        ev["payload"] = {"to": "failed" if phase == "succeeded" else "succeeded"}
    else:  # blank_line, seq_duplicate, seq_gap, receipts, budget: the line is clean
        return line, ev["kind"]
    return orjson.dumps(ev), ev["kind"]


def main(argv: list[str] | None = None) -> int:
    """``python -m replay_tui.synth.runs DEST --events N``: write a run, print its facts."""
    parser = argparse.ArgumentParser(
        prog="python -m replay_tui.synth.runs",
        description="Write a deterministic, valid agent_run run (events.jsonl, receipts/, "
        "budget.json) into DEST, optionally with one planted error. Prints facts as JSON.",
    )
    parser.add_argument("dest", type=Path, help="run folder to create (absent or empty)")
    parser.add_argument("--events", type=int, required=True, metavar="N", help="ledger lines")
    parser.add_argument("--seed", type=int, default=0, help="same seed, same bytes (default 0)")
    parser.add_argument("--run-id", help="run_id of every event (default synth-SEED-N)")
    parser.add_argument(
        "--plant",
        choices=sorted(PLANTS),
        metavar="CODE",
        help="plant one error: " + ", ".join(sorted(PLANTS)),
    )
    parser.add_argument(
        "--at",
        type=int,
        metavar="SEQ",
        help="where to plant it (receipt codes and budget_exceeded: the first tool_finished/"
        "tool_allowed at or after SEQ)",
    )
    parser.add_argument("--deny-all", action="store_true", help="the host denies every call")
    parser.add_argument("--no-pin", action="store_true", help="omit receipt_sha256")
    args = parser.parse_args(argv)
    try:
        facts = write_agent_run(
            args.dest,
            args.events,
            seed=args.seed,
            run_id=args.run_id,
            plant=args.plant,
            plant_seq=args.at,
            pin_receipts=not args.no_pin,
            deny_all=args.deny_all,
        )
    except (ValueError, FileExistsError) as exc:
        parser.error(str(exc))
    sys.stdout.write(orjson.dumps(facts).decode() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
