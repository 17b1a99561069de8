"""``replay-tui sessions``: the Claude Code sessions and Codex rollouts in
their stores, listed (newest first), as JSON, filtered, cut; damaged files
listed with their problem; the list to pick from (Pilot); ``check`` on a
folder of sessions. Only copies of the fixture samples are read
(``agent_homes``); every test has empty stores otherwise (conftest)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from replay_tui.cli.commands import main
from replay_tui.engine.batch import expand_runs
from replay_tui.formats.session_stores import listing as session_stores
from replay_tui.formats.session_stores.listing import (
    LIVE_SECONDS,
    PROMPT_CHARS,
    describe,
    find_sessions,
    list_sessions,
    stores,
)
from replay_tui.reducers.claude_code import is_prompt
from replay_tui.ui.screens import picker as sessions_ui
from replay_tui.ui.screens.picker import SessionsApp, app_for_session, widths
from tests.conftest import AGENT_SESSIONS, AgentHomes
from tests.helpers.screen import status
from tests.helpers.waiting import until

#: The first prompt of each fixture, as the list shows it.
FIRST_PROMPTS = {
    "viewer--fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": "/orchestrator create TODO app by Next.js",
    "codemie--rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl": "show tools",
    "turn-2.jsonl": '@"solution-architect (agent)" analyze existing CLI command and create '
    "specification for adding missing CLI commands. follow best practices in CLI to add "
    "valuable commands",
    "viewer--5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": "/orchestrator @CLAUDE.md を最新の状態にアップデートしてください",
    "codemie--session-9eda1058.jsonl": "show tools and store response in file",
    "viewer--1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": "/init",
}
PROJECTS = {
    "viewer--fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": "/path/to/Demo",
    "codemie--rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl": "/Users/Sample_User/repos/codemie-ai/codemie-code",
    "turn-2.jsonl": "/Users/User/repo/codemie-ai/codemie-code",
    "viewer--5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": "/path/to/Demo",
    "codemie--session-9eda1058.jsonl": "/Users/user/repo",
    "viewer--1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": "/path/to/Demo",
}
FIELDS = {
    "path",
    "source",
    "store",
    "session_id",
    "project",
    "first_prompt",
    "size",
    "records",
    "modified",
    "mtime",
    "live",
    "problem",
}


def lines_in(path: Path) -> int:
    """Records counted independently: lines, a last one without its newline too."""
    data = path.read_bytes()
    return len(data.splitlines()) if b"\r" not in data else data.count(b"\n") + (data[-1:] != b"\n")


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    assert main(["sessions", "--json", *args]) == 0
    got = json.loads(capsys.readouterr().out)
    assert isinstance(got, list)
    return got


# -- the listing -------------------------------------------------------------------


def test_sessions_are_listed_newest_first_with_their_fields(agent_homes: AgentHomes) -> None:
    listing = list_sessions()
    got = listing.sessions
    assert [s.path for s in got] == [p for p, _ in agent_homes.sessions]
    assert listing.total == len(got) == 6
    assert listing.counts == {
        str(agent_homes.projects): 5,
        str(agent_homes.rollouts): 1,
        str(agent_homes.codex / "archived_sessions"): 0,
        str(stores("gemini")[0].path): 0,
    }
    for session, (path, fixture) in zip(got, agent_homes.sessions, strict=True):
        assert session.described and session.problem is None, session
        assert session.source == ("codex" if "rollout-" in path.name else "claude-code")
        assert session.first_prompt == FIRST_PROMPTS[fixture.name]
        assert session.project == PROJECTS[fixture.name]
        assert session.records == lines_in(path) == lines_in(fixture)
        assert session.size == path.stat().st_size
        assert session.mtime == path.stat().st_mtime
        assert session.live is False
        assert session.path.is_absolute()
    claude = [s for s in got if s.source == "claude-code"]
    assert [s.session_id for s in claude] == [s.path.stem for s in claude]
    codex = next(s for s in got if s.source == "codex")
    assert codex.session_id == "019e1625-789d-76c0-80ab-3724b5ddb799"  # session_meta's id


def test_sub_agent_transcripts_are_not_sessions_of_their_own(agent_homes: AgentHomes) -> None:
    listed = {s.path for s in find_sessions().sessions}
    assert agent_homes.subagents and all(p.is_file() for p in agent_homes.subagents)
    assert not listed & set(agent_homes.subagents)


def test_a_session_changed_just_now_is_live(agent_homes: AgentHomes) -> None:
    path = agent_homes.sessions[-1][0]
    path.touch()
    first = list_sessions().sessions[0]
    assert (first.path, first.live) == (path, True)
    later = time.time() + LIVE_SECONDS + 1
    assert find_sessions(now=later).sessions[0].live is False
    assert describe(first, now=later).live is False


def test_the_first_prompt_is_one_line_inert_and_cut(agent_homes: AgentHomes) -> None:
    folder = agent_homes.projects / "-tmp-x"
    folder.mkdir()
    prompt = "clear\x1b[2J the screen\nand\u202eflip " + "x" * 400
    records = [
        {"type": "summary", "summary": "s", "leafUuid": "u0"},
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "cwd": "/tmp/x",
         "isMeta": True, "message": {"role": "user", "content": "Caveat: not typed"}},
        {"type": "user", "uuid": "u2", "parentUuid": "u1", "sessionId": "s", "cwd": "/tmp/x",
         "message": {"role": "user", "content": "<command-name>/clear</command-name>\n"
                     "<command-args></command-args>"}},
        {"type": "user", "uuid": "u3", "parentUuid": "u2", "sessionId": "s", "cwd": "/tmp/x",
         "message": {"role": "user", "content": [{"type": "text", "text": prompt}]}},
    ]  # fmt: skip
    path = folder / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    got = describe(find_sessions().sessions[0])
    assert got.path == path and got.problem is None
    text = got.first_prompt
    assert text is not None and "\n" not in text and "\x1b" not in text and "\u202e" not in text
    assert text.startswith("clear\\e[2J the screen and\\u202eflip xxx")
    assert text.endswith(" chars)") and len(text) < PROMPT_CHARS + 20
    # a command without arguments is the first prompt only if nothing else was typed
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records[:3]))
    assert describe(got).first_prompt == "/clear"


def test_prompts_are_what_the_rules_count_as_turns() -> None:
    """The list's idea of a Claude Code prompt is the claude_code rules' (a
    copy, formats/ being below reducers/): the same records, in every sample."""
    for path in sorted((AGENT_SESSIONS / "claude-code").rglob("*.jsonl")):
        if "subagents" in path.parts:
            continue
        for raw in path.read_bytes().splitlines():
            rec = orjson.loads(raw)
            ours = session_stores._claude_code_prompt(rec)[0] is not None
            assert ours == is_prompt(rec, False), (path.name, raw[:200])


def test_records_are_counted_across_chunks(
    agent_homes: AgentHomes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_stores, "COUNT_CHUNK", 7)
    monkeypatch.setattr(session_stores, "HEAD_BYTES", 100)
    for session in list_sessions().sessions:
        assert session.records == lines_in(session.path)
    fd = os.open(agent_homes.sessions[0][0], os.O_RDONLY)
    try:
        assert session_stores.count_records(fd, 0) == (0, True)
        assert session_stores.count_records(fd, 5, cancelled=lambda: True) is None
    finally:
        os.close(fd)


# -- the command ---------------------------------------------------------------------


def test_json_prints_every_field_of_every_session(
    agent_homes: AgentHomes, capsys: pytest.CaptureFixture[str]
) -> None:
    got = _json(capsys)
    assert [s["path"] for s in got] == [str(p) for p, _ in agent_homes.sessions]
    for entry in got:
        assert set(entry) == FIELDS
        assert Path(str(entry["path"])).is_absolute() and Path(str(entry["store"])).is_absolute()
    assert got == [s.to_json() for s in list_sessions().sessions]
    assert got[0]["store"] == str(agent_homes.projects)
    assert got[1]["store"] == str(agent_homes.rollouts)


def test_source_and_limit(agent_homes: AgentHomes, capsys: pytest.CaptureFixture[str]) -> None:
    codex = _json(capsys, "--source", "codex")
    assert [s["source"] for s in codex] == ["codex"]
    claude = _json(capsys, "--source", "claude-code")
    assert len(claude) == 5 and {s["source"] for s in claude} == {"claude-code"}
    newest = _json(capsys, "--limit", "2")
    assert [s["path"] for s in newest] == [str(p) for p, _ in agent_homes.sessions[:2]]
    assert main(["sessions", "--limit", "0"]) == 2
    assert "give 1 or more" in capsys.readouterr().err
    assert main(["sessions", "--source", "cursor"]) == 2


def test_the_table(agent_homes: AgentHomes, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions", "--print", "--limit", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "MODIFIED",
        "SOURCE",
        "RECORDS",
        "SIZE",
        "PROJECT",
        "FIRST",
        "PROMPT",
    ]
    rows = lines[1:-1]
    assert len(rows) == 6  # a row and its path, each
    first, path = rows[0], rows[1]
    assert "claude-code" in first and "438" in first and "/path/to/Demo" in first
    assert first.endswith("/orchestrator create TODO app by Next.js")
    assert path == f"  {agent_homes.sessions[0][0]}"
    assert "codex" in rows[2] and rows[2].endswith("show tools")
    gemini = stores("gemini")[0].path
    assert lines[-1] == (
        f"the newest 3 of 6 sessions; looked in {agent_homes.projects} (5 sessions) "
        f"and {agent_homes.rollouts} (1 session) and {gemini} (not there)"
    )


def test_the_table_imports_no_textual(agent_homes: AgentHomes) -> None:
    """``sessions`` off a terminal starts without the UI stack (and reads the
    stores the environment names: the fixture's)."""
    code = (
        "import sys\n"
        "from replay_tui.cli.commands import main\n"
        "rc = main(['sessions', '--limit', '1'])\n"
        "print(rc, 'textual' in sys.modules, 'rich' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert str(agent_homes.sessions[0][0]) in out.stdout
    assert out.stdout.splitlines()[-1] == "0 False False"


def test_missing_stores_are_no_error(capsys: pytest.CaptureFixture[str]) -> None:
    claude, codex, gemini = (s.path for s in stores() if not s.optional)
    assert not claude.exists() and not codex.exists()  # the empty homes of conftest
    assert main(["sessions"]) == 0
    out = capsys.readouterr()
    assert out.out == (
        f"no sessions: looked in {claude} (not there) and {codex} (not there) "
        f"and {gemini} (not there)\n"
    )
    assert out.err == ""
    assert _json(capsys) == []
    codex.mkdir(parents=True)
    assert main(["sessions", "--source", "codex"]) == 0
    assert capsys.readouterr().out == f"no sessions: looked in {codex} (no sessions in it)\n"


def test_codex_archived_rollouts_are_listed_too(
    agent_homes: AgentHomes, capsys: pytest.CaptureFixture[str]
) -> None:
    """Codex moves archived rollouts to $CODEX_HOME/archived_sessions/: still
    the user's sessions, listed and opened like the others; the archive is
    named where it looked only when it is there."""
    rollout = next(p for p, _ in agent_homes.sessions if p.name.startswith("rollout-"))
    archive = agent_homes.codex / "archived_sessions"
    assert "archived_sessions" not in find_sessions().looked_in()
    archive.mkdir()
    archived = archive / rollout.name.replace("rollout-", "rollout-2025-")
    shutil.copyfile(rollout, archived)
    listing = find_sessions()
    assert archived in [s.path for s in listing.sessions]
    assert f"{archive} (1 session)" in listing.looked_in()
    assert main(["sessions", "--json", "--source", "codex"]) == 0
    got = {Path(str(s["path"])) for s in json.loads(capsys.readouterr().out)}
    assert archived in got and rollout in got


def denied(monkeypatch: pytest.MonkeyPatch, call: str, path: Path) -> None:
    """``os.<call>`` of ``path`` fails as for a file of someone else's
    (root reads anything: chmod alone proves nothing when tests run as root)."""
    real = getattr(os, call)

    def fake(target: object, *args: object, **kw: object) -> object:
        if Path(os.fsdecode(target)) == path:  # type: ignore[arg-type]
            raise PermissionError(13, "Permission denied", str(path))
        return real(target, *args, **kw)

    monkeypatch.setattr(os, call, fake)


def test_damaged_files_are_listed_with_their_problem(
    agent_homes: AgentHomes, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = agent_homes.projects / "-damaged"
    folder.mkdir()
    good = agent_homes.sessions[0][1].read_bytes().splitlines(keepends=True)
    bad_json = folder / "bad-json.jsonl"
    bad_json.write_bytes(b'{"type": "summary", "summ\n' + b"".join(good[1:]))
    cut = folder / "cut.jsonl"
    cut.write_bytes(b"".join(good[:5]) + good[5][:40])
    codex_here = folder / "codex-here.jsonl"
    shutil.copyfile(agent_homes.sessions[1][0], codex_here)
    not_json = folder / "notes.jsonl"
    not_json.write_bytes(b"# notes\n\nnothing here\n")
    empty = folder / "empty.jsonl"
    empty.write_bytes(b"")
    dangling = folder / "gone.jsonl"
    dangling.symlink_to(folder / "nowhere.jsonl")
    fifo = folder / "fifo.jsonl"
    os.mkfifo(fifo)
    unreadable = folder / "unreadable.jsonl"
    shutil.copyfile(agent_homes.sessions[0][0], unreadable)
    unreadable.chmod(0)
    denied(monkeypatch, "open", unreadable)  # as if it were not root's
    old = agent_homes.newest - 3600
    for p in (bad_json, cut, codex_here, not_json, empty, fifo, unreadable):
        os.utime(p, (old, old))

    got = {Path(str(s["path"])).name: s for s in _json(capsys)}
    assert got["bad-json.jsonl"]["problem"] == (
        "line 1: bad_json: not valid JSON: unexpected end of data: line 1 column 26 (char 25)"
    )
    assert got["bad-json.jsonl"]["records"] == lines_in(bad_json)
    assert got["bad-json.jsonl"]["first_prompt"] == FIRST_PROMPTS[agent_homes.sessions[0][1].name]
    assert got["cut.jsonl"]["problem"] == "line 6 is cut short (no newline at its end)"
    assert got["cut.jsonl"]["records"] == 6
    assert got["codex-here.jsonl"]["problem"] == (
        "not a Claude Code session: its first records are Codex's"
    )
    assert (
        got["notes.jsonl"]["problem"]
        == "line 1: bad_json: not valid JSON: unexpected character, expected a JSON value: line 1 column 1 (char 0)"
    )
    assert got["notes.jsonl"]["project"] == "-damaged"  # the folder's slug, with no cwd
    assert got["empty.jsonl"]["problem"] is None and got["empty.jsonl"]["records"] == 0
    assert got["gone.jsonl"]["problem"] == "cannot read: No such file or directory"
    assert got["fifo.jsonl"]["problem"] == "not a regular file"
    assert got["unreadable.jsonl"]["problem"] == "cannot read: Permission denied"
    # the table too, each with its problem under its path
    assert main(["sessions", "--print"]) == 0
    table = capsys.readouterr().out
    assert f"  {fifo}\n  problem: not a regular file\n" in table
    assert f"  {dangling}\n  problem: cannot read: No such file or directory\n" in table


def test_an_unreadable_project_folder_is_a_note(
    agent_homes: AgentHomes, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = agent_homes.projects / "-locked"
    locked.mkdir()
    locked.chmod(0)
    denied(monkeypatch, "scandir", locked)
    try:
        assert main(["sessions", "--json"]) == 0
        out = capsys.readouterr()
        assert len(json.loads(out.out)) == 6
        assert out.err == f"replay-tui: {locked}: cannot look in it: Permission denied\n"
        assert main(["sessions", "--print"]) == 0
        assert f"{locked}: cannot look in it: Permission denied" in capsys.readouterr().err
    finally:
        locked.chmod(0o755)


def test_listing_changes_no_file(
    agent_homes: AgentHomes, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bytes, mode and mtime of every file the same, and nothing new beside them."""

    def everything() -> set[Path]:
        return {*agent_homes.claude.rglob("*"), *agent_homes.codex.rglob("*")}

    before, paths = agent_homes.snapshot(), everything()
    assert len(before) == 8
    list_sessions()
    _json(capsys)
    assert main(["sessions", "--print"]) == 0
    assert agent_homes.snapshot() == before
    assert everything() == paths


# -- check on a folder of sessions --------------------------------------------------


def test_check_a_folder_of_sessions(
    agent_homes: AgentHomes, capsys: pytest.CaptureFixture[str]
) -> None:
    # a Codex store: rollouts three folders down (YYYY/MM/DD)
    rollout = agent_homes.sessions[1][0]
    for folder in (agent_homes.rollouts, agent_homes.rollouts / "2026", rollout.parent.parent):
        assert expand_runs([str(folder)]) == [str(rollout)]
    assert main(["check", str(agent_homes.rollouts)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{rollout}: verified: 386 events, 0 receipts, state awaiting_user (codex 1.0.0)",
        "1 run: 1 verified, 0 failed, 0 could not be checked",
    ]
    # Claude Code's projects: each session, one line each, in parallel
    before = agent_homes.snapshot()
    assert main(["check", str(agent_homes.projects), "--jobs", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    sessions = sorted(str(p) for p, _ in agent_homes.sessions if "rollout-" not in p.name)
    checked = sorted(line.partition(": verified")[0] for line in out[:-1])
    assert set(sessions) <= set(checked)
    assert all(": verified: " in line for line in out[:-1])
    assert "0 failed, 0 could not be checked" in out[-1]
    # a project's folder, as JSON lines
    demo = agent_homes.sessions[0][0].parent
    assert main(["check", str(demo), "--json", "--jobs", "2"]) == 0
    runs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sorted(r["run"] for r in runs) == sorted(str(p) for p in demo.glob("*.jsonl"))
    assert {r["exit"] for r in runs} == {0}
    assert agent_homes.snapshot() == before


def test_check_a_claude_or_codex_home_checks_its_sessions(agent_homes: AgentHomes) -> None:
    """``check ~/.claude`` (or ``~/.codex``): the sessions of its store."""
    assert expand_runs([str(agent_homes.claude)]) == expand_runs([str(agent_homes.projects)])
    assert expand_runs([str(agent_homes.codex)]) == [str(agent_homes.sessions[1][0])]
    assert len(expand_runs([str(agent_homes.claude)])) >= 5


# -- the list to pick from ------------------------------------------------------------


def _rows(app: SessionsApp) -> list[list[str]]:
    table = app.table
    return [[cell.plain for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_the_list_shows_filters_and_opens_a_session(agent_homes: AgentHomes) -> None:
    before = agent_homes.snapshot()
    app = SessionsApp(find_sessions())
    async with app.run_test(size=(160, 30)) as pilot:
        await until(pilot, lambda: app.done == 6)
        rows = _rows(app)
        assert len(rows) == 6
        assert [r[1] for r in rows] == [
            "codex" if "rollout-" in p.name else "claude-code" for p, _ in agent_homes.sessions
        ]
        for row, (_, fixture) in zip(rows, agent_homes.sessions, strict=True):
            cut = row[5].removesuffix("…")  # cut to fit the screen
            assert len(cut) > 20 or cut == row[5]
            assert FIRST_PROMPTS[fixture.name].startswith(cut)
        assert [r[2] for r in rows] == [f"{lines_in(p):,}" for p, _ in agent_homes.sessions]
        assert "6 sessions, newest first" in str(app.query_one("#where").render())
        await pilot.press("slash", *"demo")
        await until(pilot, lambda: app.table.row_count == 3)
        assert {r[4] for r in _rows(app)} == {"/path/to/Demo"}
        await pilot.press("enter")  # the filter is kept; the list has the keys
        assert app.focused is app.table
        await pilot.press("down", "enter")
    assert app.return_value == agent_homes.sessions[3][0]
    chosen = app_for_session(app.return_value)
    async with chosen.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: "verified" in status(chosen))
        assert status(chosen).startswith(" 5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
        assert "LIVE" not in status(chosen)
    chosen.replay.close()
    assert agent_homes.snapshot() == before


async def test_after_the_session_quits_the_list_comes_back_as_it_was_left(
    agent_homes: AgentHomes,
) -> None:
    """q in the session opened comes back to the list: the filter typed, the
    cursor on that session, and what was counted not read again."""
    first = SessionsApp(find_sessions())
    async with first.run_test(size=(160, 30)) as pilot:
        await until(pilot, lambda: first.done == 6)
        await pilot.press("slash", *"demo", "enter", "down", "enter")
    picked = first.return_value
    assert picked == agent_homes.sessions[3][0]
    counted = {p: s.records for p, s in first.known.items()}
    assert len(counted) == 6 and all(n is not None for n in counted.values())
    read: list[Path] = []
    real = sessions_ui.describe
    sessions_ui.describe = lambda s, *a, **k: read.append(s.path) or real(s, *a, **k)  # type: ignore[assignment]
    try:
        again = SessionsApp(find_sessions(), at=picked, known=first.known, filter_text="demo")
        async with again.run_test(size=(160, 30)) as pilot:
            await until(pilot, lambda: again.done == 6)
            assert again.table.row_count == 3  # still filtered
            row = again.table.cursor_coordinate.row
            key = again.table.coordinate_to_cell_key((row, 0)).row_key.value
            assert again.sessions[int(key or 0)].path == picked
            assert read == []  # nothing changed: nothing read again
    finally:
        sessions_ui.describe = real  # type: ignore[assignment]


def test_the_list_and_the_sessions_opened_from_it_take_turns() -> None:
    """The loop of ``replay-tui sessions`` on a terminal: the list, a session,
    the list again on that session, until q in the list (or a failing app)."""
    import argparse

    from replay_tui.cli.sessions import pick_and_open
    from replay_tui.formats.session_stores.listing import Listing

    picks: list[tuple[Path | None, str]] = [
        (Path("a.jsonl"), "x"),
        (Path("b.jsonl"), "y"),
        (None, ""),
    ]
    calls: list[tuple[Path | None, str]] = []

    def pick(
        listing: Listing, *, at: Path | None, known: object, filter_text: str
    ) -> tuple[Path | None, str]:
        calls.append((at, filter_text))
        return picks.pop(0)

    opened: list[object] = []
    args = argparse.Namespace(source=None, limit=None)
    code = pick_and_open(find_sessions(), args, pick, lambda p: p, lambda a: opened.append(a) or 0)
    assert code == 0 and opened == [Path("a.jsonl"), Path("b.jsonl")]
    assert calls == [(None, ""), (Path("a.jsonl"), "x"), (Path("b.jsonl"), "y")]
    picks[:] = [(Path("a.jsonl"), ""), (None, "")]
    assert pick_and_open(find_sessions(), args, pick, lambda p: p, lambda a: 3) == 3


async def test_escape_clears_the_filter_and_q_quits(agent_homes: AgentHomes) -> None:
    app = SessionsApp(find_sessions())
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.press("slash", *"zzz-nothing")
        await until(pilot, lambda: app.table.row_count == 0)
        assert "0 of 6 match 'zzz-nothing'" in str(app.query_one("#where").render())
        await pilot.press("escape")
        await until(pilot, lambda: app.table.row_count == 6)
        await pilot.press("q")
    assert app.return_value is None


async def test_a_session_being_written_opens_followed(agent_homes: AgentHomes) -> None:
    path = agent_homes.sessions[2][0]
    path.touch()
    app = SessionsApp(find_sessions())
    async with app.run_test(size=(160, 30)) as pilot:
        await until(pilot, lambda: app.done == 6)
        assert _rows(app)[0][0].endswith(" live")
        await pilot.press("enter")
    assert app.return_value == path
    chosen = app_for_session(path)
    async with chosen.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: "LIVE" in status(chosen))
    chosen.replay.close()


async def test_the_list_shows_problems_and_escapes_names(agent_homes: AgentHomes) -> None:
    folder = agent_homes.projects / "-evil\x1b]0;x\x07"
    folder.mkdir()
    (folder / "s.jsonl").write_bytes(b"[1]\n")
    app = SessionsApp(find_sessions())
    async with app.run_test(size=(160, 30)) as pilot:
        await until(pilot, lambda: app.done == 7)
        row = _rows(app)[0]
        assert row[5] == "⚠ line 1: bad_envelope: line is a JSON array, not an object"
        assert "\x1b" not in row[4] and row[4].startswith("-evil\\e]0;x\\x07")
        await pilot.press("q")


async def test_first_prompts_are_cut_to_the_screen(agent_homes: AgentHomes) -> None:
    app = SessionsApp(find_sessions())
    async with app.run_test(size=(130, 30)) as pilot:
        await until(pilot, lambda: app.done == 6)
        cut = _rows(app)[2][5]
        assert cut.endswith("…") and len(cut) == widths(130)[1]
        await pilot.resize_terminal(220, 30)
        await until(pilot, lambda: len(_rows(app)[2][5]) > len(cut))
        assert _rows(app)[2][5] == FIRST_PROMPTS["turn-2.jsonl"][: widths(220)[1] - 1] + "…"
        assert app.table.row_count == 6


async def test_at_80_columns_the_first_prompt_has_the_room(agent_homes: AgentHomes) -> None:
    """What a person knows a session by is its first prompt: at 80x24 the
    records and size columns and the year make room for it, and the row fits
    the screen (nothing to scroll sideways)."""
    app = SessionsApp(find_sessions())
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.done == 6)
        titles = [str(c.label) for c in app.table.columns.values()]
        assert titles == ["modified", "source", "project", "first prompt"]
        prompt = _rows(app)[2][3]
        assert (
            len(prompt) >= 30 and prompt == FIRST_PROMPTS["turn-2.jsonl"][: len(prompt) - 1] + "…"
        )
        assert app.table.virtual_size.width <= app.table.size.width


def test_records_counted_once_are_remembered_until_the_file_changes(
    agent_homes: AgentHomes, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second ``sessions`` counts no records of files unchanged since the
    first (it read every byte of each); a file that grew is counted again.
    The counts live in the state folder, never beside a session."""
    before = agent_homes.snapshot()
    assert main(["sessions", "--print"]) == 0
    first = capsys.readouterr().out
    remembered = Path(os.environ["XDG_STATE_HOME"]) / "replay-tui" / "session-records.json"
    assert len(orjson.loads(remembered.read_bytes())) == len(agent_homes.sessions)
    assert agent_homes.snapshot() == before  # nothing written in the stores
    counted: list[int] = []
    real = session_stores.count_records

    def counting(fd: int, size: int, *args: object) -> tuple[int, bool] | None:
        counted.append(size)
        return real(fd, size, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(session_stores, "count_records", counting)
    assert main(["sessions", "--print"]) == 0
    assert capsys.readouterr().out == first and counted == []
    grown = agent_homes.sessions[0][0]
    with grown.open("ab") as fh:  # the agent wrote one more record
        fh.write(grown.read_bytes().splitlines(keepends=True)[-1])
    assert main(["sessions", "--json"]) == 0
    rows = {r["path"]: r for r in json.loads(capsys.readouterr().out)}
    assert counted == [grown.stat().st_size]
    assert rows[str(grown)]["records"] == lines_in(grown)
