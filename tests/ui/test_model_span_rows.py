"""A trace's timeline says each model span's tokens (in/out): first on its
end's row, and first after its status on its row in the span tree (``v``)."""

from __future__ import annotations

from replay_tui.ui.launch import make_app
from tests.conftest import SAMPLES
from tests.helpers.screen import screen_text, settle

TRACE = SAMPLES / "traces" / "agentevals--adk_py-v2_span_only-S3.json"


def _rows(screen: str) -> list[str]:
    return [line.split("┃")[1] for line in screen.splitlines() if line.startswith("┃")]


async def test_a_model_span_row_shows_its_tokens() -> None:
    app = make_app(TRACE)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        rows = _rows(screen_text(app))
        assert "span_end         10 in/8 out · generate_content gemini-2.5" in rows[5]
        assert "span_end         10 in/8 out · call_llm ok 0.3 ms" in rows[6]
        assert "in/" not in rows[3]  # its start: its usage is held back until it ends
        assert "in/" not in rows[8]  # a workflow's span uses no tokens
        await pilot.press("v")
        await settle(app, pilot)
        tree = _rows(screen_text(app))
        models = [row for row in tree if "generate_content" in row]
        assert [row.split(" ok  ")[1].split(" · ")[0] for row in models] == [
            "10 in/8 out",
            "30 in/5 out",
            "50 in/9 out",
            "70 in/4 out",
        ]
        assert all("in/" not in row for row in tree if "invoke_" in row)


async def test_the_tokens_fit_an_80_column_terminal() -> None:
    app = make_app(TRACE)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("v")
        await settle(app, pilot)
        rows = _rows(screen_text(app))
        models = [row for row in rows if "generate_conte" in row or "call_llm" in row]
        assert len(models) == 3 and all(" ok  " in row for row in models)
        assert [row.split(" ok  ")[1].split(" · ")[0] for row in models] == [
            "10 in/8 out",
            "10 in/8 out",
            "30 in/5 out",
        ]
