"""The persistent vector under big dicts and lists: built a leaf at a time,
it is the very trie built an item at a time."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from replay_tui.state.drafts import DictDraft, ListDraft
from replay_tui.state.persistent import BIG, BigDict, BigList, PVector, freeze


def _appended(start: int, more: list[int]) -> PVector:
    vec = PVector()
    for i in range(start):
        vec = vec.append(i)
    for k in more:
        vec = vec.append(k)
    return vec


@settings(max_examples=150, deadline=None)
@given(
    start=st.integers(0, 1100),
    cuts=st.lists(st.integers(0, 1100), max_size=4),
)
def test_extend_builds_the_trie_append_builds(start: int, cuts: list[int]) -> None:
    vec = PVector().extend(range(start))
    at = start
    for size in cuts:  # several extends in turn: each fills the last leaf first
        vec = vec.extend(range(at, at + size))
        at += size
    want = _appended(start, list(range(start, at)))
    assert (vec._root, vec._shift, len(vec)) == (want._root, want._shift, len(want))
    assert list(vec) == list(range(at))
    if at:
        assert vec[at - 1] == at - 1 and vec[-1] == at - 1


def test_an_extend_leaves_the_version_it_came_from_as_it_was() -> None:
    old = PVector().extend(range(40))
    new = old.extend(range(40, 1000))
    assert list(old) == list(range(40)) and len(new) == 1000
    assert list(PVector().extend(iter(range(70)))) == list(range(70))  # any iterable


def test_big_dicts_and_lists_keep_order_through_a_commit_of_many_new_keys() -> None:
    base = freeze({"calls": {f"c{i}": i for i in range(BIG + 5)}, "log": list(range(BIG + 3))})
    assert type(base["calls"]) is BigDict and type(base["log"]) is BigList
    draft = DictDraft(base)
    calls, log = draft["calls"], draft["log"]
    assert isinstance(log, ListDraft)
    for i in range(BIG + 5, BIG + 700):
        calls[f"c{i}"] = i
    del calls["c3"]
    calls["c3"] = "back"  # deleted and written again: last in order
    log.extend(range(500))
    after = draft.commit(None)
    keys = [f"c{i}" for i in range(BIG + 700) if i != 3] + ["c3"]
    assert list(after["calls"]) == keys and after["calls"]["c3"] == "back"
    assert list(after["log"]) == [*range(BIG + 3), *range(500)]
    assert list(base["calls"]) == [f"c{i}" for i in range(BIG + 5)]  # the base as it was
