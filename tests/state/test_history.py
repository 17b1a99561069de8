"""The state store: shared states, drafts and the patch log agree with plain replay.

The app keeps every prefix's state as frozen values sharing structure, and each
event's patches; these properties say it shows exactly what a fresh replay of
the first n lines gives, and that each event's patches are the diff of the
states around it.
"""

from __future__ import annotations

import gc
import itertools
import os
import tempfile
import weakref
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.reducers import load_reducer
from replay_tui.state import canonical
from replay_tui.state.diff import diff
from replay_tui.state.drafts import DictDraft, Journal
from replay_tui.state.history import History, apply_changes
from replay_tui.state.patchlog import PatchLog
from replay_tui.state.persistent import BIG, FrozenDict, freeze, thaw, thawed_small
from replay_tui.synth.runs import write_agent_run
from tests.helpers.tangled_rules import RULES_TANGLED, same_changes

RULES = load_reducer(None)
SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(seed=st.integers(0, 10_000), n=st.integers(1, 160), every=st.integers(1, 9))
def test_every_prefix_and_every_patch_match_a_plain_replay(seed: int, n: int, every: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        write_agent_run(run, n, seed=seed)
        kept = Replay(locate_run(run), RULES, history=True, checkpoint_every=every).verify()
        plain = Replay(locate_run(run), RULES).verify()
        assert kept.history is not None and kept.error is None
        assert kept.final_summary() == plain.final_summary()
        # every prefix, visited out of order (seeks from checkpoints and from
        # the last state asked for), against the plain engine's state
        order = list(range(n + 1))
        order = order[::2] + order[1::2][::-1]
        states = {k: plain.state_at(k) for k in range(n + 1)}
        for k in order:
            assert canonical.dumps(kept.frozen_at(k)) == canonical.dumps(states[k]), k
            assert kept.state_at(k) == states[k]
        for k in range(1, n + 1):
            step = kept.step(k)
            assert same_changes(step.changes, diff(states[k - 1], states[k])), k
            assert thaw(apply_changes(freeze(states[k - 1]), step.changes)) == states[k]


def test_unchanged_parts_of_the_state_are_shared(tmp_path: Path) -> None:
    write_agent_run(tmp_path / "run", 400, seed=3)
    replay = Replay(locate_run(tmp_path / "run"), RULES, history=True)
    replay.advance(limit=399)
    assert replay.history is not None
    before = replay.history.head
    replay.verify()
    after = replay.history.head
    changed = {c.path[:2] for c in replay.step(400).changes}
    calls = [cid for cid in before["calls"] if ("calls", cid) not in changed]
    assert len(calls) > BIG  # a big dict, shared call by call
    assert all(before["calls"][cid] is after["calls"][cid] for cid in calls)


# -- drafts behave as the plain dicts and lists rules are written for ----------
KEYS = st.sampled_from(["a", "b", "c", "d", "e"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["x", "y"]))
VALUES = st.recursive(
    SCALARS,
    lambda kids: st.one_of(st.lists(kids, max_size=3), st.dictionaries(KEYS, kids, max_size=3)),
    max_leaves=6,
)
OPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                *("set", "del", "append", "pop", "update", "setdefault", "insert", "popitem"),
                *("again", "walk"),
            ]
        ),
        st.lists(KEYS, max_size=2),
        KEYS,
        VALUES,
    ),
    max_size=25,
)


def _node(root: Any, path: list[str]) -> Any:
    node = root
    for key in path:
        if isinstance(node, dict | DictDraft) and key in node:
            child = node[key]
        else:
            return None
        if not isinstance(child, dict | DictDraft | list) and not hasattr(child, "append"):
            return None
        node = child
    return node


def _run(root: Any, ops: list[tuple[str, list[str], str, Any]]) -> None:
    for op, path, key, value in ops:
        node = _node(root, path)
        if node is None:
            continue
        value = orjson.loads(orjson.dumps(value))  # a fresh object for each side
        if hasattr(node, "keys"):
            if op == "set":
                node[key] = value
            elif op == "del" and key in node:
                del node[key]
            elif op == "update":
                node.update({key: value})
            elif op == "setdefault":
                node.setdefault(key, value)
            elif op == "pop":
                node.pop(key, None)
            elif op == "popitem" and len(node):
                node.popitem()
            elif op == "again" and key in node:
                node[key] = node[key]  # what it holds, assigned back
            elif op == "walk" and len(node):
                last = list(node)[-1]
                for k in node:  # a key read while the dict is walked, at its end
                    if k == last:
                        node.get(key)
        else:
            if op == "append":
                node.append(value)
            elif op == "pop" and len(node):
                node.pop()
            elif op == "insert":
                node.insert(0, value)
            elif op == "set" and len(node):
                node[-1] = value
            elif op == "del" and len(node):
                del node[0]


@settings(max_examples=300, deadline=None)
@given(start=st.dictionaries(KEYS, VALUES, max_size=5), ops=OPS)
def test_a_draft_changes_as_a_plain_dict_does(start: dict[str, Any], ops: list[Any]) -> None:
    plain = orjson.loads(orjson.dumps(start))
    base = freeze(start)
    draft = DictDraft(base)
    _run(plain, ops)
    _run(draft, ops)
    patches: list[Any] = []
    frozen = draft.commit(patches)
    # the same JSON, keys in the same order, and the patches are the diff
    assert orjson.dumps(thaw(frozen)) == orjson.dumps(plain)
    assert same_changes(patches, diff(start, plain))
    assert thaw(apply_changes(base, patches)) == plain
    assert thaw(base) == start  # the base is never changed


# -- one draft across many events: each event's patches are still its diff ----
BIG_START = st.builds(
    lambda n, inner: {f"k{i:02}": {"n": i, "l": [i]} for i in range(n)} | inner,
    st.integers(0, BIG + 3),
    st.dictionaries(KEYS, VALUES, max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(
    start=st.one_of(st.dictionaries(KEYS, VALUES, max_size=5), BIG_START),
    events=st.lists(OPS, min_size=1, max_size=8),
    kept=st.sets(st.integers(0, 7)),
)
def test_a_journal_across_events_gives_each_events_diff(
    start: dict[str, Any], events: list[Any], kept: set[int]
) -> None:
    """The journal's patches after every event equal ``diff`` of the plain
    states around it (the same path written twice in one event, set back,
    replaced after a change below it), rebuild the next state in key order,
    and its frozen state at any event is the plain one."""
    plain = orjson.loads(orjson.dumps(start))
    journal = Journal(freeze(start))
    before = journal.base
    for i, ops in enumerate(events):
        was = orjson.loads(orjson.dumps(plain))
        _run(plain, ops)
        _run(journal.root, ops)
        patches: list[Any] = []
        if not journal.end_event(patches):  # as the engine does: compare whole states
            patches = diff(thaw(before), thaw(journal.freeze()))
        assert same_changes(patches, diff(was, plain)), i
        after = apply_changes(before, patches)
        # (key order aside: patches do not say a key deleted and set back to
        # the same value moved last, as diff does not)
        assert canonical.dumps(after) == canonical.dumps(plain), i
        if i in kept:
            assert orjson.dumps(thaw(journal.freeze())) == orjson.dumps(plain), i
        before = after
    assert orjson.dumps(thaw(journal.freeze())) == orjson.dumps(plain)
    assert thaw(journal.freeze()) == plain  # frozen twice: the same


@settings(max_examples=300, deadline=None)
@given(
    start=st.one_of(st.dictionaries(KEYS, VALUES, max_size=5), BIG_START),
    events=st.lists(OPS, min_size=1, max_size=8),
    kept=st.sets(st.integers(0, 7)),
)
def test_a_journal_recording_nothing_reads_and_writes_as_plain_dicts(
    start: dict[str, Any], events: list[Any], kept: set[int]
) -> None:
    """The app's pass (patches made again later): small dicts read from
    small ones are given plain, the rest as drafts; every state frozen
    equals the plain one, key order too, and the states kept before are
    never changed."""
    plain = orjson.loads(orjson.dumps(start))
    journal = Journal(freeze(start), recording=False)
    frozen: list[tuple[Any, bytes]] = [(journal.base, orjson.dumps(start))]
    for i, ops in enumerate(events):
        _run(plain, ops)
        _run(journal.root, ops)
        patches: list[Any] = []
        journal.end_event(patches)
        assert patches == []  # nothing recorded
        if i in kept:
            state = journal.freeze()
            assert orjson.dumps(thaw(state)) == orjson.dumps(plain), i
            frozen.append((state, orjson.dumps(plain)))
    assert orjson.dumps(thaw(journal.freeze())) == orjson.dumps(plain)
    assert all(orjson.dumps(thaw(state)) == was for state, was in frozen)


def test_a_dict_walked_while_a_small_one_in_it_is_read() -> None:
    """A small dict read (and so given plain) while the dict holding it is
    walked past its new keys: the walk goes on, as over a plain dict."""
    journal = Journal(freeze({"a": {"n": 1}, "b": 1}), recording=False)
    state = journal.root
    state["c"] = 2
    for k in state:
        if k == "c":
            state["a"]["n"] += 1
    assert thaw(journal.freeze()) == {"a": {"n": 2}, "b": 1, "c": 2}


def test_only_a_small_dict_is_thawed_whole() -> None:
    small = freeze({"a": {"n": 1, "l": [1, 2]}, "b": "x"})
    assert thawed_small(small) == {"a": {"n": 1, "l": [1, 2]}, "b": "x"}
    wide = freeze({f"k{i}": {f"j{j}": {"v": j} for j in range(16)} for i in range(16)})
    assert thawed_small(wide) is None  # 16 x 16 x 16: past the room in all
    assert thawed_small(freeze({"l": [{"a": 1}]})) is None  # a list of dicts


def test_big_dicts_keep_insertion_order_through_deletes() -> None:
    start = {f"k{i:03}": i for i in range(BIG + 20)}
    draft = DictDraft(freeze(start))
    del draft["k005"]
    draft["k005"] = "back"  # a plain dict puts it last
    draft["new"] = 1
    plain = dict(start)
    del plain["k005"]
    plain["k005"] = "back"
    plain["new"] = 1
    assert list(thaw(draft.commit(None))) == list(plain)


def test_frozen_states_refuse_changes() -> None:
    state = freeze({"a": {"b": [1]}})
    assert isinstance(state, FrozenDict)
    for change in (
        lambda: state.__setitem__("a", 1),
        lambda: state["a"]["b"].append(2),
        lambda: state.update(x=1),
    ):
        try:
            change()
        except TypeError:
            continue
        raise AssertionError("a frozen state changed")


def test_patch_log_reads_back_after_spilling_to_disk() -> None:
    log = PatchLog(spill_bytes=64)
    states = [{"n": i, "s": "x" * (i % 7)} for i in range(300)]
    for a, b in itertools.pairwise(states):
        log.append(diff(a, b))
    assert len(log) == 299
    assert log.memory_bytes() < 64 + 8 * 301 + 256
    for i in (1, 2, 150, 299):
        assert log.changes(i) == diff(states[i - 1], states[i])
    log.close()


def test_a_closed_patch_log_takes_no_more() -> None:
    """A log made behind a replay closed meanwhile (a rules reload) stops
    there: an append raises, and no temporary file is opened again."""
    log = PatchLog(spill_bytes=64)
    log.append(diff({"n": 0}, {"n": "x" * 100}))  # spilled: a file is open
    log.close()
    fds = len(os.listdir("/proc/self/fd"))
    with pytest.raises(ValueError, match="closed"):
        log.append(diff({"n": 1}, {"n": "y" * 100}))
    assert len(os.listdir("/proc/self/fd")) == fds


def test_history_seeks_any_prefix() -> None:
    states = [{"calls": {f"c{j}": {"n": j} for j in range(i)}, "i": i} for i in range(120)]
    history = History(freeze(states[0]), every_patches=7, every_events=11)
    for n in range(1, 120):
        history.record(n, diff(states[n - 1], states[n]))
        if history.due():
            history.keep(n, freeze(states[n]))
    for n in (119, 0, 57, 58, 3, 100, 99):
        assert thaw(history.state_at(n)) == states[n]


RULES_SAME = """
from replay_tui.reducers.agent_run import AgentRunRules


class Rules(AgentRunRules):
    drafts = True


REDUCER = Rules()
"""
RULES_MORE_TOKENS = RULES_SAME.replace(
    "    drafts = True\n",
    "    drafts = True\n\n"
    "    def apply(self, state, event, ctx):\n"
    "        state = super().apply(state, event, ctx)\n"
    "        if event.kind == 'model_finished':\n"
    "            state['spent']['tokens'] += 1\n"
    "        return state\n",
)


def test_reloaded_rules_first_differ_where_the_patch_logs_do(tmp_path: Path) -> None:
    from replay_tui.questions.rules_diff import first_difference

    write_agent_run(tmp_path / "run", 300, seed=2)
    (tmp_path / "same.py").write_text(RULES_SAME)
    (tmp_path / "more.py").write_text(RULES_MORE_TOKENS)
    same = load_reducer(f"{tmp_path / 'same.py'}:REDUCER")
    more = load_reducer(f"{tmp_path / 'more.py'}:REDUCER")
    lines = (tmp_path / "run" / "events.jsonl").read_bytes().splitlines()
    first = next(orjson.loads(raw)["seq"] for raw in lines if b'"model_finished"' in raw)

    def replays(history: bool) -> tuple[Replay, Replay, Replay]:
        run = locate_run(tmp_path / "run")
        return (
            Replay(run, RULES, history=history).verify(),
            Replay(run, same, history=history).verify(),
            Replay(run, more, history=history).verify(),
        )

    built_in, a, b = replays(True)
    assert a.history is not None and b.history is not None  # user rules that take drafts
    assert first_difference(built_in, a) is None
    assert first_difference(a, b) == first
    # the same answer as the checkpoint-and-replay way
    built_in, a, b = replays(False)
    assert first_difference(built_in, a) is None and first_difference(a, b) == first


def test_what_is_still_open_is_read_once_per_prefix(tmp_path: Path, monkeypatch: Any) -> None:
    """``End`` on a long run: the rules walk every call of the final state
    for ``still_open``; the app's worker asks once after the pass and the
    key finds the answer kept, until the valid prefix grows."""
    run = tmp_path / "run"
    write_agent_run(run, 400, seed=3)
    replay = Replay(locate_run(run), RULES, history=True).verify()
    asked: list[int] = []
    real = replay.rules_call.still_open

    def counting(state: Any) -> list[str]:
        asked.append(1)
        return real(state)

    monkeypatch.setattr(replay.rules_call, "still_open", counting)
    try:
        first = replay.still_open()
        assert replay.still_open() == first and len(asked) == 1
        assert first == real(replay.frozen_at(replay.valid))
        replay.valid -= 1  # as if a rewrite cut the prefix: asked again
        replay.still_open()
        assert len(asked) == 2
    finally:
        replay.close()


def test_the_apps_journal_gives_a_plain_replays_states_and_diffs(tmp_path: Path) -> None:
    """Rules that replace what they changed, set a value back, and return a
    new dict: at every seq the app's journal gives the state and the diff a
    plain replay (JSON checkpoints, mutable dicts) gives."""
    write_agent_run(tmp_path / "run", 260, seed=5)
    (tmp_path / "tangled.py").write_text(RULES_TANGLED)
    rules = load_reducer(f"{tmp_path / 'tangled.py'}:REDUCER")
    kept = Replay(locate_run(tmp_path / "run"), rules, history=True, checkpoint_every=2).verify()
    plain = Replay(locate_run(tmp_path / "run"), rules).verify()
    assert kept.history is not None and kept.error is None and plain.error is None
    states = [plain.state_at(k) for k in range(261)]
    assert states[-1]["tally"]["n"] == 260
    for k in range(1, 261):
        assert canonical.dumps(kept.frozen_at(k)) == canonical.dumps(states[k]), k
        assert same_changes(kept.step(k).changes, diff(states[k - 1], states[k])), k


def test_a_draft_replaced_but_still_held_changes_nothing() -> None:
    """Rules that keep a sub-dict across events (in ctx.memo, say) and write
    to it after the key was given a new value: as with plain dicts, the
    state does not change, and the journal's patches stay those of the state."""
    plain: dict[str, Any] = {"a": {"x": 0}}
    journal = Journal(freeze(plain))
    held, held_plain = journal.root["a"], plain["a"]
    states = [orjson.loads(orjson.dumps(plain))]
    for step in (
        lambda s, h: s.__setitem__("a", {"fresh": 1}),
        lambda s, h: (s["a"].__setitem__("y", 2), h.__setitem__("x", 99)),
        lambda s, h: s["a"].__setitem__("z", 3),
    ):
        step(plain, held_plain)
        step(journal.root, held)
        patches: list[Any] = []
        assert journal.end_event(patches)
        assert same_changes(patches, diff(states[-1], plain))
        states.append(orjson.loads(orjson.dumps(plain)))
    assert thaw(journal.freeze()) == plain == {"a": {"fresh": 1, "y": 2, "z": 3}}


def test_common_idioms_keep_to_the_journal() -> None:
    """A call changed then assigned back, a list appended to then assigned
    back, a list filtered or cut: each event's patches come from its writes
    (no comparing of whole states), and they are its diff."""
    start = {"calls": {"c1": {"s": "a"}}, "l": [1, 2, 3], "q": [{"n": 1}, {"n": 2}]}
    plain = orjson.loads(orjson.dumps(start))
    journal = Journal(freeze(start))

    def calls(s: Any) -> None:
        c = s["calls"]["c1"]
        c["s"] = "b"
        s["calls"]["c1"] = c

    def appended(s: Any) -> None:
        lst = s["l"]
        lst.append(4)
        s["l"] = lst

    def filtered(s: Any) -> None:
        s["q"] = [x for x in s["q"] if x["n"] != 1]

    def cut(s: Any) -> None:
        s["l"] = s["l"][-2:]

    for change in (calls, appended, filtered, cut):
        was = orjson.loads(orjson.dumps(plain))
        change(plain)
        change(journal.root)
        patches: list[Any] = []
        assert journal.end_event(patches), change.__name__
        assert same_changes(patches, diff(was, plain)), change.__name__
    assert thaw(journal.freeze()) == plain


class _Pane:
    """What shows a store in the app: held in a cycle, freed by the collector."""

    def __init__(self, history: History) -> None:
        self.history = history
        self.me = self


def _filled(states: int) -> History:
    history = History(freeze({"n": 0}), every_patches=1, every_events=1)
    for n in range(1, states + 1):
        history.record(n, diff({"n": n - 1}, {"n": n}))
        history.keep(n, freeze({"n": n}))
    return history


def test_a_store_closed_while_another_fills_is_freed_once_let_go() -> None:
    """A reload: the old replay's store is closed while the new one is
    still keeping states, and let go of a moment later. A keep in between
    must not freeze it again with what holds it (it would never be freed)."""
    gc.collect()
    try:
        old, new = _filled(3), _filled(3)
        pane = _Pane(old)
        shown = weakref.ref(pane)
        old.close()  # the reload's swap: closed, still held by the pane a moment
        new.record(4, diff({"n": 3}, {"n": 4}))
        new.keep(4, freeze({"n": 4}))  # the new replay's pass goes on meanwhile
        del pane, old
        for n in range(5, 75):  # keeps go on: freezing waits a while, then resumes
            new.record(n, diff({"n": n - 1}, {"n": n}))
            new.keep(n, freeze({"n": n}))
        gc.collect()
        assert shown() is None
        assert gc.get_freeze_count() > 0  # the new store's states frozen again
        assert thaw(new.state_at(74)) == {"n": 74}
    finally:
        gc.unfreeze()


def test_a_closed_store_held_on_purpose_stops_freezing_only_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A closed store still held: freezing waits, with two collections of the
    whole heap at most, then goes on (the store is not freed, as before)."""
    gc.collect()
    collect = gc.collect
    collections: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda *a: collections.append(1) or collect(*a))
    try:
        old, new = _filled(2), _filled(2)
        gc.unfreeze()
        old.close()
        frozen = []
        for n in range(3, 80):
            new.record(n, diff({"n": n - 1}, {"n": n}))
            new.keep(n, freeze({"n": n}))
            frozen.append(gc.get_freeze_count() > 0)
        assert len(collections) == 2 and old is not None
        assert not frozen[0] and frozen[-1]  # waited, then froze again
    finally:
        gc.unfreeze()


NOT_JSON_AT_THE_END = """
from replay_tui.reducers.agent_run import AgentRunRules


class Rules(AgentRunRules):
    drafts = True

    def apply(self, state, event, ctx):
        state = super().apply(state, event, ctx)
        if event.seq == 5:
            state["note"] = "\\ud800"  # a lone surrogate: frozen, but no JSON has it
        return state


REDUCER = Rules()
"""


@pytest.mark.parametrize("history", [False, True])
def test_a_final_state_that_freezes_but_is_not_json_fails_the_run(
    tmp_path: Path, history: bool
) -> None:
    """Freezing refuses what is not a JSON type, not every value JSON has no
    bytes for: the final state's digest still judges it, with a store too."""
    write_agent_run(tmp_path / "run", 30, seed=1)
    (tmp_path / "rules.py").write_text(NOT_JSON_AT_THE_END)
    rules = load_reducer(f"{tmp_path / 'rules.py'}:REDUCER")
    rules.trusted = True  # run as the built-in rules are: unwatched, patches made again
    replay = Replay(locate_run(tmp_path / "run"), rules, history=history).verify()
    assert (replay.history is not None) == history
    assert not history or replay.history.made_again  # type: ignore[union-attr]
    assert replay.error is not None and replay.error.code == "reducer_error"
    assert "not JSON" in replay.error.message
