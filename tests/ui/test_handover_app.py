"""Handing a run over, in the app: RUN@SEQ links and bookmarks with notes."""

from __future__ import annotations

import os
import re
import shutil
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from replay_tui.cli.commands import split_link
from replay_tui.core.errors import CannotRun
from replay_tui.handover.bookmarks import Bookmarks
from replay_tui.ui.launch import make_app
from replay_tui.ui.messages import ViewReady
from tests.conftest import DEMO, SAMPLES
from tests.helpers.marks import bookmark
from tests.helpers.screen import said, screen_text, seq_at_cursor, settle, settled, status
from tests.helpers.waiting import until


def test_links_split_at_the_last_at_sign_unless_the_path_exists(tmp_path: Path) -> None:
    assert split_link(f"{DEMO}@10") == (str(DEMO), 10)
    assert split_link("runs/a@b@7") == ("runs/a@b", 7)
    assert split_link("runs/x@") == ("runs/x@", None)
    assert split_link(None) == (None, None)
    odd = tmp_path / "run@3"
    odd.mkdir()
    assert split_link(str(odd)) == (str(odd), None)  # a real folder named so
    # a run that exists with something after @ that is not a seq: said so, by name
    for bad in ("abc", "-3", "1.5"):
        with pytest.raises(CannotRun, match=rf"'{re.escape(bad)}' after @ is not a seq"):
            split_link(f"{DEMO}@{bad}")


async def test_a_link_opens_at_its_seq() -> None:
    app = make_app(DEMO, at=10)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: seq_at_cursor(app) == 10)
        assert seq_at_cursor(app) == 10
        assert app.main.view.link(app.main.cursor_seq()) == f"{DEMO}@10"
        await pilot.press("c")
        assert any(f"copied the link {DEMO}@10" in m for m in said(app))


async def test_a_link_past_the_end_opens_at_the_last_event_and_says_so() -> None:
    app = make_app(DEMO, at=99)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: seq_at_cursor(app) == 14)
        assert seq_at_cursor(app) == 14
        assert any("seq 99 is past the end of this run (14 events)" in m for m in said(app))


async def test_a_link_to_0_opens_at_the_initial_state() -> None:
    app = make_app(DEMO, at=0)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: app.main.at_initial)
        assert app.main.at_initial


async def test_prefix_0_is_not_replaced_by_a_row_loaded_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A row's view loaded off the UI thread, answered just as prefix 0 is
    entered (a link to 0 while the first row loads): the panes keep the
    initial state, not the row that was left (the answer was taken as still
    wanted, and a link to 0 opened at event 1 now and then)."""
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        screen, side = app.main, app.main.side
        entered, release, posted = threading.Event(), threading.Event(), threading.Event()
        line_view, post = screen.view.line_view, side.post_message

        def slow_line_view(index: int) -> Any:
            entered.set()
            release.wait(30)
            return line_view(index)

        def post_and_tell(message: Any) -> bool:
            done = post(message)
            if isinstance(message, ViewReady):
                posted.set()
            return done

        monkeypatch.setattr(screen.view, "line_view", slow_line_view)
        monkeypatch.setattr(side, "post_message", post_and_tell)
        side._slow = True  # this machine seemed slow: views are made off the UI thread
        await pilot.press("j")
        await until(pilot, entered.is_set)
        release.set()
        assert posted.wait(30)  # the row's answer is on its way, not yet handled
        screen.go_to_seq(0)
        await pilot.pause()
        await until(pilot, lambda: settled(screen))
        assert screen.at_initial and screen.line_view is not None
        assert screen.line_view.mode == "initial"
        assert "prefix 0" in screen_text(app)


async def test_a_link_before_an_error_is_not_pulled_to_it() -> None:
    app = make_app(SAMPLES / "broken-divergence", at=4)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)  # validated to the error: the cursor was not pulled there
        assert seq_at_cursor(app) == 4


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int, int]]:
    out = {}
    for path in sorted(folder.rglob("*")):
        st = path.stat()
        data = path.read_bytes() if path.is_file() else b""
        out[str(path.relative_to(folder))] = (data, stat.S_IMODE(st.st_mode), st.st_mtime_ns)
    st = folder.stat()
    out["."] = (b"", stat.S_IMODE(st.st_mode), st.st_mtime_ns)
    return out


async def test_bookmarks_survive_a_restart_and_never_touch_a_read_only_run(
    tmp_path: Path, _state_dir: Path
) -> None:
    run = tmp_path / "demo"
    shutil.copytree(DEMO, run)
    for path in [run, *run.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    before = _snapshot(run)
    try:
        app = make_app(run)
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(app, pilot)
            await until(pilot, lambda: app.main.marks.bookmarks is not None)
            await bookmark(app, pilot, 8)
            await bookmark(app, pilot, 12, "a second attempt with no check")
            await until(pilot, lambda: any(_state_dir.rglob("*.json")))
            assert app.main.timeline.bookmarks == frozenset({7, 11})
            assert "◆ a second attempt with no check" in status(app)
            assert "◆  8" in screen_text(app) or "◆ 8" in screen_text(app)
            titles = [c.title for c in app.get_system_commands(app.screen)]
            assert "◆ seq 12: a second attempt with no check" in titles
            await pilot.press("g", "B")  # from seq 1 to the first bookmark
            await settle(app, pilot)
            assert seq_at_cursor(app) == 8
            await pilot.press("B")
            await settle(app, pilot)
            assert seq_at_cursor(app) == 12
        assert _snapshot(run) == before  # bytes, modes and mtimes: untouched
        kept = Bookmarks.load(run / "events.jsonl")
        assert kept.marks == {8: "", 12: "a second attempt with no check"}
        assert not kept.earlier
        assert all(not str(p).startswith(str(run)) for p in _state_dir.rglob("*"))
        again = make_app(run)
        async with again.run_test(size=(140, 40)) as pilot:
            await settle(again, pilot)
            await until(pilot, lambda: again.main.marks.bookmarks is not None)
            await pilot.pause()
            assert again.main.timeline.bookmarks == frozenset({7, 11})
            await pilot.press("colon", "8", "enter")
            await settle(again, pilot)
            await pilot.press("b")  # off again
            await until(pilot, lambda: again.main.timeline.bookmarks == frozenset({11}))
    finally:
        for path in [run, *run.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)


async def test_a_changed_ledger_shows_its_old_bookmarks_as_earlier(tmp_path: Path) -> None:
    run = tmp_path / "demo"
    shutil.copytree(DEMO, run)
    marks = Bookmarks.load(run / "events.jsonl")
    marks.annotate(10, "tests failed here")
    marks.save()
    grown = Bookmarks.load(run / "events.jsonl")
    with open(run / "events.jsonl", "ab") as fh:  # appended: the same history, longer
        fh.write(b"")
    assert grown.marks == {10: "tests failed here"} and not grown.earlier
    data = (run / "events.jsonl").read_bytes().replace(b'"passed":false', b'"passed":true ')
    (run / "events.jsonl").write_bytes(data)  # rewritten: another history
    app = make_app(run)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: app.main.marks.bookmarks is not None)
        await pilot.pause()
        assert app.main.marks.bookmarks is not None
        assert app.main.marks.bookmarks.marks == {} and app.main.marks.bookmarks.earlier == {
            10: "tests failed here"
        }
        assert app.main.timeline.bookmarks == frozenset()  # not marked as if they were these events
        assert any("earlier version of this ledger" in m for m in said(app))
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "◇ seq 10: tests failed here" in titles


def test_bookmarks_follow_xdg_state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay_tui.core.state_dir import state_dir

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir() == tmp_path / "xdg" / "replay-tui"
    monkeypatch.delenv("XDG_STATE_HOME")
    assert state_dir() == Path.home() / ".local" / "state" / "replay-tui"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/ignored")  # the spec: absolute only
    assert state_dir() == Path.home() / ".local" / "state" / "replay-tui"
    assert os.environ["XDG_STATE_HOME"] == "relative/ignored"


async def test_x_writes_the_report_of_the_bookmarks_and_the_cursor_seq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _state_dir: Path
) -> None:
    run = tmp_path / "demo"
    shutil.copytree(DEMO, run)
    marks = Bookmarks.load(run / "events.jsonl")
    marks.annotate(8, "denied: rm -rf needs a human")
    marks.save()
    here = tmp_path / "tickets"
    here.mkdir()
    monkeypatch.chdir(here)
    app = make_app(run, at=10)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await until(
            pilot, lambda: app.main.marks.bookmarks is not None and seq_at_cursor(app) == 10
        )
        await pilot.press("X")
        await until(pilot, lambda: any(m.startswith("wrote ") for m in said(app)))
        (written,) = list(here.glob("demo-report-*.md"))
        assert any(f"wrote {written}" in m for m in said(app))
        text = written.read_text()
        assert "## Seq 8" in text and "denied: rm -rf needs a human" in text
        assert "## Seq 10" in text
        monkeypatch.chdir(run)  # inside the run folder: never there
        await pilot.press("X")
        await until(pilot, lambda: len([m for m in said(app) if m.startswith("wrote ")]) == 2)
        second = [m for m in said(app) if m.startswith("wrote ")][-1].removeprefix("wrote ")
        assert Path(second).parent == _state_dir / "replay-tui" / "reports"
        assert not list(run.glob("*report*"))
