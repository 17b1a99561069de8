""" "The same" means equal state digests after every prefix, for every kind of rules.

Rules are generated as programs of edits (in place, on a new dict, on a deep
copy, on drafts; nested containers, deletions, appends) and run on one
ledger under two of them. An oracle written here, with the standard
library's json, replays both programs on plain dicts and digests every
prefix. ``diff --rules-b``, the app's compare rows and the rules-reload mark
must say "same" exactly when every digest agrees, and place the first state
difference at the first prefix whose digests differ.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.cli import main
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.questions.rules_diff import first_difference
from replay_tui.questions.sidebyside import Side, row_differences, side_by_side
from replay_tui.reducers import load_reducer
from tests.conftest import DEMO, SAMPLES

EVENTS = len((DEMO / "events.jsonl").read_bytes().splitlines())
INITIAL: dict[str, Any] = {"n": 0, "items": [], "meta": {"k": {}}}

KEYS = st.sampled_from(["a", "b", "items", "meta", "k", "n"])
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(0, 3), st.just("x")),
    lambda kids: st.one_of(st.lists(kids, max_size=2), st.dictionaries(KEYS, kids, max_size=2)),
    max_leaves=4,
)
PATHS = st.lists(KEYS, max_size=2)
OPS = st.one_of(
    st.tuples(st.just("set"), PATHS, KEYS, VALUES),
    st.tuples(st.just("del"), PATHS, KEYS, st.none()),
    st.tuples(st.just("incr"), PATHS, KEYS, st.none()),
    st.tuples(st.just("append"), PATHS, KEYS, VALUES),
    st.tuples(st.just("pop"), PATHS, KEYS, st.none()),
)
#: One list of edits per event, taken in turn (event seq-1 modulo its length).
PROGRAMS = st.lists(st.lists(OPS, max_size=3), min_size=1, max_size=4)
#: How the rules change the state: the ways people write reducers.
STYLES = st.sampled_from(["in_place", "deep_copy", "json_copy", "drafts"])

RULES_SOURCE = """
import copy
import json

from replay_tui.reducers.agent_run import KINDS

PROGRAM = json.loads({program!r})
INITIAL = json.loads({initial!r})
STYLE = {style!r}


def _node(root, path):
    node = root
    for key in path:
        if not hasattr(node, "keys") or key not in node:
            return None
        node = node[key]
    return node


def _edit(state, ops):
    for kind, path, key, value in ops:
        node = _node(state, path)
        if node is None:
            continue
        if hasattr(node, "keys"):
            if kind == "set":
                node[key] = copy.deepcopy(value)
            elif kind == "del" and key in node:
                del node[key]
            elif kind == "incr":
                old = node.get(key, 0)
                node[key] = old + 1 if type(old) is int else 1
        elif hasattr(node, "append"):
            if kind == "append":
                node.append(copy.deepcopy(value))
            elif kind == "pop" and len(node):
                node.pop()


class Rules:
    name = "generated"
    version = "1"
    kinds = KINDS
    drafts = STYLE == "drafts"

    def initial_state(self):
        return copy.deepcopy(INITIAL)

    def summary(self, state):
        return "ok"

    def apply(self, state, event, ctx):
        if STYLE == "deep_copy":
            state = copy.deepcopy(state)
        elif STYLE == "json_copy":
            state = json.loads(json.dumps(state))
        _edit(state, PROGRAM[(event.seq - 1) % len(PROGRAM)])
        return state


REDUCER = Rules()
"""


def write_rules(folder: Path, name: str, program: list[Any], style: str) -> str:
    path = folder / f"{name}.py"
    path.write_text(
        RULES_SOURCE.format(program=json.dumps(program), initial=json.dumps(INITIAL), style=style)
    )
    return f"{path}:REDUCER"


# -- the oracle: plain dicts, the standard library's json ----------------------
def _oracle_edit(state: Any, ops: list[Any]) -> None:
    for kind, path, key, value in ops:
        node = state
        for k in path:
            if not isinstance(node, dict) or k not in node:
                node = None
                break
            node = node[k]
        if isinstance(node, dict):
            if kind == "set":
                node[key] = json.loads(json.dumps(value))
            elif kind == "del":
                node.pop(key, None)
            elif kind == "incr":
                old = node.get(key, 0)
                node[key] = old + 1 if type(old) is int else 1
        elif isinstance(node, list):
            if kind == "append":
                node.append(json.loads(json.dumps(value)))
            elif kind == "pop" and node:
                node.pop()


def oracle_digests(program: list[Any]) -> list[str]:
    """The digest of the state after each prefix 0..EVENTS."""
    state = json.loads(json.dumps(INITIAL))
    digests = []
    for seq in range(EVENTS + 1):
        if seq:
            _oracle_edit(state, program[(seq - 1) % len(program)])
        text = json.dumps(state, sort_keys=True, separators=(",", ":"))
        digests.append(hashlib.sha256(text.encode()).hexdigest())
    return digests


def first_parting(a: list[Any], b: list[Any]) -> int | None:
    """The first prefix whose digests differ (0: the initial state), or None."""
    da, db = oracle_digests(a), oracle_digests(b)
    return next((n for n in range(len(da)) if da[n] != db[n]), None)


PAIRS = st.tuples(PROGRAMS, STYLES, PROGRAMS, STYLES, st.booleans())


def _programs(pair: tuple[Any, ...]) -> tuple[list[Any], str, list[Any], str]:
    """A and B; half the time B is A's program written in another style."""
    program_a, style_a, program_b, style_b, same_program = pair
    return program_a, style_a, (program_a if same_program else program_b), style_b


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=PAIRS, history=st.booleans())
def test_in_the_app_compare_rows_and_the_reload_mark_part_where_the_digests_do(
    pair: tuple[Any, ...], history: bool
) -> None:
    program_a, style_a, program_b, style_b = _programs(pair)
    expected = first_parting(program_a, program_b)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rules_a = load_reducer(write_rules(folder, "a", program_a, style_a))
        rules_b = load_reducer(write_rules(folder, "b", program_b, style_b))
        a = Replay(locate_run(DEMO), rules_a, history=history).verify()
        b = Replay(locate_run(DEMO), rules_b, history=history).verify()
        try:
            assert a.error is None and b.error is None
            # the reload mark: the first seq whose state differs (1 for the initial state)
            assert first_difference(a, b) == (None if expected is None else max(expected, 1))
            rows = row_differences(a, b)
            if expected is None:
                assert rows == []
            else:
                assert rows and rows[0] == max(expected, 1) - 1
        finally:
            a.close()
            b.close()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=PAIRS)
def test_diff_says_same_exactly_when_every_prefix_digest_agrees(pair: tuple[Any, ...]) -> None:
    program_a, style_a, program_b, style_b = _programs(pair)
    expected = first_parting(program_a, program_b)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        a = Side(str(DEMO), write_rules(folder, "a", program_a, style_a))
        b = Side(str(DEMO), write_rules(folder, "b", program_b, style_b))
        result = side_by_side(a, b)
    assert result["same"] is (expected is None)
    assert result["first_event_difference"] is None
    if expected is None:
        assert result["first_state_difference"] is None
        assert result["a"]["state_sha256"] == result["b"]["state_sha256"]
    else:
        assert result["first_state_difference"]["seq"] == expected
        assert result["changes"]  # what differs there is said


PLUS_ONE = """
from replay_tui.reducers.agent_run import AgentRunRules


class Plus(AgentRunRules):
    name = "plus"

    def apply(self, state, event, ctx):
        state = super().apply(state, event, ctx)
        if event.kind == "tool_denied":
            state["spent"]["tokens"] += 1
        return state


REDUCER = Plus()
"""


def test_rules_that_change_a_dict_in_place_are_not_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report that found it: one more token at each tool_denied, written
    the common way (a plain dict changed in place, no drafts)."""
    (tmp_path / "plus.py").write_text(PLUS_ONE)
    rules = f"{tmp_path / 'plus.py'}:REDUCER"
    denied = next(
        json.loads(line)["seq"]
        for line in (DEMO / "events.jsonl").read_text().splitlines()
        if '"tool_denied"' in line
    )
    code = main(["diff", str(DEMO), str(DEMO), "--rules-b", rules])
    out = capsys.readouterr().out
    assert code == 1 and out.splitlines()[-1] == "different"
    assert f"first state difference: after seq {denied}" in out
    assert "spent.tokens" in out
    code = main(["diff", str(DEMO), str(DEMO), "--rules-b", rules, "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["same"] is False and result["a"]["state_sha256"] != result["b"]["state_sha256"]
    # another run under the new rules: they part at seq 1 (another task), not later
    code = main(["diff", str(DEMO), str(SAMPLES / "agent-succeeds"), "--rules-b", rules])
    assert "first state difference: after seq 1\n" in capsys.readouterr().out


TUPLE_RULES = RULES_SOURCE.replace(
    "        _edit(state, PROGRAM[(event.seq - 1) % len(PROGRAM)])\n",
    "        state['pos'] = (1, 2) if WRITE_TUPLE else [1, 2]\n",
).replace("STYLE = {style!r}", "STYLE = {style!r}\nWRITE_TUPLE = {tuple_!r}")


def test_a_tuple_in_a_plain_dict_is_the_list_it_writes(tmp_path: Path) -> None:
    """Rules on plain dicts may hold a tuple: the digest writes it as a list,
    so rules writing [1, 2] and rules writing (1, 2) are the same everywhere."""
    specs = []
    for name, tuple_ in (("lists", False), ("tuples", True)):
        path = tmp_path / f"{name}.py"
        path.write_text(
            TUPLE_RULES.format(
                program="[[]]", initial=json.dumps(INITIAL), style="in_place", tuple_=tuple_
            )
        )
        specs.append(load_reducer(f"{path}:REDUCER"))
    a = Replay(locate_run(DEMO), specs[0], history=True).verify()
    b = Replay(locate_run(DEMO), specs[1], history=True).verify()
    try:
        assert first_difference(a, b) is None and row_differences(a, b) == []
    finally:
        a.close()
        b.close()


def test_minus_zero_is_not_zero_to_a_digest() -> None:
    from replay_tui.state.diff import diff
    from replay_tui.state.drafts import DictDraft
    from replay_tui.state.persistent import freeze

    assert diff({"x": 0.0}, {"x": -0.0}) and diff([0.0], [-0.0])
    draft = DictDraft(freeze({"x": 0.0}))
    draft["x"] = -0.0
    patches: list[Any] = []
    draft.commit(patches)
    assert len(patches) == 1


def test_a_replay_still_reading_differs_only_where_both_have_read(tmp_path: Path) -> None:
    """Rules reloaded over a followed run still being caught up on: the new
    replay has read every line, the old one only some. The same rules give
    no difference (not one just past where the old one had got to); rules
    that differ early still say where."""
    from replay_tui.synth.runs import write_agent_run
    from tests.helpers.runs import write_edited_rules

    write_agent_run(tmp_path / "run", 40, seed=4)
    run = locate_run(tmp_path / "run")
    old = Replay(run, load_reducer(None))
    old.advance(limit=5)
    assert old.valid == 5 and len(old.ledger) == 40 and not old.finished
    new = Replay(run, load_reducer(None)).verify()
    assert first_difference(old, new) is None
    assert first_difference(new, old) is None
    done = Replay(run, load_reducer(None)).verify()
    assert first_difference(done, new) is None
    write_edited_rules(tmp_path / "rules.py", 3)
    edited = Replay(run, load_reducer(f"{tmp_path / 'rules.py'}:REDUCER")).verify()
    assert first_difference(old, edited) == 3  # within what both have read
    for replay in (old, new, done, edited):
        replay.close()
