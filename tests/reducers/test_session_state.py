"""A Claude Code session's state holds what is open and the totals, not every
call and message ever seen, and stays exact: usage counted as if every
message's last usage were kept (at every prefix, also when a message
resumes after lines of others, and when seeking rereads lines), and a call
requested or answered twice still stops replay with the same words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.reducers import load_reducer

FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
BASE = {"sessionId": "s1", "isSidechain": False, "version": "2.1.0", "cwd": "/w"}


def _write(path: Path, recs: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in recs))
    return path


def _session(lines: list[tuple[int, tuple[int, int, int, int]]]) -> list[dict[str, Any]]:
    """A prompt, then one assistant line per (message number, usage)."""
    recs: list[dict[str, Any]] = [
        {**BASE, "type": "user", "uuid": "u0", "parentUuid": None,
         "timestamp": "2026-01-01T00:00:00.000Z", "message": {"role": "user", "content": "go"}},
    ]  # fmt: skip
    for n, (mid, usage) in enumerate(lines, start=1):
        recs.append(
            {
                **BASE,
                "type": "assistant",
                "uuid": f"u{n}",
                "parentUuid": f"u{n - 1}",
                "timestamp": f"2026-01-01T00:00:{n % 60:02d}.000Z",
                "message": {
                    "id": f"msg_{mid}",
                    "role": "assistant",
                    "model": "claude-x",
                    "content": [{"type": "text", "text": f"line {n}"}],
                    "usage": dict(zip(FIELDS, usage, strict=True)),
                },
            }
        )
    return recs


def _oracle(recs: list[dict[str, Any]]) -> list[dict[str, int]]:
    """Usage after each prefix, keeping every message's last usage (plain json)."""
    last: dict[str, dict[str, int]] = {}
    out = [dict.fromkeys(FIELDS, 0)]
    for rec in recs:
        msg = rec.get("message", {})
        if rec["type"] == "assistant" and "usage" in msg:
            last[msg["id"]] = msg["usage"]
        out.append({f: sum(u[f] for u in last.values()) for f in FIELDS})
    return out


_LINE = st.tuples(st.integers(0, 4), st.tuples(*[st.integers(0, 3000) for _ in FIELDS]))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(lines=st.lists(_LINE, min_size=1, max_size=30), every=st.integers(1, 7))
def test_usage_is_exact_at_every_prefix_when_messages_interleave(
    tmp_path_factory: Any, lines: list[tuple[int, tuple[int, int, int, int]]], every: int
) -> None:
    """Lines of five messages in any order, each with any usage: the state
    keeps one message, yet its totals equal the sum of every message's last
    usage so far, after every prefix, in the forward pass and when a prefix
    is rebuilt from a checkpoint by rereading lines."""
    recs = _session(lines)
    path = _write(tmp_path_factory.mktemp("s") / "s.jsonl", recs)
    want = _oracle(recs)
    replay, _ = open_replay(str(path))
    replay.verify()
    assert replay.error is None
    assert replay.final_state()["usage"] == want[-1]
    kept = Replay(locate_run(path), load_reducer("claude_code"), checkpoint_every=every)
    kept.verify()
    for n in range(len(recs) + 1):
        assert kept.state_at(n)["usage"] == want[n], n
    kept.close()
    replay.close()


def _call_session() -> list[dict[str, Any]]:
    return [
        {**BASE, "type": "user", "uuid": "u1", "parentUuid": None,
         "timestamp": "2026-01-01T00:00:00.000Z", "message": {"role": "user", "content": "go"}},
        {**BASE, "type": "assistant", "uuid": "u2", "parentUuid": "u1",
         "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"id": "m1", "role": "assistant", "content": [
             {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}},
        {**BASE, "type": "user", "uuid": "u3", "parentUuid": "u2",
         "timestamp": "2026-01-01T00:00:02.000Z", "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}]}},
    ]  # fmt: skip


def _stop(path: Path) -> tuple[str, int, str]:
    replay, _ = open_replay(str(path))
    replay.verify()
    assert replay.error is not None
    return replay.error.code, replay.error.seq or 0, replay.error.message


def test_a_call_answered_is_not_in_the_state_yet_asked_again_or_answered_again_stops(
    tmp_path: Path,
) -> None:
    recs = _call_session()
    replay, _ = open_replay(str(_write(tmp_path / "ok.jsonl", recs)))
    replay.verify()
    state = replay.final_state()
    assert state["tools"] == {"Bash": {"calls": 1, "errors": 0}}
    assert state["calls"]["t1"]["result_seq"] == 3  # answered, not yet read by the model
    reply = {**BASE, "type": "assistant", "uuid": "u4", "parentUuid": "u3",
             "timestamp": "2026-01-01T00:00:03.000Z",
             "message": {"id": "m2", "role": "assistant", "content": [
                 {"type": "text", "text": "done"}]}}  # fmt: skip
    replay, _ = open_replay(str(_write(tmp_path / "read.jsonl", [*recs, reply])))
    replay.verify()
    assert replay.final_state()["calls"] == {}  # the model read it: it leaves
    again = dict(recs[2], uuid="u5", parentUuid="u4", timestamp="2026-01-01T00:00:04.000Z")
    assert _stop(_write(tmp_path / "twice.jsonl", [*recs, reply, again])) == (
        "illegal_transition",
        5,
        "a second tool_result for t1: its result was recorded at seq 3",
    )
    asked = dict(recs[1], uuid="u5", parentUuid="u4", timestamp="2026-01-01T00:00:04.000Z")
    asked["message"] = dict(recs[1]["message"], id="m3")
    assert _stop(_write(tmp_path / "asked.jsonl", [*recs, reply, asked])) == (
        "illegal_transition",
        5,
        "tool_use t1 was already requested at seq 2",
    )
