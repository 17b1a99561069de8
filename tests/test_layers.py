"""The architecture holds: layers never import upwards, and the paths
scripts and rules use still resolve."""

from __future__ import annotations

import importlib
import subprocess
import sys
from importlib.metadata import entry_points

from tests.conftest import ROOT


def test_import_linter_contracts_are_kept() -> None:
    """The layers and "the core imports no textual" (pyproject.toml)."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command; lint_imports_command()",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 kept, 0 broken" in out.stdout


def test_paths_scripts_and_rules_use_still_resolve() -> None:
    """README's script paths and the names rules import, from before the
    subpackages: kept as re-exports."""
    for module, name in [
        ("replay_tui.replay", "Replay"),
        ("replay_tui.replay", "verify"),
        ("replay_tui.run", "locate_run"),
        ("replay_tui.reducers", "load_reducer"),
        ("replay_tui.reducers.base", "Context"),
        ("replay_tui.errors", "RuleViolation"),
        ("replay_tui.envelope", "Event"),
        ("replay_tui.cli", "main"),
    ]:
        assert callable(getattr(importlib.import_module(module), name)), (module, name)
    from replay_tui.engine.replay import Replay
    from replay_tui.replay import Replay as Old

    assert Old is Replay


def test_entry_points_resolve() -> None:
    scripts = {e.name: e for e in entry_points(group="console_scripts")}
    assert callable(scripts["replay-tui"].load())
    rules = {e.name: e.load() for e in entry_points(group="replay_tui.reducers")}
    assert {"agent_run", "refund"} <= set(rules)


def test_few_modules_loose_at_the_top() -> None:
    loose = sorted(p.name for p in (ROOT / "replay_tui").glob("*.py"))
    assert len(loose) <= 6, loose
