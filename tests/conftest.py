"""Shared fixtures: the repo's sample runs and a tiny run builder."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_runs"


def line(seq: int, kind: str, run_id: str = "r1", **fields: Any) -> bytes:
    """One ledger line, compact JSON with a newline."""
    obj: dict[str, Any] = {"seq": seq, "run_id": run_id, "kind": kind}
    obj.update(fields)
    return orjson.dumps(obj) + b"\n"


def make_run(
    dest: Path,
    lines: list[bytes] | bytes,
    receipts: dict[str, bytes] | None = None,
    budget: Any = None,
) -> Path:
    """Write a run folder: events.jsonl, receipts/, budget.json."""
    dest.mkdir(parents=True, exist_ok=True)
    data = lines if isinstance(lines, bytes) else b"".join(lines)
    (dest / "events.jsonl").write_bytes(data)
    if receipts is not None:
        (dest / "receipts").mkdir(exist_ok=True)
        for cid, raw in receipts.items():
            (dest / "receipts" / f"{cid}.json").write_bytes(raw)
    if budget is not None:
        raw = budget if isinstance(budget, bytes) else orjson.dumps(budget)
        (dest / "budget.json").write_bytes(raw)
    return dest


def receipt(call_id: str, **extra: Any) -> bytes:
    body = {"call_id": call_id, "tool": "read_file", "ok": True, "output": "x", "cost": 0.5}
    body.update(extra)
    return orjson.dumps(body)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def agent_lines(receipt_sha: str | None = None, call_id: str = "c1") -> list[bytes]:
    """A small valid agent run: one finished call, one failed check."""
    fin: dict[str, Any] = {"call_id": call_id, "ok": True, "cost": 0.5}
    if receipt_sha:
        fin["receipt_sha256"] = receipt_sha
    return [
        line(1, "run_started", payload={"task": "t"}, ts="2026-11-01T09:00:00Z"),
        line(2, "attempt_started", payload={"attempt": 1}),
        line(3, "model_proposed", payload={"call_id": call_id, "tool": "read_file", "tokens": 5}),
        line(4, "tool_allowed", payload={"call_id": call_id}),
        line(5, "tool_started", payload={"call_id": call_id}),
        line(6, "tool_finished", payload=fin),
        line(7, "check_finished", payload={"name": "tests", "passed": False}),
        line(8, "state_changed", payload={"to": "retrying"}),
    ]


@pytest.fixture
def run_factory(tmp_path: Path) -> Callable[..., Path]:
    counter = iter(range(10_000))

    def factory(lines: list[bytes] | bytes, **kw: Any) -> Path:
        return make_run(tmp_path / f"run{next(counter)}", lines, **kw)

    return factory


@pytest.fixture(autouse=True)
def _state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Bookmarks live in the user's state directory: every test gets its own,
    so none reads or writes the real one."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return state
