"""A LangGraph SQLite file whose tables were damaged by hand (SQLite keeps a
value of any type in any column; parent ids can name anything): a verdict
with a finding, or one line and exit 2, never an internal error or a hang."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, TESTS
from tests.helpers.cli import run_cli

AGENT = TESTS / "fixtures" / "langgraph" / "agent.sqlite"
THREAD = "agent-weather"


def _damaged(tmp_path: Path, *statements: str) -> tuple[Path, list[str]]:
    """agent.sqlite copied, ``statements`` run on it (``{0}``, ``{1}``, ...:
    the thread's checkpoint ids, oldest first)."""
    db = tmp_path / "damaged.sqlite"
    shutil.copyfile(AGENT, db)
    with sqlite3.connect(db) as conn:
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id",
                (THREAD,),
            )
        ]
        for sql in statements:
            conn.execute(sql.format(*ids))
    return db, ids


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE checkpoints SET parent_checkpoint_id = checkpoint_id WHERE checkpoint_id = '{2}'",
        "UPDATE checkpoints SET parent_checkpoint_id = '{3}' WHERE checkpoint_id = '{1}'",
        "UPDATE checkpoints SET parent_checkpoint_id = '{4}' WHERE checkpoint_id = '{0}'",
    ],
    ids=["own-parent", "loop-below-the-tip", "loop-through-the-tip"],
)
def test_parent_ids_that_loop_are_a_finding_not_a_hang(tmp_path: Path, statement: str) -> None:
    db, _ = _damaged(tmp_path, statement)
    out = subprocess.run(
        [sys.executable, "-m", "replay_tui", "check", str(db), "--thread", THREAD],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert "the parent ids loop" in out.stdout


def test_a_parent_that_is_not_there_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, _ = _damaged(
        tmp_path,
        "UPDATE checkpoints SET parent_checkpoint_id = 'nowhere' WHERE checkpoint_id = '{2}'",
    )
    code, out, err = run_cli(capsys, "check", str(db), "--thread", THREAD)
    assert code == 0, err
    assert "parent 'nowhere' is not in the thread: what came before it is missing" in out


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("'some text'", "could not be decoded: not valid msgpack"),
        ("1.5", "'a number (1.5) where bytes belong'"),
        ("123456789012", "'a number (123456789012) where bytes belong'"),
    ],
    ids=["text", "real", "integer"],
)
def test_a_value_column_of_another_type_is_a_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, said: str
) -> None:
    """``bytes()`` of a number is that many zero bytes (123456789012 of
    them: a MemoryError), of text a TypeError: each is a value that could
    not be decoded instead."""
    db, _ = _damaged(
        tmp_path,
        f"UPDATE checkpoints SET checkpoint = {value} WHERE checkpoint_id = '{{2}}'",
        f"UPDATE checkpoints SET metadata = {value} WHERE checkpoint_id = '{{3}}'",
        f"UPDATE writes SET value = {value} WHERE thread_id = '{THREAD}' AND idx = 0",
    )
    code, out, err = run_cli(capsys, "check", str(db), "--thread", THREAD)
    assert code in (0, 1), err
    assert "internal error" not in out + err
    assert said in out
    code, out, err = run_cli(capsys, "check", str(db))  # every thread, as the listing reads them
    assert "internal error" not in out + err


def test_an_idx_that_is_no_integer_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, _ = _damaged(
        tmp_path,
        f"UPDATE writes SET idx = 'x' WHERE rowid = "
        f"(SELECT MIN(rowid) FROM writes WHERE thread_id = '{THREAD}')",
    )
    code, _, err = run_cli(capsys, "state", str(db), "--thread", THREAD, "--at", "2")
    assert code == 2
    assert err.count("\n") == 1 and "internal error" not in err
    assert "has idx 'x', not an integer (a damaged writes table)" in err


def test_metadata_nested_past_a_line_fails_at_its_seq(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = '{"source": "loop", "step": 2, "x": ' + "[" * 1000 + "]" * 1000 + "}"
    db, ids = _damaged(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE checkpoints SET metadata = ? WHERE checkpoint_id = ?", (deep, ids[2]))
    code, out, err = run_cli(capsys, "check", str(db), "--thread", THREAD)
    assert code == 1, err
    assert "bad_json: nested more than 200 levels deep" in out


@pytest.mark.parametrize("source", ["[1]", '{"a": 1}', "7"])
def test_a_source_that_is_no_name_leaves_its_step_unproved(
    tmp_path: Path, source: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Metadata whose ``source`` is a list, an object or a number (LangGraph
    writes input, loop, update or fork): the step is not proved, and a
    warning says why; the rules did not raise (``unhashable type: 'list'``)."""
    meta = f'{{"source": {source}, "step": 1, "parents": {{}}}}'
    meta = meta.replace("{", "{{").replace("}", "}}")  # the statement is formatted
    db, _ = _damaged(
        tmp_path,
        f"UPDATE checkpoints SET metadata = CAST('{meta}' AS BLOB) WHERE checkpoint_id = '{{2}}'",
    )
    code, out, err = run_cli(capsys, "check", str(db), "--thread", THREAD)
    assert code == 0, out + err
    assert "reducer_error" not in out
    assert f"gives source {source.replace(chr(34), chr(39))}" in out and "not proved" in out
