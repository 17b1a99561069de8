"""The core is plain Python: scripts can use it without pulling in textual."""

from __future__ import annotations

import subprocess
import sys

CORE = [
    "replay_tui",
    "replay_tui.cli",
    "replay_tui.ledger",
    "replay_tui.envelope",
    "replay_tui.receipts",
    "replay_tui.budget",
    "replay_tui.reducers",
    "replay_tui.reducers.agent_run",
    "replay_tui.reducers.refund",
    "replay_tui.replay",
    "replay_tui.diff",
    "replay_tui.report",
    "replay_tui.handover",
    "replay_tui.cli_report",
    "replay_tui.condition",
    "replay_tui.across",
    "replay_tui.cli_across",
    "replay_tui.bookmarks",
    "replay_tui.sidebyside",
    "replay_tui.cli_diff",
    "replay_tui.reducers.temporal",
]


def test_core_imports_no_textual() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in CORE)
        + "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        + "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core imported: {out.stdout.strip()}"


def test_check_command_imports_no_textual(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`replay-tui check` runs without loading the UI stack (fast start-up)."""
    code = (
        "import sys\n"
        "from replay_tui.cli import main\n"
        f"rc = main(['check', {str(tmp_path)!r}])\n"
        "print('textual' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip().endswith("False")
