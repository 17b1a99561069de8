"""Compare mode in the app: another run beside this one, and what-if branches."""

from __future__ import annotations

from textual.pilot import Pilot

from replay_tui.ui.app import ReplayApp
from replay_tui.ui.launch import make_app
from tests.conftest import DEMO, SAMPLES
from tests.helpers.screen import compared, pane_text, said, seq_at_cursor, settle, status

REFUND = SAMPLES / "refund-180"


async def test_s_compares_the_run_with_the_branch_that_leaves_the_event_out() -> None:
    app = make_app(REFUND)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("j", "s")  # what if seq 2 (the approval) had not happened?
        await compared(app, pilot)
        assert app.b is not None and app.b.skip == {2}
        assert "HYPOTHETICAL" in status(app) and "B ✗ seq 3: illegal_transition" in status(app)
        assert app.main.compare.differs == [1, 2] and app.main.timeline.differs == frozenset({1, 2})
        shown = pane_text(app, "state")
        assert "HYPOTHETICAL: refund-180 without seq 2" in shown
        assert "B leaves this event out" in shown
        assert '~ status: "approved" → "waiting"' in shown  # A → B at prefix 2
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 3
        assert "B has no state here" in pane_text(app, "state")
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 2
        await pilot.press("k", "s")  # and without seq 1 too
        await compared(app, pilot)
        assert app.b is not None and app.b.skip == {1, 2}
        assert "without seq 1, 2" in pane_text(app, "state")
        await pilot.press("escape")  # back to the run
        await pilot.pause()
        assert app.b is None and "HYPOTHETICAL" not in status(app)
        assert app.main.timeline.differs == frozenset()
        assert "B " not in pane_text(app, "state").splitlines()[0]


async def test_against_another_run_marks_where_they_part() -> None:
    app = make_app(DEMO, against=SAMPLES / "broken-divergence")
    async with app.run_test(size=(140, 40)) as pilot:
        await compared(app, pilot)
        assert "B ✗ seq 11: divergence" in status(app) and "✓ verified" in status(app)
        assert app.main.compare.differs is not None and app.main.compare.differs[0] == 10  # seq 11
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 11
        shown = pane_text(app, "state")
        assert "B's event here differs:" in shown and '"succeeded"' in shown
        assert "B has no state here" in shown


async def test_the_same_run_compared_with_itself_parts_nowhere() -> None:
    app = make_app(DEMO, against=DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await compared(app, pilot)
        assert app.main.compare.differs == []
        assert "0 rows part" in status(app)
        await pilot.press("right_square_bracket")
        assert any("no more differences" in m for m in said(app))
        assert "A and B: the same state here" in pane_text(app, "state")


def test_snapshot_what_if_without_the_approval(snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, ReplayApp)
        await settle(app, pilot)
        await pilot.press("j", "s")
        await compared(app, pilot)
        await pilot.press("right_square_bracket")
        await settle(app, pilot)

    assert snap_compare(make_app(REFUND), terminal_size=(140, 40), run_before=run)
