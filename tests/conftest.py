"""Shared fixtures: the repo's sample runs, a tiny run builder, and agent
session stores built from the fixture samples (never the machine's own)."""

from __future__ import annotations

import hashlib
import inspect
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, settings

# the shared helpers' asserts say what they saw, as a test's own do
pytest.register_assert_rewrite("tests.helpers")
# a real PostgreSQL server for the tests that need one: postgres_server, postgres_url
pytest_plugins = ["tests.helpers.postgres"]

# Hypothesis times its examples by the clock: on a loaded machine a draw or an
# example takes many times longer, which is no failure. No deadline and no
# "too slow" health check, for every property test (their own settings add
# to this profile).
settings.register_profile(
    "loaded-machine", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("loaded-machine")

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
SAMPLES = ROOT / "sample_runs"
DEMO = SAMPLES / "demo-001"
AGENT_SESSIONS = ROOT / "tests" / "fixtures" / "agent-sessions"
#: What ``run_factory`` gives: lines (and ``receipts=``, ``budget=``) in, a run folder out.
RunFactory = Callable[..., Path]


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
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current directory, where --graph finds the user's module (sys.path restored)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    return tmp_path


@pytest.fixture
def run_factory(tmp_path: Path) -> RunFactory:
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


@pytest.fixture(autouse=True)
def _agent_homes_empty(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's, Codex's and Gemini CLI's folders are empty temporary ones
    for every test: none ever lists or reads the sessions of the machine's person."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path_factory.mktemp("claude-config")))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path_factory.mktemp("codex-home")))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path_factory.mktemp("gemini-home")))


@pytest.fixture(autouse=True)
def _every_notice_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A notice leaves the screen after its few seconds; a test on a loaded
    machine may read it later than that. Every app keeps each notice it was
    given, in order (``said`` in tests/helpers/screen.py reads them)."""
    from textual.app import App

    shown = App._on_notify

    def keep(self: App[Any], event: Any) -> None:
        self.__dict__.setdefault("_said", []).append(event.notification)
        shown(self, event)

    monkeypatch.setattr(App, "_on_notify", keep)


@pytest.fixture
def snap_compare(snap_compare: Callable[..., bool]) -> Callable[..., bool]:
    """pytest-textual-snapshot's ``snap_compare``, its picture taken of the
    screen as it stays: after ``run_before``, the notices (which leave by the
    clock, before or after the picture on a loaded machine) are cleared."""
    from textual.pilot import Pilot

    from tests.helpers.screen import still

    def compare(
        app: Any, *, run_before: Callable[[Pilot[Any]], Any] | None = None, **kw: Any
    ) -> bool:
        async def then_still(pilot: Pilot[Any]) -> None:
            done = run_before(pilot) if run_before is not None else None
            if inspect.isawaitable(done):
                await done
            await still(pilot)

        return snap_compare(app, run_before=then_still, **kw)

    return compare


@dataclass
class AgentHomes:
    """Stores in their real layouts holding copies of the fixture samples
    (``CLAUDE_CONFIG_DIR`` and ``CODEX_HOME`` point at them)."""

    claude: Path  # CLAUDE_CONFIG_DIR
    codex: Path  # CODEX_HOME
    #: The sessions, newest first: (path, fixture it is a copy of).
    sessions: list[tuple[Path, Path]] = field(default_factory=list)
    #: Sub-agent transcripts (newer than every session: never listed).
    subagents: list[Path] = field(default_factory=list)
    #: The mtime of the newest session (the others are older, a minute apart).
    newest: float = 0.0

    @property
    def projects(self) -> Path:
        return self.claude / "projects"

    @property
    def rollouts(self) -> Path:
        return self.codex / "sessions"

    def files(self) -> list[Path]:
        return [p for p in (*self.claude.rglob("*"), *self.codex.rglob("*")) if p.is_file()]

    def snapshot(self) -> dict[Path, tuple[bytes, int, int]]:
        """Every file's bytes, mode and mtime (ns)."""
        snap = {}
        for p in self.files():
            st = p.stat()
            snap[p] = (p.read_bytes(), st.st_mode, st.st_mtime_ns)
        return snap


#: (store path, fixture), newest first.
_CLAUDE = "claude-code"
_LAYOUT = [
    (
        "projects/-path-to-Demo/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
        f"{_CLAUDE}/viewer--fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    ),
    (
        "sessions/2026/05/11/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
        "codex/codemie--rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
    ),
    (
        "projects/-Users-User-repo-codemie-ai-codemie-code/e9fb405b-169f-40eb-9396-7e75076f045d.jsonl",
        f"{_CLAUDE}/codemie--incremental-subagents/turn-2.jsonl",
    ),
    (
        "projects/-path-to-Demo/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
        f"{_CLAUDE}/viewer--5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
    ),
    (
        "projects/-Users-user-repo/9eda1058-9706-484a-b992-d03f9cfa2546.jsonl",
        f"{_CLAUDE}/codemie--session-9eda1058.jsonl",
    ),
    (
        "projects/-path-to-Demo/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
        f"{_CLAUDE}/viewer--1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
    ),
]
_SUBAGENT = f"{_CLAUDE}/codemie--incremental-subagents/turn-2/subagents/agent-a485154.jsonl"


@pytest.fixture
def agent_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AgentHomes:
    """A Claude Code config folder and a Codex home holding copies of the
    fixture sessions in their real layouts, with mtimes an hour ago and
    older, a minute apart, newest first as in :data:`_LAYOUT` (none is
    being written); sub-agent transcripts (2.x ``<session>/subagents/``
    and 1.x ``agent-*.jsonl`` beside) newer than all of them."""
    homes = AgentHomes(tmp_path / "claude-config", tmp_path / "codex-home")
    homes.newest = time.time() - 3600
    for i, (where, fixture) in enumerate(_LAYOUT):
        root = homes.codex if where.startswith("sessions/") else homes.claude
        dest = root / where
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(AGENT_SESSIONS / fixture, dest)
        when = homes.newest - 60 * i
        os.utime(dest, (when, when))
        homes.sessions.append((dest, AGENT_SESSIONS / fixture))
    main = homes.sessions[2][0]
    for dest in (
        main.parent / main.stem / "subagents" / "agent-a485154.jsonl",  # 2.x
        main.parent / "agent-a485154.jsonl",  # 1.x
    ):
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(AGENT_SESSIONS / _SUBAGENT, dest)
        os.utime(dest, (homes.newest + 60, homes.newest + 60))
        homes.subagents.append(dest)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(homes.claude))
    monkeypatch.setenv("CODEX_HOME", str(homes.codex))
    return homes
