"""A session's sub-agents while the run is still being proved: a row drawn
then reads the last state kept (the rules are not run again over the events
after it for every row), and once the proof is done every sub-agent's
transcript is found."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay_tui.engine.open import open_replay
from replay_tui.state.history import History
from replay_tui.synth.claude_code import write_claude_code_session
from replay_tui.views.subagents import SubAgents


def test_rows_drawn_while_proving_run_no_rules_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = write_claude_code_session(tmp_path, turns=40, seed=5, subagents=30)
    replay, _ = open_replay(str(facts["path"]), history=True)
    try:
        assert replay.history is not None and replay.history.made_again
        spans: list[int] = []
        span_of = History._span_of
        monkeypatch.setattr(
            History, "_span_of", lambda self, n: spans.append(n) or span_of(self, n)
        )
        agents = SubAgents(replay)
        drawn: list[tuple[int, int, set[str], set[str]]] = []

        def draw(_lines: int) -> None:  # a row drawn while the pass goes on
            assert replay.history is not None
            kept, state = replay.history.last_kept()
            if 0 < kept < replay.valid and not replay.finished:
                said = {c for c, a in state["agents"].items() if a.get("agent_id") is not None}
                drawn.append((kept, replay.valid, set(agents.transcripts()), said))

        replay.advance(progress=draw, every=64)
        assert len(drawn) > 3 and spans == []  # no span made again to draw a row
        assert all(found == said for _, _, found, said in drawn)
        replay.verify()
        assert replay.finished
        found = agents.transcripts()
        assert set(found) == set(facts["agents"]) and len(found) == 30
        assert all(path.is_file() for path in found.values())
    finally:
        replay.close()
