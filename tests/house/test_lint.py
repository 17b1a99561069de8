"""Lint and types are part of the test command, so CI holds them too."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_ruff_clean() -> None:
    folders = ["replay_tui", "tests", "benchmarks", "sample_runs", "screenshots"]
    out = _run("ruff", "check", *[f for f in folders if (ROOT / f).is_dir()])
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_strict_clean() -> None:
    out = _run("mypy")
    assert out.returncode == 0, out.stdout + out.stderr
