"""The status line is one line at any width, and keeps what a person needs.

Too long for the terminal, its least needed pieces give way first: the
run_id when it only repeats the run's name, then the rules' name, then a
bookmark's note (cut), ...; the verdict, compare mode's B and where the
cursor stands stay, said in fewer words if they must.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.pilot import Pilot

from replay_tui.ui.app import ReplayApp
from replay_tui.ui.launch import make_app
from replay_tui.ui.widgets.status_line import Piece, fit
from tests.conftest import DEMO, SAMPLES
from tests.helpers.marks import bookmark
from tests.helpers.screen import ask, compared, settle, status
from tests.helpers.waiting import until

REFUND = SAMPLES / "refund-180"
NOTE = "the denial that sent it into a retry: ask the customer why it was denied"


def _piece(text: str, rank: int, short: str | None = None, **kw: object) -> Piece:
    return Piece(Text(text), rank, Text(short) if short is not None else None, rank - 1, **kw)  # type: ignore[arg-type]


def test_what_fits_is_left_as_it_is() -> None:
    pieces = [_piece(" a", 10), _piece("  b", 20, "b")]
    assert fit(pieces, 80).plain == " a  b"


def test_the_least_ranked_go_first_and_what_stays_keeps_its_place() -> None:
    pieces = [_piece("AAAA", 50), _piece("bbbb", 10), _piece("CCCC", 90)]
    assert fit(pieces, 8).plain == "AAAACCCC"
    assert fit(pieces, 4).plain == "CCCC"


def test_short_forms_before_dropping_what_matters_more() -> None:
    pieces = [_piece("verdict-long", 100, "v"), _piece("name", 95)]
    assert fit(pieces, 5).plain == "vname"


def test_a_piece_that_may_be_cut_is_cut_not_dropped() -> None:
    pieces = [_piece("head ", 100), _piece("a long bookmark note here", 40, cut=True, least=6)]
    got = fit(pieces, 16).plain
    assert got.startswith("head a long") and got.endswith("…") and len(got) == 16


def test_what_was_dropped_comes_back_when_short_forms_made_room() -> None:
    # the name goes first (70), then the verdict takes its short form (92):
    # room again for the name
    pieces = [_piece("name ", 70), _piece("verdict-very-long", 100, "ok")]
    pieces[1].short_rank = 92
    assert fit(pieces, 8).plain == "name ok"


def _one_line(app: ReplayApp) -> str:
    bar = app.query_one("#status")
    assert bar.size.height == 1, "the status line took a second row"
    line = status(app)
    assert len(line) <= app.size.width, line
    return line


@pytest.fixture(autouse=True)
def _no_bookmarks_of_this_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


async def test_at_80_columns_a_bookmark_note_is_cut_not_the_position() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await bookmark(app, pilot, 9, NOTE)
        line = _one_line(app)
        # the run_id said the run's name again: it went first, then the rules
        assert "run demo-001" not in line and "rules" not in line
        assert "✓ verified" in line and "seq 9 of 14" in line and "state running" in line
        assert "◆ the denial that sent it" in line and line.rstrip().endswith("…")


async def test_at_80_columns_compare_mode_keeps_b_and_the_position() -> None:
    app = make_app(REFUND, skip=(2,))
    async with app.run_test(size=(80, 24)) as pilot:
        await compared(app, pilot)
        line = _one_line(app)
        assert "WHAT-IF" in line and "B ✗ 3: illegal_transition" in line and "2 part" in line
        assert "seq 1/3 waiting" in line and "✓" in line


async def test_at_140_columns_a_condition_and_a_watch_fit_on_one_line() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await ask(app, pilot, "spent.tokens > 1000")
        await ask(app, pilot, "14")
        await settle(app, pilot)
        await pilot.press("tab", "w")
        await until(pilot, lambda: app.main.watchlist.done)
        await pilot.pause()
        line = _one_line(app)
        assert "✓ verified" in line and "seq 14 of 14" in line
        assert "spent.tokens > 1000" in line and "watching calls.call-003.st" in line


def test_snapshot_status_line_at_80x24_with_a_note(snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, ReplayApp)
        await settle(app, pilot)
        await bookmark(app, pilot, 9, NOTE)
        await settle(app, pilot)

    assert snap_compare(make_app(DEMO), terminal_size=(80, 24), run_before=run)


def test_snapshot_compare_mode_at_80x24(snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, ReplayApp)
        await compared(app, pilot)

    assert snap_compare(make_app(REFUND, skip=(2,)), terminal_size=(80, 24), run_before=run)


def test_the_verdict_is_cut_never_dropped() -> None:
    pieces = [
        Piece(Text(" my-run-label"), 70, cut=True, least=8),
        Piece(Text("  ✗ error at seq 12: reducer_error "), 100,
              Text("  ✗ seq 12: reducer_error "), 92, cut=True, least=4),
    ]  # fmt: skip
    got = fit(pieces, 20).plain
    assert "✗" in got and len(got) <= 20
