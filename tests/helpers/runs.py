"""Runs the app tests open: an agent run written as it goes, and the demo
with a secret in a call's arguments."""

from __future__ import annotations

import shutil
from pathlib import Path

from replay_tui.synth.runs import write_agent_run
from tests.conftest import DEMO


def source_run(tmp_path: Path, n: int = 120, seed: int = 4) -> tuple[Path, list[bytes]]:
    """A whole agent run of ``n`` events in ``tmp_path/src``, and its ledger's lines."""
    src = tmp_path / "src"
    write_agent_run(src, n, seed=seed)
    return src, (src / "events.jsonl").read_bytes().splitlines(keepends=True)


def live_run(tmp_path: Path, n: int, seed: int, first: int) -> tuple[Path, list[bytes]]:
    """A run of ``n`` events being written: its budget and receipts, and the
    first ``first`` lines so far (the rest are returned, to append)."""
    src, lines = source_run(tmp_path, n=n, seed=seed)
    live = tmp_path / "live"
    live.mkdir()
    shutil.copy(src / "budget.json", live)
    shutil.copytree(src / "receipts", live / "receipts")
    (live / "events.jsonl").write_bytes(b"".join(lines[:first]))
    return live, lines


def write_edited_rules(path: Path, cut: int) -> None:
    """Rules of one's own at ``path`` (``path:REDUCER``): ``agent_run``'s, but
    from seq ``cut`` on each state also holds a note (an edit to reload)."""
    path.write_text(
        "from replay_tui.reducers.agent_run import AgentRunRules\n\n"
        "class Rules(AgentRunRules):\n"
        '    name = "edited"\n'
        "    def apply(self, state, event, ctx):\n"
        "        state = super().apply(state, event, ctx)\n"
        f"        if event.seq >= {cut}:\n"
        '            state["note"] = "changed"\n'
        "        return state\n\n"
        "REDUCER = Rules()\n"
    )


def demo_with_password(tmp_path: Path) -> Path:
    """The demo run with ``"password": "hunter2"`` in seq 3's call arguments."""
    run = tmp_path / "secret-run"
    shutil.copytree(DEMO, run)
    ledger = run / "events.jsonl"
    lines = ledger.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(
        b'"args":{"path":"tests/test_parser.py"}',
        b'"args":{"path":"tests/test_parser.py","password":"hunter2"}',
    )
    ledger.write_bytes(b"".join(lines))
    return run
