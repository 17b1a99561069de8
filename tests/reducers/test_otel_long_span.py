"""One model call with many log records costs each log its own work, not
the logs before it: summarising the call's messages again at every log made
a span of 4,000 logs take 27 s (benchmarks/bench_span_logs.py times it; this
counts the work, which no machine's load changes): the messages read, as
text, over a whole replay grow as the logs do.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.bench_span_logs import document
from replay_tui.formats.budget import Budget
from replay_tui.formats.receipts import ReceiptStore
from replay_tui.reducers.base import Context
from replay_tui.reducers.otel_genai import REDUCER, messages
from tests.conftest import ROOT
from tests.helpers.otel_records import file_events


def _messages_read(
    tmp: Path, logs: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, dict[str, Any]]:
    """How many messages the rules read as text over one span of ``logs``
    log records, and the final state."""
    read = 0
    real = messages.text_of

    def counting(msgs: Iterable[Any] | None) -> str | None:
        nonlocal read
        seen = list(msgs or [])
        read += len(seen)
        return real(seen)

    import replay_tui.reducers.otel_genai as package

    for name in dir(package):
        module = getattr(package, name)
        if getattr(module, "text_of", None) is real:
            monkeypatch.setattr(module, "text_of", counting)
    monkeypatch.setattr(messages, "text_of", counting)
    path = tmp / f"span-{logs}.json"
    path.write_bytes(document(logs))
    ctx = Context(Budget(), ReceiptStore(ROOT, enabled=False))
    state = REDUCER.initial_state()
    for event in _events(path):
        state = REDUCER.apply(state, event, ctx)
    monkeypatch.undo()
    return read, state


def _events(path: Path) -> Iterator[Any]:
    yield from file_events(path)


def test_a_span_of_many_logs_reads_each_message_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, _ = _messages_read(tmp_path, 150, monkeypatch)
    large, state = _messages_read(tmp_path, 1200, monkeypatch)
    assert large <= 8 * small * 1.15  # eight times the logs: about eight times the reading
    [turn] = state["turns"]
    assert turn["user_text"] == "message 1197 of the conversation"  # the last user message


# -- the book as its logs come equals the book made at once ------------------------
def _reference(events: list[Any], logs: list[Any]) -> Any:
    """What the rules read of a span's older per-message records before
    they were kept as they come: every record sorted and paired again."""
    found = [(e["time"], 0, i, e) for i, e in enumerate(events) if e["name"] in messages.LEGACY]
    found += [(lg["time"], 1, i, lg) for i, lg in enumerate(logs) if lg["name"] in messages.LEGACY]
    if not found and not any("msgs" in e for e in events):
        return None
    leg_in: list[Any] = []
    leg_out: list[Any] = []
    for *_, rec in sorted(found, key=lambda x: x[:3]):
        msg = rec["msg"]
        if msg and msg["parts"]:
            (leg_in if rec["side"] == "input" else leg_out).append(msg)
    for e in events:
        if e["name"] == "gen_ai.content.prompt":
            leg_in += e["msgs"]
        elif e["name"] == "gen_ai.content.completion":
            leg_out += e["msgs"]
    return messages.pair(leg_in, leg_out)


_TEXT = st.sampled_from(["hi", "Hello there", "  done\n", "", "__REDACTED__"])
_PART = st.one_of(
    st.builds(lambda c: {"type": "text", "content": c}, _TEXT),
    st.builds(
        lambda n, a: {"type": "tool_call", "id": f"c{n}", "name": "get", "arguments": a},
        st.integers(0, 3),
        st.sampled_from([None, {}, {"city": "Paris"}]),
    ),
    st.builds(
        lambda n, r: {"type": "tool_call_response", "id": f"c{n}", "name": None, "response": r},
        st.integers(0, 3),
        st.sampled_from([None, {}, "sunny", {"error": "no"}]),
    ),
)
_MSG = st.builds(
    lambda role, parts: {"role": role, "parts": parts},
    st.sampled_from(["user", "user", "user", "assistant", "tool", "system"]),
    st.lists(_PART, min_size=1, max_size=3),
)
_LOG = st.one_of(
    st.builds(
        lambda name, msg, t: {
            "name": name,
            "side": "output" if name == "gen_ai.choice" else "input",
            "msg": msg,
            "time": t,
        },
        st.sampled_from(sorted(messages.LEGACY)),
        st.one_of(_MSG, _MSG, _MSG, st.none()),
        st.integers(0, 20),
    ),
    st.builds(
        lambda usage, t: {"name": messages.DETAILS, "pair": None, "usage": usage, "time": t},
        st.one_of(st.none(), st.just([5, 2, 0, 0])),
        st.integers(0, 20),
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    events=st.lists(_LOG, max_size=3),
    logs=st.lists(_LOG, max_size=16),
    prompt=st.booleans(),
)
def test_a_book_kept_as_logs_come_says_what_one_made_at_once_says(
    events: list[Any], logs: list[Any], prompt: bool
) -> None:
    from replay_tui.reducers.otel_genai.logbook import LogBook

    if prompt:
        msgs = [{"role": "user", "parts": [{"type": "text", "content": "q"}]}]
        events = [*events, {"name": "gen_ai.content.prompt", "msgs": msgs, "time": 3}]
    for i, log in enumerate(logs):
        log["copy"] = i
    book = LogBook(events, [])
    for k, log in enumerate(logs, 1):
        seen = logs[:k]
        if book.follows(log):
            book.add(seen, log)
        else:
            book = LogBook(events, seen)
        assert book.legacy_pair() == _reference(events, seen)
        whole = LogBook(events, seen)
        assert book.usage == whole.usage
        assert (book.details_in, book.details_out) == (whole.details_in, whole.details_out)
