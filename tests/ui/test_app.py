"""The app, driven headless with Pilot: every key, broken runs, hostile text."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from replay_tui.core.line_core import NATIVE
from replay_tui.ui.app import ReplayApp
from replay_tui.ui.launch import make_app
from replay_tui.ui.screens.help import HelpScreen
from replay_tui.ui.screens.prompts import FilterScreen, GotoScreen
from tests.conftest import DEMO, SAMPLES, RunFactory, agent_lines, line, receipt, sha
from tests.helpers.screen import (
    pane_text,
    ready,
    ready_at,
    said,
    screen_text,
    seq_at_cursor,
    settle,
    settled,
    status,
)
from tests.helpers.waiting import until


def row_shown(app: ReplayApp, start: str) -> bool:
    """A timeline row starting with ``start`` (its seq) is on the screen."""
    return any(line.lstrip("│┃▶ ").startswith(start) for line in screen_text(app).splitlines())


async def test_demo_opens_verified_at_seq_1() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        assert seq_at_cursor(app) == 1
        s = status(app)
        assert "✓ verified" in s and "seq 1 of 14" in s and "state running" in s
        assert "rules agent_run 1.0.0" in s


async def test_stepping_keys() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("j", "down", "j")
        assert seq_at_cursor(app) == 4
        await pilot.press("k", "up")
        assert seq_at_cursor(app) == 2
        await pilot.press("end")
        assert seq_at_cursor(app) == 14
        await pilot.press("home")
        assert seq_at_cursor(app) == 1
        await pilot.press("G")
        assert seq_at_cursor(app) == 14
        await pilot.press("g")
        assert seq_at_cursor(app) == 1
        await pilot.press("pagedown")
        assert seq_at_cursor(app) == 14  # the page is taller than 14 rows
        await pilot.press("pageup")
        assert seq_at_cursor(app) == 1
        await settle(app, pilot)
        assert "seq 1 of 14" in status(app)


async def test_goto_seq_and_state_at_10() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("colon")
        assert isinstance(app.screen, GotoScreen)
        await pilot.press("1", "0", "enter")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 10
        view = app.main.line_view
        assert view is not None and view.step is not None
        assert view.step.after["phase"] == "retrying"
        shown = pane_text(app, "state")
        assert "check_finished: tests failed in attempt 1; phase running -> retrying" in shown
        assert '~ phase: "running" → "retrying"' in shown
        assert "prefix 1..10 → retrying" in shown


async def test_rows_after_cursor_are_dimmed() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("j", "j")
        tl = app.main.timeline
        future = tl.get_component_rich_style("timeline--future")
        past_strip = tl._build(0, -1, 80)
        future_strip = tl._build(5, 1, 80)
        assert any(seg.style and seg.style.color == future.color for seg in future_strip._segments)
        assert not any(
            seg.style and seg.style.color == future.color
            for seg in past_strip._segments
            if seg.text.strip()
        )


async def test_click_selects_row() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        # row 6 of the timeline: 1 for the border, then rows from 0
        await pilot.click("#timeline", offset=(10, 6))
        await settle(app, pilot)
        assert seq_at_cursor(app) == 6


async def test_filter_hides_rows_but_keeps_true_prefix() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash")
        assert isinstance(app.screen, FilterScreen)
        await pilot.press(*"model_proposed", "enter")
        await until(pilot, lambda: app.main.search.matches is not None)
        assert app.main.timeline.row_count == 3
        await settle(app, pilot)
        assert seq_at_cursor(app) == 3
        await pilot.press("n")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 7
        # the state is that of the true prefix 1..7, not of the filtered rows
        view = app.main.line_view
        assert view is not None and view.step is not None
        assert view.step.after["calls"]["call-001"]["status"] == "finished"
        await pilot.press("N")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 3
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.main.timeline.row_count == 14 and seq_at_cursor(app) == 3


async def test_play_steps_forward_and_speed_keys() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        for _ in range(6):
            await pilot.press("plus")
        assert app.main.timeline.playback.speed == 64
        await pilot.press("minus")
        assert app.main.timeline.playback.speed == 32
        await pilot.press("space")
        assert app.main.playing
        await until(pilot, lambda: seq_at_cursor(app) == 14)
        await until(pilot, lambda: not app.main.playing)  # stops at the end
        assert seq_at_cursor(app) == 14 and "playing" not in status(app)


async def test_play_pauses_on_space() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("space")
        assert app.main.playing and "playing" in status(app)
        await pilot.press("space")
        assert not app.main.playing
        where = seq_at_cursor(app)
        await pilot.pause(0.5)  # nothing happens meanwhile: playing, it moves 4 rows a second
        assert seq_at_cursor(app) == where


async def test_toggle_full_state_marks_changed_paths() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("colon", "4", "enter")
        await settle(app, pilot)
        await pilot.press("d")
        await pilot.pause()
        shown = screen_text(app)
        assert "full state" in shown
        assert '●       "status": "allowed"' in shown
        await pilot.press("d")
        await pilot.pause()
        assert "state diff" in screen_text(app)


async def test_copy_state_puts_json_on_clipboard() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("end")
        await settle(app, pilot)
        await pilot.press("y")
        copied = orjson.loads(app.clipboard)
        assert copied["phase"] == "retrying" and copied["attempt"] == 2
        # prefix 0: the initial state on screen is what y copies
        await pilot.press("colon", "0", "enter")
        await settle(app, pilot)
        await pilot.press("y")
        await pilot.pause()
        copied = orjson.loads(app.clipboard)
        assert copied["phase"] == "new" and copied["attempt"] == 0
        assert "no replayed state" not in screen_text(app)


async def test_help_and_quit() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert "Go to a seq (0: the initial" in screen_text(app)
        assert f"Lines proved {'by the native' if NATIVE else 'in Python'}" in screen_text(app)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_every_action_is_in_the_command_palette() -> None:
    from replay_tui.ui.keys import palette_keys

    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {k.description for k in palette_keys()} <= titles


async def test_broken_run_lands_on_failing_seq() -> None:
    app = make_app(SAMPLES / "broken-divergence")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        err = app.replay.error
        assert err is not None and err.code == "divergence"
        assert seq_at_cursor(app) == err.seq
        assert f"✗ error at seq {err.seq}: divergence" in status(app)
        shown = pane_text(app, "state")
        assert "strict replay stops here" in shown and "host recorded" in shown
        # rows after the failing one say they were not replayed
        if app.main.view.row_count() > err.line:
            assert "not replayed" in app.main.timeline._build(err.line, 1, 120).text


async def test_next_previous_error_keys(run_factory: RunFactory) -> None:
    rc = receipt("c1")
    lines = agent_lines(sha(rc))
    lines[3] = line(4, "tool_allowed", payload={"call_id": "c1"}, ts="2026-11-01T08:00:00Z")
    lines[1] = line(2, "attempt_started", payload={"attempt": 1}, ts="2026-11-01T09:30:00Z")
    lines.append(line(9, "bogus"))
    app = make_app(run_factory(lines, receipts={"c1": rc}))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        assert seq_at_cursor(app) == 9  # the failing seq
        await pilot.press("g", "e")
        assert seq_at_cursor(app) == 4  # a ts_backwards warning
        await pilot.press("e")
        assert seq_at_cursor(app) == 9
        await pilot.press("E")
        assert seq_at_cursor(app) == 4


async def test_e_stops_at_failed_tool_calls() -> None:
    """Agent developers look for failures first: e goes to each tool call
    that ended in error (long-300 has two, at seqs 45 and 68), E back."""
    app = make_app(SAMPLES / "long-300")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("g", "e")
        assert seq_at_cursor(app) == 45
        await pilot.press("e")
        assert seq_at_cursor(app) == 68
        await pilot.press("e")
        await pilot.pause()
        assert seq_at_cursor(app) == 68  # no more: said so
        assert "no more errors, warnings or failed calls that way" in said(app)
        await pilot.press("E")
        assert seq_at_cursor(app) == 45


async def test_tampered_receipt_in_inspector() -> None:
    app = make_app(SAMPLES / "broken-receipt_tampered")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        assert "TAMPERED" in pane_text(app, "receipt")


async def test_secrets_masked_until_revealed(run_factory: RunFactory) -> None:
    rc = receipt("c1", output={"api_key": "sk-live-123", "Authorization": "Bearer abc"})
    app = make_app(run_factory(agent_lines(sha(rc)), receipts={"c1": rc}))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("colon", "6", "enter")
        await settle(app, pilot)
        shown = pane_text(app, "receipt")
        assert "sk-live-123" not in shown and "Bearer abc" not in shown and "••••••" in shown
        await pilot.press("r")
        await pilot.pause()
        assert "sk-live-123" in pane_text(app, "receipt") and "secrets shown" in status(app)


HOSTILE = [
    "\x1b[2J\x1b[H",  # clear screen
    "\x1b]52;c;aGVsbG8=\x07",  # OSC 52 clipboard write
    "\x1b]0;pwned\x07",  # window title
    "[bold red]markup[/] [link=https://evil.example]x[/link] [/oops]",
    "\u202eevil\u202c and \u2066isolate\u2069",
    "nul\x00 del\x7f c1\x9b",
]


async def test_hostile_text_is_inert(run_factory: RunFactory) -> None:
    payload = {f"k{i}{s}": s for i, s in enumerate(HOSTILE)}
    lines = [
        line(1, "run_started", payload={"task": HOSTILE[0], **payload}),
        line(2, "attempt_started", payload={"attempt": 1, "[b]key[/b]": HOSTILE[3]}),
        line(3, "model_proposed", payload={"call_id": "c1", "tool": HOSTILE[1], "args": payload}),
    ]
    rc = receipt("c1", output=payload)
    app = make_app(run_factory(lines, receipts={"c1": rc}))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        for key in ("j", "j", "d", "x"):
            await pilot.press(key)
            await settle(app, pilot)
            shown = screen_text(app)
            for bad in ("\x1b", "\x07", "\x00", "\x9b", "\u202e", "\u2066", "\x7f"):
                assert bad not in shown
        shown = screen_text(app)
        assert "\\e[2J" in shown or "\\\\u001b[2J" in shown or "\\u001b[2J" in shown
        everything = pane_text(app, "state") + pane_text(app, "receipt")
        assert "[bold red]markup[/]" in everything  # markup shown as text, not applied
        assert "\\u202e" in everything and "\\u2066" in everything


async def test_narrow_terminal_stacks_panes() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert "-narrow" in app.screen.classes
        tl = app.query_one("#timeline")
        state = app.query_one("#state")
        # the timeline and its overview strip take the whole width, above the state
        strip = app.query_one("#overview")
        assert tl.region.width + strip.region.width == 80 and state.region.y > tl.region.y
        await pilot.press("j", "j", "j")
        await settle(app, pilot)
        assert "tool_allowed" in screen_text(app)


@pytest.mark.parametrize("size", [(140, 40), (80, 24)])
def test_snapshot_demo_start(snap_compare, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(DEMO), terminal_size=size, run_before=ready)


def test_snapshot_demo_seq_10(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(DEMO), terminal_size=(140, 40), run_before=ready_at(10))


def test_snapshot_broken_run(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_app(SAMPLES / "broken-divergence"), terminal_size=(140, 40), run_before=ready
    )


def test_snapshot_tampered_receipt(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_app(SAMPLES / "broken-receipt_tampered"), terminal_size=(140, 40), run_before=ready
    )


async def test_clearing_a_filter_keeps_the_cursor_row_on_screen() -> None:
    app = make_app(SAMPLES / "long-300")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("colon", *"150", "enter")
        await settle(app, pilot)
        await pilot.press("slash", *"call-000012", "enter")
        await until(pilot, lambda: app.main.search.matches is not None)
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        tl = app.main.timeline
        assert tl.row_count == 300
        top = tl.scroll_offset.y
        assert top <= tl.cursor < top + tl.scrollable_content_region.height


async def test_huge_line_and_deep_nesting_do_not_break_the_app(run_factory: RunFactory) -> None:
    lines = [
        line(1, "run_started", payload={"task": "x" * 10_000_000}),
        line(2, "attempt_started", payload={"attempt": 1}),
        b'{"seq":3,"run_id":"r1","kind":"model_finished","payload":{"deep":'
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}}\n",
    ]
    app = make_app(run_factory(lines))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        assert app.replay.error is not None and app.replay.error.code == "bad_json"
        assert seq_at_cursor(app) is None  # the failing line has no usable seq
        assert "levels deep" in pane_text(app, "state")
        await pilot.press("g")
        await settle(app, pilot)
        shown = pane_text(app, "state")
        assert "chars, x expands" in shown and len(shown) < 20_000
        await pilot.press("x")
        await pilot.pause()
        assert len(pane_text(app, "state")) > 20_000


async def test_timeline_renders_only_visible_rows(tmp_path: Path) -> None:
    from replay_tui.synth.runs import write_agent_run
    from replay_tui.ui.widgets.timeline import Timeline

    write_agent_run(tmp_path / "big", 20_000, seed=2)
    built: list[int] = []
    original = Timeline._build

    def counting(self: Timeline, index: int, relation: int, width: int):  # type: ignore[no-untyped-def]
        built.append(index)
        return original(self, index, relation, width)

    app = make_app(tmp_path / "big")
    async with app.run_test(size=(140, 40)) as pilot:
        Timeline._build = counting  # type: ignore[method-assign]
        try:
            await settle(app, pilot)
            assert app.main.timeline.row_count == 20_000
            height = app.main.timeline.scrollable_content_region.height
            built.clear()
            await pilot.press("colon", *"15000", "enter")
            await settle(app, pilot)
            await pilot.press("j", "j", "pagedown")
            await settle(app, pilot)
        finally:
            Timeline._build = original  # type: ignore[method-assign]
    assert built and len(set(built)) <= 4 * height
    assert min(built) >= 15_000 - 2 * height


async def test_planted_error_near_the_end_is_found_and_shown(tmp_path: Path) -> None:
    from replay_tui.synth.runs import write_agent_run

    facts = write_agent_run(
        tmp_path / "planted", 5_000, seed=3, plant="divergence", plant_seq=4_990
    )
    want = facts["error"]
    app = make_app(tmp_path / "planted")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        err = app.replay.error
        assert err is not None and (err.code, err.seq, err.line) == (
            want["code"],
            want["seq"],
            want["line"],
        )
        assert seq_at_cursor(app) == want["seq"]
        assert f"error at seq {want['seq']}" in status(app)


async def test_a_denied_call_says_it_was_never_made() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("colon", "8", "enter")  # tool_denied call-002
        await settle(app, pilot)
        shown = pane_text(app, "receipt")
        assert "never made" in shown and "no receipt for this call yet" not in shown


async def test_unfollow_when_not_following_says_so() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("F")
        await settle(app, pilot)
        assert any("not following" in m for m in said(app))


async def test_a_line_without_a_seq_is_placed_by_its_line_number() -> None:
    app = make_app(SAMPLES / "broken-bad_json")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        assert app.main.timeline.cursor_index == 6  # the failing line 7
        assert "line 7 of" in status(app) and "seq ?" not in status(app)


async def test_the_state_word_stays_in_the_header_at_140_columns(tmp_path: Path) -> None:
    """Six-digit seqs and long run ids: names give way, not the state."""
    from replay_tui.synth.runs import write_agent_run

    run = tmp_path / "a-run-folder-with-a-long-name"
    write_agent_run(run, 300, seed=1, run_id="run-" + "x" * 60)
    app = make_app(run)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("end")
        await settle(app, pilot)
        header = screen_text(app).splitlines()[0]
        word = app.main.line_view.summary if app.main.line_view else None
        assert word and f"state {word}" in header and "seq 300 of 300" in header
        assert "x" * 60 not in header  # the run id gave way


async def test_validation_does_not_pull_a_cursor_the_person_moved(tmp_path: Path) -> None:
    from replay_tui.synth.runs import write_agent_run

    run = tmp_path / "late-error"
    facts = write_agent_run(run, 60_000, seed=3, plant="budget_exceeded", plant_seq=59_900)
    app = make_app(run)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.main.line_view is not None)  # the first screen
        assert app.main.validating, "the run validated before a key could be pressed"
        await pilot.press("j", "j", "j")
        await settle(app, pilot)
        assert not app.main.validating and app.replay.error is not None
        err = app.replay.error
        assert app.main.timeline.cursor_index == 3  # where the person left it
        assert f"error at seq {err.seq}" in status(app) and "e to go there" in status(app)
        await pilot.press("e")
        await settle(app, pilot)
        assert app.main.timeline.cursor_index == err.line - 1
        assert "e to go there" not in status(app)
    assert facts


async def test_help_scrolls_to_the_last_key_at_80x24() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        above_footer = "\n".join(screen_text(app).splitlines()[:-1])
        assert "Quit" not in above_footer  # cut: 24 rows are not enough
        await pilot.press("end")
        await pilot.pause()
        shown = "\n".join(screen_text(app).splitlines()[:-1])
        assert "Quit" in shown and "Help: every key" in shown


async def test_the_cursor_row_is_on_screen_after_opening_at_80x24() -> None:
    app = make_app(SAMPLES / "broken-divergence")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert app.main.timeline.cursor_index == 10
        await until(pilot, lambda: row_shown(app, "11 "))


async def test_the_cursor_row_stays_on_screen_after_a_resize() -> None:
    app = make_app(SAMPLES / "long-300")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("colon", *"250", "enter")
        await settle(app, pilot)
        await pilot.resize_terminal(80, 24)
        await settle(app, pilot)
        assert app.main.timeline.cursor_index == 249
        await until(pilot, lambda: row_shown(app, "250 "))


async def test_tab_reaches_the_receipt_pane_and_keys_scroll_it() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("colon", "6", "enter")  # tool_finished: a long receipt
        await settle(app, pilot)
        await pilot.press("tab", "tab")
        receipt_pane = app.query_one("#receipt")
        assert receipt_pane.has_focus
        await pilot.press("pagedown")
        await until(pilot, lambda: receipt_pane.scroll_y > 0)
        await pilot.press("j")  # j still steps events from any pane
        await settle(app, pilot)
        assert app.main.timeline.cursor_index == 6


async def test_prefix_zero_shows_the_initial_state() -> None:
    """What a teacher shows first: the state after no events."""
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("k")  # from seq 1: prefix 0
        await settle(app, pilot)
        assert app.main.at_initial and "initial state, prefix 0" in status(app)
        shown = pane_text(app, "state")
        assert shown.startswith("initial state") and '"phase": "new"' in shown
        await pilot.press("j")  # back to event 1
        await settle(app, pilot)
        assert not app.main.at_initial and "seq 1 of 14" in status(app)
        await pilot.press("colon", *"10", "enter")
        await settle(app, pilot)
        await pilot.press("colon", "0", "enter")  # :0 from anywhere
        await settle(app, pilot)
        assert app.main.at_initial and app.main.timeline.cursor == 0
        assert pane_text(app, "state").startswith("initial state")
        await pilot.press("G")  # any move leaves it
        await settle(app, pilot)
        assert not app.main.at_initial and app.main.timeline.cursor_index == 13


async def test_k_held_down_reaches_prefix_zero() -> None:
    """Keys faster than the screen sees the moves they made (a held ``k``):
    a move to row 1 still on its way does not undo prefix 0."""
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("colon", "4", "enter")
        await settle(app, pilot)
        for _ in range(4):  # in one go: no message is handled between them
            app.main.action_step(-1)
        await until(pilot, lambda: app.main.at_initial and settled(app.main))
        assert "initial state, prefix 0" in status(app)
        assert pane_text(app, "state").startswith("initial state")


async def test_the_last_event_says_what_is_still_open() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("G")
        await settle(app, pilot)
        shown = pane_text(app, "state")
        assert "still open: call-003 allowed (never started); attempt 2 has no check yet" in shown
        await pilot.press("k")
        await settle(app, pilot)
        assert "still open" not in pane_text(app, "state")


async def test_a_short_footer_keeps_help_and_quit() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        footer = screen_text(app).splitlines()[-1]
        assert "? Help" in footer and "q Quit" in footer and ": Go to" in footer


async def test_the_footer_is_not_built_again_when_its_keys_did_not_change() -> None:
    """A prompt opening and closing leaves the same keys: the footer keeps
    its widgets (building them again cost a fifth of a ``:`` jump)."""
    from textual.widgets._footer import FooterKey

    app = make_app(str(DEMO))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        before = list(app.main.query(FooterKey))
        assert any(k.key == "question_mark" for k in before)
        await pilot.press("colon", "5", "enter")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 5
        await pilot.press("slash", "escape")
        await settle(app, pilot)
        after = list(app.main.query(FooterKey))
        assert after == before and all(a is b for a, b in zip(after, before, strict=True))
