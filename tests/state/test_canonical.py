"""The state digest: the same sha256 whether the JSON is written at once or
an item at a time (``check`` streams it to keep its memory down)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay_tui.state import canonical
from replay_tui.state.persistent import freeze

KEYS = st.text(max_size=4)  # any code point but lone surrogates: sort order matters
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)
VALUES = st.recursive(
    LEAVES,
    lambda kids: st.one_of(st.lists(kids, max_size=8), st.dictionaries(KEYS, kids, max_size=8)),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.booleans(), st.integers(0, 3), st.integers(1, 4))
def test_streamed_digest_is_the_digest_of_the_bytes(
    value: Any, frozen: bool, past: int, group: int
) -> None:
    value = freeze(value) if frozen else value
    want = hashlib.sha256(canonical.dumps(value)).hexdigest()
    assert canonical.digest(value, stream_past=0, group=1) == want  # an item at a time
    assert canonical.digest(value, stream_past=past, group=group) == want  # a few at a time
    assert canonical.digest(value) == want


def test_a_big_state_streams_and_still_refuses_what_is_not_json() -> None:
    state = {"calls": {f"c{i}": {"n": i} for i in range(3000)}, "checks": list(range(2000))}
    assert canonical.digest(state) == hashlib.sha256(canonical.dumps(state)).hexdigest()
    state["calls"]["bad"] = {1, 2}
    with pytest.raises(TypeError):
        canonical.digest(state)
    with pytest.raises(TypeError):
        canonical.digest({**{f"k{i}": i for i in range(2000)}, 3: "not a str key"})
