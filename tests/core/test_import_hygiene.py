"""The core is plain Python: scripts can use it without pulling in textual."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

#: Every module below ui/ (and the command line, whose app import is lazy).
CORE = sorted(
    ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    for p in (ROOT / "replay_tui").rglob("*.py")
    if "ui" not in p.relative_to(ROOT).parts and p.name != "__main__.py"
)


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
        "from replay_tui.cli.commands import main\n"
        f"rc = main(['check', {str(tmp_path)!r}])\n"
        "print('textual' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip().endswith("False")
