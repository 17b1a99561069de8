"""An Inspect AI log in the app: a list of its samples to pick from (id,
epoch, score, tokens, error), and a sample opened as a run."""

from __future__ import annotations

import argparse

import pytest

from replay_tui.cli.app import log_to_pick_from
from replay_tui.ui.launch import make_app
from replay_tui.ui.screens.samples import SamplesApp
from tests.conftest import TESTS
from tests.helpers.waiting import until

LOGS = TESTS / "fixtures" / "inspect-logs" / "generated"


def _rows(app: SamplesApp) -> list[list[str]]:
    table = app.table
    return [[cell.plain for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_the_list_shows_each_sample_and_picks_one() -> None:
    app = SamplesApp(LOGS / "failing.eval")
    async with app.run_test(size=(140, 20)) as pilot:
        await until(pilot, lambda: app.table.row_count == 2)
        rows = _rows(app)
        assert [r[:2] for r in rows] == [["boom", "1"], ["fine", "1"]]
        assert rows[0][4] == "RuntimeError('the solver fails on purpose')"
        assert rows[1][2] == "includes=C" and int(rows[1][3]) > 0
        where = str(app.query_one("#where").render())
        assert "failing.eval: 2 samples" in where and "1 with an error or limit" in where
        await pilot.press("slash", *"fine", "enter", "enter")
    assert app.return_value == "fine:1"


def test_a_log_of_several_samples_is_picked_from_one_of_one_is_not() -> None:
    def args(run: str) -> argparse.Namespace:
        return argparse.Namespace(run=run, follow=False, at=None, format="auto")

    assert log_to_pick_from(args(str(LOGS / "calculator.eval"))) == LOGS / "calculator.eval"
    assert log_to_pick_from(args(f"{LOGS / 'calculator.eval'}#single:2")) is None
    assert log_to_pick_from(args(str(LOGS / "helper.eval"))) is None
    assert log_to_pick_from(args(f"{LOGS / 'calculator.eval'}@3")) is None


@pytest.mark.parametrize("sample", ["parallel:2"])
async def test_a_sample_opens_in_the_app_with_its_link(sample: str) -> None:
    app = make_app(f"{LOGS / 'calculator.eval'}#{sample}")
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.finished)
        assert app.replay.error is None
        assert app.replay.paths.name == f"calculator.eval#{sample}"
        view = app.screen.view  # type: ignore[attr-defined]
        assert view.link(5) == f"{LOGS / 'calculator.eval'}#{sample}@5"
    app.replay.close()


async def test_a_tool_call_shows_its_result_in_the_inspector() -> None:
    """The divide call that raised ToolError: its arguments and error beside it."""
    app = make_app(f"{LOGS / 'calculator.eval'}#parallel:1")
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.finished)
        view = app.screen.view  # type: ignore[attr-defined]
        seq = next(
            i + 1
            for i in range(app.replay.valid)
            if app.replay.event(i).kind == "tool"
            and app.replay.event(i).payload.get("function") == "divide"
        )
        title, shown = view.records(app.replay.event(seq - 1), app.replay.valid)["record"]
        assert title.startswith("tool call divide")
        assert shown["arguments"] == {"x": 1, "y": 0}
        assert shown["error"]["message"] == "cannot divide by zero"
        model = next(i for i in range(app.replay.valid) if app.replay.event(i).kind == "model")
        title, shown = view.records(app.replay.event(model), app.replay.valid)["record"]
        assert title == "model call mockllm/model"
        assert [c["function"] for c in shown["tool_calls"]] == ["add", "add", "divide"]
        assert shown["usage"]["total_tokens"] > 0 and shown["input_messages"] == 1
    app.replay.close()
