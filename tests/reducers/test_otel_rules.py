"""The otel_genai rules against every truth file of the OpenTelemetry corpus.

tests/fixtures/otel-traces/ is the agentevals corpus, copied unchanged: each
trace file beside a NAME.truth.json saying which turns a correct reader finds.
The files become envelope events here (tests/helpers/otel_records.py, the
reference loader, until the trace source exists), go through the real rules
one at a time, and the final state is compared field by field.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.formats.envelope import Event
from replay_tui.reducers import _FOR_FORMAT, load_reducer, rules_for_run
from replay_tui.reducers.base import Context, State
from replay_tui.reducers.otel_genai import REDUCER
from replay_tui.reducers.otel_genai.rules import _MEMO_KEY, MemoLost
from replay_tui.state import canonical
from replay_tui.state.drafts import Journal
from replay_tui.state.history import apply_changes
from replay_tui.state.persistent import freeze, thaw
from tests.conftest import ROOT
from tests.helpers.otel_corpus import (
    CORPUS,
    MULTI_TRACE,
    TRACES,
    TRUTHS,
    events_of,
    every_prefix,
    interleaved,
    name_of,
    new_ctx,
    one_long_trace,
    renumbered,
)
from tests.helpers.otel_records import load_file, records, to_events
from tests.helpers.otel_truth import compare


def run(
    events: list[Event], state: State | None = None, ctx: Context | None = None
) -> tuple[State, list[tuple[int, str]]]:
    """The state after ``events``, and what the rules warned of, by seq."""
    ctx = ctx or new_ctx()
    state = REDUCER.initial_state() if state is None else state
    said: list[tuple[int, str]] = []
    for event in events:
        ctx.warnings = []
        state = REDUCER.apply(state, event, ctx)
        said += [(event.seq, w) for w in ctx.warnings]
    return state, said


# -- every truth file ---------------------------------------------------------------
def test_the_corpus_is_here_unchanged_in_shape() -> None:
    assert len(TRUTHS) == 47
    assert (CORPUS / "README.md").is_file() and (CORPUS / "LICENSE").is_file()
    assert all(p.is_file() for p in TRACES)


@pytest.mark.parametrize("path", TRACES, ids=name_of)
def test_truth_file_matches(path: Path) -> None:
    truth = orjson.loads(path.with_name(path.stem + ".truth.json").read_bytes())
    state, _ = run(events_of(path))
    assert compare(truth, state) == []
    assert set(state) == {
        "turns",
        "tokens",
        "cost",
        "session",
        "content_captured",
        "unattributed",
        "open",
    }
    assert state["unattributed"] == []
    assert state["open"] == {}
    assert REDUCER.summary(state) in ("done", "failed")


# -- order ---------------------------------------------------------------------------
def _final(state: State) -> dict[str, Any]:
    """The state as JSON, with where each log is in this timeline (its
    ``seq``, which differs with the order of the records) left out: the same
    set of records must give the same state up to the records' numbers."""
    final: dict[str, Any] = orjson.loads(orjson.dumps(state, option=orjson.OPT_SORT_KEYS))
    for log in final["unattributed"]:
        log.pop("seq", None)
    return final


def _store(events: list[Event]) -> dict[str, Any]:
    """The store of spans the rules keep in their memo after ``events``, as
    :func:`_final` says a state (the logs' seqs left out)."""
    ctx = new_ctx()
    state, _ = run(events, ctx=ctx)
    store = orjson.loads(orjson.dumps(ctx.memo(state)[_MEMO_KEY].store))
    for trace in store.values():
        for log in trace["logs"]:
            log.pop("seq", None)
    return store  # type: ignore[no-any-return]


@pytest.mark.parametrize("path", TRACES, ids=name_of)
def test_same_final_state_in_any_order(path: Path) -> None:
    """The state is a function of the set of records (design.md §0): reverse
    order (ends before starts) and shuffles end in the very same state."""
    events = events_of(path)
    want = _final(run(events)[0])
    rng = random.Random(path.stem)
    orders = [list(reversed(events))] + [rng.sample(events, len(events)) for _ in range(2)]
    store = _store(events)
    for order in orders:
        assert _final(run(renumbered(order))[0]) == want
        assert _store(renumbered(order)) == store  # what the rules read, too


@pytest.mark.parametrize("path", MULTI_TRACE, ids=name_of)
@given(rnd=st.randoms(use_true_random=False))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_traces_interleaved_give_the_same_state(path: Path, rnd: random.Random) -> None:
    events = events_of(path)
    want = _final(run(events)[0])
    assert _final(run(renumbered(interleaved(events, rnd)))[0]) == want


# -- the state: JSON, checkpoints, drafts ---------------------------------------------
@pytest.mark.parametrize("path", TRACES, ids=name_of)
def test_state_is_json_and_a_copy_without_its_memo_is_refused(path: Path) -> None:
    """Every intermediate state is JSON; a copy of one past the first record
    (a checkpoint read back, with no memo) is refused loudly, never gone on
    from with a store it lacks (the engine replays from the first record:
    tests/engine/test_otel_seek.py)."""
    events = events_of(path)
    ctx = new_ctx()
    state = REDUCER.initial_state()
    copies: list[Any] = []
    step = max(1, len(events) // 4)
    for i, event in enumerate(events):
        state = REDUCER.apply(state, event, ctx)
        raw = canonical.dumps(state)  # raises TypeError for anything not JSON
        if i % step == 0 and i + 1 < len(events):
            copies.append(orjson.loads(raw))
    for saved in copies:
        if saved == REDUCER.initial_state():
            continue  # nothing a user reads yet: the same as no record
        with pytest.raises(MemoLost, match="replay from the first record"):
            run(events[-1:], copy.deepcopy(saved))


@pytest.mark.parametrize(
    "path", [p for p in TRACES if p.parent.name in ("hand", "samples", "kagent")], ids=name_of
)
def test_rules_take_drafts_as_the_app_gives_them(path: Path) -> None:
    """In the app the events change one draft, kept across them; each
    event's patches rebuild the next state, and the end is the plain run's."""
    events = events_of(path)
    ctx = new_ctx()
    journal = Journal(freeze(REDUCER.initial_state()))
    head = journal.base
    ctx.carry_memo(head, journal.root)
    for i, event in enumerate(events):
        new = REDUCER.apply(journal.root, event, ctx)  # type: ignore[arg-type]
        assert new is journal.root
        patches: list[Any] = []
        assert journal.end_event(patches)
        head = apply_changes(head, patches)
        if i % 5 == 4:  # a checkpoint: frozen once, and the draft goes on over it
            root = journal.root
            assert journal.freeze() == head
            ctx.carry_memo(root, journal.root)
    assert _final(thaw(head)) == _final(run(events)[0])


def test_rules_leave_events_as_they_are() -> None:
    events = events_of(CORPUS / "samples" / "helm.json")
    before = [orjson.dumps(e.fields) for e in events]
    run(events)
    assert [orjson.dumps(e.fields) for e in events] == before


# -- defects and warnings -------------------------------------------------------------
def test_a_span_exported_twice_is_said_once_and_counted_once() -> None:
    state, said = run(events_of(CORPUS / "hand" / "duplicate_span_ids.json"))
    twice = [w for _, w in said if "exported more than once" in w]
    assert twice == ["span 23a6bb157382841e exported more than once; first copy kept"]
    assert state["tokens"] == {"input": 12, "output": 3, "cache_read": 0, "cache_write": 0}
    assert "store" not in state  # what the rules read is in their memo


def test_a_parent_loop_is_broken_with_a_warning() -> None:
    _, said = run(events_of(CORPUS / "hand" / "two_span_cycle.json"))
    loops = [w for _, w in said if "parent loop broken" in w]
    assert loops == ["parent loop broken at span e922e2f6beb12376 (earliest start becomes root)"]


def test_an_empty_agent_span_is_no_turn_once_it_ends() -> None:
    events = events_of(CORPUS / "samples" / "tempo_export_with_batches.json")
    state, said = run(events)
    empty = [(seq, w) for seq, w in said if "not a turn" in w]
    assert [w for _, w in empty] == [
        "agent span 79f1c6b28f13ea1c has no model call, tool or message: not a turn"
    ]
    ender = events[empty[0][0] - 1]
    assert ender.kind == "span_end" and ender.payload["span_id"] == "79f1c6b28f13ea1c"
    assert len(state["turns"]) == 1


def test_an_end_before_the_start_is_clamped_and_said() -> None:
    ld = load_file(CORPUS / "hand" / "mcp_tool_call.json")
    client = next(s for s in ld.spans if s.kind == "CLIENT")
    client.end_ns = client.start_ns - 5
    events = to_events(records(ld))
    state, said = run(events)
    assert [w for _, w in said if "clamped" in w] == [
        f"span {client.span_id} ends before it starts; end clamped to start"
    ]
    truth = orjson.loads((CORPUS / "hand" / "mcp_tool_call.truth.json").read_bytes())
    assert compare(truth, state) == []


@pytest.mark.parametrize("strip", ["span_id", "both"])
def test_logs_not_tied_to_a_span_still_find_their_call(strip: str) -> None:
    path = CORPUS / "hand" / "openai_v2_logs_span_id.json"
    ld = load_file(path)
    for lg in ld.logs:
        lg.span_id = ""
        if strip == "both":
            lg.trace_id = ""
    state, _ = run(to_events(records(ld)))
    truth = orjson.loads(path.with_name(path.stem + ".truth.json").read_bytes())
    assert compare(truth, state) == []


# -- a prefix knows only that prefix --------------------------------------------------
def test_output_and_usage_count_once_the_span_ends() -> None:
    events = events_of(CORPUS / "adk_py" / "v2_span_only" / "S2.json")
    ctx = new_ctx()
    state = REDUCER.initial_state()
    first_end = next(i for i, e in enumerate(events) if e.kind == "span_end")
    for event in events[:first_end]:
        state = REDUCER.apply(state, event, ctx)
    assert len(state["turns"]) == 1 and state["turns"][0]["status"] == "running"
    assert state["turns"][0]["user_text"] == "What is the weather and local time in Paris?"
    assert state["tokens"] == {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    assert state["turns"][0]["final_text"] is None
    assert REDUCER.summary(state) == "running"
    assert all("started, not ended" in line for line in REDUCER.still_open(state))
    assert len(REDUCER.still_open(state)) == len(state["open"]) > 0


# -- words --------------------------------------------------------------------------
def _explained(path: Path) -> list[tuple[Event, str]]:
    ctx = new_ctx()
    state = REDUCER.initial_state()
    out = []
    for event in events_of(path):
        before = copy.deepcopy(state)
        state = REDUCER.apply(state, event, ctx)
        out.append((event, REDUCER.explain(before, event, state)))
    return out


def test_explain_says_what_each_record_did() -> None:
    said = _explained(CORPUS / "hand" / "strands_span_events.json")
    words = [w for _, w in said]
    assert words[0] == "span_start invoke_agent weather_agent: turn 1 starts"
    tool_end = next(w for e, w in said if e.kind == "span_end" and "execute_tool" in w)
    assert tool_end.startswith("span_end execute_tool get_weather ok ")
    assert any(w.startswith("span_end chat ") and "+" in w and "input" in w for w in words)
    assert words[-1].startswith("span_end invoke_agent weather_agent ok")
    assert "turn 1 done" in words[-1]


def test_rows_calls_and_facts_read_the_record_alone() -> None:
    events = events_of(CORPUS / "adk_py" / "v1_default" / "S2.json")
    starts = [e for e in events if e.kind == "span_start"]
    tool = next(e for e in starts if e.payload["name"] == "execute_tool get_weather")
    assert REDUCER.row_summary(tool) == "execute_tool get_weather Paris"
    facts = REDUCER.call_facts(tool)
    assert facts is not None and facts.tool == "get_weather" and facts.arg == "Paris"
    key = REDUCER.call_of(tool)
    assert key == f"{tool.payload['trace_id']}:{tool.payload['span_id']}"
    same = [e for e in events if REDUCER.call_of(e) == key]
    assert {e.kind for e in same} == {"span_start", "span_end"}
    end = next(e for e in same if e.kind == "span_end")
    assert REDUCER.row_summary(end) == "execute_tool get_weather ok 0.6 ms"
    assert REDUCER.call_facts(end).status == "ok"  # type: ignore[union-attr]
    llm = next(e for e in starts if e.payload["name"] == "call_llm")
    assert REDUCER.row_summary(llm) == "call_llm gemini-2.5-flash"
    logs = [e for e in events if e.kind == "log"]
    assert logs and all(REDUCER.row_summary(e) for e in logs)
    assert all(REDUCER.call_of(e) is not None for e in logs)


def test_the_rules_are_found_by_name_and_by_format() -> None:
    assert load_reducer("otel_genai").reducer is REDUCER
    assert _FOR_FORMAT["otel"] == "otel_genai"
    assert rules_for_run(None, ROOT / "nothing.jsonl", "otel").reducer is REDUCER
    assert REDUCER.kinds == frozenset({"span_start", "span_event", "span_end", "log"})
    assert REDUCER.source_format == "otel"


@pytest.mark.parametrize("path", TRACES, ids=name_of)
def test_the_ordered_turns_kept_as_traces_change_are_the_sorted_ones(path: Path) -> None:
    """After every record, the turns, totals and session key kept in order
    as each trace changes (otel_genai/order.py) equal those sorted from every trace
    again (order.assemble, session_key): the plain way, as the oracle."""
    from replay_tui.reducers.otel_genai.order import assemble, priced, session_key, turn_cost

    ctx = new_ctx()
    state = REDUCER.initial_state()
    for event in events_of(path):
        state = REDUCER.apply(state, event, ctx)
        cache = ctx.memo(state)[_MEMO_KEY]
        turns = assemble(cache.results)
        assert state["turns"] == [priced(t) for t in turns], event.seq
        assert state["session"] == session_key(cache.results), event.seq
        assert state["tokens"] == {
            key: sum(t.tokens[i] for t in turns)
            for i, key in enumerate(("input", "output", "cache_read", "cache_write"))
        }
        assert state["content_captured"] == any(t.content for t in turns)
        micros = sum(m for t in turns for _, m in turn_cost(t).by_model)
        assert round(state["cost"]["total"] * 1_000_000) == micros, event.seq


# -- a record derives its own turn: the oracle is every trace derived afresh ------------
def _derived_as_afresh(events: list[Event]) -> tuple[int, int]:
    """Apply ``events``; after each, every trace's derived turns, session hits
    and warnings equal those of deriving it afresh. How many records that
    changed a derived trace were derived by their change only, and how many
    were not."""
    from replay_tui.reducers.otel_genai import turns as otel_turns
    from replay_tui.reducers.otel_genai.attribution import route_traceless
    from replay_tui.reducers.otel_genai.rules import _MEMO_KEY
    from replay_tui.reducers.otel_genai.tools import Reuse

    followed = refused = 0
    real = otel_turns._follow

    def counting(*args: Any) -> bool:
        nonlocal followed, refused
        took = real(*args)
        followed += took
        refused += not took
        return took

    ctx = new_ctx()
    state = REDUCER.initial_state()
    otel_turns._follow = counting  # type: ignore[assignment]
    try:
        for event in events:
            state = REDUCER.apply(state, event, ctx)
            cache = ctx.memo(state)[_MEMO_KEY]
            store = cache.store
            routed = route_traceless(store)[0] if store.get("", {}).get("logs") else {}
            for tid, got in cache.results.items():
                if tid not in store:
                    continue
                trace = store[tid] if tid else {"spans": store[tid]["spans"], "logs": []}
                want = otel_turns.derive_trace(tid, trace, routed.get(tid, []), Reuse())

                def turns(r: Any) -> list[Any]:
                    return sorted((t.start, t.anchor, t.public) for t in r.turns)

                assert turns(got) == turns(want), (event.seq, tid)
                assert got.session == want.session, event.seq
                assert sorted(got.warnings) == sorted(want.warnings), event.seq
                assert got.unattributed == want.unattributed, event.seq
    finally:
        otel_turns._follow = real  # type: ignore[assignment]
    return followed, refused


@pytest.mark.parametrize("path", TRACES, ids=name_of)
def test_a_record_derived_by_its_change_equals_the_trace_derived_afresh(path: Path) -> None:
    events = events_of(path)
    rng = random.Random(path.stem)
    for order in (events, list(reversed(events)), rng.sample(events, len(events))):
        _derived_as_afresh(renumbered(order))


def test_one_long_trace_is_derived_a_turn_at_a_time() -> None:
    """The case the change is for: one trace of many spans, where deriving
    it whole after each record made 2,000 spans take 160 s."""
    events = one_long_trace(CORPUS / "adk_py" / "v2_event_only" / "S2.json", 12)
    followed, refused = _derived_as_afresh(events)
    assert refused == 0 and followed > 200  # nearly every record: its own turn only


@given(rnd=st.randoms(use_true_random=False))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_one_long_trace_in_any_order_is_derived_as_afresh(rnd: random.Random) -> None:
    """Children before parents, ends before starts, logs before their span:
    each falls back to the whole trace, or follows, and equals it afresh."""
    events = one_long_trace(CORPUS / "hand" / "openai_v2_logs_span_id.json", 4)
    _derived_as_afresh(renumbered(rnd.sample(events, len(events))))


# -- only the traces changed last keep their derivation ---------------------------------
@pytest.mark.parametrize("path", MULTI_TRACE, ids=name_of)
@given(rnd=st.randoms(use_true_random=False))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_trace_whose_derivation_was_let_go_gives_the_same_states(
    path: Path, rnd: random.Random
) -> None:
    """The rules keep what they derived to build on for the traces changed
    last only (memory would otherwise hold it for every trace of a long
    document); a record of another trace derives it afresh from its store.
    Keeping one trace's, traces interleaved: the state after every prefix,
    and the warnings at each record, are those of keeping them all."""
    from unittest import mock

    from replay_tui.reducers.otel_genai import rules as otel_rules

    events = renumbered(interleaved(events_of(path), rnd))
    want = every_prefix(events)
    with mock.patch.object(otel_rules, "KEEP_DERIVED", 1):
        got = every_prefix(events)
    assert got == want


def test_a_long_document_keeps_the_derivations_of_the_last_traces_only() -> None:
    """Memory per trace, not per trace's derivation: 80 traces one after
    another leave the last ``KEEP_DERIVED`` derivations kept."""
    from replay_tui.reducers.otel_genai.rules import KEEP_DERIVED

    one = events_of(CORPUS / "hand" / "three_trace_conversation.json")
    recs = []
    for rep in range(KEEP_DERIVED + 16):
        for event in one:
            p = copy.deepcopy(event.payload)
            if p.get("trace_id"):
                p["trace_id"] = f"{rep:04x}{p['trace_id'][4:]}"
            recs.append((event.kind, p, event.ts))
    ctx = new_ctx()
    state, _ = run(to_events(recs), ctx=ctx)
    cache = ctx.memo(state)[_MEMO_KEY]
    assert len(cache.store) > KEEP_DERIVED + 16  # every trace's spans are kept
    assert len(cache.reuse) == KEEP_DERIVED  # what was derived from them, for the last only
