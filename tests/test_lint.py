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
    out = _run("ruff", "check", "replay_tui", "tests", "benchmarks", "sample_runs", "screenshots")
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_strict_clean() -> None:
    out = _run("mypy")
    assert out.returncode == 0, out.stdout + out.stderr
