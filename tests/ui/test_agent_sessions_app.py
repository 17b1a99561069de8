"""Agent sessions in the app: a Claude Code sub-agent's transcript opens
from its Task call and Esc comes back; a session is followed as it grows."""

from __future__ import annotations

import shutil
from pathlib import Path

from replay_tui.ui.launch import make_app
from replay_tui.ui.screens.run import ReplayScreen
from tests.conftest import ROOT, TESTS
from tests.helpers.screen import compared, pane_text, said, seq_at_cursor, settle, status
from tests.helpers.waiting import until

FIXTURES = TESTS / "fixtures" / "agent-sessions" / "claude-code"
SUBAGENTS = FIXTURES / "codemie--incremental-subagents"


def _session_with_subagent(tmp_path: Path) -> Path:
    shutil.copy(SUBAGENTS / "turn-2.jsonl", tmp_path / "turn-2.jsonl")
    shutil.copytree(SUBAGENTS / "turn-2", tmp_path / "turn-2")
    return tmp_path / "turn-2.jsonl"


async def test_t_opens_the_sub_agent_transcript_and_esc_comes_back(tmp_path: Path) -> None:
    session = _session_with_subagent(tmp_path)
    app = make_app(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        row = app.main.view.row(5)  # seq 6: the Task call
        assert "Task" in row.summary and "agent-a485154.jsonl (t opens it)" in row.summary
        await pilot.press("colon", "6", "enter")
        await settle(app, pilot)
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.nested)
        sub = app.screen
        assert isinstance(sub, ReplayScreen)
        await until(pilot, lambda: not sub.validating)
        assert sub.replay.paths.events.name == "agent-a485154.jsonl"
        assert "verified" in sub.status_text().plain and "seq 1 of 45" in sub.status_text().plain
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.main)
        assert seq_at_cursor(app) == 6 and "seq 6 of 50" in status(app)


async def test_t_elsewhere_says_what_it_opens(tmp_path: Path) -> None:
    app = make_app(_session_with_subagent(tmp_path))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("t")  # seq 1: a summary record, no sub-agent
        await pilot.pause()
        assert app.screen is app.main
        assert any("sub-agent's transcript" in m for m in said(app))


async def test_a_session_is_followed_as_the_agent_writes(tmp_path: Path) -> None:
    """Half a record waits; the tail is ridden; the new call shows in the state."""
    source = (FIXTURES / "codemie--incremental-simple" / "turn-2.jsonl").read_bytes()
    lines = source.splitlines(keepends=True)
    session = tmp_path / "live.jsonl"
    session.write_bytes(b"".join(lines[:-3]))
    app = make_app(session, follow=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.valid == len(lines) - 3)
        assert "LIVE" in status(app)
        with session.open("ab") as out:
            out.write(lines[-3] + lines[-2][:20])  # one whole record, half of the next
        await until(pilot, lambda: app.replay.valid == len(lines) - 2)
        assert "error" not in status(app)
        with session.open("ab") as out:
            out.write(lines[-2][20:] + lines[-1])
        await until(pilot, lambda: app.replay.valid == len(lines))
        await until(pilot, lambda: seq_at_cursor(app) == len(lines))  # riding the tail
        assert "error" not in status(app)
        assert pane_text(app, "state")


SAMPLES = ROOT / "sample_runs" / "agent-sessions"


def _stat(path: Path) -> tuple[bytes, int, int]:
    st = path.stat()
    return path.read_bytes(), st.st_mode, st.st_mtime_ns


async def test_the_app_leaves_a_session_as_it_was_and_its_features_work(tmp_path: Path) -> None:
    """Bookmarks, a link, a filter, a watch and compare mode on a session;
    the file is byte-, mode- and mtime-identical after."""
    session = tmp_path / "claude-code-error.jsonl"
    shutil.copy2(SAMPLES / "claude-code-error.jsonl", session)
    before = _stat(session)
    app = make_app(session, at=16, against=SAMPLES / "claude-code-short.jsonl")
    async with app.run_test(size=(140, 40)) as pilot:
        await compared(app, pilot)  # at seq 16, its state and B's drawn
        assert seq_at_cursor(app) == 16
        assert "error" in pane_text(app, "state") and "vs" in status(app)
        await pilot.press("b")  # bookmarks live in the state directory, never beside the file
        await until(pilot, lambda: 15 in app.main.timeline.bookmarks)
        assert app.main.view.link(app.main.cursor_seq()) == f"{session}@16"
        await pilot.press("escape")  # out of compare mode
        await pilot.press("slash", *"Bash", "enter")
        await until(pilot, lambda: app.main.search.matches is not None)
        assert list(app.main.search.matches) == [14, 24]  # the two Bash calls: seq 15 and 25
    assert _stat(session) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["claude-code-error.jsonl"]


BROKEN = ROOT / "sample_runs" / "agent-sessions" / "claude-code-broken-chain.jsonl"


async def test_m_shows_only_what_a_resume_loads_and_the_break_explains_itself() -> None:
    """The sample's second prompt (line 30) names a parent never written:
    from the end, m shows the records claude --resume walks back to it, and
    the break's row says what it costs; m again shows every row."""
    app = make_app(BROKEN)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("end")
        await settle(app, pilot)
        await pilot.press("m")
        await until(pilot, lambda: app.main.search.matches is not None)
        shown = list(app.main.search.matches or [])
        chain = app.replay.ledger.mapping.chain  # type: ignore[union-attr]
        walked = chain.walk(chain.last_record(app.replay.valid))
        assert [i + 1 for i in shown] == walked and walked[0] == 30
        assert "filter 'resume from line" in status(app) and f"{len(walked)} rows" in status(app)
        await pilot.press("m")
        await until(pilot, lambda: not app.main.search.filter_text)
        await pilot.press("colon", "3", "0", "enter")
        await settle(app, pilot)
        assert "broken_chain" in status(app)
        assert "the 26 records before it drop out" in pane_text(app, "state")


async def test_the_gutter_rails_the_records_a_resume_loads_where_it_drops_some() -> None:
    """Unfiltered, the rows claude --resume from the last record loads carry
    a rail in the gutter (lines 30..51, the walk back to the break), the
    rows it drops none; a session whose resume loads every record has no
    rail at all."""
    app = make_app(BROKEN)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        tl = app.main.timeline
        chain = app.replay.ledger.mapping.chain  # type: ignore[union-attr]
        walked = set(chain.walk(chain.last_record(app.replay.valid)))
        for index in range(1, app.main.view.row_count()):  # row 0 holds the cursor
            gutter = tl._build(index, 1, 80).text[0]
            if index + 1 == 30:  # the break: its warning sign, on the rail
                assert gutter == "!"
            else:
                assert (gutter == "│") == (index + 1 in walked), index + 1
        assert min(walked) == 30 and len(walked) == 21
    whole = make_app(BROKEN.parent / "claude-code-short.jsonl")
    async with whole.run_test(size=(140, 40)) as pilot:
        await settle(whole, pilot)
        rows = range(1, whole.main.view.row_count())
        assert not any(whole.main.timeline._build(i, 1, 80).text[0] == "│" for i in rows)


async def test_m_elsewhere_says_where_it_works() -> None:
    app = make_app(ROOT / "sample_runs" / "demo-001")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("m")
        await pilot.pause()
        assert not app.main.search.filter_text
        assert any("in a Claude Code session" in m for m in said(app))


async def test_t_at_a_forked_rollout_opens_the_one_it_was_forked_from(tmp_path: Path) -> None:
    """A Codex rollout forked from another names it in session_meta
    (forked_from_id): t there opens that rollout, found in the same store."""
    import orjson

    source = next((FIXTURES.parent / "codex").glob("*.jsonl"))
    day = tmp_path / "sessions" / "2026" / "05" / "11"
    day.mkdir(parents=True)
    parent = day / source.name.removeprefix("codemie--")  # as Codex names it
    shutil.copyfile(source, parent)
    lines = source.read_bytes().splitlines()
    meta = orjson.loads(lines[0])
    parent_id = meta["payload"]["id"]
    meta["payload"]["id"] = "019e9999-0000-7000-8000-000000000001"
    meta["payload"]["forked_from_id"] = parent_id
    fork = day / "rollout-2026-05-12T09-00-00-019e9999-0000-7000-8000-000000000001.jsonl"
    fork.write_bytes(b"\n".join([orjson.dumps(meta), *lines[1:]]) + b"\n")
    app = make_app(fork)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        assert seq_at_cursor(app) == 1  # session_meta
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.nested)
        nested = app.screen
        assert isinstance(nested, ReplayScreen)
        assert nested.replay.paths.events == parent
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.main)


async def test_t_at_a_spawn_agent_call_opens_the_child_thread_s_rollout(tmp_path: Path) -> None:
    """Codex writes a spawned agent's thread to a rollout of its own; the
    spawn_agent output names it (``{"agent_id": <thread id>}``): its row
    says so, and t there opens that rollout from the same store."""
    import orjson

    source = next((FIXTURES.parent / "codex").glob("*.jsonl"))
    day = tmp_path / "sessions" / "2026" / "05" / "11"
    day.mkdir(parents=True)
    lines = source.read_bytes().splitlines()
    child_id = "019e9999-0000-7000-8000-0000000000c1"
    meta = orjson.loads(lines[0])
    meta["payload"]["id"] = child_id
    child = day / f"rollout-2026-05-11T09-00-00-{child_id}.jsonl"
    child.write_bytes(b"\n".join([orjson.dumps(meta), *lines[1:]]) + b"\n")
    at = lines[8]  # a function_call: the spawn goes in after it, answered at once
    stamp = orjson.loads(at)["timestamp"]
    call = {
        "timestamp": stamp,
        "type": "response_item",
        "payload": {
            "type": "function_call",
            "name": "spawn_agent",
            "call_id": "call_spawn1",
            "arguments": orjson.dumps(
                {"message": "review the diff", "agent_type": "explorer"}
            ).decode(),
        },
    }
    output = {"timestamp": stamp, "type": "response_item", "payload": {
        "type": "function_call_output", "call_id": "call_spawn1",
        "output": orjson.dumps({"agent_id": child_id, "nickname": "Ada"}).decode()}}  # fmt: skip
    parent = day / "rollout-2026-05-11T08-00-00-019e9999-0000-7000-8000-0000000000p1.jsonl"
    parent.write_bytes(
        b"\n".join([*lines[:8], orjson.dumps(call), orjson.dumps(output), *lines[8:]]) + b"\n"
    )
    app = make_app(parent)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        agent = app.replay.final_state()["agents"]["call_spawn1"]
        assert (agent["agent_id"], agent["nickname"], agent["status"]) == (child_id, "Ada", "ok")
        assert f"sub-agent transcript {child.name}" in app.main.view.row(8).summary
        app.main.go_to_seq(9)
        await settle(app, pilot)
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.nested)
        nested = app.screen
        assert isinstance(nested, ReplayScreen) and nested.replay.paths.events == child
        assert nested.replay.reducer.name == "codex"
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.main)


def test_a_sub_agent_s_meta_file_is_said_on_its_task_row(tmp_path: Path) -> None:
    """Claude Code 2.x writes agent-<id>.meta.json beside a sub-agent's
    transcript: its scalar fields are said on the Task call's row."""
    from replay_tui.engine.open import open_replay
    from replay_tui.views.runview import RunView

    session = _session_with_subagent(tmp_path)
    meta = tmp_path / "turn-2" / "subagents" / "agent-a485154.meta.json"
    meta.write_text('{"agentType": "Explore", "model": "claude-haiku-4-5", "tools": ["Read"]}')
    replay, _ = open_replay(str(session), history=True)
    replay.verify()
    summary = RunView(replay).row(5).summary
    assert "agent-a485154.jsonl (agentType=Explore model=claude-haiku-4-5) (t opens it)" in summary
    replay.close()


def test_an_archived_fork_finds_its_parent_in_the_sessions(tmp_path: Path) -> None:
    from replay_tui.views.subagents import rollout_of

    day = tmp_path / "sessions" / "2026" / "05" / "11"
    day.mkdir(parents=True)
    parent = day / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    parent.write_text("{}\n")
    archive = tmp_path / "archived_sessions"
    archive.mkdir()
    fork = archive / "rollout-2026-05-12T09-00-00-019e9999-0000-7000-8000-000000000001.jsonl"
    fork.write_text("{}\n")
    assert rollout_of(fork, "019e1625-789d-76c0-80ab-3724b5ddb799") == parent
    outside = tmp_path / "rollout-x-019e9999.jsonl"  # in no store: nothing searched
    outside.write_text("{}\n")
    assert rollout_of(outside, "019e1625-789d-76c0-80ab-3724b5ddb799") is None
