"""A LangGraph checkpointer database is a RUN (issue 46, points 1-3): found
by its content, read without leaving a file beside it, each thread a run
whose checkpoints are proved from their writes."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.helpers.cli import run_cli
from tests.helpers.langgraph_db import as_json, make_database


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("lg")
    db = folder / "checkpoints.sqlite"
    truths = make_database(db)
    for extra in ("-wal", "-shm"):  # as a writer leaves it once closed
        assert not (folder / f"checkpoints.sqlite{extra}").exists()
    return db, truths


def _copy(db: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(db.read_bytes())
    return copy


def _state(capsys: pytest.CaptureFixture[str], run: str) -> dict[str, Any]:
    """The state after the thread's last event."""
    last = len(_events(run))
    code, out, err = run_cli(capsys, "state", run, "--at", str(last))
    assert code == 0, err
    return orjson.loads(out)


def test_check_every_thread_one_json_line_each(
    made: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    db, _ = made
    before = sorted(os.listdir(db.parent))
    code, out, err = run_cli(capsys, "check", str(db), "--json", "--jobs", "1")
    assert code == 0, err
    lines = [orjson.loads(x) for x in out.splitlines()]
    assert sorted(x["run"].rpartition("=")[2] for x in lines) == [
        "agent",
        "ask",
        "fail",
        "fan",
        "sub",
    ]
    assert all(x["exit"] == 0 for x in lines)
    assert sorted(os.listdir(db.parent)) == before  # no -wal, no -shm, nothing written


def test_final_values_are_get_states(made: Any, capsys: pytest.CaptureFixture[str]) -> None:
    db, truths = made
    for thread in ("agent", "fan"):
        state = _state(capsys, f"{db}#thread={thread}")
        truth = as_json(truths[thread])
        if thread == "fan":  # a set: rendered as a list in no given order
            assert sorted(state["values"].pop("tags")) == sorted(truth.pop("tags"))
        assert state["values"] == truth


def test_the_state_names_reducers_edits_and_forks(
    made: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    db, _ = made
    state = _state(capsys, str(db) + "#thread=agent")
    assert state["reducers"]["messages"].startswith("add_messages, inferred from")
    assert state["status"] == "done" and state["next"] == []
    assert [e["source"] for e in state["edits"]] == ["fork"]
    assert len(state["forks"]) == 1 and state["forks"][0]["checkpoints"] == 4
    assert state["usage"]["input_tokens"] == 10  # the fork re-ran one model call
    fan = _state(capsys, str(db) + "#thread=fan")
    assert fan["reducers"]["tags"].startswith("set union")
    assert fan["reducers"]["items"].startswith("operator.add")


def test_a_failed_node_and_an_interrupt(made: Any, capsys: pytest.CaptureFixture[str]) -> None:
    db, _ = made
    code, out, _ = run_cli(capsys, "check", str(db), "--thread", "fail")
    assert code == 0 and "state failed" in out and "boom!" in out
    state = _state(capsys, f"{db}#thread=ask")
    assert state["status"] == "interrupted"
    assert state["interrupts"][0]["value"] == {"question": "ok?"}
    assert state["interrupts"][0]["task"] == "ask"


def _events(run: str) -> list[dict[str, Any]]:
    from replay_tui.formats.langgraph.store import split_thread
    from replay_tui.formats.langgraph.thread import load_thread

    path, thread, ns, tip = split_thread(run)
    assert thread is not None
    return list(load_thread(Path(path), thread, ns or "", tip).events())


def test_a_removed_write_fails_at_the_checkpoint_it_produced(
    made: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _copy(made[0], tmp_path)
    events = _events(f"{db}#thread=fan")
    victim = next(e for e in events if e["kind"] == "write" and e["payload"]["task"] == "join")
    produced = next(e for e in events if e["seq"] > victim["seq"] and e["kind"] == "checkpoint")
    with sqlite3.connect(db) as conn:
        conn.execute(
            "DELETE FROM writes WHERE thread_id = 'fan' AND task_id = ? AND channel = 'items'",
            (victim["payload"]["task_id"],),
        )
    code, out, _ = run_cli(capsys, "check", f"{db}#thread=fan", "--json")
    report = orjson.loads(out)
    assert code == 1
    assert report["error"]["code"] == "divergence"
    assert report["error"]["seq"] == produced["seq"] - 1  # one event fewer before it
    assert "'items' changed with no write" in report["error"]["message"]


def test_a_changed_value_fails_at_its_checkpoint(
    made: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import msgpack

    db = _copy(made[0], tmp_path)
    events = _events(f"{db}#thread=agent")
    checkpoints = [
        e for e in events if e["kind"] == "checkpoint" and e["payload"]["source"] == "loop"
    ]
    target = checkpoints[-2]  # the tool's answer is in it
    cid = target["payload"]["checkpoint_id"]
    with sqlite3.connect(db) as conn:
        (blob,) = conn.execute(
            "SELECT checkpoint FROM checkpoints WHERE checkpoint_id = ?", (cid,)
        ).fetchone()
        assert b"result" in blob
        conn.execute(
            "UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?",
            (blob.replace(b"result", b"RESULT"), cid),
        )
    code, out, _ = run_cli(capsys, "check", f"{db}#thread=agent", "--json")
    report = orjson.loads(out)
    assert code == 1 and report["error"]["code"] == "divergence"
    assert report["error"]["seq"] == target["seq"]
    assert (
        "'messages'" in report["error"]["message"]
        and "messages[2].content" in report["error"]["message"]
    )
    assert msgpack  # the database is msgpack: a byte edit keeps it decodable


def _store_without_ids(db: Path, thread: str, change: dict[str, Any] | None = None) -> None:
    """Store the tool's message writes with no id, as LangGraph does when its
    writer thread serializes them before add_messages gives them one (it
    assigns ids in place, while put_writes runs on another thread); ``change``
    also edits the message."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer()
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT rowid, type, value FROM writes WHERE thread_id = ? AND channel = 'messages'",
            (thread,),
        ).fetchall()
        changed = 0
        for rowid, kind, blob in rows:
            messages = serde.loads_typed((kind, blob))
            if messages[0].type != "tool":
                continue
            for m in messages:
                m.id = None
                for key, value in (change or {}).items():
                    setattr(m, key, value)
            conn.execute(
                "UPDATE writes SET type = ?, value = ? WHERE rowid = ?",
                (*serde.dumps_typed(messages), rowid),
            )
            changed += 1
        assert changed >= 2


def test_a_message_stored_before_it_had_an_id_is_explained(
    made: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _copy(made[0], tmp_path)
    _store_without_ids(db, "agent")
    code, out, err = run_cli(capsys, "check", f"{db}#thread=agent", "--json")
    assert code == 0, out + err
    state = _state(capsys, f"{db}#thread=agent")
    assert state["values"] == as_json(made[1]["agent"])  # the ids the checkpoints hold
    # the id is the only thing a missing id leaves open
    db = _copy(made[0], tmp_path / "..")
    _store_without_ids(db, "agent", {"content": "another result"})
    code, out, _ = run_cli(capsys, "check", f"{db}#thread=agent", "--json")
    report = orjson.loads(out)
    assert code == 1 and report["error"]["code"] == "divergence"
    assert ".content" in report["error"]["message"]


def test_a_database_with_no_thread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    db = tmp_path / "empty.sqlite"
    conn = sqlite3.connect(db, check_same_thread=False)
    SqliteSaver(conn).setup()
    conn.close()
    code, out, err = run_cli(capsys, "check", str(db))
    assert code == 0, err
    assert "0 threads" in out


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (
            lambda p: sqlite3.connect(p).execute("CREATE TABLE t (x)").connection.commit(),
            "without a LangGraph checkpointer's tables",
        ),
        (
            lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\xff" * 600),
            "not a readable SQLite database",
        ),
    ],
)
def test_bad_databases_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Any, said: str
) -> None:
    db = tmp_path / "other.sqlite"
    make(db)
    code, _, err = run_cli(capsys, "check", str(db), "--format", "langgraph")
    assert code == 2
    assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_read_through_a_writers_wal(
    made: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A writer holding the database open (its -wal and -shm beside it):
    read through them, without blocking it."""
    db = _copy(made[0], tmp_path)
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("UPDATE checkpoints SET metadata = metadata WHERE 0")
    writer.execute("DELETE FROM checkpoints WHERE thread_id = 'ask'")
    writer.commit()  # in the -wal only, while the writer is open
    try:
        assert (tmp_path / "copy.sqlite-wal").exists()
        code, out, _ = run_cli(capsys, "check", str(db), "--jobs", "1")
        assert code == 0 and "thread=ask" not in out and "thread=agent" in out
        writer.execute("DELETE FROM checkpoints WHERE thread_id = 'fail'")
        writer.commit()  # the reader held no lock
    finally:
        writer.close()


def test_a_fork_opens_as_a_run_and_diffs_with_the_original(
    made: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    db, _ = made
    fork = _state(capsys, f"{db}#thread=agent")["forks"][0]
    other = f"{db}#thread=agent&tip={fork['tip']}"
    code, out, err = run_cli(capsys, "check", other)
    assert code == 0, err
    assert "state done" in out  # the original run, before its update: also proved
    code, out, _ = run_cli(capsys, "diff", other, f"{db}#thread=agent")
    assert code == 1
    assert "first state difference" in out
    code, _, err = run_cli(capsys, "check", f"{db}#thread=agent&tip=nope")
    assert code == 2 and "has no checkpoint nope" in err


def test_every_command_takes_a_thread(made: Any, capsys: pytest.CaptureFixture[str]) -> None:
    db, _ = made
    code, out, _ = run_cli(capsys, "history", str(db), "--thread", "ask", "status")
    assert code == 0 and '"running" → "interrupted"' in out
    code, out, _ = run_cli(capsys, "when", str(db), "--thread", "agent", 'status == "done"')
    assert code == 0 and "checkpoint" in out
    code, out, _ = run_cli(capsys, "report", str(db), "--thread", "fan")
    assert code == 0 and "#thread=fan" in out and "verified" in out
    code, out, _ = run_cli(capsys, "state", f"{db}@1", "--thread", "fan")
    assert code == 0 and orjson.loads(out)["step"] == -1
    code, _, err = run_cli(capsys, "check", str(db))
    assert code == 0
    code, _, err = run_cli(capsys, "state", str(db), "--at", "1")
    assert code == 2 and "5 threads" in err and "--thread" in err


def test_a_subgraph_namespace_is_a_run(made: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from replay_tui.formats.langgraph.listing import thread_rows

    db, _ = made
    (row,) = [r for r in thread_rows(db) if r.thread_id == "sub"]
    (inner,) = row.subgraphs
    assert inner.ns.startswith("inner:")
    code, out, err = run_cli(capsys, "check", str(db), "--thread", "sub", "--ns", inner.ns)
    assert code == 0, err
    assert "verified" in out and "&ns=inner%3A" in out
    state = _state(capsys, inner.run)
    assert state["values"] == {"x": 2}
