"""Waiting in a test for what the app does in its own time.

A test waits for what a person would wait for (the status line says
verified, the pane shows the row, a notice came), never for a length of
time: on a loaded machine anything takes longer, and a test that counts
seconds fails there. The bound, :data:`HANG`, only ends a wait that would
never end (a bug); no test waits less.
"""

from __future__ import annotations

import linecache
import time
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

#: Seconds between two looks: the app's work is fast, so look often.
POLL = 0.02
#: Seconds after which a wait is a hang (a failure), not a slow machine: far
#: beyond what anything takes on two busy cores, so it never paces a test.
HANG = 90.0


async def until(pilot: Pilot[Any], check: Callable[[], object], seconds: float = HANG) -> None:
    """Let the app run (``pilot.pause``) until ``check()`` is true; fail the
    test, saying what it waited for, if it is still false after ``seconds``
    (at least :data:`HANG`: longer for work known to be long)."""
    assert seconds >= HANG, f"a wait of {seconds:g} s would pace the test: bound a hang only"
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() >= deadline:
            if check():
                return
            raise AssertionError(f"waited {seconds:g} s for {_what(check)}: still false")
        await pilot.pause(POLL)


def wait_until(check: Callable[[], object], seconds: float = HANG, poll: float = 0.1) -> object:
    """:func:`until` for what runs outside the app's loop (a server, a
    browser, another process): look every ``poll`` seconds until ``check()``
    gives something true and return it; fail, saying what it waited for,
    after ``seconds``."""
    assert seconds >= HANG, f"a wait of {seconds:g} s would pace the test: bound a hang only"
    deadline = time.monotonic() + seconds
    while not (found := check()):
        if time.monotonic() >= deadline:
            if found := check():
                return found
            raise AssertionError(f"waited {seconds:g} s for {_what(check)}: still false")
        time.sleep(poll)
    return found


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
