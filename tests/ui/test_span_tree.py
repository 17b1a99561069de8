"""Calls folded (``v``) as a span tree: in a trace, each span's row indented
under its parent with a bar over the run's time (a waterfall); ← folds a
span's subtree into its row, → opens it one level, then its events."""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from textual.pilot import Pilot

from replay_tui.engine.indexes.calls import NO_CALL, CallIndex
from replay_tui.engine.open import open_replay
from replay_tui.formats.run import OTEL, locate_run
from replay_tui.ui.app import ReplayApp
from replay_tui.ui.launch import make_app
from replay_tui.ui.render.span_rows import OPEN_END, span_bar
from replay_tui.views.calls import CallRow, Folding, bar_cells
from tests.conftest import TESTS
from tests.helpers.screen import pane_text, ready, said, screen_text, seq_at_cursor, settle
from tests.helpers.waiting import until

FIXTURES = TESTS / "fixtures"
HANDOFF = FIXTURES / "otel-traces" / "hand" / "openai_agents_handoff.json"
#: A Claude Code session whose parallel tool_use records name each other.
CHAINED = FIXTURES / "agent-sessions" / "claude-code" / "codemie--session-624a4a58.jsonl"


@dataclass
class _Line:
    key: str | None
    parent_seq: int | None = None


def _index(lines: list[_Line], *, nests: bool = True) -> CallIndex:
    index = CallIndex(lambda line: line.key, nests=nests)  # type: ignore[attr-defined]
    for at, line in enumerate(lines):
        index.note(at, line)  # type: ignore[arg-type]
    return index


# -- the parents, noted in the forward pass ---------------------------------
def test_a_call_s_parent_is_the_call_its_first_line_names() -> None:
    index = _index(
        [
            _Line("root"),  # line 0, seq 1
            _Line("a", 1),  # inside root
            _Line("b", 2),  # inside a
            _Line(None, 1),  # no call: a row of its own
            _Line("c", 4),  # names a line in no call: a root
            _Line("a", 2),  # a's later line: no new parent
            _Line("d", 9),  # names a line not yet noted: a root
        ]
    )
    assert list(index.parent) == [NO_CALL, 0, 1, NO_CALL, NO_CALL]
    assert list(index.children) == [1, 1, 0, 0, 0] and index.nested == 2


def test_calls_nest_only_where_the_rules_say_so() -> None:
    lines = [_Line("a"), _Line("b", 1)]
    assert _index(lines, nests=False).nested == 0
    # no nests given: flat (the replay passes the rules' own ``calls_nest``)
    plain = CallIndex(lambda line: line.key)  # type: ignore[attr-defined]
    for at, line in enumerate(lines):
        plain.note(at, line)  # type: ignore[arg-type]
    assert plain.nested == 0 and not plain.nests


def _calls(path: Path) -> CallIndex:
    replay, _ = open_replay(locate_run(path), None, watchdog=False, history=True)
    replay.verify()
    replay.close()
    assert replay.calls is not None
    return replay.calls


def test_a_trace_s_spans_nest_and_a_claude_code_session_s_calls_do_not() -> None:
    spans = _calls(HANDOFF)
    assert spans.nests and spans.calls == 7
    # workflow > (triage > chat), (billing > chat, refund, chat)
    assert list(spans.parent) == [NO_CALL, 0, 1, 0, 3, 3, 3]
    # parallel tool_use records name the one before: not a container
    session = _calls(CHAINED)
    assert not session.nests and session.nested == 0


# -- which rows show ----------------------------------------------------------
def _tree() -> Folding:
    """root(0) > a(1) > b(2); root > c(3); then a lone line, then d(4)."""
    return Folding(
        _index(
            [
                _Line("root"),  # 0
                _Line("a", 1),  # 1
                _Line("b", 2),  # 2
                _Line("b"),  # 3
                _Line("a"),  # 4
                _Line("c", 1),  # 5
                _Line("c"),  # 6
                _Line("root"),  # 7
                _Line(None),  # 8
                _Line("d"),  # 9
            ]
        )
    )


def test_left_folds_a_subtree_into_its_row_and_right_opens_one_level() -> None:
    folding = _tree()
    assert folding.tree and list(folding.rows(10)) == [0, 1, 2, 5, 8, 9]
    assert [folding.depth(n) for n in range(5)] == [0, 1, 2, 1, 0]
    assert folding.toggle(0, unfold=False) == 0  # ← on root: its subtree folds
    assert list(folding.rows(10)) == [0, 8, 9]
    assert folding.row_of(3) == 0 and folding.holds(0, 3)
    assert folding.target(0) == 7  # the prefix through the subtree's last line
    assert folding.toggle(0, unfold=True) == 0  # → opens one level: a is folded
    assert list(folding.rows(10)) == [0, 1, 5, 8, 9] and folding.is_closed(1)
    assert folding.toggle(1, unfold=True) == 1  # → again on a: b shows
    assert list(folding.rows(10)) == [0, 1, 2, 5, 8, 9]
    assert folding.toggle(1, unfold=True) == 1  # a second →: a's own events
    assert list(folding.rows(10)) == [0, 1, 2, 4, 5, 8, 9]
    assert folding.toggle(4, unfold=False) == 1  # ← on its event: folded again
    assert folding.toggle(2, unfold=False) == 1  # ← on a leaf: to its parent
    assert folding.toggle(9, unfold=False) is None  # a root leaf: nothing


def test_going_inside_a_folded_subtree_opens_the_way() -> None:
    folding = _tree()
    folding.toggle(0, unfold=False)
    folding.rows(10)
    folding.reveal(3)  # b's second line
    rows = folding.rows(10)
    assert 3 in rows and folding.row_of(3) == 3 and 1 in rows


@st.composite
def _ledgers(draw: st.DrawFn) -> list[_Line]:
    lines: list[_Line] = []
    for at in range(draw(st.integers(1, 40))):
        key = draw(st.one_of(st.none(), st.integers(0, 8).map(lambda n: f"c{n}")))
        names = draw(st.one_of(st.none(), st.integers(1, at + 1)))
        lines.append(_Line(key, names))
    return lines


@given(_ledgers(), st.data())
def test_a_tree_s_rows_show_every_line_once(lines: list[_Line], data: st.DataObject) -> None:
    index = _index(lines)
    folding = Folding(index)
    calls = range(index.calls)
    for number in data.draw(st.lists(st.sampled_from(calls) if index.calls else st.nothing())):
        if data.draw(st.booleans()):
            folding.toggle(index.first[number], unfold=data.draw(st.booleans()))
        else:
            folding.close(number)
    total = len(lines) + data.draw(st.integers(0, 3))
    rows = folding.rows(total)
    assert len(rows) == len(set(rows))
    if not folding.tree:
        assert list(rows) == sorted(rows)
    place = {line: at for at, line in enumerate(rows)}
    for number in calls:  # depth first: a span's row before its children's
        up = index.parent[number]
        if up != NO_CALL and index.first[number] in place and index.first[up] in place:
            assert place[index.first[up]] < place[index.first[number]]
    for line in range(total):
        shown = folding.row_of(line)
        assert shown in rows and shown <= line
        assert folding.target(shown) >= line or line >= len(index)
    for number in folding.closed:  # nothing inside a closed span has a row
        for inner in calls:
            up = index.parent[inner]
            while up not in (NO_CALL, number):
                up = index.parent[up]
            if up == number:
                assert index.first[inner] not in rows
    only = array("i", [line for line in range(total) if line % 2 == 0])
    assert set(folding.rows(total, only)) == {folding.row_of(line) for line in only}


# -- the bars -----------------------------------------------------------------
_fractions = st.floats(0, 1, allow_nan=False)


@given(st.lists(_fractions, min_size=4, max_size=4), st.integers(1, 200))
def test_a_bar_stays_in_its_track_and_a_child_s_inside_its_parent_s(
    times: list[float], width: int
) -> None:
    outer_start, inner_start, inner_end, outer_end = sorted(times)
    a, b = bar_cells(outer_start, outer_end, width)
    c, d = bar_cells(inner_start, inner_end, width)
    assert 0 <= a < b <= width and 0 <= c < d <= width
    assert a <= c and d <= b


def test_a_bar_spans_its_time_and_a_running_one_reaches_the_latest_ts() -> None:
    done = CallRow("s", 2, "ok", start_ts=102.5, duration=2.5)
    assert span_bar(done, 100.0, 10.0, 20).plain == " " * 5 + "█" * 6 + " " * 9
    running = CallRow("s", 1, "open", start_ts=105.0, duration=0.0)
    bar = span_bar(running, 100.0, 10.0, 20).plain
    assert bar == " " * 10 + "█" * 9 + OPEN_END and len(bar) == 20
    assert span_bar(CallRow("s", 1, "ok"), 100.0, 10.0, 7).plain == " " * 7  # no ts


# -- on screen ------------------------------------------------------------------
async def _tree_shown(pilot: Pilot[int]) -> None:
    await ready(pilot)
    await pilot.press("v")
    await settle(pilot.app, pilot)  # type: ignore[arg-type]


async def test_v_on_a_trace_shows_its_spans_as_a_tree_with_bars() -> None:
    app = make_app(HANDOFF)
    async with app.run_test(size=(140, 40)) as pilot:
        await _tree_shown(pilot)
        timeline = app.main.timeline
        assert timeline.row_count == 7 and "span tree" in str(timeline.border_subtitle)
        assert any("as a span tree" in m for m in said(app))
        screen = screen_text(app)
        names = ["▾ invoke_workflow", "  ▾ invoke_agent triage", "      chat gpt-4.1-mini"]
        names += ["  ▾ invoke_agent billing", "      issue_refund 42"]
        for name in names:
            assert f"s {name}" in screen, name
        workflow = next(line for line in screen.splitlines() if "invoke_workflow" in line)
        refund = next(line for line in screen.splitlines() if "issue_refund" in line)
        # the workflow's bar spans the run; the refund's a short piece inside it
        w_start, w_end = workflow.index("█"), workflow.rindex("█")
        r_start, r_end = refund.index("█"), refund.rindex("█")
        assert w_start < r_start <= r_end < w_end and r_end - r_start < 5
        assert seq_at_cursor(app) == 14  # the cursor's row: the workflow, whole


async def test_left_folds_the_workflow_into_one_row_and_right_brings_its_children_back() -> None:
    app = make_app(HANDOFF)
    async with app.run_test(size=(140, 40)) as pilot:
        await _tree_shown(pilot)
        timeline = app.main.timeline
        await pilot.press("home", "left")
        await settle(app, pilot)
        assert timeline.row_count == 1 and "▸ invoke_workflow" in screen_text(app)
        assert seq_at_cursor(app) == 14 and "prefix 1..14" in pane_text(app, "state")
        await pilot.press("right")
        await settle(app, pilot)
        screen = screen_text(app)
        assert timeline.row_count == 3 and "▸ invoke_agent billing" in screen
        await pilot.press("down", "down")  # the billing agent: its row is its span
        await settle(app, pilot)
        assert seq_at_cursor(app) == 13 and "prefix 1..13" in pane_text(app, "state")
        await pilot.press("right")  # its children
        await settle(app, pilot)
        assert timeline.row_count == 6 and "issue_refund 42" in screen_text(app)
        await pilot.press("right")  # then its own events, under its parent
        await settle(app, pilot)
        assert "  ▾ span_start" in screen_text(app) and seq_at_cursor(app) == 6
        await pilot.press("left", "left")  # its events, then its subtree, fold
        await settle(app, pilot)
        assert timeline.row_count == 3 and seq_at_cursor(app) == 13
        await pilot.press("left")  # then up to the workflow
        await settle(app, pilot)
        assert seq_at_cursor(app) == 14 and timeline.cursor == 0


async def test_going_to_a_seq_inside_a_folded_span_opens_the_way() -> None:
    app = make_app(HANDOFF)
    async with app.run_test(size=(140, 40)) as pilot:
        await _tree_shown(pilot)
        await pilot.press("home", "left")
        await settle(app, pilot)
        await pilot.press("colon", "1", "0", "enter")
        await settle(app, pilot)
        assert seq_at_cursor(app) == 10
        screen = screen_text(app)
        assert "│ span_end" in screen and "▾ invoke_agent billing" in screen


def test_snapshot_span_tree(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(HANDOFF), terminal_size=(140, 40), run_before=_tree_shown)


# -- followed: spans exported as they end, children first ------------------------
#: A real run of Strands under the SDK's SimpleSpanProcessor: one export
#: request a line, each span's children before it (the cycle on line 4, the
#: agent's span last).
SIMPLE = FIXTURES / "otel-producers" / "strands_default_tools_simple.jsonl"


def _timeline_rows(app: ReplayApp) -> list[str]:
    """The timeline's rows on screen, as text (its border and the panes beside it cut)."""
    return [line.split("┃")[1] for line in screen_text(app).splitlines() if line.count("┃") >= 2]


def _row(app: ReplayApp, name: str) -> str:
    """The timeline row that shows the span ``name`` (the first)."""
    return next(row for row in _timeline_rows(app) if f" {name}" in row)


async def _followed_to(pilot: Pilot[int], live: Path, lines: list[bytes], upto: int) -> None:
    app = pilot.app
    assert isinstance(app, ReplayApp)
    with live.open("ab") as out:
        out.write(b"".join(lines[:upto]))
    await until(pilot, lambda: app.replay.valid == len(app.replay.ledger) > 0)
    await until(pilot, lambda: app.main.timeline.row_count == _rows_due(app))
    await settle(app, pilot)


def _rows_due(app: ReplayApp) -> int:
    """The rows once every line read is shown: a row per span if folded."""
    calls = app.replay.calls
    if app.main.timeline.folding is None or calls is None:
        return app.replay.valid
    return calls.calls


async def test_a_followed_span_goes_under_its_parent_when_the_parent_is_exported(
    tmp_path: Path,
) -> None:
    lines = SIMPLE.read_bytes().splitlines(keepends=True)
    live = tmp_path / "traces.jsonl"
    app = make_app(live, follow=True, fmt=OTEL)
    async with app.run_test(size=(140, 40)) as pilot:
        await _followed_to(pilot, live, lines, 1)
        await pilot.press("v")
        await _followed_to(pilot, live, lines[1:], 2)  # chat, two tools: parent not yet here
        timeline = app.main.timeline
        assert timeline.row_count == 3 and "span tree" in str(timeline.border_subtitle)
        before = _row(app, "get_weather")
        await pilot.press("up")  # off the tail, onto the first tool's row (seq 6-9)
        await settle(app, pilot)
        assert seq_at_cursor(app) == 9 and not app.main.riding
        await _followed_to(pilot, live, lines[3:], 1)  # the cycle, their parent
        after = _row(app, "get_weather")
        cycle = _row(app, "execute_event_loop")
        assert after.index("get_weather") > before.index("get_weather")  # indented now
        assert after.index("get_weather") > cycle.index("execute_event_loop")
        assert [row for row in _timeline_rows(app) if "▶" in row] == [after]
        assert seq_at_cursor(app) == 9 and timeline.cursor == 2  # on the same span
        assert "prefix 1..9" in pane_text(app, "state")
        await pilot.press("left")  # a leaf: up to its parent, which came after it
        await settle(app, pilot)
        assert seq_at_cursor(app) == 18 and timeline.cursor == 0
        await pilot.press("left")  # the cycle's subtree folds into its row
        await settle(app, pilot)
        assert timeline.row_count == 1 and "▸ execute_event_loop" in screen_text(app)
        await pilot.press("right", "down")  # opened again; onto the first chat
        await settle(app, pilot)
        assert timeline.row_count == 4 and seq_at_cursor(app) == 5
        await _followed_to(pilot, live, lines[4:], 3)  # the rest: the agent's span last
        assert timeline.row_count == 7 and seq_at_cursor(app) == 5  # still on the chat
        assert timeline.cursor == 2 and _row(app, "chat").startswith("▶")
        # one level deeper, beside the tools, under the agent's span come last
        chat, tool = _row(app, "chat"), _row(app, "get_weather")
        assert chat.index("chat") == tool.index("get_weather") > after.index("get_weather")
        await pilot.press("end")  # the tail: the agent's row, the prefix through its end
        await settle(app, pilot)
        assert timeline.cursor == 0 and seq_at_cursor(app) == 35
        assert app.main.riding


async def test_riding_the_tail_of_a_followed_trace_ends_on_its_root_as_opened_cold(
    tmp_path: Path,
) -> None:
    lines = SIMPLE.read_bytes().splitlines(keepends=True)
    live = tmp_path / "traces.jsonl"
    app = make_app(live, follow=True, fmt=OTEL)
    async with app.run_test(size=(140, 40)) as pilot:
        await _followed_to(pilot, live, lines, 1)
        await pilot.press("v")
        for sent in range(1, len(lines)):
            await _followed_to(pilot, live, lines[sent:], 1)
            assert app.main.riding, f"left the tail at line {sent + 1}"
            assert seq_at_cursor(app) == app.replay.valid  # the row of the last record
        followed = [row.replace("▶", " ") for row in _timeline_rows(app)[:7]]
    cold = make_app(SIMPLE, fmt=OTEL)
    async with cold.run_test(size=(140, 40)) as pilot:
        await _tree_shown(pilot)
        assert [row.replace("▶", " ") for row in _timeline_rows(cold)[:7]] == followed
        assert "  ▾ execute_event_loop" in _row(cold, "▾ execute_event_loop")
