"""Answers from thread workers that arrive after the UI thread moved on:
each test holds a worker's answer until it is posted, lets the UI do what
makes it stale while the answer waits in the queue, then lets it through."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from replay_tui.handover import bookmarks as bookmarks_module
from replay_tui.handover.bookmarks import Bookmarks
from replay_tui.questions.across import iter_path_changes
from replay_tui.questions.rules_diff import first_difference
from replay_tui.ui.app import ReplayApp
from replay_tui.ui.launch import make_app
from replay_tui.ui.messages import RulesFailed, RulesReloaded, WatchFound
from tests.conftest import DEMO
from tests.helpers.runs import source_run, write_edited_rules
from tests.helpers.screen import settle, status
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


def _held_rules_reload(
    monkeypatch: pytest.MonkeyPatch, reader: Any
) -> tuple[threading.Event, threading.Event, threading.Semaphore]:
    """The next rules reload waits in its worker until ``release`` is set
    (``entered`` says it got there); ``posted`` counts its answers sent."""
    entered, release, posted = threading.Event(), threading.Event(), threading.Semaphore(0)
    held = [True]
    post = reader.post_message

    def slow_difference(old: Any, new: Any) -> Any:
        if held.pop() if held else False:
            entered.set()
            release.wait(30)
        return first_difference(old, new)

    def post_and_tell(message: Any) -> bool:
        sent: bool = post(message)
        if isinstance(message, (RulesReloaded, RulesFailed)):
            posted.release()
        return sent

    monkeypatch.setattr("replay_tui.ui.features.run.controller.first_difference", slow_difference)
    monkeypatch.setattr(reader, "post_message", post_and_tell)
    return entered, release, posted


def _app_with_own_rules(tmp_path: Path) -> tuple[ReplayApp, Path]:
    """The app on a 40-event run with rules of one's own (reloadable), and their file."""
    src, _ = source_run(tmp_path, 40)
    rules = tmp_path / "rules.py"
    write_edited_rules(rules, 10_000)
    return make_app(src, reducer=f"{rules}:REDUCER"), rules


async def test_following_while_the_rules_reload_keeps_following(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``f`` pressed just as ``R``'s reload answers: the run is still
    followed with the new rules (the reload, made of the replay before
    ``f``, was swapped in over the followed one, and following stopped at
    its next read, new events never shown)."""
    app, rules = _app_with_own_rules(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen = app.main
        entered, release, posted = _held_rules_reload(monkeypatch, screen.reader)
        write_edited_rules(rules, 12)
        await pilot.press("R")
        await until(pilot, entered.is_set)
        release.set()
        assert posted.acquire(timeout=30)  # the reload's answer is on its way
        screen.action_follow()
        assert screen.following and screen.replay.following
        await until(pilot, lambda: "first difference" in status(app))
        await settle(app, pilot)
        assert "first difference at seq 12" in status(app)
        assert screen.following and screen.replay.following
        assert "LIVE" in status(app)


async def test_a_second_reload_as_the_first_answers_does_not_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``R`` again (or the rules file saved again) as the first reload
    answers: the rules are loaded, not "rules failed to load" (the second
    reload re-ran the replay the first one's answer closed)."""
    app, rules = _app_with_own_rules(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen, reader = app.main, app.main.reader
        first = screen.replay
        answering, answer = threading.Event(), threading.Event()
        entered, release = threading.Event(), threading.Event()
        calls = [0]
        post = reader.post_message

        def slow_difference(old: Any, new: Any) -> Any:
            calls[0] += 1
            if calls[0] == 2:  # the second reload: held once it replayed the run
                entered.set()
                release.wait(30)
            return first_difference(old, new)

        def held_post(message: Any) -> bool:
            if isinstance(message, RulesReloaded) and not answering.is_set():
                answering.set()  # the first reload's answer: held until told
                answer.wait(30)
            sent: bool = post(message)
            return sent

        monkeypatch.setattr(
            "replay_tui.ui.features.run.controller.first_difference", slow_difference
        )
        monkeypatch.setattr(reader, "post_message", held_post)
        write_edited_rules(rules, 12)
        await pilot.press("R")
        await until(pilot, answering.is_set)  # the first answers
        await pilot.press("R")  # the second begins
        await until(pilot, entered.is_set)
        answer.set()  # the first's answer taken: the replay it was made of is closed
        await until(pilot, lambda: screen.replay is not first)
        release.set()
        await until(pilot, lambda: calls[0] >= 2 and screen.session.up_to_date)
        await pilot.pause()
        await settle(app, pilot)
        assert "rules failed" not in status(app)  # said so, and kept the old rules
        assert screen.replay is not first and screen.replay.reducer.name == "edited"
        # the second reload is of the first one's replay: nothing more differs
        assert "same states and verdict as before" in status(app)


class _HeldFsync:
    """``os`` for the bookmarks module, whose first ``fsync`` (the first
    save's, its bookmarks already taken) waits until ``release`` is set;
    ``replaced`` counts the files put in place."""

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()
        self.replaced = threading.Semaphore(0)
        self._first = True

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def fsync(self, fd: int) -> None:
        if self._first:
            self._first = False
            self.entered.set()
            self.release.wait(30)
        os.fsync(fd)

    def replace(self, src: Any, dst: Any) -> None:
        os.replace(src, dst)
        self.replaced.release()


async def test_two_bookmarks_made_quickly_are_both_saved(monkeypatch: pytest.MonkeyPatch) -> None:
    """``b`` on one row then ``b`` on the next while the first save is still
    writing (a long ledger is hashed for it, a slow disk syncs it): both
    bookmarks are on disk the next time the run is opened (the first save,
    finishing last, put back the file with only its own bookmark)."""
    held = _HeldFsync()
    monkeypatch.setattr(bookmarks_module, "os", held)
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("b")  # seq 1: its save waits, seq 1 alone taken
        await until(pilot, held.entered.is_set)
        await pilot.press("j", "b")  # seq 2: saved at once
        await until(pilot, lambda: held.replaced.acquire(blocking=False))
        held.release.set()  # the first save goes on
        await until(
            pilot,
            lambda: not any(w.group == "bookmarks-save" and not w.is_finished for w in app.workers),
        )
        assert app.main.marks.bookmarks is not None
        assert sorted(app.main.marks.bookmarks.marks) == [1, 2]
    assert sorted(Bookmarks.load(DEMO / "events.jsonl").marks) == [1, 2]
