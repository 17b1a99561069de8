"""Values from a LangGraph checkpointer are data: nothing they name is ever
imported, nothing is unpickled, and a damaged or hostile value is a value
that says what is wrong (with a warning), never an exception."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay_tui.formats.langgraph.decode import MAX_DEPTH, decode_typed


class _Runs:
    """Unpickling this would create the file it names."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (Path.touch, (str(self.target),))  # type: ignore[return-value]


def _ext(code: int, *parts: object) -> msgpack.ExtType:
    return msgpack.ExtType(code, msgpack.packb(list(parts), use_bin_type=True))


def test_a_pickle_is_never_loaded(tmp_path: Path) -> None:
    target = tmp_path / "ran"
    raw = pickle.dumps(_Runs(target))
    got = decode_typed("pickle", raw)
    assert not target.exists()
    assert got.value == {"pickle": len(raw)}
    assert got.warnings and "pickle" in got.warnings[0] and "never loaded" in got.warnings[0]


def test_a_class_named_in_the_data_is_never_imported(tmp_path: Path) -> None:
    module = "replay_tui_never_imported_module"
    (tmp_path / f"{module}.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\n")
    sys.path.insert(0, str(tmp_path))
    try:
        for code in range(6):
            raw = msgpack.packb(_ext(code, module, "Thing", {"a": 1}, "method"), use_bin_type=True)
            decode_typed("msgpack", raw)
        raw = msgpack.packb(_ext(0, "os", "system", f"touch {tmp_path / 'ran'}"))
        assert decode_typed("msgpack", raw).value == f"touch {tmp_path / 'ran'}"
    finally:
        sys.path.remove(str(tmp_path))
    assert module not in sys.modules
    assert not (tmp_path / "ran").exists()


def test_deep_nesting_says_so() -> None:
    deep = b"\x91" * 100_000 + b"\xc0"  # arrays in arrays, 100,000 deep
    got = decode_typed("msgpack", deep)
    assert "undecodable" in got.value and got.warnings
    inner = msgpack.packb(1)
    for _ in range(2 * MAX_DEPTH):  # extensions inside extensions
        inner = msgpack.packb(
            msgpack.ExtType(0, msgpack.packb(["m", "n", msgpack.ExtType(7, inner)]))
        )
    got = decode_typed("msgpack", inner)
    assert "nested more than" in got.value["undecodable"]


def test_bad_extension_payloads_are_named() -> None:
    cases = [
        msgpack.packb(msgpack.ExtType(5, b"\xc1\xc1 not msgpack")),
        msgpack.packb(msgpack.ExtType(0, msgpack.packb(42))),
        msgpack.packb(msgpack.ExtType(2, msgpack.packb(["m", "n", [1, 2]]))),
        msgpack.packb(msgpack.ExtType(6, msgpack.packb("no array"))),
        b"\x92\x01",  # an array cut short
    ]
    for raw in cases:
        got = decode_typed("msgpack", raw)
        assert "undecodable" in got.value, raw
        assert got.warnings[-1].startswith("a stored value could not be decoded"), raw
    unknown = decode_typed("msgpack", msgpack.packb(msgpack.ExtType(42, b"xyz")))
    assert unknown.value == {"msgpack_ext": 42, "bytes": 3}
    assert "42" in unknown.warnings[0]
    odd = decode_typed("cloudpickle", b"abc")
    assert odd.value["undecodable"] and "cloudpickle" in odd.warnings[0]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.sampled_from(["msgpack", "json", "pickle", "bytes", "?"]))
def test_any_bytes_decode_to_json(raw: bytes, kind: str) -> None:
    import orjson

    got = decode_typed(kind, raw)
    orjson.dumps(got.value)  # always a JSON value
    assert all(isinstance(w, str) for w in got.warnings)


def test_a_hostile_database_is_findings_never_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A checkpoint overwritten with garbage, a write that would run code if
    unpickled, one nested past any limit: a verdict with a warning for each,
    nothing run."""
    import sqlite3

    pytest.importorskip("langgraph.checkpoint.sqlite")
    from tests.helpers.cli import run_cli
    from tests.helpers.langgraph_db import make_database

    db = tmp_path / "hostile.sqlite"
    make_database(db, fork=False)
    target = tmp_path / "ran"
    with sqlite3.connect(db) as conn:
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = 'agent' "
                "ORDER BY checkpoint_id"
            )
        ]
        conn.execute(
            "UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?",
            (b"\xc1\xc1 not msgpack", ids[-2]),
        )
        conn.execute(
            "UPDATE writes SET type = 'pickle', value = ? WHERE thread_id = 'agent' "
            "AND channel = 'count' AND checkpoint_id = ?",
            (pickle.dumps(_Runs(target)), ids[1]),
        )
        conn.execute(
            "UPDATE writes SET value = ? WHERE thread_id = 'agent' AND channel = 'when'",
            (b"\x91" * 100_000 + b"\xc0",),
        )
    code, out, err = run_cli(capsys, "check", str(db), "--thread", "agent")
    assert code == 0, err
    assert not target.exists()
    assert "is never loaded" in out
    assert "could not be decoded: nested deeper than can be read" in out
    assert "could not be decoded: not valid msgpack" in out
    assert "values could not be read: its step is not proved" in out
