"""The app following a run as it is written, and re-running edited rules."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

from replay_tui.engine.replay import Replay
from replay_tui.engine.report import build_report, compare_reports
from replay_tui.formats.run import locate_run
from replay_tui.reducers import load_reducer
from replay_tui.ui.app import Progress, ReplayApp
from replay_tui.ui.launch import make_app
from tests.conftest import DEMO
from tests.helpers.runs import live_run, source_run, write_edited_rules
from tests.helpers.screen import notices, pane_text, status
from tests.helpers.waiting import until


async def test_follow_a_growing_run_to_the_same_verdict_as_check(tmp_path: Path) -> None:
    src, lines = source_run(tmp_path)
    live = tmp_path / "live"
    live.mkdir()
    shutil.copy(src / "budget.json", live)
    app = make_app(live, follow=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: "waiting for events.jsonl" in status(app))
        assert "LIVE" in status(app)
        rng = random.Random(1)
        data = b"".join(lines)
        pos = 0
        late: list[str] = []
        (live / "receipts").mkdir()
        with open(live / "events.jsonl", "ab") as out:
            while pos < len(data):
                piece = data[pos : pos + rng.randint(20, 900)]
                out.write(piece)
                out.flush()
                pos += len(piece)
                late.extend(
                    p.name
                    for p in (src / "receipts").iterdir()
                    if p.name[:-5].encode() in piece and p.name not in late
                )
                if len(late) > 2:  # receipts arrive two calls late
                    name = late.pop(0)
                    shutil.copy(src / "receipts" / name, live / "receipts" / name)
                await pilot.pause(0.03)  # not a wait: the writer's pace
        for name in late:
            shutil.copy(src / "receipts" / name, live / "receipts" / name)
        for p in (src / "receipts").iterdir():
            if not (live / "receipts" / p.name).exists():
                shutil.copy(p, live / "receipts" / p.name)
        await until(pilot, lambda: app.replay.valid == len(lines) and app.replay.pending is None)
        # the cursor rode the tail all along (the screen may lag the engine a moment)
        await until(pilot, lambda: app.main.timeline.cursor_index == len(lines) - 1)
        assert app.main.riding
        await pilot.press("F")  # stop following: judged as complete
        await until(pilot, lambda: app.replay.finished)
        followed = build_report(app.replay)
    fresh = Replay(locate_run(live), load_reducer(None)).verify()
    assert compare_reports(followed, build_report(fresh)) == []  # (how each was made aside)
    assert fresh.error is None and fresh.valid == len(lines)


async def test_leaving_the_tail_shows_new_events_and_end_returns(tmp_path: Path) -> None:
    src, lines = source_run(tmp_path, 60)
    live = tmp_path / "live"
    shutil.copytree(src, live)
    (live / "events.jsonl").write_bytes(b"".join(lines[:30]))
    app = make_app(live, follow=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.valid == 30)
        await until(pilot, lambda: app.main.timeline.cursor_index == 29)
        await pilot.press("k", "k")
        assert not app.main.riding
        with open(live / "events.jsonl", "ab") as out:
            out.write(b"".join(lines[30:40]))
        await until(pilot, lambda: app.replay.valid == 40)
        await until(pilot, lambda: "+10 new events" in status(app))
        assert app.main.timeline.cursor_index == 27  # the user's row stays put
        await pilot.press("end")
        assert app.main.riding and app.main.timeline.cursor_index == 39
        with open(live / "events.jsonl", "ab") as out:
            out.write(b"".join(lines[40:]))
        await until(pilot, lambda: app.main.timeline.cursor_index == 59)


async def test_rewritten_ledger_shows_a_banner_and_reloads(tmp_path: Path) -> None:
    src, lines = source_run(tmp_path, 40)
    live = tmp_path / "live"
    shutil.copytree(src, live)
    app = make_app(live, follow=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.valid == 40)
        first = app.replay
        (live / "events.jsonl").write_bytes(b"".join(lines[:20]))  # shrinks
        await until(pilot, lambda: app.replay is not first and app.replay.valid == 20)
        await until(pilot, lambda: "ledger rewritten at byte" in notices(app))
        assert "the file shrank" in notices(app) and "read again, 20 valid events" in notices(app)
        assert "history changed" not in status(app)  # the banner goes once it is read again
        # a new file at the path (new inode) holding another history is a rewrite too,
        # named at its first differing byte
        other = bytearray(b"".join(lines[:25]))
        where = len(lines[0]) + 30  # inside line 2
        other[where] = ord("X") if other[where] != ord("X") else ord("Y")
        tmp = live / "events.new"
        tmp.write_bytes(bytes(other))
        os.replace(tmp, live / "events.jsonl")
        second = app.replay
        await until(pilot, lambda: app.replay is not second)
        await until(pilot, lambda: f"ledger rewritten at byte {where}" in notices(app))


async def test_an_atomic_replace_with_the_same_history_grown_is_an_append(
    tmp_path: Path,
) -> None:
    """Log shippers and rsync rename a temporary file over the ledger: the
    same history, grown, is read on, the cursor still riding the tail."""
    src, lines = source_run(tmp_path, 40)
    live = tmp_path / "live"
    shutil.copytree(src, live)
    (live / "events.jsonl").write_bytes(b"".join(lines[:10]))
    app = make_app(live, follow=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.valid == 10)
        await until(pilot, lambda: app.main.timeline.cursor_index == 9)
        first = app.replay
        tmp = live / "events.tmp"
        tmp.write_bytes(b"".join(lines[:12]))
        os.replace(tmp, live / "events.jsonl")
        await until(pilot, lambda: app.replay.valid == 12)
        assert app.replay is first  # not reloaded: nothing was rewritten
        assert "rewritten" not in status(app)
        await until(pilot, lambda: app.main.timeline.cursor_index == 11)
        assert app.main.riding


async def test_editing_the_rules_moves_the_difference_mark(tmp_path: Path) -> None:
    src, _ = source_run(tmp_path, 50)
    rules = tmp_path / "rules.py"
    write_edited_rules(rules, 10_000)
    app = make_app(src, follow=True, reducer=f"{rules}:REDUCER", watch_rules=True)
    assert isinstance(app, ReplayApp)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.valid == 50)  # the rules file is watched by now
        write_edited_rules(rules, 30)
        await until(pilot, lambda: "first difference at seq 30" in status(app))
        assert app.main.view.difference_index == 29
        assert "rules differ from here" in app.main.timeline._build(29, 1, 140).text
        write_edited_rules(rules, 12)
        await until(pilot, lambda: "first difference at seq 12" in status(app))
        assert app.main.view.difference_index == 11
        sha = app.replay.rules.rules_sha256[:12]
        assert sha in status(app)
        rules.write_text("this is not python(\n")
        await until(pilot, lambda: "rules failed to load" in status(app))
        assert app.main.view.difference_index == 11  # the last good rules stay


async def test_in_place_rewrite_in_the_middle_is_caught(tmp_path: Path) -> None:
    src, _lines = source_run(tmp_path, 40)
    live = tmp_path / "live"
    shutil.copytree(src, live)
    app = make_app(live, follow=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.valid == 40)
        first = app.replay
        data = bytearray((live / "events.jsonl").read_bytes())
        middle = len(data) // 2
        data[middle] = ord("X") if data[middle] != ord("X") else ord("Y")
        with open(live / "events.jsonl", "r+b") as fh:  # same inode, same size
            fh.write(bytes(data))
        await until(pilot, lambda: app.replay is not first)
        # named at the line that changed (the bytes before it are the same)
        changed = data[:middle].count(b"\n")  # lines before the edited one
        start = data[:middle].rfind(b"\n") + 1
        said = f"ledger rewritten at byte {start}: line {changed + 1} changed"
        await until(pilot, lambda: said in notices(app))
        assert f"read again, {changed} valid events, then " in notices(app)


async def test_a_key_pressed_as_rows_arrive_leaves_the_tail(tmp_path: Path) -> None:
    """The user's move wins even when the engine's progress is handled before
    the move's own message reaches the app: the cursor is not pulled back."""
    src, lines = source_run(tmp_path, n=60)
    live = tmp_path / "live"
    shutil.copytree(src, live)
    (live / "events.jsonl").write_bytes(b"".join(lines[:30]))
    app = make_app(live, follow=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.valid == 30 and app.main.timeline.cursor_index == 29)
        app.main.action_step(-1)  # 'k', and in the same turn the worker's progress
        app.main.post_message(Progress(app.replay, 30, 1.0))
        await pilot.pause()  # both handled
        assert app.main.timeline.cursor_index == 28 and not app.main.riding
        with open(live / "events.jsonl", "ab") as out:
            out.write(b"".join(lines[30:40]))
        await until(pilot, lambda: app.replay.valid == 40)
        await until(pilot, lambda: "+10 new events" in status(app))
        assert app.main.timeline.cursor_index == 28


async def test_a_receipt_that_arrives_refreshes_both_panes(tmp_path: Path) -> None:
    """Following demo-001 at line 5, line 6 (tool_finished) waits for its
    receipt; when the file is written, both panes show it, and it was never
    shown as a red 'missing' while it was awaited."""
    live = tmp_path / "live"
    live.mkdir()
    (live / "receipts").mkdir()
    lines = (DEMO / "events.jsonl").read_bytes().splitlines(keepends=True)
    (live / "events.jsonl").write_bytes(b"".join(lines[:5]))
    app = make_app(live, follow=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.valid == 5)
        with open(live / "events.jsonl", "ab") as out:
            out.write(lines[5])
        await until(pilot, lambda: app.replay.pending is not None)
        await until(pilot, lambda: app.main.timeline.cursor_index == 5)
        await until(pilot, lambda: "receipt pending" in pane_text(app, "state"))
        assert "missing" not in pane_text(app, "receipt")
        assert "receipt pending" in pane_text(app, "receipt")
        shutil.copy(DEMO / "receipts" / "call-001.json", live / "receipts" / "call-001.json")
        await until(pilot, lambda: app.replay.valid == 6)
        await until(pilot, lambda: "seq 6 · tool_finished" in pane_text(app, "state"))
        assert "matches receipt_sha256" in pane_text(app, "receipt")


async def test_a_watch_grows_with_a_followed_run(tmp_path: Path) -> None:
    """Watching a path while the run is written: its changes in the new
    events join the list and the gutter, scanned on from where it stopped."""
    from replay_tui.questions.across import path_changes
    from replay_tui.ui.widgets.watch_pane import WatchPane

    live, lines = live_run(tmp_path, 160, 7, 60)
    app = make_app(live, follow=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.valid == 60)
        app.main.side.start_watch(("spent", "tokens"))
        # the pane is shown by the screen, the scan ends in the pane: either may come first
        await until(pilot, lambda: app.main.watchlist.done and app.query_one(WatchPane).display)
        first = len(app.main.watchlist.changes)
        assert first
        with open(live / "events.jsonl", "ab") as out:
            out.write(b"".join(lines[60:]))
        await until(pilot, lambda: app.replay.valid == len(lines))
        watch = app.main.watchlist
        await until(  # the pane takes the last batch, then the timeline marks it
            pilot,
            lambda: (
                watch.done
                and watch.until == len(lines)
                and len(app.main.timeline.marks) == len(watch.changes)
            ),
        )
        whole = Replay(locate_run(live), load_reducer(None), history=True).verify()
        expected = [c.seq for c in path_changes(whole, ("spent", "tokens"), whole.valid)]
        whole.close()
        assert [c.seq for c in app.main.watchlist.changes] == expected and len(expected) > first
        assert app.main.timeline.marks == frozenset(s - 1 for s in expected)
