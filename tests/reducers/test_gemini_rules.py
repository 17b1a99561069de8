"""The ``gemini`` rules change the state a line at a time; Gemini CLI's
loader reads the whole prefix again. For any mix of the lines it meets
(messages written and rewritten, rewinds to loaded ids and to others,
snapshots with repeated ids, metadata, lines it skips), the state after each
line equals that whole reading, done here the loader's way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.core.errors import CannotRun
from replay_tui.engine.open import open_replay
from replay_tui.formats.gemini.records import TOKEN_FIELDS

IDS = ["a", "b", "c", "d"]
MODELS = ["gemini-2.5-flash", "gemini-2.5-pro", None]


def loader(lines: list[bytes]) -> tuple[bool, list[dict[str, Any]], dict[str, int]]:
    """``loadConversationRecord`` of ``lines`` (the steps of its loop, read
    afresh): loaded or not, the messages, the token totals."""
    meta: dict[str, Any] = {}
    messages: dict[str, Any] = {}
    for raw in lines:
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(rec, dict):
            continue
        if isinstance(rec.get("$rewindTo"), str):
            keys = list(messages)
            if rec["$rewindTo"] in messages:
                for key in keys[keys.index(rec["$rewindTo"]) :]:
                    del messages[key]
            else:
                messages.clear()
        elif isinstance(rec.get("id"), str):
            messages[rec["id"]] = rec
        elif isinstance(rec.get("$set"), dict | list):
            got = rec["$set"]
            if isinstance(got, dict) and isinstance(got.get("messages"), list):
                messages.clear()
                for m in got["messages"]:
                    if isinstance(m, dict) and isinstance(m.get("id"), str):
                        messages[m["id"]] = m
            if isinstance(got, dict):
                meta.update(got)
        elif isinstance(rec.get("sessionId"), str) and isinstance(rec.get("projectHash"), str):
            meta.update(rec)
            if isinstance(rec.get("messages"), list):
                for m in rec["messages"]:
                    if isinstance(m, dict) and isinstance(m.get("id"), str):
                        messages[m["id"]] = m
    totals = dict.fromkeys(TOKEN_FIELDS, 0)
    for m in messages.values():
        tokens = m.get("tokens")
        if isinstance(tokens, dict):
            for f in TOKEN_FIELDS:
                value = tokens.get(f)
                if isinstance(value, int) and not isinstance(value, bool):
                    totals[f] += value
    return (
        bool(meta.get("sessionId")) and bool(meta.get("projectHash")),
        list(messages.values()),
        totals,
    )


def message(mid: str, kind: str, n: int, model: str | None) -> dict[str, Any]:
    rec: dict[str, Any] = {"id": mid, "timestamp": "2026-12-06T10:00:00.000Z", "type": kind}
    rec["content"] = f"text {n}"
    if kind == "gemini":
        rec["tokens"] = {"input": 10 * n, "output": n, "cached": n // 2, "total": 11 * n}
        if model is not None:
            rec["model"] = model
    return rec


LINE = st.one_of(
    st.builds(
        message,
        st.sampled_from(IDS),
        st.sampled_from(["user", "gemini", "info"]),
        st.integers(0, 50),
        st.sampled_from(MODELS),
    ),
    st.builds(lambda i: {"$rewindTo": i}, st.sampled_from([*IDS, "zz"])),
    st.builds(
        lambda ms: {"$set": {"messages": ms, "lastUpdated": "x"}},
        st.lists(
            st.builds(
                message,
                st.sampled_from(IDS),
                st.sampled_from(["user", "gemini"]),
                st.integers(0, 9),
                st.sampled_from(MODELS),
            ),
            max_size=4,
        ),
    ),
    st.just({"$set": {"summary": "s"}}),
    st.just({"sessionId": "s1", "projectHash": "p1", "startTime": "t"}),
    st.just("not json"),
    st.just(7),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=st.lists(LINE, min_size=1, max_size=14), start=st.booleans())
def test_each_line_equals_the_loader_reading_the_prefix(
    tmp_path: Path, body: list[Any], start: bool
) -> None:
    head: list[Any] = [{"sessionId": "s0", "projectHash": "p0", "kind": "main"}] if start else []
    lines = [(v.encode() if isinstance(v, str) else orjson.dumps(v)) for v in [*head, *body]]
    session = tmp_path / "session-prop.jsonl"
    session.write_bytes(b"\n".join(lines) + b"\n")
    try:
        replay, _ = open_replay(str(session), fmt="gemini", history=True)
    except CannotRun as why:  # no line Gemini CLI would take: not a session at all
        assert "not a Gemini CLI session" in str(why)
        assert not any(isinstance(v, dict) for v in [*head, *body])
        return
    try:
        replay.verify()
        assert replay.error is None, replay.error
        for k in range(1, len(lines) + 1):
            state = replay.state_at(k)
            loaded, messages, totals = loader(lines[:k])
            assert state["loaded"] == loaded, k
            assert state["messages"] == messages, k
            assert {f: state["tokens"][f] for f in TOKEN_FIELDS} == totals, k
            # what was spent never goes back, whatever the conversation loses
            assert all(state["spent"][f] >= 0 for f in TOKEN_FIELDS), k
            if k > 1:
                before = replay.state_at(k - 1)["spent"]
                assert all(state["spent"][f] >= before[f] for f in TOKEN_FIELDS), k
    finally:
        replay.close()
