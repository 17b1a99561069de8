"""The README's console examples are what the commands print."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

BLOCKS = re.findall(r"```console\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def examples() -> list[tuple[str, str]]:
    """(command, what the README says it prints), in the README's order."""
    found: list[tuple[str, str]] = []
    for block in BLOCKS:
        for part in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, _, output = part.partition("\n")
            found.append((command, output))
    return found


def test_the_readme_has_console_examples() -> None:
    assert len(examples()) >= 8


@pytest.mark.parametrize(("command", "output"), examples(), ids=[c for c, _ in examples()])
def test_a_readme_example_prints_what_it_says(command: str, output: str, tmp_path: Path) -> None:
    argv = shlex.split(command)
    assert argv[0] == "replay-tui"
    (tmp_path / "sample_runs").symlink_to(ROOT / "sample_runs")  # files it writes stay here
    env = {**os.environ, "COLUMNS": "200"}
    got = subprocess.run(
        [sys.executable, "-m", "replay_tui", *argv[1:]],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert got.stdout + got.stderr == output
