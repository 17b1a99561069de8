"""The console examples of the README and of the guide (docs/*.md) are what
the commands print."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

#: The README, then the guide's pages: every page a reader may copy from.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: How many console examples there were when the README held them all:
#: moving text between pages must not lose one.
EXAMPLES_BEFORE_THE_GUIDE = 10

SAMPLE_REPORT = re.compile(
    r"What `(replay-tui report [^`]*)` prints, shortened:\n\n````markdown\n(.*?)````", flags=re.S
)


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def examples() -> list[tuple[str, str, str]]:
    """(page, command, what the page says it prints), in the pages' order."""
    found: list[tuple[str, str, str]] = []
    for page in PAGES:
        for block in re.findall(r"```console\n(.*?)```", page.read_text(), flags=re.S):
            for part in re.split(r"^\$ ", block, flags=re.M)[1:]:
                command, _, output = part.partition("\n")
                found.append((_name(page), command, output))
    return found


def sample_reports() -> list[tuple[str, str, str]]:
    """(page, the report command, its shortened output) of every page that
    shows one."""
    return [
        (_name(page), m.group(1), m.group(2))
        for page in PAGES
        for m in SAMPLE_REPORT.finditer(page.read_text())
    ]


def test_the_pages_have_console_examples() -> None:
    assert len(examples()) >= EXAMPLES_BEFORE_THE_GUIDE


@pytest.mark.parametrize(
    ("page", "command", "output"), examples(), ids=[f"{p}: {c}" for p, c, _ in examples()]
)
def test_an_example_prints_what_it_says(
    page: str, command: str, output: str, tmp_path: Path
) -> None:
    argv = shlex.split(command)
    assert argv[0] == "replay-tui", page
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


def test_a_page_shows_a_sample_report() -> None:
    assert sample_reports()


@pytest.mark.parametrize(
    ("page", "command", "shown"), sample_reports(), ids=[p for p, _, _ in sample_reports()]
)
def test_the_sample_report_is_what_report_writes(
    page: str, command: str, shown: str, tmp_path: Path
) -> None:
    """Every line of a page's shortened sample report (but its ``...``) is a
    line of what the command writes today, in order: no stale digest."""
    argv = shlex.split(command)
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
    for line in shown.splitlines():
        if line.strip() == "...":
            continue
        assert line in lines[at:], (
            f"{page}'s sample report says {line!r}; report writes no such line"
        )
        at = lines.index(line, at) + 1
