"""The built-in ``agent_run`` rules' native twin gives the Python rules' answers.

``check`` and the app with the native line core run the ``agent_run`` rules
natively (``native/src/rules/``) until a line the Python rules must judge.
Here generated agent runs are damaged where the rules look (a payload's
values, a kind, a receipt, the budget), past the lines read one at a time,
and each is checked on both paths: the same report (verdict, code, seq,
message, digests, the partial state), the same warnings; in the app's pass,
the same state after every event, each event's changes, call index, clock
and the rules' memo of each kept state. The native state is also compared
with the Python rules' after every event.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.core import line_core
from replay_tui.core.native_rules import NativeRules
from replay_tui.engine import native_runs, regular_runs
from replay_tui.engine.replay import Replay
from replay_tui.engine.report import build_report
from replay_tui.formats.envelope import MAX_DEPTH
from replay_tui.formats.receipts import MAX_RECEIPT_BYTES
from replay_tui.formats.run import locate_run
from replay_tui.reducers import load_reducer
from replay_tui.state import canonical
from replay_tui.synth.runs import write_agent_run

RULES = load_reducer(None)
NATIVE = line_core.NATIVE
pytestmark = pytest.mark.skipif(
    NATIVE is None, reason=f"no native line core ({line_core.BUILD_HINT})"
)

#: Values a damage puts in a payload field: each kind the rules tell apart.
VALUES: list[Any] = [
    -1,
    0,
    1,
    2,
    3,
    7,
    1.5,
    0.25,
    -0.0,
    2**62,
    2**63 - 1,
    2**63,
    2**64 - 1,
    1e308,
    1e-300,
    True,
    False,
    None,
    "x",
    "",
    "running",
    "retrying",
    "succeeded",
    "ż 𝄞",
    [],
    {},
    {"b": 1, "a": [1.5, None]},
]
FIELDS = [
    "tokens",
    "attempt",
    "ok",
    "cost",
    "passed",
    "name",
    "to",
    "tool",
    "args",
    "reason",
    "receipt_sha256",
    "task",
    "model",
]
KINDS = sorted(RULES.reducer.kinds)  # type: ignore[attr-defined]

#: Damages to the line's text (what a value cannot say: an escape, a ``-0``).
RAW = [
    (b'"payload":{', b'"payload":{"tokens":-0,'),
    (b'"payload":{', b'"payload":{"cost":-0,'),
    (b'"payload":{', b'"payload":{"cost":-0.0,'),
    (b'"payload":{', b'"payload":{"cost":1E-2,'),
    (b'"payload":{', b'"payload":{"attempt":2.0,'),
    (b'"payload":{', b'"payload":{"to":"\\u0072unning",'),
    (b'"payload":{', b'"payload":{"tool":"sh\\u0065ll",'),
    (b'"payload":{', b'"payload":{"args":{"s":"\\n\\"q\\" \\u00e9"},'),
    (b'"payload":{', b'"payload":{"to": "running" ,'),
]


def _damage(obj: dict[str, Any], raw: bytes, which: int, k: int, ids: list[str]) -> bytes:
    """Damage ``which`` (a field and a value, a kind, a call id, a pin or a
    raw edit) of one line."""
    payload = obj.setdefault("payload", {})
    fields, values = len(FIELDS), len(VALUES)
    if which < fields * values:
        payload[FIELDS[which // values]] = VALUES[which % values]
        return orjson.dumps(obj)
    which -= fields * values
    if which < fields:
        payload.pop(FIELDS[which], None)
        return orjson.dumps(obj)
    which -= fields
    if which < len(KINDS):  # (a call left allowed or started, a check too soon)
        obj["kind"] = KINDS[which]
        return orjson.dumps(obj)
    which -= len(KINDS)
    if which == 0:
        obj["kind"] = KINDS[k % len(KINDS)]
    elif which == 1 and ids:
        payload["call_id"] = ids[k % len(ids)]  # another call's, perhaps this one's
    elif which == 2:
        payload["call_id"] = f"never-{k}"
    elif which == 3 and isinstance(payload.get("receipt_sha256"), str):
        payload["receipt_sha256"] = payload["receipt_sha256"].upper()
    elif which == 4:
        payload.pop("receipt_sha256", None)
    elif which == 5:
        payload["receipt_sha256"] = None
    else:
        old, new = RAW[k % len(RAW)]
        return raw.replace(old, new, 1)
    return orjson.dumps(obj)


DAMAGES = len(FIELDS) * len(VALUES) + len(FIELDS) + len(KINDS) + 7


def _receipt_damage(run: Path, k: int) -> None:
    """One receipt made bad (or not): gone, changed, another call's, not an
    object, not JSON, a symlink, a folder, a pinned one written again the same."""
    files = sorted(p for p in (run / "receipts").iterdir() if p.is_file() and not p.is_symlink())
    if not files:
        return
    path = files[k % len(files)]
    how = k % 8
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError:
        data = {}  # damaged already
    if how == 0:
        path.unlink()
    elif how == 1:
        data["ok"] = not data.get("ok")
        path.write_bytes(orjson.dumps(data))
    elif how == 2:
        data["call_id"] = "someone-else"
        path.write_bytes(orjson.dumps(data))
    elif how == 3:
        path.write_bytes(b"[1, 2]")
    elif how == 4:
        path.write_bytes(b'{"call_id": ')
    elif how == 5:
        other = files[(k + 1) % len(files)]
        path.unlink()
        path.symlink_to(other)
    elif how == 6:
        path.unlink()
        path.mkdir()
    else:
        path.write_bytes(path.read_bytes())


def _replay(run: Path, native: Any, *, history: bool = False) -> Replay:
    saved = regular_runs.NATIVE
    regular_runs.NATIVE = native
    try:
        return Replay(locate_run(run), RULES, checkpoint_every=7, history=history).verify()
    finally:
        regular_runs.NATIVE = saved


def _app_answers(replay: Replay, every: int = 1) -> dict[str, Any]:
    """What the app reads of its pass: the report, the state after every
    event (or ``every`` so many, and the last few) and each one's changes
    (made again from the kept states), the call index, the clock; and each
    kept state's memo is the rules' own."""
    seqs = sorted(
        {*range(0, replay.valid + 1, every), *range(max(0, replay.valid - 3), replay.valid + 1)}
    )
    history, calls, clock = replay.history, replay.calls, replay.clock
    assert history is not None and calls is not None and clock is not None
    busy = ("allowed", "started")
    for state, memo in history.kept_with_memos().values():
        if memo is not None:  # (none kept: the rules make it as they go)
            assert memo == {"busy": {c for c, v in state["calls"].items() if v["status"] in busy}}
    return {
        **_answers(replay),
        "states": [canonical.digest(history.state_at(k)) for k in seqs],
        "changes": [history.changes(k) for k in seqs if k],
        "calls": [
            list(a)
            for a in (calls.call, calls.first, calls.last, calls.count, calls.rows, calls.failed)
        ],
        "next": [list(calls.lines(n)) for n in range(calls.calls)],
        "keys": calls.keys,
        "clock": list(clock._at),
        "crcs": list(replay._crcs),
    }


def _answers(replay: Replay) -> dict[str, Any]:
    report = build_report(replay, partial=True)
    report.pop("line_core")
    report.pop("rules_core")
    return {
        "report": report,
        "strict": build_report(replay)["state_sha256"],
        "warnings": [(w.code, w.message, w.seq, w.line, w.artifact) for w in replay.warnings],
        "counts": (replay.warning_count, dict(replay.warning_codes)),
        "still_open": replay.still_open() if replay.error is None else None,
        "calls_seen": replay.calls_seen,
    }


def _write(run: Path, n: int, seed: int, budget: dict[str, Any] | None) -> list[bytes]:
    write_agent_run(run, n, seed=seed, budget=budget)
    return (run / "events.jsonl").read_bytes().split(b"\n")[:-1]


BUDGETS = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "max_attempts": st.integers(1, 6),
            "max_tool_calls": st.integers(0, 40),
            "max_cost": st.one_of(st.integers(0, 3), st.floats(0, 3, allow_nan=False)),
        },
    ),
)
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(66, 240),
    picks=st.lists(
        st.tuples(st.integers(64, 239), st.integers(0, DAMAGES - 1), st.integers(0, 99)),
        max_size=3,
    ),
    receipts=st.lists(st.integers(0, 999), max_size=2),
    budget=BUDGETS,
)
def test_both_rules_give_the_same_answers(
    seed: int,
    n: int,
    picks: list[tuple[int, int, int]],
    receipts: list[int],
    budget: dict[str, Any] | None,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        lines = _write(run, n, seed, budget)
        ids = [orjson.loads(x)["payload"].get("call_id") for x in lines]
        ids = [i for i in ids if isinstance(i, str)]
        for at, which, k in picks:
            if at < len(lines):
                lines[at] = _damage(orjson.loads(lines[at]), lines[at], which, k, ids)
        (run / "events.jsonl").write_bytes(b"".join(x + b"\n" for x in lines))
        for k in receipts:
            _receipt_damage(run, k)
        native = _replay(run, NATIVE)
        python = _replay(run, None)
        assert python.rules_core == "python"
        assert _answers(native) == _answers(python)
        assert _app_answers(_replay(run, NATIVE, history=True)) == _app_answers(
            _replay(run, None, history=True)
        )


@pytest.mark.parametrize("which", range(DAMAGES))
def test_each_damage_gives_the_same_answers(which: int, tmp_path: Path) -> None:
    """Every damage at least once, on a line of each kind."""
    run = tmp_path / "run"
    lines = _write(run, 200, 11, None)
    kinds = [orjson.loads(x)["kind"] for x in lines]
    ids = [orjson.loads(x)["payload"].get("call_id") for x in lines]
    ids = [i for i in ids if isinstance(i, str)]
    events = run / "events.jsonl"
    for kind in sorted(set(kinds)):
        at = kinds.index(kind, 70) if kind in kinds[70:] else None
        if at is None:
            continue
        damaged = list(lines)
        damaged[at] = _damage(orjson.loads(lines[at]), lines[at], which, at, ids)
        events.write_bytes(b"".join(x + b"\n" for x in damaged))
        assert _answers(_replay(run, NATIVE)) == _answers(_replay(run, None)), (kind, at)
        app = _app_answers(_replay(run, NATIVE, history=True))
        assert app == _app_answers(_replay(run, None, history=True)), (kind, at)


def test_a_clean_run_is_proved_natively_to_the_python_state(tmp_path: Path) -> None:
    """The native rules really run (past the lines read one at a time) and
    end at the Python rules' state; ``check --json`` says which rules ran."""
    run = tmp_path / "run"
    _write(run, 400, 5, None)
    native, python = _replay(run, NATIVE), _replay(run, None)
    assert native.rules_core == "native" and python.rules_core == "python"
    assert build_report(native)["rules_core"] == "native"
    assert native.forward.native.events > 300
    assert _answers(native) == _answers(python)
    app = _replay(run, NATIVE, history=True)
    assert app.rules_core == "native" and app.forward.native.events > 300
    assert _app_answers(app) == _app_answers(_replay(run, None, history=True))


def test_a_long_run_gives_the_same_answers_where_an_ended_call_is_named_again(
    tmp_path: Path,
) -> None:
    """A run of many thousand lines (many batches, many states kept): the
    same answers in ``check`` and the app, here a call proposed again long
    after it ended (the twin let it go: it leaves the line to the Python
    rules), and ``advance`` stopped at a seq has exactly that many valid."""
    run = tmp_path / "run"
    lines = _write(run, 30_000, 4, None)
    finished = next(x for x in lines if b'"tool_finished"' in x)
    ended = orjson.loads(finished)["payload"]["call_id"]
    seqs = [k for k, x in enumerate(lines) if b'"model_proposed"' in x and k > 25_000]
    obj = orjson.loads(lines[seqs[0]])
    obj["payload"]["call_id"] = ended
    lines[seqs[0]] = orjson.dumps(obj)
    (run / "events.jsonl").write_bytes(b"".join(x + b"\n" for x in lines))
    for history in (False, True):
        native = _replay(run, NATIVE, history=history)
        assert native.error is not None and native.error.seq == seqs[0] + 1
        python = _replay(run, None, history=history)
        if history:
            assert _app_answers(native, 997) == _app_answers(python, 997)
        else:
            assert _answers(native) == _answers(python)
    saved = regular_runs.NATIVE
    regular_runs.NATIVE = NATIVE
    try:
        stopped = Replay(locate_run(run), RULES, history=True)
        stopped.advance(limit=20_000)
    finally:
        regular_runs.NATIVE = saved
    assert stopped.valid == 20_000 and stopped.rules_core == "native"
    assert canonical.digest(stopped.history.state_at(20_000)) == canonical.digest(  # type: ignore[union-attr]
        native.history.state_at(20_000)  # type: ignore[union-attr]
    )


def _python_states(run: Path) -> list[Any]:
    replay = _replay(run, None)
    return [replay.state_at(k) for k in range(replay.valid + 1)]


@SETTINGS
@given(seed=st.integers(0, 10_000), n=st.integers(2, 160), budget=BUDGETS)
def test_the_native_state_is_the_python_state_after_every_event(
    seed: int, n: int, budget: dict[str, Any] | None
) -> None:
    """Line by line from the initial state: after each event the native
    state, written back, is the Python rules' state (the same JSON, key
    order too) until the first event it leaves to them."""
    assert NATIVE is not None
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        lines = _write(run, n, seed, budget)
        states = _python_states(run)
        replay = _replay(run, None)
        limits = replay.ctx.budget
        rules = NativeRules.take(
            NATIVE.rules,
            orjson.dumps(RULES.reducer.initial_state()),  # type: ignore[attr-defined]
            limits.max_attempts,
            limits.max_tool_calls,
            limits.max_cost,
        )
        assert rules is not None
        buf = b"".join(x + b"\n" for x in lines)
        start = 0
        folder = os.open(run / "receipts", os.O_RDONLY | os.O_DIRECTORY)
        try:
            for k in range(len(lines)):
                proof, _, _, _ = NATIVE.prove_apply(
                    rules,
                    buf,
                    start,
                    first_seq=k + 1,
                    run_id=None,
                    kinds=RULES.reducer.kinds,  # type: ignore[attr-defined]
                    max_depth=MAX_DEPTH - 1,
                    max_lines=1,
                    max_len=0,
                    receipts_fd=folder,
                    max_size=MAX_RECEIPT_BYTES,
                )
                if not proof.lines:
                    assert proof.why == line_core.RULES
                    assert k + 1 > replay.valid or replay.error is not None
                    break
                assert orjson.loads(rules.state()) == states[k + 1]
                assert rules.state() == canonical.dumps_fast(states[k + 1])
                start = proof.end
            else:
                assert replay.error is None and replay.valid == len(lines)
        finally:
            os.close(folder)


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=300), pad=st.sampled_from([0, 55, 56, 63, 64, 119, 120, 128]))
def test_the_native_sha256_is_hashlib_s(data: bytes, pad: int) -> None:
    """The receipts' digest, written natively (the library has no dependency)."""
    assert NATIVE is not None
    sha = ctypes.CDLL(str(NATIVE.path)).rtlc_sha256
    sha.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p]
    for value in (data, data[:pad], b"x" * pad + data):
        out = ctypes.create_string_buffer(64)
        sha(value, len(value), out)
        assert out.raw == hashlib.sha256(value).hexdigest().encode()


WHOLE = (
    b'{"phase":"running","task":null,"model":null,"attempt":1,"calls":{"c1":{"tool":"t",'
    b'"args":null,"status":"proposed","attempt":1,"ok":null,"cost":null,"receipt":null,'
    b'"reason":null}},"spent":{"tool_calls":0,"cost":0,"tokens":0},"checks":[]}'
)


@pytest.mark.parametrize(
    "state",
    [
        b'{"phase":"running"}',
        WHOLE.replace(b'"attempt":1,"calls"', b'"attempt":1180591620717411303424,"calls"'),
        WHOLE.replace(b'"phase":"running"', b'"phase":"paused"'),
        WHOLE.replace(b'"status":"proposed"', b'"status":"lost"'),
        WHOLE.replace(b'"task":null,"model":null', b'"model":null,"task":null'),
        WHOLE.replace(b'"reason":null}', b'"reason":null,"more":1}'),
        WHOLE.replace(b'"tokens":0}', b'"tokens":0.5}'),
        WHOLE.replace(b"[]}", b"[]} "),
        b'"not a state"',
    ],
)
def test_a_state_of_another_shape_is_left_to_the_python_rules(state: bytes) -> None:
    assert NATIVE is not None
    assert NativeRules.take(NATIVE.rules, WHOLE, None, None, None) is not None
    assert NativeRules.take(NATIVE.rules, state, None, None, None) is None


def test_a_budget_past_64_bits_is_left_to_the_python_rules() -> None:
    assert NATIVE is not None
    initial = orjson.dumps(RULES.reducer.initial_state())  # type: ignore[attr-defined]
    assert NativeRules.take(NATIVE.rules, initial, 2**64, None, None) is None
    assert NativeRules.take(NATIVE.rules, initial, True, None, None) is None
    assert NativeRules.take(NATIVE.rules, initial, 3, None, 0.5) is not None


def _ledger(run: Path, payloads: list[tuple[str, dict[str, Any]]]) -> None:
    run.mkdir()
    (run / "events.jsonl").write_bytes(
        b"".join(
            orjson.dumps({"seq": n, "run_id": "r", "kind": kind, "payload": payload}) + b"\n"
            for n, (kind, payload) in enumerate(payloads, 1)
        )
    )


def test_a_run_with_no_call_is_proved_natively(tmp_path: Path) -> None:
    """A run of only model turns (no call in the state): its digest is that
    of an empty call table (a review found it crashed)."""
    run = tmp_path / "run"
    _ledger(
        run,
        [("run_started", {"task": "t"}), ("attempt_started", {"attempt": 1})]
        + [("model_finished", {"tokens": 5})] * 120,
    )
    native, python = _replay(run, NATIVE), _replay(run, None)
    assert native.error is None and native.rules_core == "native"
    assert _answers(native) == _answers(python)


def test_a_line_deeper_than_the_limit_is_judged_with_receipts_there(tmp_path: Path) -> None:
    """The receipts' reader stops where the line core does: a line nested
    50,000 deep is bad JSON, on both paths (a review found the reader, which
    read it with no limit, overflowed its stack)."""
    run = tmp_path / "run"
    lines = _write(run, 120, 3, None)
    deep = {"seq": 100, "run_id": orjson.loads(lines[0])["run_id"], "kind": "model_finished"}
    raw = orjson.dumps(deep)[:-1] + b',"payload":{"d":' + b"[" * 50_000 + b"]" * 50_000 + b"}}"
    lines[99] = raw
    (run / "events.jsonl").write_bytes(b"".join(x + b"\n" for x in lines))
    native, python = _replay(run, NATIVE), _replay(run, None)
    assert native.error is not None and native.error.code == "bad_json"
    assert _answers(native) == _answers(python)


def test_lines_the_core_leaves_are_applied_natively_without_a_hand_over(
    tmp_path: Path,
) -> None:
    """A ``parent_seq`` every 50 lines: each such line is judged by the
    Python checks and applied by the native rules, the state never handed
    over (a review found each one made the state whole in Python and took it
    back: quadratic)."""
    run = tmp_path / "run"
    lines = _write(run, 3000, 8, None)
    for at in range(100, len(lines), 50):
        obj = orjson.loads(lines[at])
        obj["parent_seq"] = obj["seq"] - 1
        lines[at] = orjson.dumps(obj)
    (run / "events.jsonl").write_bytes(b"".join(x + b"\n" for x in lines))
    native = _replay(run, NATIVE)
    assert native.error is None
    assert native._native_left_at is None  # never made whole in Python while proving
    assert native.forward.native.events == len(lines) - 64
    assert _answers(native) == _answers(_replay(run, None))


def test_a_state_the_twin_cannot_take_is_not_tried_again_at_every_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A state the native rules cannot hold (an integer past 64 bits in a
    call's args) is tried again only once the Python rules applied as many
    lines as a try costs, not after each line the core leaves (a review
    found the app's pass quadratic: 17 s where Python took 0.3 s)."""
    run = tmp_path / "run"
    lines = _write(run, 4000, 6, None)
    at = next(k for k, x in enumerate(lines) if k > 70 and b'"model_proposed"' in x)
    obj = orjson.loads(lines[at])
    obj["payload"]["args"] = {"n": 1}
    lines[at] = orjson.dumps(obj).replace(b'{"n":1}', b'{"n":%d}' % 2**70)
    for k in range(at + 2, len(lines), 2):  # every other line left by the core
        obj = orjson.loads(lines[k])
        obj["parent_seq"] = obj["seq"] - 1
        lines[k] = orjson.dumps(obj)
    (run / "events.jsonl").write_bytes(b"".join(x + b"\n" for x in lines))
    tries: list[int] = []

    class Counted:
        loads = staticmethod(orjson.loads)

        @staticmethod
        def dumps(value: Any) -> bytes:
            tries.append(1)
            return orjson.dumps(value)

    monkeypatch.setattr(native_runs, "orjson", Counted)
    for history in (False, True):
        tries.clear()
        native = _replay(run, NATIVE, history=history)
        assert native.error is None and 0 < len(tries) < (len(lines) - at) // 10
        answers = _app_answers if history else _answers
        assert answers(native) == answers(_replay(run, None, history=history))
