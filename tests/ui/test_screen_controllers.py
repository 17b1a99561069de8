"""The screen's controllers with no app: the run session, the cursor's
owner, playback and what y copies."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from rich.text import Text

from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import Replay
from replay_tui.state.history import History
from replay_tui.ui.features.run.clipboard import state_to_copy
from replay_tui.ui.features.run.controller import COMPARE_FINISHED, RunSession
from replay_tui.ui.features.run.cursor import CursorOwner
from replay_tui.ui.features.run.playback import FIXED_PACE, LONGEST_WAIT, SHORTEST_WAIT, Playback
from replay_tui.views.runview import RunView
from tests.conftest import DEMO, SAMPLES
from tests.helpers.runs import demo_with_password


def test_the_session_reads_coalesces_and_reports(tmp_path: Path) -> None:
    replay, _ = open_replay(str(DEMO), watchdog=False, history=True)
    session = RunSession(replay, label="demo")
    assert session.want_advance() and not session.want_advance()  # one reader; the second waits
    seen: list[str] = []
    session.advance(
        replay,
        progress=lambda n: seen.append(f"progress {n}"),
        advanced=lambda: seen.append("advanced"),
        rewritten=lambda why: seen.append(why),
        cancelled=lambda: False,
    )
    assert seen[-1] == "advanced" and replay.finished and replay.valid == 14
    assert not session.advance_done()  # the second request was served by the same pass
    text = Text()
    session.verdict(text, validating=False, error_waiting=False)
    assert text.plain.strip() == "✓ verified"
    replay.close()


def test_the_session_after_a_rewrite_says_what_happened_and_where_the_person_was(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    shutil.copytree(DEMO, run)
    replay, _ = open_replay(str(run), watchdog=False, history=True, following=True)
    session = RunSession(replay)
    replay.advance()
    fresh = session.rewritten("ledger rewritten at byte 712: line 6 changed", (5,))
    assert "history changed: ledger rewritten at byte 712" in session.banner
    session.rewritten("again", (9,))  # a second rewrite while the first is read again
    old = session.swap(fresh)
    old.close()
    fresh.advance()
    said, place = session.after_rewrite() or ("", (None,))
    assert place == (5,) and session.banner == ""
    assert said == "history changed (again): read again, 14 valid events"
    assert session.after_rewrite() is None
    fresh.close()


def test_following_is_refused_where_it_cannot_be(tmp_path: Path) -> None:
    replay, _ = open_replay(str(DEMO), watchdog=False, history=True)
    session = RunSession(replay)
    assert session.why_not_follow(comparing=True) == (
        f"{COMPARE_FINISHED}: Esc leaves compare mode, then f follows"
    )
    assert session.why_not_follow(comparing=False) is None
    assert session.rules_path() is None
    session.reducer_spec = "my_rules.py:RULES"
    assert session.rules_path() == Path("my_rules.py").resolve()
    replay.close()


def test_the_cursor_owner_holds_jumps_and_errors_until_their_time() -> None:
    replay, _ = open_replay(str(SAMPLES / "broken-divergence"), watchdog=False, history=True)
    cursor = CursorOwner(start_seq=30)
    assert cursor.pending_due(replay) is None  # nothing validated yet
    said = "validated up to seq 0: going to seq 30 when it is reached"
    assert CursorOwner().wait_for(30, replay) == said
    replay.advance()
    replay.finish()
    assert cursor.pending_due(replay) == 30 and cursor.person_moved  # error or end: go now
    err = RunView(replay).error_index()
    assert err is not None
    assert cursor.error_found(err, cursor_index=0) == (True, None)  # theirs: the error waits
    assert cursor.error_waiting == err and cursor.error_found(err, 0) == (False, None)
    cursor.moved(err)
    assert cursor.error_waiting is None
    fresh = CursorOwner()
    assert fresh.error_found(err, cursor_index=0) == (True, err)  # untouched: go there
    assert fresh.wait_for(3, replay) is None and fresh.forget_pending() is None
    view = RunView(replay)
    last = view.row(view.row_count() - 1).seq
    assert last is not None
    assert CursorOwner.within_run(view, 3) == (3, None)
    assert CursorOwner.within_run(view, last + 5) == (
        last,
        f"seq {last + 5} is past the end of this run ({last} events): at the last one",
    )
    replay.close()


def test_playback_keeps_the_recorded_pace_within_bounds() -> None:
    play = Playback()
    assert play.wait(None, None) == 1.0 / FIXED_PACE
    assert play.wait(10.0, 10.5) == 0.5
    assert play.faster(2.0) == "speed ×2" and play.wait(10.0, 10.5) == 0.25
    assert play.wait(0.0, 1e6) == LONGEST_WAIT and play.wait(0.0, 0.0) == SHORTEST_WAIT
    for _ in range(20):
        play.faster(2.0)
    assert play.speed == 64.0
    assert play.toggle() and play.playing
    text = Text()
    play.status(text)
    assert text.plain == "  ▶ playing ×64"


def test_y_copies_the_state_masked_as_shown(tmp_path: Path) -> None:
    replay, _ = open_replay(str(demo_with_password(tmp_path)), watchdog=False, history=True)
    replay.advance()
    replay.finish()
    view = RunView(replay)
    initial = state_to_copy(view.initial_view(), reveal=False)  # prefix 0: the initial state
    assert initial is not None and orjson.loads(initial[0]) == replay.state_at(0)
    assert initial[1].startswith("copied the initial state (prefix 0) as JSON (")
    shown = state_to_copy(view.line_view(2), reveal=False)
    assert shown is not None
    data, said = shown
    assert "hunter2" not in data and "••••••" in data
    assert said.startswith("copied the state after seq 3 as JSON (")
    assert said.endswith(", secret-looking values masked as on screen (r reveals them)")
    revealed = state_to_copy(view.line_view(2), reveal=True)
    assert revealed is not None and "hunter2" in revealed[0]
    assert revealed[1].endswith(", secrets shown (r masks them)")
    replay.close()


def test_a_reload_over_a_followed_run_not_yet_read_finds_the_first_difference(
    tmp_path: Path,
) -> None:
    """``R`` answered over a followed replay that has read nothing yet (just
    made, as ``f`` makes one): the difference is where the rules changed, not
    "seq 1" (the verdicts of a replay at 0 and one at 40) nor "the same"
    (no prefix read by both)."""
    from tests.helpers.runs import source_run, write_edited_rules

    src, _ = source_run(tmp_path, 40)
    rules = tmp_path / "rules.py"
    write_edited_rules(rules, 10_000)
    spec = f"{rules}:REDUCER"
    followed, _ = open_replay(str(src), spec, watchdog=False, history=True, following=True)
    session = RunSession(followed, reducer_spec=spec)
    write_edited_rules(rules, 12)
    assert followed.valid == 0 and len(followed.ledger) == 0
    answer = session.reload(followed, lambda: False)
    assert not isinstance(answer, str)
    new, difference = answer
    assert difference == 12 and new.valid == 40
    new.close()
    followed.close()


def _proved_without_a_log(
    tmp_path: Path, events: int, *, seed: int
) -> tuple[Replay, RunSession, History]:
    """A generated run proved with the built-in rules: its patch log not made yet."""
    from replay_tui.synth.runs import write_agent_run

    write_agent_run(tmp_path / "run", events, seed=seed)
    replay, _ = open_replay(str(tmp_path / "run"), watchdog=False, history=True)
    session = RunSession(replay)
    replay.verify()
    history = replay.history
    assert history is not None and history.made_again
    return replay, session, history


def test_the_patch_log_made_behind_gives_way_to_a_question_running_the_rules_again(
    tmp_path: Path,
) -> None:
    """Both want the one interpreter lock: while a question runs the rules
    again (the log not made where it asks), the filler stops and says it
    paused, to go on after; once the question is done it makes the log."""
    replay, session, history = _proved_without_a_log(tmp_path, 3000, seed=4)
    paused: list[tuple[bool, str | None]] = []

    def see(n: int, state: object) -> bool:
        if n == 1500:  # a question half way: the filler gives way at once
            paused.append(session.fill_behind(replay, lambda: False))
        return True

    assert history.watch_again(1, replay.valid, see)
    assert paused == [(True, None)] and len(history.patches) == 0
    assert session.fill_behind(replay, lambda: False) == (False, None)
    assert len(history.patches) == replay.valid
    replay.close()


def test_a_filler_that_gave_way_says_so_when_the_question_has_ended_meanwhile(
    tmp_path: Path,
) -> None:
    """The question may end between the filler's stop and its return: it
    still says it paused, to be started again, or the log would never be
    made whole."""
    replay, session, history = _proved_without_a_log(tmp_path, 2000, seed=6)
    history.watching = 1  # a question is running the rules again
    made = history.patch_log

    def patch_log(until: int | None = None, cancelled: Callable[[], bool] | None = None) -> Any:
        try:
            return made(until, cancelled)
        finally:
            history.watching = 0  # the question ended just as the filler stopped

    history.patch_log = patch_log  # type: ignore[method-assign]
    assert session.fill_behind(replay, lambda: False) == (True, None)
    assert len(history.patches) < replay.valid
    assert session.fill_behind(replay, lambda: False) == (False, None)  # started again: made
    assert len(history.patches) == replay.valid
    replay.close()
