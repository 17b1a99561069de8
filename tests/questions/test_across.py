"""Questions across time: the path and condition parser, ``when`` and
``history`` on the command line, and the three ways they are answered (a
watcher on the forward pass, the patch-log scan, the rules run again), each
held to brute force over every prefix."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.questions.across import HistorySearch, WhenSearch, condition_turns, path_changes
from replay_tui.questions.condition import (
    ABSENT,
    ConditionError,
    format_path,
    json_equal,
    lookup,
    parse_condition,
    parse_path,
)
from replay_tui.reducers import rules_for_run
from replay_tui.state.persistent import thaw
from replay_tui.synth.runs import write_agent_run
from tests.conftest import DEMO, SAMPLES
from tests.helpers.cli import run_cli
from tests.helpers.questions import PATHS, conditions

# -- paths ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("phase", ("phase",)),
        ("calls.call-003.status", ("calls", "call-003", "status")),
        ("checks[0].passed", ("checks", 0, "passed")),
        ("checks[12]", ("checks", 12)),
        ('calls."a.b".status', ("calls", "a.b", "status")),
        ('"a key with spaces"', ("a key with spaces",)),
        ('x."say \\"hi\\""', ("x", 'say "hi"')),
        ("activities.5.status", ("activities", "5", "status")),
        ("a_b-c.D9", ("a_b-c", "D9")),
        ("m[0][1]", ("m", 0, 1)),
    ],
)
def test_paths_parse_and_print_back(text: str, path: tuple[Any, ...]) -> None:
    assert parse_path(text) == path
    assert parse_path(format_path(path)) == path


@pytest.mark.parametrize(
    ("text", "column", "words"),
    [
        ("", 1, "expected a path"),
        ("calls.", 7, "expected a key"),
        ("calls..x", 7, "expected a key"),
        ("a[x]", 2, "list index"),
        ("a[-1]", 2, "list index"),
        ('a."open', 3, "unterminated quoted key"),
        ("a b", 2, "unexpected ' ' after the path"),
        ("a/b", 2, "unexpected '/'"),
    ],
)
def test_bad_paths_say_where(text: str, column: int, words: str) -> None:
    with pytest.raises(ConditionError) as info:
        parse_path(text)
    assert info.value.column == column and words in info.value.message


def test_lookup_reads_objects_by_key_and_lists_by_index_or_digit_key() -> None:
    state = {"a": [{"b": 1}], "c": {"0": "zero"}, "n": None}
    assert lookup(state, ("a", 0, "b")) == 1
    assert lookup(state, ("c", "0")) == "zero"
    assert lookup(state, ("c", 0)) is ABSENT  # an index does not read an object
    assert lookup(state, ("a", "0")) == {"b": 1}  # a key of digits alone reads a list: a.0
    assert lookup(state, ("a", "0", "b")) == 1
    assert lookup(state, ("a", "x")) is ABSENT  # any other key does not
    assert lookup(state, ("a", "1")) is ABSENT
    assert lookup(state, ("a", 1)) is ABSENT
    assert lookup(state, ("n",)) is None  # null is there: not absent
    assert lookup(state, ("n", "x")) is ABSENT


# -- conditions ----------------------------------------------------------------

STATE = {
    "phase": "retrying",
    "attempt": 2,
    "ratio": 0.5,
    "ok": True,
    "none": None,
    "calls": {"call-003": {"status": "allowed"}, "a.b": {"status": "denied"}},
    "checks": [{"passed": False}],
    "text": "héllo",
}


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ('phase == "retrying"', True),
        ('phase != "retrying"', False),
        ("attempt == 2", True),
        ("attempt == 2.0", True),  # 2 and 2.0 are one JSON number
        ("attempt != 3", True),
        ("attempt < 3", True),
        ("attempt <= 2", True),
        ("attempt > 2", False),
        ("attempt >= 2", True),
        ("ratio < 1", True),
        ('phase < "s"', True),  # strings order by code point
        ('attempt < "3"', False),  # a number and a string do not order
        ("ok == true", True),
        ("ok == 1", False),  # true is not 1
        ("attempt == true", False),
        ("none == null", True),
        ("none exists", True),
        ("missing == null", False),  # absent is not null
        ("missing != 1", False),  # an absent path makes any comparison false
        ("not missing exists", True),
        ("calls.call-003 exists", True),
        ('calls."a.b".status == "denied"', True),
        ("checks[0].passed == false", True),
        ("checks[1].passed == false", False),
        ("len(calls) == 2", True),
        ("len(checks) >= 1", True),
        ("len(text) == 5", True),  # characters, not bytes
        ("len(attempt) == 1", False),  # a number has no length
        ("len(missing) == 0", False),
        ('calls.call-003 == {"status": "allowed"}', True),
        ('checks == [{"passed": false}]', True),
        ("attempt == 2 and ok == true", True),
        ("attempt == 3 or ok == true", True),
        ("not attempt == 3", True),
        ("not (attempt == 2 and ok == false)", True),
    ],
)
def test_every_operator_holds_as_json_says(text: str, holds: bool) -> None:
    assert parse_condition(text).evaluate(STATE) is holds


def test_and_binds_tighter_than_or_and_not_tighter_than_both() -> None:
    # true or (false and false) = true; (true or false) and false = false
    assert parse_condition("ok == true or ok == false and ok == false").evaluate(STATE)
    assert not parse_condition("(ok == true or ok == false) and ok == false").evaluate(STATE)
    # not binds to the one comparison after it
    assert parse_condition("not ok == false and attempt == 2").evaluate(STATE)
    assert not parse_condition("not (ok == true and attempt == 2)").evaluate(STATE)
    assert parse_condition("a == 1 or b == 2 and c == 3").normalised() == (
        "a == 1 or (b == 2 and c == 3)"
    )


def test_keywords_need_quotes_only_where_they_stand_alone() -> None:
    assert parse_condition("notes.x == 1").paths == (("notes", "x"),)
    assert parse_condition("order == 1").paths == (("order",),)
    assert parse_condition('"and" == 1').paths == (("and",),)
    assert parse_condition("and.x == 1").paths == (("and", "x"),)


@pytest.mark.parametrize(
    ("text", "column", "words"),
    [
        ("", 1, "empty"),
        ("phase == retrying", 10, "strings need double quotes"),
        ("phase = 1", 7, "use =="),
        ("phase", 6, "expected an operator"),
        ("phase ~= 1", 7, "expected an operator"),
        ("phase ==", 9, "expected a JSON value"),
        ("(phase == 1", 1, "never closed"),
        ("phase == 1)", 11, "closes nothing"),
        ("phase == 1 phase == 2", 12, "expected and, or or the end"),
        ("phase == 1 and", 15, "ends too soon"),
        ("and == 1", 1, "needs quotes"),
        ("not", 4, "ends too soon"),
        ("x == NaN", 6, "not a JSON value"),
        ("x == Infinity", 6, "not a JSON value"),
        ("x == 1e999", 6, "too large"),
        ("x == 10abc", 8, "after the value"),
        ("len(x exists", 7, "expected ) to close len("),
        ("len(x) exists", 8, "expected an operator (== != < <= > >=) after"),
        ("x.[0] == 1", 3, "expected a key"),
        ('x == "open', 6, "expected a JSON value"),
    ],
)
def test_bad_conditions_say_where_and_why(text: str, column: int, words: str) -> None:
    with pytest.raises(ConditionError) as info:
        parse_condition(text)
    assert info.value.column == column, info.value.message
    assert words in info.value.message
    line = info.value.one_line()
    assert line.startswith(f"bad condition at column {column}: ") and "\n" not in line


# -- the command line ----------------------------------------------------------


def test_when_finds_the_seq_a_condition_turns_true(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "when", str(DEMO), 'phase == "retrying"')
    assert code == 0
    assert out == '10  check_finished  phase: "running" → "retrying"\n'
    code, out, _ = run_cli(
        capsys,
        "when",
        str(DEMO),
        'calls.call-003.status == "allowed" or phase == "running"',
        "--all",
    )
    assert code == 0
    assert [ln.split()[0] for ln in out.splitlines()] == ["1", "14"]
    assert out.splitlines()[1] == '14  tool_allowed  calls.call-003.status: "proposed" → "allowed"'


def test_when_json_and_the_initial_state(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "when", str(DEMO), "not calls.call-001 exists", "--json")
    report = json.loads(out)
    assert code == 0 and report["seqs"] == [0]  # true of the state before event 1
    assert report["condition"] == "not calls.call-001 exists" and report["complete"] is True
    code, out, _ = run_cli(capsys, "when", str(DEMO), "len(calls) > 1", "--all", "--json")
    report = json.loads(out)
    assert report["seqs"] == [7]
    assert report["turns"][0]["kind"] == "model_proposed"
    assert report["turns"][0]["changes"] == [
        {"path": "calls", "watched": "len", "old": 1, "new": 2}
    ]


def test_when_never_and_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run_cli(capsys, "when", str(DEMO), 'phase == "done"')
    assert (code, out) == (1, "")
    assert 'never: phase == "done" holds after none of prefixes 0..14' in err
    code, out, _ = run_cli(capsys, "when", str(DEMO), 'phase == "done"', "--json")
    assert code == 1 and json.loads(out)["seqs"] == []
    code, out, err = run_cli(capsys, "when", str(DEMO), "phase == retrying")
    assert code == 2 and out == ""
    assert err.startswith("replay-tui: bad condition at column 10: ")
    assert err.count("\n") == 1
    code, _, err = run_cli(capsys, "when", str(tmp_path / "nope"), "phase exists")
    assert code == 2 and err.count("\n") == 1
    code, _, err = run_cli(capsys, "history", str(DEMO), "calls..x")
    assert code == 2 and err.startswith("replay-tui: bad path at column 7: ")


def test_a_failing_run_is_searched_up_to_its_error(capsys: pytest.CaptureFixture[str]) -> None:
    broken = SAMPLES / "broken-divergence"  # fails at seq 11
    code, out, err = run_cli(capsys, "when", str(broken), 'phase == "succeeded"')
    assert code == 1 and out == ""
    assert "searched the valid prefix only (events 1..10)" in err and "divergence" in err
    code, out, err = run_cli(capsys, "when", str(broken), "--json", 'phase == "succeeded"')
    report = json.loads(out)
    assert report["complete"] is False and report["searched"] == 10
    assert report["error"]["code"] == "divergence"


def test_history_lists_every_change_of_a_path(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "history", str(DEMO), "calls.call-003.status")
    assert code == 0
    assert out.splitlines() == [
        '13  model_proposed  absent → "proposed"',
        '14  tool_allowed  "proposed" → "allowed"',
    ]
    code, out, _ = run_cli(capsys, "history", str(DEMO), "calls.call-003.status", "--json")
    assert json.loads(out)["changes"] == [
        {"seq": 13, "kind": "model_proposed", "op": "added", "new": "proposed"},
        {"seq": 14, "kind": "tool_allowed", "op": "changed", "old": "proposed", "new": "allowed"},
    ]
    code, out, err = run_cli(capsys, "history", str(DEMO), "calls.call-999")
    assert code == 1 and out == "" and "never changed in events 1..14" in err


def _started_run(tmp_path: Path, task: str) -> Path:
    """A run of one event, ``run_started`` with ``task``."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "events.jsonl").write_bytes(
        orjson.dumps({"seq": 1, "run_id": "r", "kind": "run_started", "payload": {"task": task}})
        + b"\n"
    )
    return run


def test_history_csv_charts_a_value_in_a_spreadsheet(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--csv``: the value at 0, then after each change, as a spreadsheet
    reads it (numbers bare, strings quoted only where CSV needs it)."""
    import csv
    import io

    code, out, _ = run_cli(capsys, "history", str(DEMO), "spent.tokens", "--csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert code == 0 and rows[0] == ["seq", "value", "kind"] and rows[1] == ["0", "0", ""]
    _, js, _ = run_cli(capsys, "history", str(DEMO), "spent.tokens", "--json")
    assert [[r[0], r[1], r[2]] for r in rows[2:]] == [
        [str(c["seq"]), str(c["new"]), c["kind"]] for c in json.loads(js)["changes"]
    ]
    assert float(rows[-1][1]) > float(rows[2][1])
    task = 'a, "quoted"\ntask'
    run = _started_run(tmp_path, task)
    code, out, _ = run_cli(capsys, "history", str(run), "task", "--csv")
    assert list(csv.reader(io.StringIO(out)))[1:] == [["0", "null", ""], ["1", task, "run_started"]]
    code, out, err = run_cli(capsys, "history", str(run), "task", "--csv", "--json")
    assert code == 2 and "not allowed with" in err


def test_history_of_a_temporal_history(capsys: pytest.CaptureFixture[str]) -> None:
    history = SAMPLES / "temporal" / "hand-written--update-after-reset.json"
    code, out, _ = run_cli(capsys, "history", str(history), "activities.11.status")
    assert code == 0
    assert [ln.split("  ")[0] for ln in out.splitlines()] == ["11", "14", "15"]
    code, out, _ = run_cli(capsys, "when", str(history), 'updates.add-item-7.status == "completed"')
    assert out.startswith("19  WorkflowExecutionUpdateCompleted  ")


def test_printed_values_are_inert(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    task = "\x1b[2J\x1b]0;pwned\x07 [bold]x[/]"
    run = _started_run(tmp_path, task)
    code, out, _ = run_cli(capsys, "history", str(run), "task")
    assert code == 0 and "\x1b" not in out and "\x07" not in out
    assert "[bold]x[/]" in out  # shown as it is, never as markup


# -- every way of answering agrees with brute force ----------------------------


def _replay(path: Path, *, history: bool) -> Replay:
    paths = locate_run(path)
    return Replay(paths, rules_for_run(None, paths.events, paths.format), history=history)


def _forward(path: Path, search: WhenSearch | HistorySearch) -> None:
    """The CLI's way: a watcher on check's forward pass."""
    replay = _replay(path, history=False)
    try:
        search.start(replay.state_at(0))
        replay.observer = search.see
        replay.verify()
    finally:
        replay.close()


class _PlainRules:
    """The built-in rules without drafts: the app then has no patch log and
    runs the rules again (a rules file of one's own)."""

    def __init__(self, path: Path) -> None:
        self.paths = locate_run(path)
        self.rules = rules_for_run(None, self.paths.events, self.paths.format)

    def replay(self) -> Replay:
        replay = Replay(self.paths, self.rules, history=True)
        replay.history = None  # as for rules that take no drafts
        return replay.verify()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 90),
    condition=conditions(),
    path=st.sampled_from(PATHS),
)
def test_when_and_history_agree_with_every_prefix(
    tmp_path_factory: pytest.TempPathFactory, seed: int, n: int, condition: str, path: str
) -> None:
    run = tmp_path_factory.mktemp("run") / "r"
    write_agent_run(run, n, seed=seed)
    full = _replay(run, history=True).verify()
    try:
        states = [thaw(full.frozen_at(k)) for k in range(full.valid + 1)]
        cond = parse_condition(condition)
        truth = [cond.evaluate(s) for s in states]
        expected = [k for k in range(len(states)) if truth[k] and (k == 0 or not truth[k - 1])]
        where = parse_path(path)
        values = [lookup(s, where) for s in states]
        moved = [
            (k, values[k - 1], values[k])
            for k in range(1, len(values))
            if not _json_same(values[k - 1], values[k])
        ]
        # checks.0 is checks[0]: the brute force of the bracketed path agrees
        bracketed = parse_path(_bracketed(path))
        assert all(_json_same(lookup(s, bracketed), v) for s, v in zip(states, values, strict=True))
        assert [parse_condition(_bracketed(condition)).evaluate(s) for s in states] == truth

        when = WhenSearch(cond)
        _forward(run, when)
        assert [t.seq for t in when.turns] == expected  # the CLI
        assert [t.seq for t in condition_turns(full, cond, full.valid)] == expected  # the app
        hist = HistorySearch(where)
        _forward(run, hist)
        for got in (hist.changes, path_changes(full, where, full.valid)):
            assert [(c.seq, c.old, c.new) for c in got] == moved
            for c in got:
                assert c.op == (
                    "added" if c.old is ABSENT else "removed" if c.new is ABSENT else "changed"
                )
        plain = _PlainRules(run).replay()
        try:
            assert [t.seq for t in condition_turns(plain, cond, plain.valid)] == expected
            assert [(c.seq, c.old, c.new) for c in path_changes(plain, where, plain.valid)] == moved
        finally:
            plain.close()
    finally:
        full.close()


def _bracketed(text: str) -> str:
    """``checks.0.passed`` written ``checks[0].passed`` (numbers left alone)."""
    return re.sub(r"(?<=[A-Za-z_\]-])\.(\d+)(?![\w-])", r"[\1]", text)


def _json_same(a: Any, b: Any) -> bool:
    if a is ABSENT or b is ABSENT:
        return a is b
    return (
        type(a) is type(b) and json_equal(a, b)
        if not isinstance(a, (dict, list))
        else (
            orjson.dumps(a, option=orjson.OPT_SORT_KEYS)
            == orjson.dumps(b, option=orjson.OPT_SORT_KEYS)
        )
    )


def test_a_watched_list_cut_and_grown_is_followed_through_the_patch_log(tmp_path: Path) -> None:
    """Lists shrink by cutting at an index and grow at their end: the scan
    keeps the value at a path inside one in step with the states."""
    rules = tmp_path / "rules.py"
    rules.write_text(
        "class R:\n"
        "    name = 'lists'\n    version = '1'\n    kinds = frozenset({'set'})\n"
        "    drafts = True\n"
        "    def initial_state(self):\n        return {'xs': [], 'm': {}}\n"
        "    def summary(self, state):\n        return str(len(state['xs']))\n"
        "    def apply(self, state, event, ctx):\n"
        "        p = event.payload\n"
        "        if 'xs' in p:\n"
        "            while len(state['xs']) > len(p['xs']):\n                state['xs'].pop()\n"
        "            for i, v in enumerate(p['xs']):\n"
        "                if i < len(state['xs']):\n                    state['xs'][i] = v\n"
        "                else:\n                    state['xs'].append(v)\n"
        "        if 'm' in p:\n            state['m'] = p['m']\n"
        "        return state\n"
        "REDUCER = R()\n"
    )
    steps = [
        {"xs": [1, 2, 3]},
        {"xs": [1]},
        {"xs": [1, {"a": 1}, 3]},
        {"xs": [1, {"a": 2}]},
        {"m": {"k": [0, 1]}},
        {"m": {}},
        {"xs": []},
        {"xs": [5, 6, {"a": 3}]},
    ]
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "events.jsonl").write_bytes(
        b"".join(
            orjson.dumps({"seq": i, "run_id": "r", "kind": "set", "payload": p}) + b"\n"
            for i, p in enumerate(steps, 1)
        )
    )
    from replay_tui.reducers import load_reducer

    paths = locate_run(tmp_path / "run")
    replay = Replay(paths, load_reducer(f"{rules}:REDUCER"), history=True).verify()
    try:
        assert replay.error is None and replay.history is not None
        states = [thaw(replay.frozen_at(k)) for k in range(len(steps) + 1)]
        for text in ["xs[1].a", "xs[2]", "xs", "m.k[1]", "m.k"]:
            where = parse_path(text)
            values = [lookup(s, where) for s in states]
            moved = [k for k in range(1, len(values)) if not _json_same(values[k - 1], values[k])]
            assert [c.seq for c in path_changes(replay, where, replay.valid)] == moved, text
        for text in ["len(xs) == 3", "len(xs) < 2", "xs[2] exists", "len(m.k) == 2"]:
            cond = parse_condition(text)
            truth = [cond.evaluate(s) for s in states]
            turns = [k for k in range(len(truth)) if truth[k] and (k == 0 or not truth[k - 1])]
            assert [t.seq for t in condition_turns(replay, cond, replay.valid)] == turns, text
    finally:
        replay.close()


def test_a_big_object_is_watched_through_the_patch_log(capsys: pytest.CaptureFixture[str]) -> None:
    """Comparing all of ``calls`` after every event would cost its size an
    event: past a few KB the CLI answers from the patch log instead."""
    run = SAMPLES / "long-300"
    full = _replay(run, history=True).verify()
    try:
        states = [thaw(full.frozen_at(k)) for k in range(full.valid + 1)]
        assert len(orjson.dumps(states[-1]["calls"])) > 4096
        moved = [k for k in range(1, len(states)) if states[k]["calls"] != states[k - 1]["calls"]]
    finally:
        full.close()
    code, out, _ = run_cli(capsys, "history", str(run), "calls", "--json")
    assert code == 0 and [c["seq"] for c in json.loads(out)["changes"]] == moved
    code, out, _ = run_cli(capsys, "when", str(run), "--json", "--all", "calls == {}")
    assert json.loads(out)["seqs"] == [0]


def test_a_turn_near_the_start_is_found_before_the_patch_log_is_whole(tmp_path: Path) -> None:
    """With the built-in rules the patch log is made behind the pass: a
    question asked before it is whole (``:`` right after opening a long run)
    runs the rules again only as far as the first answer needs."""
    from replay_tui.questions.across import iter_turns

    write_agent_run(tmp_path / "run", 30_000, seed=2)
    run = locate_run(tmp_path / "run")
    replay = Replay(run, rules_for_run(None, run.events, run.format), history=True).verify()
    assert replay.history is not None and replay.history.made_again
    assert len(replay.history.patches) == 0  # nothing made yet
    told: list[int] = []  # the last event of each span the rules were run again over
    watch_again = replay.history.watch_again

    def watched(first: int, last: int, see: Callable[[int, Any], bool]) -> bool:
        told.append(last)
        return watch_again(first, last, see)

    replay.history.watch_again = watched  # type: ignore[method-assign]
    first = next(iter_turns(replay, parse_condition('phase == "running"'), replay.valid))
    assert first.seq == 1
    assert 0 < max(told) < replay.valid // 2
    assert len(replay.history.patches) == 0  # a scalar: told by the rules run again
    # and every answer is the rules run again's, the log made on the way
    plain = Replay(
        run, rules_for_run(None, run.events, run.format)
    ).verify()  # no patch log: the rules run again
    for text in ('phase == "running"', 'phase == "retrying"', "spent.tool_calls > 40"):
        condition = parse_condition(text)
        made = [t.seq for t in condition_turns(replay, condition, replay.valid)]
        assert made == [t.seq for t in condition_turns(plain, condition, plain.valid)], text
