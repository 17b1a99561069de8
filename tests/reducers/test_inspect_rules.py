"""The inspect_ai rules' JSON Patch and store: invariants over random input.

- A patch made by ``jsonpatch`` (the RFC 6902 library Python tools make
  patches with) from one document to another, applied, gives what
  ``jsonpatch`` itself gives (the other document, but where its differ
  confuses ``False`` with ``None`` in a list, and so its own apply too).
- Store events as Inspect writes them (at each span's end, the changes since
  that span began, so the same change comes again at each enclosing span's
  end) give the store the solver left, whatever the nesting and the writes:
  each change applies once. A list the spans append to shows it (applied
  twice, an append appends twice). Where a span wrote the store before an
  inner span began, the inner span's changes are relative to writes no event
  has said yet: a warning, and the store is whole again at the outer end.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

import jsonpatch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from replay_tui.reducers.inspect_ai import REDUCER
from replay_tui.reducers.inspect_ai.patch import apply_patch

KEYS = st.sampled_from(["a", "b", "c", "d/e", "f~g"])
SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


@given(st.dictionaries(KEYS, JSON, max_size=4), st.dictionaries(KEYS, JSON, max_size=4))
@settings(max_examples=300, deadline=None)
def test_a_jsonpatch_patch_gives_the_other_document(a: dict[str, Any], b: dict[str, Any]) -> None:
    ops = jsonpatch.make_patch(a, b).patch
    try:
        theirs = jsonpatch.apply_patch(copy.deepcopy(a), ops)
    except (jsonpatch.JsonPatchException, LookupError, TypeError):
        # its differ's patch that its own apply refuses (a list item moved
        # past the end, an item deleted from a string): no answer to hold ours to
        assume(False)
    assert apply_patch(copy.deepcopy(a), ops) == theirs


class _Ctx:
    def __init__(self) -> None:
        self._memo: dict[str, Any] = {}
        self.warnings: list[str] = []

    def memo(self, state: object) -> dict[str, Any]:
        return self._memo

    def warn(self, message: str) -> None:
        self.warnings.append(message)


#: A solver's work: ("write", key, value), ("append", key, value), ("span", [work]).
WORK = st.recursive(
    st.tuples(
        st.sampled_from(["write", "append"]), st.sampled_from(["x", "y", "log"]), st.integers(0, 9)
    ),
    lambda inner: st.tuples(st.just("span"), st.lists(inner, max_size=4)),
    max_leaves=15,
)


def _events(work: list[Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Inspect-style events for ``work`` run in nested spans, and the store at the end."""
    store: dict[str, Any] = {}
    events: list[dict[str, Any]] = [
        {"event": "sample_init", "state": {"messages": [], "store": {}}}
    ]
    count = [0]

    def run(items: list[Any], parent: str | None) -> None:
        count[0] += 1
        span = f"span{count[0]}"
        events.append({"event": "span_begin", "id": span, "parent_id": parent, "type": "solver"})
        began = copy.deepcopy(store)
        for item in items:
            if item[0] == "span":
                run(item[1], span)
            elif item[0] == "write":
                store[item[1]] = item[2]
            else:
                value = store.get(item[1])
                store[item[1]] = [*value, item[2]] if isinstance(value, list) else [item[2]]
        changes = jsonpatch.make_patch(began, store).patch
        if changes:
            events.append({"event": "store", "span_id": span, "changes": changes})
        events.append({"event": "span_end", "id": span})

    run(work, None)
    return events, store


@given(st.lists(WORK, max_size=5))
@settings(max_examples=300, deadline=None)
def test_store_events_repeated_at_each_span_end_apply_once(work: list[Any]) -> None:
    events, store = _events(work)
    ctx = _Ctx()
    state = REDUCER.initial_state()
    for seq, raw in enumerate(events, 1):
        payload = {k: v for k, v in raw.items() if k != "event"}
        event = SimpleNamespace(kind=raw["event"], payload=payload, seq=seq)
        state = REDUCER.apply(state, event, ctx)  # type: ignore[arg-type]
    assert state["store"] == store
