"""The ``:`` condition and ``/`` filter controller, with no app."""

from __future__ import annotations

from array import array

from rich.text import Text

from replay_tui.questions.condition import parse_condition
from replay_tui.ui.features.search.controller import Search, Turn


def test_n_and_N_step_through_the_turns_and_wrap() -> None:
    search = Search()
    search.ask(parse_condition('phase == "retrying"'))
    status = Text()
    search.condition_status(status, 1)
    assert status.plain.endswith(": searching…")
    search.answered([10, 20], until=30)
    assert search.next_turn(5, 1) == Turn(10, False)
    assert search.next_turn(20, 1) == Turn(10, True)
    assert search.next_turn(10, -1) == Turn(20, True)
    assert search.stale(31) and not search.stale(30)
    status = Text()
    search.condition_status(status, 20)
    assert status.plain.endswith(": turn 2 of 2 (n/N)")
    assert search.forget() and search.condition is None and not search.forget()


def test_a_filter_says_row_or_rows() -> None:
    search = Search()
    assert search.set_filter("  tool_denied ") == "tool_denied"
    shown = Text()
    search.filter_status(shown)
    assert "filter 'tool_denied': … rows" in shown.plain
    search.matches = array("L", [7])
    shown = Text()
    search.filter_status(shown)
    assert "1 row" in shown.plain and "rows" not in shown.plain
    search.matches = array("L")
    assert search.nothing_matches()
    search.clear_filter()
    assert not search.nothing_matches() and search.filter_text == ""
