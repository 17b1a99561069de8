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


def test_the_readme_sample_report_is_what_report_writes(tmp_path: Path) -> None:
    """Every line of the README's shortened sample report (but its ``...``)
    is a line of what the command writes today, in order: no stale digest."""
    readme = (ROOT / "README.md").read_text()
    found = re.search(
        r"What `(replay-tui report [^`]*)` prints, shortened:\n\n````markdown\n(.*?)````",
        readme,
        flags=re.S,
    )
    assert found is not None
    argv = shlex.split(found.group(1))
    (tmp_path / "sample_runs").symlink_to(ROOT / "sample_runs")
    got = subprocess.run(
        [sys.executable, "-m", "replay_tui", *argv[1:]],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    lines = got.stdout.splitlines()
    at = 0
    for line in found.group(2).splitlines():
        if line.strip() == "...":
            continue
        assert line in lines[at:], (
            f"the README's sample report says {line!r}; report writes no such line"
        )
        at = lines.index(line, at) + 1
