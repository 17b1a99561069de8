"""Waiting in a test for what the app does in its own time."""

from __future__ import annotations

import linecache
import time
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

#: Seconds between two looks: the app's work is fast, so look often.
POLL = 0.02


async def until(pilot: Pilot[Any], check: Callable[[], object], seconds: float = 30.0) -> None:
    """Let the app run (``pilot.pause``) until ``check()`` is true; fail the
    test, saying what it waited for, if it is still false after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() >= deadline:
            if check():
                return
            raise AssertionError(f"waited {seconds:g} s for {_what(check)}: still false")
        await pilot.pause(POLL)


def _what(check: Callable[[], object]) -> str:
    """The text of a lambda's expression (``app.done == 6``), else the function's name."""
    code = getattr(check, "__code__", None)
    if code is None:
        return repr(check)
    spans = [
        (line, end_line, col, end_col)
        for line, end_line, col, end_col in code.co_positions()
        if None not in (line, end_line, col, end_col) and (col, end_col) != (0, 0)
    ]
    if code.co_name != "<lambda>" or not spans:
        return str(code.co_qualname)
    line, col = min((s[0], s[2]) for s in spans)
    end_line, end_col = max((s[1], s[3]) for s in spans)
    lines = linecache.getlines(code.co_filename)[line - 1 : end_line]
    if not lines:
        return str(code.co_qualname)
    lines[-1] = lines[-1][:end_col]
    lines[0] = lines[0][col:]
    return " ".join("".join(lines).split())
