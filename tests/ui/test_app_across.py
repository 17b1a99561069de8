"""Questions across time in the app: ``:`` with a condition, ``n`` / ``N``,
and watching a state path with ``w`` (driven headless with Pilot)."""

from __future__ import annotations

import re

from textual.pilot import Pilot
from textual.widgets import Input, Static

from replay_tui.ui.app import ReplayApp
from replay_tui.ui.launch import make_app
from replay_tui.ui.screens.prompts import GotoScreen
from replay_tui.ui.widgets.state_pane import StatePane
from replay_tui.ui.widgets.watch_pane import WatchPane
from tests.conftest import DEMO
from tests.helpers.screen import ask, said, screen_text, seq_at_cursor, settle, status
from tests.helpers.waiting import until


async def test_a_condition_goes_where_it_turns_true_and_n_repeats_it() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        assert seq_at_cursor(app) == 1
        await ask(app, pilot, 'calls.call-003.status == "allowed" or phase == "running"')
        await until(
            pilot, lambda: app.main.search.turn_seqs is not None and seq_at_cursor(app) == 14
        )
        await settle(app, pilot)
        assert seq_at_cursor(app) == 14  # turns true at 1 and 14; the next after 1
        assert app.main.search.turn_seqs == [1, 14]
        assert "turn 2 of 2 (n/N)" in status(app)
        await pilot.press("n")  # no turn after 14: back to the first, with a word
        await settle(app, pilot)
        assert seq_at_cursor(app) == 1
        assert any("wrapped to the start" in m for m in said(app))
        await pilot.press("N")  # none before 1: to the last
        await settle(app, pilot)
        assert seq_at_cursor(app) == 14
        await pilot.press("N")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 1
        await pilot.press("escape")  # forgets the condition: n has nothing to repeat
        assert app.main.search.condition is None
        await pilot.press("n")
        await pilot.pause()
        assert seq_at_cursor(app) == 1


async def test_keys_typed_in_one_burst_after_colon_are_not_lost() -> None:
    """A terminal sends ``:12`` Enter at once: the prompt is not up yet when
    1, 2 and Enter arrive; they are still its answer, not lost or run."""
    from textual import events

    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        for key, char in [("colon", ":"), ("1", "1"), ("2", "2"), ("enter", "\r")]:
            app.post_message(events.Key(key, char))
        await until(pilot, lambda: seq_at_cursor(app) == 12)  # the keys are handled in time
        await settle(app, pilot)
        burst = [("colon", ":"), *((c, c) for c in "phase"), ("space", " ")]
        burst += [("equals_sign", "="), ("equals_sign", "="), ("space", " ")]
        burst += [("quotation_mark", '"'), *((c, c) for c in "retrying")]
        burst += [("quotation_mark", '"'), ("enter", "\r")]
        for key, char in burst:
            app.post_message(events.Key(key, char))
        await until(
            pilot, lambda: app.main.search.turn_seqs is not None and seq_at_cursor(app) == 10
        )
        assert (
            app.main.search.condition is not None
            and app.main.search.condition.text == 'phase == "retrying"'
        )
        assert seq_at_cursor(app) == 10
        assert app._typed_ahead is None  # nothing held back for the next prompt


async def test_a_condition_true_from_the_start_goes_to_prefix_0() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("j", "j")
        await ask(app, pilot, "not calls.call-002 exists")
        await until(pilot, lambda: app.main.at_initial)
        assert app.main.at_initial  # wrapped to the initial state, where it holds
        assert "initial state" in status(app)


async def test_a_condition_never_true_says_so_and_does_not_move() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("j", "j")
        await ask(app, pilot, 'phase == "succeeded"')
        await until(pilot, lambda: app.main.search.turn_seqs is not None)
        await pilot.pause()
        assert seq_at_cursor(app) == 3
        assert any('never: phase == "succeeded"' in m for m in said(app))
        assert ": never" in status(app)


async def test_a_bad_condition_is_explained_under_the_input() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await ask(app, pilot, "phase == retrying")
        assert isinstance(app.screen, GotoScreen)  # still open, to fix it
        error = app.screen.query_one("#goto-error", Static)
        assert error.has_class("-shown")
        shown = screen_text(app)
        assert "phase == retrying" in shown and "column 10:" in shown
        lines = shown.splitlines()
        at = next(i for i, ln in enumerate(lines) if re.search(r"│ +\^ +│", ln))
        assert lines[at].index("^") == lines[at - 1].index("phase == retrying") + 9
        app.screen.query_one(Input).value = "10"
        await pilot.press("enter")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 10


async def test_watching_a_path_lists_its_changes_and_marks_the_timeline() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await ask(app, pilot, "14")
        await settle(app, pilot)
        await pilot.press("tab")  # the state pane: its cursor starts on the first change
        state = app.query_one(StatePane)
        assert app.focused is state
        assert state.path_at_cursor() == ("calls", "call-003", "status")
        await pilot.press("w")
        pane = app.query_one(WatchPane)
        await until(pilot, lambda: app.main.watchlist.done)
        await pilot.pause()
        assert pane.display and app.focused is pane
        assert [c.seq for c in app.main.watchlist.changes] == [13, 14]
        assert app.main.timeline.marks == frozenset({12, 13})
        shown = screen_text(app)
        assert "watch calls.call-003.status · 2 changes" in shown
        assert '13  model_proposed  absent → "proposed"' in shown
        assert '14  tool_allowed  "proposed" → "allowed"' in shown
        assert "• 13" in shown  # the gutter mark of a change not under the cursor
        assert "watching calls.call-003.status: 2 changes" in status(app)
        await pilot.press("up", "enter")  # the change at 13
        await settle(app, pilot)
        assert seq_at_cursor(app) == 13
        await pilot.press("escape")
        await pilot.pause()
        assert app.main.watchlist.watched is None and not pane.display
        assert app.main.timeline.marks == frozenset()
        assert "watch" not in status(app)


async def test_w_on_a_line_with_no_path_says_what_to_do() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("tab", "home", "w")
        await pilot.pause()
        assert app.main.watchlist.watched is None
        assert any("cursor on a value or a change line" in m for m in said(app))


async def test_watch_in_the_full_state_tree() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await ask(app, pilot, "12")
        await settle(app, pilot)
        await pilot.press("d", "tab")
        state = app.query_one(StatePane)
        for _ in range(40):  # down to the "attempt" line of the tree
            if state.path_at_cursor() == ("attempt",):
                break
            await pilot.press("down")
        assert state.path_at_cursor() == ("attempt",)
        await pilot.press("w")
        await until(pilot, lambda: app.main.watchlist.done)
        assert [(c.seq, c.old, c.new) for c in app.main.watchlist.changes] == [
            (2, 0, 1),
            (12, 1, 2),
        ]


def test_snapshot_watching_a_path(snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, ReplayApp)
        await settle(app, pilot)
        await pilot.press("colon", "1", "4", "enter")
        await settle(app, pilot)
        await pilot.press("tab", "w")
        await until(pilot, lambda: app.main.watchlist.done)
        await pilot.pause()

    assert snap_compare(make_app(DEMO), terminal_size=(140, 40), run_before=run)


async def test_what_each_event_changed_is_made_behind_the_pass() -> None:
    """The app's pass records no patches for the built-in rules: once the run
    is proved, the patch log the questions across time read is made behind
    it, without being asked, and holds every event."""
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        history = app.main.replay.history
        assert history is not None and history.made_again
        await until(pilot, lambda: len(history.patches) == app.main.replay.valid)
