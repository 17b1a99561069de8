"""A result of many MB: kept parsed once, shown cut in the receipt pane, and
read whole with ``o`` a screen at a time (Esc comes back to the same seq)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from textual.widgets import Static

from replay_tui.engine.open import open_replay
from replay_tui.formats.ledger import BIG_LINE
from replay_tui.ui.launch import make_app
from replay_tui.ui.screens.whole_result import ResultReader
from replay_tui.views.reader_text import ROW_CHARS, Cancelled, ReaderText
from tests.conftest import ROOT
from tests.helpers.screen import pane_text, said, seq_at_cursor, settle
from tests.helpers.waiting import until

SAMPLE = ROOT / "sample_runs" / "agent-sessions" / "claude-code-short.jsonl"
ROWS = 40_000  # about 2.6 MB of result, written twice: a line past BIG_LINE


def _big_session(tmp_path: Path) -> tuple[Path, int]:
    """The short sample with its first Read result made ROWS numbered lines."""
    lines = SAMPLE.read_bytes().splitlines()
    records = [orjson.loads(raw) for raw in lines]
    number = next(
        i
        for i, r in enumerate(records)
        if isinstance((r.get("toolUseResult") or {}).get("file"), dict)
    )
    rec = records[number]
    text = "\n".join(
        f"{i:6}\tline {i} of the file, \x1b[31mnot red\x1b[0m" for i in range(1, ROWS + 1)
    )
    rec["message"]["content"][0]["content"] = text
    rec["toolUseResult"]["file"]["content"] = text
    lines[number] = orjson.dumps(rec)
    assert len(lines[number]) > BIG_LINE
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path, number + 1


def test_a_string_of_many_lines_is_shown_as_its_lines() -> None:
    text = ReaderText({"out": "one\ttwo\nthree \x1b[2J\n" + "x" * (ROW_CHARS * 2 + 5), "n": 3})
    rows = [text.row(i) for i in range(len(text))]
    shown = [r.text for r in rows]
    assert shown[0] == "{"
    assert shown[1] == '"out": (824 characters in 3 lines),'
    assert shown[2] == "one     two"  # a tab is spaces
    assert shown[3] == "three \\e[2J"  # an ESC is spelled out, never sent
    # a line of 805 characters: two rows of ROW_CHARS and one of 5, marked as going on
    assert [len(s) for s in shown[4:7]] == [ROW_CHARS, ROW_CHARS, 5]
    assert [r.continued for r in rows[4:7]] == [False, True, True]
    assert shown[7:] == ['"n": 3', "}"]
    assert len(text) == 9 and text.longest_lines == 3


def test_laying_out_can_be_called_off() -> None:
    with pytest.raises(Cancelled):
        ReaderText({"out": "a\n" * 10_000}, cancelled=lambda: True)


def test_a_big_line_is_parsed_once_and_rules_get_their_own_copy(tmp_path: Path) -> None:
    path, seq = _big_session(tmp_path)
    replay, _ = open_replay(str(path), None, watchdog=False, history=True)
    try:
        replay.advance()
        replay.finish()
        assert replay.error is None
        first = replay.ledger.event(seq - 1)
        assert replay.ledger.event(seq - 1) is first  # kept, not parsed again
        copy = replay.ledger.kept_big(seq - 1)
        assert copy is not None and copy is not first
        assert copy.fields == first.fields and copy.fields is not first.fields
        content = first.fields["message"]["content"][0]["content"]
        assert copy.fields["message"]["content"][0]["content"] is content  # shared, not copied
        copy.fields["message"]["content"].clear()  # a rule changing its event changes no other
        assert replay.ledger.event(seq - 1).fields["message"]["content"]
        # the state after the big line, replayed from a checkpoint, is the forward pass's
        assert replay.state_at(seq) == replay.state_at(seq)
        calls = replay.state_at(seq)["calls"]
        assert any(c.get("result_seq") == seq and c["status"] == "ok" for c in calls.values())
    finally:
        replay.close()


async def test_o_reads_a_big_result_whole_and_esc_comes_back(tmp_path: Path) -> None:
    path, seq = _big_session(tmp_path)
    app = make_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("colon", *str(seq), "enter")
        await settle(app, pilot)
        receipt = pane_text(app, "receipt")
        assert "x expands" in receipt and "o reads it whole" in receipt
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, ResultReader))
        reader = app.screen
        assert isinstance(reader, ResultReader)
        await until(pilot, lambda: reader.first_page_shown)
        where = str(reader.query_one("#reader-where", Static).content)
        total = len(reader.lines.text or ())
        assert "rows 1-" in where and f"of {total:,}" in where and total > 2 * ROWS
        assert "the longest string has 40,000 lines" in where
        await pilot.press("end")
        await until(pilot, lambda: reader.at_end)
        await pilot.pause()
        drawn = "\n".join(reader.lines.render_line(y).text for y in range(reader.lines.size.height))
        assert f"{ROWS:6}  line {ROWS} of the file, \\e[31mnot red\\e[0m" in drawn
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.main)
        assert seq_at_cursor(app) == seq


async def test_o_where_there_is_no_result_reads_the_event_whole(tmp_path: Path) -> None:
    """No call at the cursor: o reads the event itself (a compaction's
    summary, a long prompt); at prefix 0 there is none, and it says so."""
    path, _ = _big_session(tmp_path)
    app = make_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("o")  # seq 1: a file-history-snapshot, no call
        await until(pilot, lambda: isinstance(app.screen, ResultReader))
        reader = app.screen
        assert isinstance(reader, ResultReader)
        await until(pilot, lambda: reader.first_page_shown)
        assert "seq 1 · file-history-snapshot · the event whole" in str(
            reader.query_one("#reader-title", Static).content
        )
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.main)
        await pilot.press("k")  # prefix 0: no event
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        assert app.screen is app.main
        assert any("o reads a receipt, a recorded result or an event" in m for m in said(app))


async def test_o_keeps_secret_looking_values_masked_unless_revealed(tmp_path: Path) -> None:
    path, seq = _big_session(tmp_path)
    lines = path.read_bytes().splitlines()
    rec = orjson.loads(lines[seq - 1])
    rec["toolUseResult"]["file"]["api_token"] = "sk-live-do-not-show"
    lines[seq - 1] = orjson.dumps(rec)
    path.write_bytes(b"\n".join(lines) + b"\n")
    app = make_app(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("colon", *str(seq), "enter")
        await settle(app, pilot)
        for reveal, shown in ((False, False), (True, True)):
            if reveal:
                await pilot.press("r")
                await settle(app, pilot)
            await pilot.press("o")
            await until(pilot, lambda: isinstance(app.screen, ResultReader))
            reader = app.screen
            assert isinstance(reader, ResultReader)
            await until(pilot, lambda r=reader: r.first_page_shown)
            text = reader.lines.text
            assert text is not None
            rows = [text.row(i).text for i in range(len(text) - 12, len(text))]
            assert any('"api_token"' in r for r in rows)
            assert any("sk-live-do-not-show" in r for r in rows) is shown
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is app.main)
