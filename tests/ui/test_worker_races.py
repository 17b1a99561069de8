"""Answers from thread workers that arrive after the UI thread moved on:
each test holds a worker's answer until it is posted, lets the UI do what
makes it stale while the answer waits in the queue, then lets it through."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from replay_tui.questions.across import iter_path_changes
from replay_tui.ui.launch import make_app
from replay_tui.ui.messages import WatchFound
from tests.conftest import DEMO
from tests.helpers.screen import settle
from tests.helpers.waiting import until


async def test_watching_a_path_again_does_not_take_the_last_scan_s_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``w`` on a path while its scan's answer is on its way (watched again:
    Esc then ``w``, or ``w`` twice): the pane lists each change once, not the
    old scan's changes and then the new scan's."""
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        pane = app.main.watchlist
        entered, release = threading.Event(), threading.Event()
        done = threading.Semaphore(0)
        post = pane.post_message
        held = [True]

        def slow_scan(*args: Any) -> Any:
            if held.pop() if held else False:
                entered.set()
                release.wait(30)
            return list(iter_path_changes(*args))

        def post_and_tell(message: Any) -> bool:
            sent = post(message)
            if isinstance(message, WatchFound) and message.done:
                done.release()
            return sent

        monkeypatch.setattr("replay_tui.ui.widgets.watch_pane.iter_path_changes", slow_scan)
        monkeypatch.setattr(pane, "post_message", post_and_tell)
        app.main.side.start_watch(("phase",))
        await until(pilot, entered.is_set)
        release.set()
        assert done.acquire(timeout=30)  # the first scan's answer is on its way
        app.main.side.start_watch(("phase",))  # watched again
        await until(pilot, lambda: done.acquire(blocking=False))
        await until(pilot, lambda: pane.done)
        await pilot.pause()
        seqs = [c.seq for c in pane.changes]
        assert seqs and seqs == sorted(set(seqs))
