"""Messages up from the workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay_tui.ui.launch import make_app
from replay_tui.ui.messages import Progress
from replay_tui.ui.screens.run import ReplayScreen
from tests.conftest import SAMPLES
from tests.helpers.screen import settle


async def test_queued_progress_of_a_replay_is_handled_once_not_per_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A big run posts progress every 2,048 lines: those still queued when
    the screen gets to them collapse into the newest."""
    app = make_app(SAMPLES / "demo-001")
    seen: list[float] = []
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        handler = ReplayScreen.on_progress

        def counting(self: ReplayScreen, message: Progress) -> None:
            seen.append(message.fraction)
            handler(self, message)

        monkeypatch.setattr(ReplayScreen, "on_progress", counting)
        for i in range(1, 51):
            app.main.post_message(Progress(app.replay, i, i / 50))
        await pilot.pause()  # every message queued is handled
    assert seen and seen[-1] == 1.0 and len(seen) < 50


def test_progress_of_another_replay_is_not_replaced(tmp_path: Path) -> None:
    a = make_app(SAMPLES / "demo-001").replay
    b = make_app(SAMPLES / "refund-180").replay
    assert Progress(a, 2, 0.2).can_replace(Progress(a, 1, 0.1))
    assert not Progress(a, 2, 0.2).can_replace(Progress(b, 1, 0.1))
    a.close()
    b.close()
