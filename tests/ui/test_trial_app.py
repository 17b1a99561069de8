"""What a new user's trial found in the app (issue 20), each driven headless."""

from __future__ import annotations

import gzip
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from replay_tui.ui.app import KEYS, ReplayApp
from replay_tui.ui.launch import make_app
from replay_tui.ui.screens.help import HelpScreen
from replay_tui.ui.screens.prompts import PromptScreen
from replay_tui.ui.widgets.state_pane import StatePane
from tests.conftest import DEMO, SAMPLES
from tests.helpers.runs import demo_with_password
from tests.helpers.screen import notices, said, screen_text, settle, status
from tests.helpers.waiting import HANG, until

TEMPORAL = SAMPLES / "temporal" / "sdk-python--research-workflow-history.json"


def gzip_copy(tmp_path: Path) -> Path:
    run = tmp_path / "gz-run"
    shutil.copytree(DEMO, run)
    ledger = run / "events.jsonl"
    (run / "events.jsonl.gz").write_bytes(gzip.compress(ledger.read_bytes()))
    ledger.unlink()
    return run


def source(kind: str, tmp_path: Path) -> ReplayApp:
    """An app over each kind of source a person opens."""
    if kind == "ledger":
        return make_app(DEMO)
    if kind == "gzip":
        return make_app(gzip_copy(tmp_path))
    if kind == "temporal":
        return make_app(TEMPORAL)
    if kind == "broken":
        return make_app(SAMPLES / "broken-divergence")
    if kind == "following":
        run = tmp_path / "live"
        shutil.copytree(DEMO, run)
        return make_app(run, follow=True)
    assert kind == "compare"
    return make_app(DEMO, skip=(3,))


@pytest.mark.parametrize("kind", ["ledger", "gzip", "temporal", "broken", "following", "compare"])
async def test_no_key_ends_the_app(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every key of the key table, on every kind of source, leaves the app
    running (a prompt a key opens is closed again with Esc)."""
    monkeypatch.chdir(tmp_path)  # X writes its report here
    app = source(kind, tmp_path)
    keys = [k.keys.split(",")[0] for k in KEYS if k.keys and k.action != "quit"]
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        for key in [*keys, *reversed(keys)]:
            await pilot.press(key)
            await pilot.pause()
            if isinstance(app.screen, PromptScreen) or app.screen is not app.screen_stack[0]:
                await pilot.press("escape")
                await pilot.pause()
            assert app.is_running, f"{key} ended the app on a {kind} source"
            assert app.return_code is None


async def test_f_on_a_source_read_once_says_so(tmp_path: Path) -> None:
    for run in (gzip_copy(tmp_path), TEMPORAL):
        app = make_app(run)
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(app, pilot)
            await pilot.press("f")
            await pilot.pause()
            assert any("read once, complete" in m for m in said(app)), said(app)
            assert not app.main.following and "LIVE" not in status(app)
            await pilot.press("j")
            assert app.is_running


async def test_f_in_compare_mode_is_refused_as_the_cli_refuses_it() -> None:
    app = make_app(DEMO, skip=(3,))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("f")
        await pilot.pause()
        assert not app.main.following and app.b is not None
        assert "compare mode compares two finished runs" in notices(app)


async def test_s_while_following_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "live"
    shutil.copytree(DEMO, run)
    app = make_app(run, follow=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("k", "s")
        await pilot.pause()
        assert app.b is None and app.main.following


async def test_y_copies_what_is_shown_masked_unless_revealed(tmp_path: Path) -> None:
    app = make_app(demo_with_password(tmp_path), at=3)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("y")
        await pilot.pause()
        assert "hunter2" not in app.clipboard and "••••••" in app.clipboard
        assert any("masked" in m and "after seq 3" in m for m in said(app))
        await pilot.press("r", "y")
        await pilot.pause()
        assert '"password": "hunter2"' in app.clipboard


async def test_c_says_what_it_copied() -> None:
    app = make_app(DEMO, at=8)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("c")
        await pilot.pause()
        assert app.clipboard == f"{DEMO}@8"
        assert any(f"copied the link {DEMO}@8" in m for m in said(app))


async def test_a_warning_is_explained_at_its_row(tmp_path: Path) -> None:
    run = tmp_path / "no-newline"
    shutil.copytree(DEMO, run)
    ledger = run / "events.jsonl"
    ledger.write_bytes(ledger.read_bytes().rstrip(b"\n"))
    app = make_app(run)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("e")
        await settle(app, pilot)
        assert app.main.view.row(app.main.timeline.cursor_index or 0).seq == 14
        pane = app.query_one(StatePane).render_text()
        assert "⚠ warning no_final_newline: the last line has no newline" in pane
        assert "⚠ no_final_newline: the last line has no newline" in status(app)
        await pilot.press("k")
        await settle(app, pilot)
        assert "no_final_newline" not in status(app)
        assert "no_final_newline" not in app.query_one(StatePane).render_text()


async def test_d_opens_the_full_state_scrolled_to_the_change() -> None:
    app = make_app(DEMO, at=9)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("d")
        await until(pilot, lambda: "full state" in screen_text(app))
        await until(
            pilot,
            lambda: any(
                "●" in row and '"tokens": 2538' in row for row in screen_text(app).splitlines()
            ),
        )


def pane_rows(app: ReplayApp, selector: str) -> list[str]:
    """The rows of a pane as the terminal shows them (inside its border)."""
    region = app.query_one(selector).region
    rows = screen_text(app).splitlines()[region.y + 1 : region.bottom - 1]
    return [row[region.x + 1 : region.right - 1] for row in rows]


async def test_wrapping_never_drops_a_character_at_any_width() -> None:
    """At every terminal width, a message wrapped in the state pane keeps
    every character (a scrollbar appearing once cut the last one)."""
    app = make_app(SAMPLES / "refund-180", skip=(2,), at=3)
    message = "refund_recorded needs status approved, but the refund is waiting"
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: app.main.compare.ready)
        for width in range(70, 161, 3):  # a cut showed at 3 widths in a row
            await pilot.resize_terminal(width, 40)
            await pilot.press("k", "j")  # laid out again at this width
            await pilot.pause()
            shown = "".join("".join(pane_rows(app, "#state")).split())
            assert "".join(message.split()) in shown, (width, pane_rows(app, "#state"))


@pytest.fixture(scope="module")
def long_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run long enough that validating it takes seconds."""
    from replay_tui.synth.runs import write_agent_run

    run = tmp_path_factory.mktemp("long") / "run"
    write_agent_run(run, 60_000, seed=4)
    return run


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Validation held at seq 30,000 until the test sets the event (a big
    run still being validated, deterministically)."""
    from replay_tui.engine.forward import ForwardPass

    opened = threading.Event()
    consume = ForwardPass._consume_lines

    def held(self: ForwardPass, index: int, lines: list[bytes]) -> None:
        if index <= GATE < index + len(lines):  # lines are consumed a chunk at a time
            consume(self, index, lines[: GATE - index])
            opened.wait(HANG)  # bounds a hang: the test sets it
            consume(self, GATE, lines[GATE - index :])
        else:
            consume(self, index, lines)

    monkeypatch.setattr(ForwardPass, "_consume_lines", held)
    yield opened
    opened.set()


GATE = 30_000


def cursor_seq(app: ReplayApp) -> int | None:
    index = app.main.timeline.cursor_index
    return None if index is None or app.main.at_initial else app.main.view.row(index).seq


def goto_label(app: ReplayApp) -> str:
    return str(app.screen.query_one("#goto-range").render())


async def test_a_link_lands_as_soon_as_its_seq_is_validated(
    long_run: Path, gate: threading.Event
) -> None:
    app = make_app(long_run, at=60)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: cursor_seq(app) == 60)
        assert not app.replay.finished  # not after the whole run
        assert "seq 60 of" in status(app)


async def test_goto_past_the_validated_prefix_goes_there_when_reached(
    long_run: Path, gate: threading.Event
) -> None:
    app = make_app(long_run)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.valid == GATE)
        await pilot.press("colon")
        await until(pilot, lambda: "1..30,000 validated so far" in goto_label(app))
        await pilot.press(*"55000", "enter")
        await until(pilot, lambda: "going to seq 55,000 when it is reached" in notices(app))
        assert "validated up to seq 30,000: going to seq 55,000 when it is reached" in notices(app)
        assert not isinstance(app.screen, PromptScreen) and cursor_seq(app) != 55_000
        await pilot.press("colon")
        await until(pilot, lambda: isinstance(app.screen, PromptScreen))
        gate.set()  # validation goes on while the prompt is open: its range follows
        await until(pilot, lambda: app.replay.finished)
        await until(pilot, lambda: "1..60,000;" in goto_label(app))
        await pilot.press("escape")
        await until(pilot, lambda: cursor_seq(app) == 55_000)
        await pilot.press("colon", *"100", "enter")  # validated: at once, not when reached
        await until(pilot, lambda: cursor_seq(app) == 100)
        assert "going to seq 100 when" not in notices(app)


async def test_a_move_forgets_a_jump_still_waiting(long_run: Path, gate: threading.Event) -> None:
    app = make_app(long_run)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.valid == GATE)
        await pilot.press("colon", *"59000", "enter")
        await until(pilot, lambda: "going to seq 59,000 when it is reached" in notices(app))
        await pilot.press("j")
        gate.set()
        await until(pilot, lambda: app.replay.finished)
        await settle(app, pilot)  # the rows all came: a jump still waiting would be made now
        assert cursor_seq(app) == 2


def live_demo(tmp_path: Path, lines: int = 12) -> tuple[Path, list[bytes]]:
    run = tmp_path / "live-demo"
    shutil.copytree(DEMO, run)
    ledger = run / "events.jsonl"
    all_lines = ledger.read_bytes().splitlines(keepends=True)
    ledger.write_bytes(b"".join(all_lines[:lines]))
    return run, all_lines


@pytest.mark.parametrize("edited", [2, 5, 7, 10])
async def test_an_edit_in_place_with_an_append_is_found_within_a_second(
    tmp_path: Path, edited: int
) -> None:
    """One byte changed inside a line already read (same size, same inode)
    while a line is appended in the same moment: named at that line, every
    time (a random spot check once caught it one time in four)."""
    run, lines = live_demo(tmp_path)
    app = make_app(run, follow=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.valid == 12)  # read: what comes now is seen
        first = app.replay
        ledger = run / "events.jsonl"
        data = bytearray(ledger.read_bytes())
        start = sum(len(x) for x in lines[: edited - 1])
        at = data.index(b'"kind"', start)  # inside line `edited`
        data[at + 2] = ord("X")
        with open(ledger, "r+b") as fh:
            fh.write(bytes(data) + lines[12])
        await until(pilot, lambda: app.replay is not first)
        await until(pilot, lambda: f"line {edited} changed" in notices(app))
        assert f"ledger rewritten at byte {start}: line {edited} changed" in notices(app)


async def test_after_a_rewrite_the_place_is_kept_and_the_banner_goes(tmp_path: Path) -> None:
    run, lines = live_demo(tmp_path)
    app = make_app(run, follow=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.valid == 12)
        await pilot.press("home", "j", "j", "j", "j")  # seq 5: off the tail
        assert cursor_seq(app) == 5 and not app.main.riding
        first = app.replay
        ledger = run / "events.jsonl"
        ledger.write_bytes(ledger.read_bytes().replace(b'"tokens":812', b'"tokens":813'))
        await until(pilot, lambda: app.replay is not first)
        await until(pilot, lambda: "read again, 12 valid events" in notices(app))
        await until(pilot, lambda: "history changed" not in status(app))
        assert app.main.session.banner == ""
        assert cursor_seq(app) == 5  # the person's place
        assert "+" not in status(app).split("seq 5 of 12")[1][:4]
        with open(ledger, "ab") as out:
            out.write(lines[12])
        await until(pilot, lambda: app.replay.valid == 13)
        await until(pilot, lambda: "+1 new event (" in status(app))
        assert cursor_seq(app) == 5


async def test_after_a_rewrite_riding_the_tail_resumes(tmp_path: Path) -> None:
    run, lines = live_demo(tmp_path)
    app = make_app(run, follow=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.replay.valid == 12)
        await until(pilot, lambda: cursor_seq(app) == 12)
        first = app.replay
        ledger = run / "events.jsonl"
        ledger.write_bytes(ledger.read_bytes().replace(b'"tokens":812', b'"tokens":813'))
        await until(pilot, lambda: app.replay is not first)
        await until(pilot, lambda: "read again" in notices(app))
        with open(ledger, "ab") as out:
            out.write(lines[12])
        await until(pilot, lambda: cursor_seq(app) == 13)
        assert app.main.riding and "new event" not in status(app)


async def test_ctrl_p_lists_bookmarks_before_anything_is_typed() -> None:
    app = make_app(DEMO, at=3)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("b")
        await until(pilot, lambda: 2 in app.main.timeline.bookmarks)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: "◆ seq 3" in screen_text(app))


async def test_a_bookmark_on_the_error_row_is_seen_and_so_is_the_error(
    run_factory: Callable[..., Path],
) -> None:
    app = make_app(SAMPLES / "broken-divergence")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        err = app.replay.error
        assert err is not None and err.line is not None
        await pilot.press("b", "k")
        await until(pilot, lambda: err.line - 1 in app.main.timeline.bookmarks)
        row = app.main.timeline._build(err.line - 1, 1, 140).text
        assert row.startswith("◆") and "✗ divergence" in row


async def test_watching_an_object_says_which_field_changed() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        from replay_tui.questions.condition import parse_path

        app.main.side.start_watch(parse_path("calls.call-003"))
        await until(pilot, lambda: app.main.watchlist.done)
        await until(
            pilot,
            lambda: any(
                "14  tool_allowed  status: " in r and '"allowed"' in r
                for r in pane_rows(app, "#watch")
            ),
        )


async def test_help_says_esc_leaves_compare_mode() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("pagedown")  # the Esc row is past the first screen of keys
        await until(pilot, lambda: "else leave compare mode" in screen_text(app))


async def test_80x24_keeps_the_run_id_and_cuts_no_footer_key(tmp_path: Path) -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: "rules agent_run 1.0.0" in screen_text(app).splitlines()[0])
        lines = screen_text(app).splitlines()
        # the run_id is the folder's name again: it goes, the rules stay
        assert "run demo-001" not in lines[0] and "rules agent_run 1.0.0" in lines[0]
        footer = lines[-1]
        keys = footer.split("▏")[0].split()
        assert keys[-1] in {"Filter", "Play", "Follow", "Bookmark", "Secrets", "Copy"}, footer
        assert "spa" not in keys
    # a folder named otherwise: the run_id names the run in a ticket, and stays
    shutil.copytree(DEMO, tmp_path / "ticket-4521")
    app = make_app(tmp_path / "ticket-4521")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await until(pilot, lambda: "ticket-4521  run demo-001" in screen_text(app).splitlines()[0])


async def test_a_filter_of_one_row_says_row() -> None:
    app = make_app(DEMO)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        app.main.apply_filter("tool_denied")
        await until(pilot, lambda: app.main.search.matches is not None)
        assert "filter 'tool_denied': 1 row" in status(app) and "1 rows" not in status(app)


def test_the_app_refuses_a_skip_past_the_end() -> None:
    from replay_tui.core.errors import CannotRun

    with pytest.raises(
        CannotRun, match=r"--skip 99: seq 99 is past the end of the run \(14 events\)"
    ):
        make_app(DEMO, skip=(99,))
