"""``R`` with ``--graph module:attr``: the app reads the edited graph's
module again (and on its own when the file is saved, with the rules
watched), so a developer changing a channel's reducer sees the verdict move."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langgraph.graph")

from replay_tui.reducers.langgraph.graph import GRAPH_SPEC
from replay_tui.ui.app import ReplayApp
from replay_tui.ui.launch import make_app
from tests.helpers.langgraph_graph import CUSTOM, graph_module, graph_of
from tests.helpers.screen import status
from tests.helpers.waiting import until

#: The custom-reducer thread's channels as its graph has them.
RIGHT = """    scores: Annotated[dict[str, int], merge_max]
    tags: Annotated[set[str], union]
    log: Annotated[list[str], operator.add]
    total: Annotated[int, operator.add]
    last: str"""
#: The same, with a reducer the thread does not follow.
WRONG = RIGHT.replace("last: str", "last: Annotated[str, operator.add]")


@pytest.mark.parametrize("watched", [False, True], ids=["R", "saved"])
async def test_an_edited_graph_is_read_again(here: Path, watched: bool) -> None:
    mod = graph_module(here, graph_of(WRONG))
    source = here / f"{mod}.py"
    app = make_app(CUSTOM, reducer=f"{GRAPH_SPEC}{mod}:graph", watch_rules=watched)
    assert isinstance(app, ReplayApp)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.finished)
        assert app.replay.error is not None
        assert "operator.add (from the graph)" in app.replay.error.message
        before = app.replay.rules.rules_sha256
        # a new size too: an import may trust bytecode cached in the same second
        source.write_text(graph_of(RIGHT) + "# fixed\n", encoding="utf-8")
        if not watched:
            await pilot.press("R")
        await until(pilot, lambda: app.replay.rules.rules_sha256 != before)
        await until(pilot, lambda: app.replay.finished)
        assert app.replay.error is None
        assert app.replay.rules.rules_sha256[:12] in status(app)
