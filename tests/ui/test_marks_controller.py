"""Bookmarks as the app uses them, with no app."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from replay_tui.handover.bookmarks import Bookmarks
from replay_tui.ui.features.bookmarks.controller import Marks
from tests.conftest import SAMPLES


def test_b_B_and_the_status_line(tmp_path: Path) -> None:
    marks = Marks()
    assert marks.rows() == frozenset() and marks.next_after(3) is None
    assert marks.loaded(Bookmarks.load(SAMPLES / "demo-001" / "events.jsonl")) == []
    assert marks.toggle(9) == "seq 9 bookmarked"
    assert marks.toggle(4) == "seq 4 bookmarked"
    assert marks.rows() == frozenset({3, 8})
    assert marks.next_after(4) == (9, False) and marks.next_after(9) == (4, True)
    assert marks.for_report(12) == ([4, 9, 12], {4: "", 9: ""})
    assert [title for title, _, _ in marks.palette()] == ["◆ seq 4", "◆ seq 9"]
    shown = Text()
    marks.status(shown, 9)
    assert shown.plain == "  ◆ "
    assert marks.toggle(9) == "seq 9 no longer bookmarked" and marks.rows() == frozenset({3})
