"""The threads picker's listing (issue 46, point 2) asks SQL for what it can
answer and decodes only each thread's latest checkpoint, yet lists exactly
what a full decode of every thread gives: on every fixture thread, SQLite
and PostgreSQL alike."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("langgraph.checkpoint.sqlite")

from replay_tui.formats.langgraph import thread as thread_module
from replay_tui.formats.langgraph.listing import ThreadRow, thread_rows
from tests.fixtures.langgraph import make_langgraph
from tests.helpers.langgraph_db import make_database
from tests.helpers.langgraph_listing import decoded_thread_rows

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "langgraph"
DATABASES = sorted(FIXTURES.glob("*.sqlite"))


def test_the_fixtures_are_there() -> None:
    assert {p.stem for p in DATABASES} >= {"agent", "channels", "failed", "flow", "human", "old"}


@pytest.mark.parametrize("db", DATABASES, ids=lambda p: p.stem)
def test_the_listing_is_what_a_full_decode_gives(db: Path) -> None:
    assert thread_rows(db) == decoded_thread_rows(db)


def test_forks_subgraphs_and_every_status_agree(tmp_path: Path) -> None:
    db = tmp_path / "checkpoints.sqlite"
    make_database(db)
    rows = thread_rows(db)
    assert rows == decoded_thread_rows(db)
    by_id = {r.thread_id: r for r in rows}
    assert by_id["fail"].status == "failed" and by_id["ask"].status == "interrupted"
    assert by_id["agent"].forks and by_id["sub"].subgraphs


def test_only_the_latest_checkpoint_of_each_thread_is_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """20 threads of 6 checkpoints each: 20 checkpoints decoded, and no write
    (a full decode reads all 120 checkpoints and every write)."""
    db = make_langgraph.make_many_threads(tmp_path / "many.sqlite", 20, supersteps=4)
    decoded: list[str | None] = []
    real = thread_module.decode_typed

    def counting(kind: str | None, raw: Any) -> Any:
        decoded.append(kind)
        return real(kind, raw)

    monkeypatch.setattr(thread_module, "decode_typed", counting)
    rows = thread_rows(db)
    assert len(rows) == 20 and {r.status for r in rows} == {"done"}
    assert {r.checkpoints for r in rows} == {6} and {r.last_step for r in rows} == {4}
    assert len(decoded) == 20


def _portable(row: ThreadRow) -> tuple[Any, ...]:
    """A row without what differs between two runs of the same graphs: its
    database's name, times, checkpoint and task ids."""
    stable = make_langgraph._stable_ns
    return (
        row.thread_id,
        row.checkpoints,
        row.last_step,
        bool(row.last_ts),
        row.status,
        [(f.step, f.checkpoints) for f in row.forks],
        [stable(f.ns) for f in row.subgraphs],
    )


def test_postgres_lists_as_sqlite_does(langgraph_postgres: Any) -> None:
    pytest.importorskip("psycopg")
    url = langgraph_postgres.url
    rows = thread_rows(url)
    assert rows == decoded_thread_rows(url)
    ours = {r.thread_id: _portable(r) for r in rows}
    for name in langgraph_postgres.truths:
        for row in thread_rows(FIXTURES / f"{name}.sqlite"):
            if row.thread_id == "values-pickle":
                # SqliteSaver pickled its latest checkpoint whole (never loaded: no time
                # read); PostgresSaver keeps the checkpoint's ts in JSONB, the values apart
                assert not row.last_ts and ours[row.thread_id][3]
                row = replace(row, last_ts="then")
            assert ours[row.thread_id] == _portable(row), row.thread_id


_SCHEMA = """
CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB,
    metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
CREATE TABLE writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, task_path TEXT NOT NULL DEFAULT '',
    idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, value BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));
"""

#: A thread: each checkpoint's parent (an index of an earlier one, or None), and
#: writes (checkpoint index, channel) stored under them.
_threads = st.lists(
    st.tuples(
        st.lists(st.integers(min_value=-1, max_value=30), min_size=1, max_size=12),
        st.lists(
            st.tuples(
                st.integers(min_value=0, max_value=11),
                st.sampled_from(["__error__", "__interrupt__", "value", "__resume__"]),
            ),
            max_size=4,
        ),
        st.lists(st.sampled_from(["inner:1", "other:2"]), max_size=2),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(threads=_threads)
def test_any_tree_of_checkpoints_lists_as_a_full_decode(
    tmp_path_factory: pytest.TempPathFactory, threads: list[Any]
) -> None:
    """Checkpoints in any tree (forks from anywhere, several roots), writes of
    any status under any of them, subgraph namespaces: the listing is what a
    full decode gives."""
    import sqlite3

    db = tmp_path_factory.mktemp("tree") / "tree.sqlite"
    source = sqlite3.connect(FIXTURES / "flow.sqlite")
    kind, blob = source.execute(
        "SELECT type, checkpoint FROM checkpoints WHERE thread_id = 'reducers-custom' "
        "ORDER BY checkpoint_id DESC LIMIT 1"
    ).fetchone()
    source.close()
    conn = sqlite3.connect(db)
    conn.executescript(_SCHEMA)
    for t, (parents, writes, spaces) in enumerate(threads):
        ids = [f"1f000000-0000-6000-8000-{t:04d}{i:08d}" for i in range(len(parents))]
        for i, parent in enumerate(parents):
            up = ids[parent % i] if parent >= 0 and i else None
            meta = f'{{"source": "loop", "step": {i - 1}}}'.encode()
            for ns in ["", *spaces]:
                conn.execute(
                    "INSERT OR IGNORE INTO checkpoints VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (f"t{t}", ns, ids[i], up, kind, blob, meta),
                )
        for n, (at, channel) in enumerate(writes):
            conn.execute(
                "INSERT INTO writes VALUES (?, '', ?, ?, '', 0, ?, 'json', ?)",
                (f"t{t}", ids[at % len(ids)], f"task{n}", channel, b'"x"'),
            )
    conn.commit()
    conn.close()
    assert thread_rows(db) == decoded_thread_rows(db)
