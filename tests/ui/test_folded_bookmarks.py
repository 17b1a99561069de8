"""A folded call's row (``v``) shows the bookmark ◆ of any event folded
into it, as a closed span's row does for its subtree's."""

from __future__ import annotations

from replay_tui.engine.indexes.calls import CallIndex
from replay_tui.ui.launch import make_app
from replay_tui.views.calls import Folding
from tests.conftest import DEMO
from tests.helpers.screen import goto, screen_text, settle


def test_a_folded_row_holds_the_lines_of_its_call_and_of_the_spans_it_closes() -> None:
    index = CallIndex(lambda event: event)  # type: ignore[arg-type, return-value]
    for line, call in enumerate(["a", "a", None, "b", "b", "a"]):
        index.note(line, call)  # type: ignore[arg-type]
    folding = Folding(index)
    folding.rows(6)
    assert folding.holds_any(0, {5}) and folding.holds_any(0, {9, 1})
    assert not folding.holds_any(0, {2, 3}) and not folding.holds_any(0, set())
    assert not folding.holds_any(1, {1})  # not a folded row: its call's first line is
    folding.unfolded.add(0)
    assert not folding.holds_any(0, {5})  # unfolded: each event shows its own mark


def _row(screen: str, seq: int) -> str:
    """The timeline row of ``seq``, as drawn (its gutter first)."""
    for line in screen.splitlines():
        cells = line.lstrip("┃").split()
        if str(seq) in cells[:2]:  # after the gutter's mark, if any
            return line.lstrip("┃")
    raise AssertionError(f"no row of seq {seq}")


async def test_a_bookmark_inside_a_folded_call_marks_its_row() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await goto(app, pilot, 5)  # tool_started of call-001 (seq 3-6)
        await pilot.press("b", "v", "home")
        await settle(app, pilot)
        row = _row(screen_text(app), 3)
        assert "▸ read_file" in row and row.startswith("◆"), row
        assert not _row(screen_text(app), 7).startswith("◆")  # the shell call has none
        await pilot.press("j", "j", "enter")  # unfolds call-001: seq 5's own row has the mark
        await settle(app, pilot)
        assert _row(screen_text(app), 5).startswith("◆")
        assert _row(screen_text(app), 3).startswith("▶")  # the cursor's row, now seq 3's alone
        await pilot.press("home")
        await settle(app, pilot)
        assert not _row(screen_text(app), 3).startswith("◆")
