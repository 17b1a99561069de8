"""The status line says what the calls cost up to the cursor, in a session
whose rules keep a cost; the first line, before any message, says nothing."""

from __future__ import annotations

from replay_tui.engine.open import open_replay
from replay_tui.reducers.pricing import money
from replay_tui.ui.launch import make_app
from tests.conftest import AGENT_SESSIONS
from tests.helpers.screen import settle

SESSION = AGENT_SESSIONS / "claude-code" / "viewer--fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"


async def test_the_status_line_shows_the_cost_at_the_cursor() -> None:
    replay, _ = open_replay(str(SESSION))
    replay.verify()
    totals = [replay.state_at(n)["cost"]["total"] for n in range(replay.valid + 1)]
    app = make_app(SESSION)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("end")
        await settle(app, pilot)
        assert f"cost {money(totals[-1])}" in app.main.status_text().plain
        middle = next(n for n, t in enumerate(totals) if t > 0 and t != totals[-1])
        await pilot.press("colon", *str(middle), "enter")
        await settle(app, pilot)
        assert f"cost {money(totals[middle])}" in app.main.status_text().plain
        await pilot.press("home")
        await settle(app, pilot)
        assert "cost $" not in app.main.status_text().plain
