"""The trace rules' state holds what a user reads, and every field of it is
documented in the guide's traces page (docs/otel.md, "The state"): the
field paths the state has at every prefix of every trace fixture are
collected and each must be a row of that table, and each row a field some
state has, so the page cannot drift from the rules.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from replay_tui.formats.budget import Budget
from replay_tui.formats.receipts import ReceiptStore
from replay_tui.reducers.base import Context
from replay_tui.reducers.otel_genai import REDUCER
from tests.conftest import ROOT
from tests.helpers.otel_attribution import SEC, T0, choice, doc, log_record
from tests.helpers.otel_records import TRACE_FIXTURES, file_events, replayed_events

PAGE = ROOT / "docs" / "otel.md"
#: Maps keyed by data (span ids, model names): their keys are ``*``.
MAPS = frozenset({"open", "cost.by_model"})
#: Values that are the run's own JSON (a tool's arguments and result): not descended.
OPAQUE = frozenset({"turns[].tool_calls[].args", "turns[].tool_calls[].result"})


def _paths(value: Any, path: str, out: set[str]) -> None:
    if path:
        out.add(path)
    if path in OPAQUE:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _paths(item, f"{path}.*" if path in MAPS else f"{path}.{key}".lstrip("."), out)
    elif isinstance(value, list):
        for item in value:
            _paths(item, f"{path}[]", out)


def _state_paths(tmp: Path) -> set[str]:
    """Every field path of the state after every prefix of every fixture,
    and of a trace with a log no model call can claim."""
    stray = log_record(T0 + 3 * SEC, "", choice("Stray words."), "gen_ai.choice")
    extra = tmp / "unattributed.json"
    extra.write_bytes(orjson.dumps(doc(T0 + 4 * SEC, [stray])))
    out: set[str] = set()
    for path in [*TRACE_FIXTURES, extra]:
        ctx = Context(Budget(), ReceiptStore(ROOT, enabled=False))
        state = REDUCER.initial_state()
        _paths(state, "", out)
        for event in replayed_events(path):
            state = REDUCER.apply(state, event, ctx)
            _paths(state, "", out)
    return out


def _documented() -> set[str]:
    """The first column of the table under "## The state" in docs/otel.md."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("\n## The state\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([^`]+)` \|", section, flags=re.MULTILINE))


def test_every_field_of_the_state_is_documented_and_every_row_is_a_field(
    tmp_path: Path,
) -> None:
    found = _state_paths(tmp_path)
    documented = _documented()
    assert found - documented == set(), "fields the state has and docs/otel.md does not list"
    assert documented - found == set(), "rows of docs/otel.md no state has"


def test_the_state_is_what_users_read_not_the_rules_bookkeeping() -> None:
    """At a model call's end the change is the turn's text, tokens and cost
    and the span leaving ``open``: no store, copies or counters."""
    path = ROOT / "tests" / "fixtures" / "otel-producers" / "openai_v2_events_tools.json"
    ctx = Context(Budget(), ReceiptStore(ROOT, enabled=False))
    state = REDUCER.initial_state()
    for event in file_events(path):
        before = orjson.loads(orjson.dumps(state))
        state = REDUCER.apply(state, event, ctx)
        if event.kind == "span_end" and event.payload["name"].startswith("chat"):
            changed = {k for k in state if state[k] != before[k]}
            assert changed <= {"turns", "tokens", "cost", "open", "content_captured"}
    assert set(state) == {
        "turns",
        "tokens",
        "cost",
        "session",
        "content_captured",
        "unattributed",
        "open",
    }
