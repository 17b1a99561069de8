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
