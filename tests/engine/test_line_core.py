"""The native line core and the Python path give the same answers.

Generated agent runs are damaged in the lines the chunk path reads (past
the first 64, which are read a line at a time), in every way the envelope
checks judge and some they must let through; each is then replayed on both
paths and must give the same report (verdict, code, seq, message, digests),
the same warnings, and the same state at every prefix.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.core import line_core
from replay_tui.engine import regular_runs
from replay_tui.engine.replay import Replay
from replay_tui.engine.report import build_report
from replay_tui.formats.envelope import ts_seconds
from replay_tui.formats.run import locate_run
from replay_tui.reducers import load_reducer
from replay_tui.state import canonical
from replay_tui.synth.runs import write_agent_run

RULES = load_reducer(None)
NATIVE = line_core.NATIVE
needs_native = pytest.mark.skipif(
    NATIVE is None, reason=f"no native line core ({line_core.BUILD_HINT})"
)


def test_the_path_asked_for_is_the_path_taken() -> None:
    """CI runs the suite with ``REPLAY_TUI_LINE_CORE=native`` once: that run
    must really be native (and ``python`` really the Python path)."""
    wanted = os.environ.get("REPLAY_TUI_LINE_CORE")
    if wanted == "native":
        assert NATIVE is not None, line_core.PROBLEM
    elif wanted == "python":
        assert NATIVE is None
    assert line_core.describe().split()[0] == ("native" if NATIVE else "python")


def _set(obj: dict[str, Any], key: str, value: Any) -> bytes:
    obj[key] = value
    return orjson.dumps(obj)


def _pay(obj: dict[str, Any], key: str, value: Any) -> bytes:
    obj.setdefault("payload", {})[key] = value
    return orjson.dumps(obj)


def _raw_swap(raw: bytes, old: bytes, new: bytes) -> bytes:
    return raw.replace(old, new, 1)


#: Each damage: (name, function of (line's object, its raw bytes, a number) -> new bytes).
DAMAGES: list[tuple[str, Any]] = [
    ("ts earlier", lambda o, r, k: _set(o, "ts", "2026-01-01T00:00:00.000Z")),
    ("ts a second earlier", lambda o, r, k: _set(o, "ts", o["ts"][:17] + "00.000Z")),
    ("ts gone", lambda o, r, k: (o.pop("ts", None), orjson.dumps(o))[1]),
    ("ts shorter", lambda o, r, k: _set(o, "ts", o["ts"][:19] + "Z")),
    ("ts longer", lambda o, r, k: _set(o, "ts", o["ts"][:-1] + "5Z")),
    ("ts no real day", lambda o, r, k: _set(o, "ts", "2026-02-30" + o["ts"][10:])),
    ("ts offset", lambda o, r, k: _set(o, "ts", o["ts"][:-1] + "+01:00")),
    ("ts hour 24", lambda o, r, k: _set(o, "ts", o["ts"][:11] + "24" + o["ts"][13:])),
    ("ts leap second", lambda o, r, k: _set(o, "ts", o["ts"][:11] + "23:59:60.000Z")),
    ("ts not text", lambda o, r, k: _set(o, "ts", 17)),
    ("ts year 0", lambda o, r, k: _set(o, "ts", "0000" + o["ts"][4:])),
    ("ts escaped", lambda o, r, k: _raw_swap(r, b'"ts":"2', b'"ts":"\\u0032')),
    ("unknown kind", lambda o, r, k: _set(o, "kind", "tool_exploded")),
    (
        "kind escaped",
        lambda o, r, k: _raw_swap(
            r, b'"kind":"%s' % o["kind"][:1].encode(), b'"kind":"\\u%04x' % ord(o["kind"][0])
        ),
    ),
    ("parent", lambda o, r, k: _set(o, "parent_seq", max(1, o["seq"] - 1 - k % 3))),
    ("parent bad", lambda o, r, k: _set(o, "parent_seq", o["seq"] + k)),
    ("v 1", lambda o, r, k: _set(o, "v", 1)),
    ("v 2", lambda o, r, k: _set(o, "v", 2)),
    ("v 1.0", lambda o, r, k: _raw_swap(r, b"{", b'{"v":1.0,')),
    ("v true", lambda o, r, k: _set(o, "v", True)),
    ("no payload", lambda o, r, k: (o.pop("payload", None), orjson.dumps(o))[1]),
    ("payload list", lambda o, r, k: _set(o, "payload", [])),
    ("payload null", lambda o, r, k: _set(o, "payload", None)),
    ("seq gap", lambda o, r, k: _set(o, "seq", o["seq"] + 1 + k % 2)),
    ("seq again", lambda o, r, k: _set(o, "seq", o["seq"] - 1)),
    ("seq text", lambda o, r, k: _set(o, "seq", str(o["seq"]))),
    (
        "seq float",
        lambda o, r, k: _raw_swap(r, f'"seq":{o["seq"]}'.encode(), f'"seq":{o["seq"]}.0'.encode()),
    ),
    ("seq leading zero", lambda o, r, k: _raw_swap(r, b'"seq":', b'"seq":0')),
    ("other run", lambda o, r, k: _set(o, "run_id", "someone-else")),
    ("empty run", lambda o, r, k: _set(o, "run_id", "")),
    ("run escaped", lambda o, r, k: _raw_swap(r, b'"run_id":"s', b'"run_id":"\\u0073')),
    ("key twice", lambda o, r, k: _raw_swap(r, b"{", b'{"seq":0,')),
    ("payload key twice", lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"x":1,"x":2,')),
    (
        "nested key twice",
        lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"d":{"a":{"b":1,"b":1}},'),
    ),
    (
        "key escaped twice",
        lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"x":1,"\\u0078":2,'),
    ),
    ("wide int", lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"n":%d,' % (2**64 + k))),
    ("widest fitting", lambda o, r, k: _pay(o, "n", 2**64 - 1)),
    ("most negative", lambda o, r, k: _pay(o, "n", -(2**63))),
    (
        "past negative",
        lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"n":-9223372036854775809,'),
    ),
    ("past double", lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"n":1e400,')),
    ("tiny double", lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"n":1e-400,')),
    ("minus zero", lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"n":-0,')),
    ("twenty digits in text", lambda o, r, k: _pay(o, "s", "1" * 25)),
    ("lone surrogate", lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"s":"\\ud800",')),
    ("low surrogate", lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"s":"\\udc00x",')),
    ("pair", lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"s":"\\ud83d\\ude00",')),
    ("unicode", lambda o, r, k: _pay(o, "s", "żółw ✓ 𝄞")),
    ("bad utf-8", lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"s":"\xff",')),
    ("raw control", lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"s":"a\tb",')),
    ("bad escape", lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"s":"\\x",')),
    ("call id escaped", lambda o, r, k: _raw_swap(r, b'"call_id":"c', b'"call_id":"\\u0063')),
    ("call id bad", lambda o, r, k: _pay(o, "call_id", "a/b")),
    ("call id dot", lambda o, r, k: _pay(o, "call_id", ".hidden")),
    ("call id number", lambda o, r, k: _pay(o, "call_id", 7)),
    ("call id long", lambda o, r, k: _pay(o, "call_id", "c" * (128 + k % 2))),
    ("spaces", lambda o, r, k: orjson.dumps(o, option=orjson.OPT_INDENT_2).replace(b"\n", b" ")),
    ("space before colon", lambda o, r, k: _raw_swap(r, b'"kind":', b'"kind" :')),
    ("trailing space", lambda o, r, k: r + b"  "),
    ("leading space", lambda o, r, k: b" " + r),
    ("crlf", lambda o, r, k: r + b"\r"),
    ("deep", lambda o, r, k: _pay(o, "d", _deep(195 + k % 12))),
    ("empty line", lambda o, r, k: b""),
    ("a list", lambda o, r, k: b"[]"),
    ("null", lambda o, r, k: b"null"),
    ("cut", lambda o, r, k: r[: max(1, len(r) - 1 - k % 20)]),
    (
        "flip",
        lambda o, r, k: (
            r[: k % len(r)] + bytes([r[k % len(r)] ^ (1 << (k % 7))]) + r[k % len(r) + 1 :]
        ),
    ),
    ("true literal", lambda o, r, k: _pay(o, "b", [True, False, None, 1.5, -2, "x"])),
    ("bad literal", lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"b":tru,')),
    ("trailing comma", lambda o, r, k: _raw_swap(r, b'"payload":{', b'"payload":{"b":[1,],')),
    (
        "wrong pin",
        lambda o, r, k: (
            _pay(o, "receipt_sha256", "0" * 64) if "call_id" in o.get("payload", {}) else r
        ),
    ),
]


def _deep(n: int) -> Any:
    value: Any = 1
    for _ in range(n):
        value = [value]
    return value


def _damaged(lines: list[bytes], picks: list[tuple[int, int, int]]) -> list[bytes]:
    out = list(lines)
    for at, which, k in picks:
        if at >= len(out):
            continue
        raw = out[at]
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("ts"), str):
            continue
        out[at] = DAMAGES[which][1](obj, raw, k)
    return out


def _replay(run: Path, native: Any, *, history: bool) -> Replay:
    saved = regular_runs.NATIVE
    regular_runs.NATIVE = native
    try:
        return Replay(locate_run(run), RULES, checkpoint_every=7, history=history).verify()
    finally:
        regular_runs.NATIVE = saved


def _answers(replay: Replay, prefixes: bool) -> dict[str, Any]:
    report = build_report(replay, partial=True)
    report.pop("line_core")
    report.pop("rules_core")  # (the Python rules where the lines are proved in Python)
    said: dict[str, Any] = {
        "report": report,
        "warnings": [(w.code, w.message, w.seq, w.line, w.artifact) for w in replay.warnings],
        "counts": (replay.warning_count, dict(replay.warning_codes)),
    }
    if prefixes:
        said["digests"] = [canonical.digest(replay.state_at(k)) for k in range(replay.valid + 1)]
        calls, clock = replay.calls, replay.clock
        assert calls is not None and clock is not None
        said["calls"] = (list(calls.call), list(calls.rows), list(calls.failed))
        said["clock"] = list(clock._at)
    return said


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@needs_native
@SETTINGS
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(66, 260),
    picks=st.lists(
        st.tuples(st.integers(64, 259), st.integers(0, len(DAMAGES) - 1), st.integers(0, 99)),
        max_size=4,
    ),
    history=st.booleans(),
)
def test_both_paths_give_the_same_answers(
    seed: int, n: int, picks: list[tuple[int, int, int]], history: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        write_agent_run(run, n, seed=seed)
        events = run / "events.jsonl"
        lines = events.read_bytes().split(b"\n")[:-1]
        events.write_bytes(b"".join(line + b"\n" for line in _damaged(lines, picks)))
        native = _answers(_replay(run, NATIVE, history=history), history)
        python = _answers(_replay(run, None, history=history), history)
        assert native == python


@needs_native
@pytest.mark.parametrize("name", [name for name, _ in DAMAGES])
def test_each_damage_gives_the_same_answers(name: str, tmp_path: Path) -> None:
    """Every damage at least once, in the middle of a chunk and as its first line."""
    which = [n for n, _ in DAMAGES].index(name)
    for at in (64, 100):
        run = tmp_path / f"run{at}"
        write_agent_run(run, 160, seed=at)
        events = run / "events.jsonl"
        lines = events.read_bytes().split(b"\n")[:-1]
        events.write_bytes(b"".join(x + b"\n" for x in _damaged(lines, [(at, which, at)])))
        for history in (False, True):
            native = _answers(_replay(run, NATIVE, history=history), history)
            assert native == _answers(_replay(run, None, history=history), history), (name, at)


@needs_native
def test_a_time_going_back_stays_on_the_fast_path(tmp_path: Path) -> None:
    """Warnings never push a chunk off the fast path: a ledger whose time
    goes back every 60 events warns at each, and every line after the
    first 64 is proved by the native core."""
    run = tmp_path / "run"
    write_agent_run(run, 1200, seed=3)
    events = run / "events.jsonl"
    lines = events.read_bytes().split(b"\n")[:-1]
    for at in range(120, len(lines), 60):
        lines[at] = _damaged(lines, [(at, 0, 0)])[at]
    events.write_bytes(b"".join(x + b"\n" for x in lines))
    assert NATIVE is not None
    proved: list[int] = []
    prove, prove_apply = NATIVE.prove, NATIVE.prove_apply

    def counting(*args: Any, **kwargs: Any) -> line_core.Proof:
        proof = prove(*args, **kwargs)
        proved.append(proof.lines)
        return proof

    def counting_applied(*args: Any, **kwargs: Any) -> Any:
        said = prove_apply(*args, **kwargs)
        proved.append(said[0].lines)
        return said

    NATIVE.prove = counting  # type: ignore[method-assign]
    NATIVE.prove_apply = counting_applied  # type: ignore[method-assign]
    try:
        for history in (False, True):  # (check's pass and the app's apply them natively)
            proved.clear()
            replay = _replay(run, NATIVE, history=history)
            assert replay.error is None
            backs = [w.seq for w in replay.warnings if w.code == "ts_backwards"]
            assert backs == list(range(121, len(lines) + 1, 60))
            assert sum(proved) == len(lines) - 64
            assert replay.rules_core == "native"
    finally:
        del NATIVE.prove, NATIVE.prove_apply


def _version(core: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "replay_tui", "--version"],
        capture_output=True,
        text=True,
        env={**os.environ, "REPLAY_TUI_LINE_CORE": core},
        timeout=60,
    )


def test_a_library_built_from_other_sources_says_to_build_it_again(tmp_path: Path) -> None:
    """After a pull that changed the core, the old build is not taken: the
    Python path is, and ``--version`` says to build the library again."""
    import shutil

    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler to make a library of another interface")
    source = tmp_path / "old.c"
    source.write_text("long long rtlc_version(void) { return 3; }\n")
    old = tmp_path / "libold.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(old), str(source)], check=True)
    said = _version(str(old)).stdout
    assert "line core: python (" in said
    assert f"{old} is interface 3, not {line_core._INTERFACE}" in said
    assert f"build it again ({line_core.BUILD_HINT})" in said
    # one that says this interface but lacks a function is named, not a crash
    source.write_text(f"long long rtlc_version(void) {{ return {line_core._INTERFACE}; }}\n")
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(old), str(source)], check=True)
    said = _version(str(old)).stdout
    assert "line core: python (" in said and f"{old} does not load" in said, said


def test_version_says_which_path(tmp_path: Path) -> None:
    """A fresh clone with no Rust toolchain takes the Python path, and says so
    (with how to build the other); a library named that does not load is named."""
    said = _version("python")
    assert said.returncode == 0 and said.stdout.strip().endswith("(line core: python)")
    missing = tmp_path / "libnothing.so"
    said = _version(str(missing))
    assert f"line core: python (REPLAY_TUI_LINE_CORE={missing}: no line core library there" in (
        said.stdout
    )
    assert line_core.BUILD_HINT in said.stdout
    if NATIVE is not None:
        said = _version(str(NATIVE.path))
        assert said.stdout.strip().endswith(f"(line core: native ({NATIVE.path}))")


def _receipt_damages(folder: Path, name: str, how: str) -> None:
    path = folder / name
    if how == "gone":
        path.unlink()
    elif how == "symlink":
        (folder / "elsewhere.json").write_bytes(path.read_bytes())
        path.unlink()
        path.symlink_to(folder / "elsewhere.json")
    elif how == "folder":
        path.unlink()
        path.mkdir()
    elif how == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif how == "tampered":
        path.write_bytes(path.read_bytes().replace(b"}", b', "x": 1}', 1))
    elif how == "not json":
        path.write_bytes(b'{"call_id": ')
    elif how == "a list":
        path.write_bytes(b"[]")
    elif how == "key twice":
        path.write_bytes(b'{"call_id": "a", "call_id": "b"}')
    elif how == "empty":
        path.write_bytes(b"")


@needs_native
@pytest.mark.parametrize(
    "how",
    ["gone", "symlink", "folder", "fifo", "tampered", "not json", "a list", "key twice", "empty"],
)
def test_receipts_read_ahead_say_what_each_read_says(how: str, tmp_path: Path) -> None:
    """The native core reads the receipts of the lines it proves ahead of
    the rules; a receipt it cannot read so (or that is bad) gives the same
    error, at the same seq, as on the Python path."""
    run = tmp_path / "run"
    write_agent_run(run, 400, seed=9)
    pinned = next(
        obj
        for obj in map(orjson.loads, (run / "events.jsonl").read_bytes().splitlines())
        if obj["seq"] > 200 and "receipt_sha256" in obj["payload"]
    )
    _receipt_damages(run / "receipts", f"{pinned['payload']['call_id']}.json", how)
    assert NATIVE is not None
    asked: list[str] = []
    read_files = NATIVE.read_files

    def reading(dir_fd: int, names: list[str], most: int) -> Any:
        asked.extend(names)
        return read_files(dir_fd, names, most)

    NATIVE.read_files = reading  # type: ignore[method-assign]
    try:
        native = _answers(_replay(run, NATIVE, history=False), False)
    finally:
        del NATIVE.read_files
    assert f"{pinned['payload']['call_id']}.json" in asked  # read ahead, natively
    python = _answers(_replay(run, None, history=False), False)
    assert native == python
    error = native["report"]["error"]
    assert error is not None and error["seq"] == pinned["seq"], error


@needs_native
@SETTINGS
@given(
    moments=st.lists(
        st.tuples(
            st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
            st.sampled_from([0, 1, 3, 6, 9, 17]),
            st.integers(0, 10**17 - 1),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_the_native_core_reads_each_ts_as_the_python_reader(
    moments: list[tuple[datetime, int, int]],
) -> None:
    """The seconds the native core gives the app's clock are, to the last
    bit, what ``ts_seconds`` reads, from year 1 to 9999, with fractions of
    any length; and its proof is the same with or without them."""
    stamps = []
    for moment, places, frac in moments:
        m = moment
        text = f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}"
        if places:
            text += "." + str(frac).zfill(17)[:places]
        stamps.append(text + "Z")
    length = max(map(len, stamps))
    stamps = [t for t in stamps if len(t) == length]  # one form and length a run
    lines = [
        orjson.dumps({"seq": i + 1, "run_id": "r", "kind": "run_started", "ts": ts, "payload": {}})
        for i, ts in enumerate(stamps)
    ]
    buf = b"\n".join(lines) + b"\n"
    assert NATIVE is not None
    args = {
        "first_seq": 1,
        "run_id": None,
        "kinds": frozenset({"run_started"}),
        "max_depth": 64,
        "max_lines": len(lines),
    }
    proof = NATIVE.prove(buf, 0, seconds=True, **args)
    plain = NATIVE.prove(buf, 0, **args)
    assert proof.lines == plain.lines == len(lines) and plain.seconds is None
    assert proof.backs == plain.backs and proof.end == plain.end
    assert proof.seconds is not None
    assert list(proof.seconds) == [ts_seconds(ts) for ts in stamps]
