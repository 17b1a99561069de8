"""The command line run in the test's own process."""

from __future__ import annotations

import pytest

from replay_tui.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``replay-tui ARGS``: the exit status, stdout and stderr."""
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err
