"""The state pane on the Line API: a big state is drawn a screen at a time,
containers open and close from the keyboard, the change stays in view."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from replay_tui.synth.runs import write_agent_run
from replay_tui.ui.launch import make_app
from replay_tui.ui.render.json_tree import JsonTree
from replay_tui.ui.widgets.state_pane import StatePane
from tests.helpers.screen import screen_text, settle


@pytest.fixture(scope="module")
def big_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("big") / "run"
    write_agent_run(run, 2400, seed=5)  # about 300 calls
    return run


def _a_tool_finished(run: Path) -> str:
    """The seq of a tool_finished late in the run (it changes one call)."""
    lines = (run / "events.jsonl").read_bytes().splitlines()
    for raw in reversed(lines[:2000]):
        event = orjson.loads(raw)
        if event["kind"] == "tool_finished":
            return str(event["seq"])
    raise AssertionError("no tool_finished")


async def test_full_state_of_a_big_run_draws_only_the_screen(
    big_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[int] = []
    line = JsonTree.line

    def counting(self: JsonTree, y: int):  # type: ignore[no-untyped-def]
        drawn.append(y)
        return line(self, y)

    monkeypatch.setattr(JsonTree, "line", counting)
    app = make_app(big_run)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        seq = _a_tool_finished(big_run)
        await pilot.press("colon", *seq, "enter")
        await settle(app, pilot)
        drawn.clear()
        await pilot.press("d")
        await settle(app, pilot)
        pane = app.query_one(StatePane)
        tree = pane._tree
        assert tree is not None
        assert len(tree.value["calls"]) > 200
        assert 0 < len(drawn) <= 3 * 40  # a screen's worth, not the state's
        shown = screen_text(app)
        # the changed call is open and marked; the others are one line each
        assert "●" in shown
        assert "{…}, 8 keys" in pane.render_text()  # closed calls say what they hold
        assert f"seq {seq}" in pane.render_text()


async def test_tab_focuses_the_state_pane_and_enter_opens_a_call(big_run: Path) -> None:
    app = make_app(big_run)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        seq = _a_tool_finished(big_run)
        await pilot.press("colon", *seq, "enter", "d")
        await settle(app, pilot)
        await pilot.press("tab")
        await settle(app, pilot)
        pane = app.query_one(StatePane)
        assert pane.has_focus
        tree = pane._tree
        assert tree is not None
        # put the cursor on a closed call and open it
        first_call = next(iter(tree.value["calls"]))
        row = tree.line_of(("calls", first_call))
        assert row is not None
        pane.cursor = len(pane._head_rows) + row
        before = len(tree)
        await pilot.press("enter")
        await settle(app, pilot)
        assert pane._tree is not None and len(pane._tree) > before
        assert ("calls", first_call) in pane.opened
        # it stays open while stepping: the person's choice sticks
        await pilot.press("j")
        await settle(app, pilot)
        assert app.main.timeline.cursor_index == int(seq)
        assert pane._tree is not None and pane._tree.is_open(
            ("calls", first_call), pane._tree.value["calls"][first_call], True
        )
        row = pane._tree.line_of(("calls", first_call))
        assert row is not None
        pane.cursor = len(pane._head_rows) + row
        await pilot.press("left")  # close it again
        await settle(app, pilot)
        assert ("calls", first_call) in pane.closed


def test_tree_lines_match_the_whole_text_for_a_small_state() -> None:
    from replay_tui.state.persistent import freeze
    from replay_tui.ui.render.json_text import json_text

    value = {"a": [1, {"b": None}], "c": {}, "d": "x\x1b[2J", "token": "sk-1"}
    tree = JsonTree(freeze(value))
    mine = "\n".join(tree.text(tree.line(y)).plain for y in range(len(tree)))
    assert mine == json_text(value).plain
    assert "\x1b" not in mine and "sk-1" not in mine


def test_the_view_of_a_line_not_indexed_yet_never_raises(tmp_path: Path) -> None:
    """A reloaded ledger is empty until read: a cursor left at line 0 must
    not crash the app (the view is made on the UI thread now)."""
    from replay_tui.engine.replay import Replay
    from replay_tui.formats.run import locate_run
    from replay_tui.reducers import load_reducer
    from replay_tui.views.runview import RunView

    write_agent_run(tmp_path / "run", 20, seed=1)
    replay = Replay(locate_run(tmp_path / "run"), load_reducer(None), history=True)
    view = RunView(replay).line_view(0)  # nothing read yet
    assert view.mode == "broken" and view.event is None
    replay.verify()
    assert RunView(replay).line_view(0).mode == "step"
    replay.close()


async def test_new_compare_lines_are_drawn_even_in_a_freed_lists_place() -> None:
    """B's lines are a new list each time B moves on ("being replayed", then its
    state). A list freed once drawn often gets its successor's address: the pane
    must draw the new one, not take it for the one it shows (in compare mode the
    pane said "B is being replayed…" for good, now and then)."""
    from rich.text import Text

    from tests.conftest import SAMPLES

    app = make_app(SAMPLES / "refund-180")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        pane = app.query_one(StatePane)
        view = app.main.line_view
        lines: list[Text] = []
        for i in range(40):
            said = Text(f"B says {i}")
            del lines  # the list drawn last is freed: the next one may take its place
            lines = [said]
            pane.show(view, full=False, reveal=False, expand=False, compare=lines)
            assert f"B says {i}" in pane.render_text()
