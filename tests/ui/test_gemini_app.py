"""A Gemini CLI session in the app: it opens verified, a rewind's row and
state say what it dropped, and a tool call folds with its result."""

from __future__ import annotations

from pathlib import Path

import orjson

from replay_tui.ui.launch import make_app
from tests.conftest import TESTS
from tests.helpers.inert import assert_inert
from tests.helpers.screen import goto, pane_text, screen_text, settle, status
from tests.helpers.waiting import until

FIXTURES = TESTS / "fixtures" / "gemini-sessions"


async def test_a_session_opens_and_its_rewind_shows_what_it_dropped() -> None:
    app = make_app(FIXTURES / "rewind-one.jsonl")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        assert "verified" in status(app) and "of 21" in status(app)
        await goto(app, pilot, 16)
        assert "rewind to 8226a913" in app.main.view.row(15).summary
        shown = screen_text(app)
        assert "messages dropped, 5 left" in shown and "- messages[5]" in shown
        assert "awaiting_user" in pane_text(app, "state")


async def test_a_tool_call_folds_with_its_result() -> None:
    app = make_app(FIXTURES / "failing-tools.jsonl")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("v")
        await until(pilot, lambda: "calls folded" in screen_text(app))
        shown = screen_text(app)
        assert "▸ read_file" in shown and "missing.txt" in shown
        assert "▸ frobnicate" in shown and "▸ write_file" in shown
        await goto(app, pilot, 13)  # the shell command's result, as the receipt
        assert "run_shell_command result · failing-tools.jsonl:13" in screen_text(app)
        assert "Exit Code: 3" in pane_text(app, "receipt")


async def test_hostile_text_in_a_session_stays_inert(tmp_path: Path) -> None:
    """Escapes, markup and bidi in a prompt, a reply and a tool call show as
    text: nothing reaches the terminal raw, no markup is applied."""
    lines = (FIXTURES / "read-file.jsonl").read_bytes().splitlines(keepends=True)
    bad = "\x1b[31mred\x1b[0m [bold]markup[/bold] \u202eevil \x07bell"
    hostile = [
        orjson.dumps(
            {"id": "h1", "timestamp": "2026-12-06T10:40:00Z", "type": "user", "content": bad}
        ),
        orjson.dumps(
            {
                "id": "h2",
                "timestamp": "2026-12-06T10:40:01Z",
                "type": "gemini",
                "content": bad,
                "toolCalls": [
                    {"id": "c1", "name": bad, "args": {"command": bad}, "status": "error"}
                ],
            }
        ),
    ]
    session = tmp_path / "session-hostile.jsonl"
    session.write_bytes(b"".join(lines) + b"\n".join(hostile) + b"\n")
    app = make_app(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await goto(app, pilot, len(lines) + 2)
        shown = screen_text(app)
        assert "[bold]markup[/bold]" in shown
        assert_inert(shown + pane_text(app, "state"))
