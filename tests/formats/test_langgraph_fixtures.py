"""The LangGraph test data: the fixture databases are what the installed LangGraph writes,
and a real PostgreSQL server, started by the suite, holds the same threads as they do.

The databases and truths in tests/fixtures/langgraph/ come from make_langgraph.py; these
tests run it again (into a temporary folder, and into PostgreSQL through
langgraph-checkpoint-postgres) and compare what LangGraph's own get_state says.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.fixtures.langgraph import make_langgraph as lg
from tests.helpers import postgres
from tests.helpers.postgres import LangGraphDatabase, PostgresServer

FIXTURES = Path(lg.__file__).parent
TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")


def committed(name: str) -> dict[str, Any]:
    truth: dict[str, Any] = json.loads((FIXTURES / f"{name}.truth.json").read_text("utf-8"))
    return truth


def sqlite_counts(path: Path) -> dict[str, tuple[int, int]]:
    """Per thread: (checkpoints, writes), every namespace."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?immutable=1", uri=True)) as conn:
        checkpoints = dict(conn.execute("SELECT thread_id, count(*) FROM checkpoints GROUP BY 1"))
        writes = dict(conn.execute("SELECT thread_id, count(*) FROM writes GROUP BY 1"))
    return {t: (n, writes.get(t, 0)) for t, n in checkpoints.items()}


_WRITES = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, channel FROM {table} "
    "ORDER BY thread_id, checkpoint_ns, checkpoint_id"
)


def _writes_by_step(rows: Any) -> dict[str, Counter[tuple[str, int, str]]]:
    """Per thread, its writes as (namespace without task ids, the checkpoint's
    place in its namespace, channel): what two runs of a graph share."""
    out: dict[str, Counter[tuple[str, int, str]]] = {}
    places: dict[tuple[str, str], list[str]] = {}
    for thread, ns, checkpoint, channel in rows:
        seen = places.setdefault((thread, ns), [])
        if not seen or seen[-1] != checkpoint:
            seen.append(checkpoint)
        key = (lg._stable_ns(ns), len(seen) - 1, channel)
        out.setdefault(thread, Counter())[key] += 1
    return out


def _same_writes(
    thread: str, ours: Counter[tuple[str, int, str]], fixture: Counter[tuple[str, int, str]]
) -> None:
    """The same writes, except in a superstep where a task raised: LangGraph
    saves each task's writes on a thread of its own, and the run that ends
    with the error may shut that down before a sibling's are saved (it then
    logs "cannot schedule new futures after shutdown"), under load now and
    then. Such a superstep holds the same writes or fewer, never others."""
    raised = {(ns, place) for ns, place, channel in fixture if channel == "__error__"}
    raised |= {(ns, place) for ns, place, channel in ours if channel == "__error__"}
    for ns, place, channel in ours | fixture:
        got, want = ours[(ns, place, channel)], fixture[(ns, place, channel)]
        if (ns, place) in raised:
            assert got <= want, (thread, ns, place, channel, got, want)
        else:
            assert got == want, (thread, ns, place, channel, got, want)


def test_the_server_starts_and_the_graphs_run_into_it(postgres_url: str) -> None:
    truths = lg.run_into_postgres(postgres_url)
    with psycopg.connect(postgres_url) as conn:
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            )
        }
        assert set(TABLES) <= tables
        for table in TABLES:
            (rows,) = conn.execute(f"SELECT count(*) FROM {table}").fetchone() or (0,)
            assert rows > 0, f"{table} is empty"
        pg_checkpoints = dict(
            conn.execute("SELECT thread_id, count(*) FROM checkpoints GROUP BY 1").fetchall()
        )
        pg_writes = _writes_by_step(conn.execute(_WRITES.format(table="checkpoint_writes")))
    # every thread of every fixture database, with as many checkpoints and the same writes
    for name in lg.DATABASES:
        assert set(truths[name]) == set(committed(name)["threads"])
        path = FIXTURES / f"{name}.sqlite"
        with contextlib.closing(sqlite3.connect(f"file:{path}?immutable=1", uri=True)) as db:
            fixture_writes = _writes_by_step(db.execute(_WRITES.format(table="writes")))
        for thread, (checkpoints, _) in sqlite_counts(path).items():
            assert pg_checkpoints[thread] == checkpoints, thread
            _same_writes(
                thread, pg_writes.get(thread, Counter()), fixture_writes.get(thread, Counter())
            )


def test_postgres_reads_back_as_the_sqlite_fixtures(langgraph_postgres: LangGraphDatabase) -> None:
    """get_state / get_state_history through PostgresSaver equal the committed truths (made
    through SqliteSaver), ids and times aside."""
    truths = langgraph_postgres.truths
    for name in lg.DATABASES:
        assert lg.comparable(truths[name]) == lg.comparable(committed(name)["threads"]), name


def test_the_committed_fixtures_are_what_langgraph_writes_today(tmp_path: Path) -> None:
    """A fresh run of the generator gives the committed truths and the same rows (so the
    fixtures match the installed LangGraph; if not, regenerate them on purpose)."""
    for name, db in lg.DATABASES.items():
        path = lg.make_sqlite(db, tmp_path)
        fresh = json.loads(path.with_name(f"{name}.truth.json").read_text("utf-8"))
        old = committed(name)
        assert lg.comparable(fresh["threads"]) == lg.comparable(old["threads"]), name
        assert lg.strip_ids(fresh["storage"]) == lg.strip_ids(old["storage"]), name
        assert sqlite_counts(path) == sqlite_counts(FIXTURES / f"{name}.sqlite"), name
    # closed cleanly: WAL mode kept in the header, no -wal / -shm left beside the files
    made = len(lg.DATABASES)
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json"] * made + [".sqlite"] * made
    assert (tmp_path / "agent.sqlite").read_bytes()[18:20] == b"\x02\x02"


def test_benchmark_sized_databases_are_made_by_langgraph(tmp_path: Path) -> None:
    """The makers of a long thread and of many threads (for benchmarks), small here."""
    long = lg.make_long_thread(tmp_path / "long.sqlite", 25)
    many = lg.make_many_threads(tmp_path / "many.sqlite", 4)
    # input checkpoint, then one per superstep (the first, from the input, is step 0)
    assert sqlite_counts(long) == {"long": (27, 4 * 26)}
    assert sorted(sqlite_counts(many)) == [f"thread-{i:05d}" for i in range(4)]


def test_the_truths_show_what_each_thread_is_for() -> None:
    """The inventory the README promises, read from the committed truths."""

    def state(name: str, thread: str, ns: str = "") -> dict[str, Any]:
        namespaces = committed(name)["threads"][thread]["namespaces"]
        key = next(k for k in namespaces if lg._stable_ns(k) == ns)
        result: dict[str, Any] = namespaces[key]["state"]
        return result

    failed = state("failed", "failed-parse")
    assert [(t["name"], t["error"]) for t in failed["tasks"]] == [
        ("parse", "ParseError(\"bad payload from https://example.test/item/7: '{not json'\")"),
        ("log_audit", None),
    ]
    waiting = state("human", "interrupt-waiting")
    assert waiting["next"] == ["review"]
    assert waiting["interrupts"][0]["value"]["question"] == "Refund 120 EUR?"
    assert state("human", "interrupt-resumed")["values"]["result"] == "refunded"
    sources = [
        h["source"]
        for h in committed("human")["threads"]["fork-edits"]["namespaces"][""]["history"]
    ]
    assert sorted(set(sources)) == ["fork", "input", "loop", "update"]
    assert "research" in {
        lg._stable_ns(ns) for ns in committed("flow")["threads"]["subgraph-research"]["namespaces"]
    }
    steps = [
        h["step"]
        for h in committed("flow")["threads"]["durability-exit"]["namespaces"][""]["history"]
    ]
    assert steps == [8, 3]
    values = state("values", "values-types")["values"]
    assert values["ident"] == "87654321-4321-8765-4321-876543218765"
    assert values["day"] == [2026, 3, 15] and values["span"] == [1, 3661, 5]
    assert values["address"] == {"street": "2 Baker Street", "city": "London", "zip_code": "NW1"}
    assert state("values", "values-pickle")["values"]["blob"] == {
        "__pickle__": "lg_fixture_types.Opaque"
    }
    assert committed("values")["storage"]["values-pickle"][""]["checkpoints"] == {
        "msgpack": 2,
        "pickle": 2,
    }
    assert state("channels", "delta-channel")["values"]["items"][-2:] == ["item 6", "item 7"]
    assert state("channels", "overwrite-reset")["values"] == {"log": ["reset", "after"]}
    messages = state("agent", "agent-weather")["values"]["messages"]
    assert [m["type"] for m in messages] == ["system", "human", "ai", "tool", "tool", "ai"]
    assert messages[2]["usage_metadata"]["input_token_details"] == {"cache_read": 64}
    assert [m.get("tool_call_id") for m in messages[3:5]] == ["call_paris", "call_london"]


def test_a_password_is_asked_over_tcp(postgres_server: PostgresServer) -> None:
    """The role reached over TCP must give its password (so refused credentials can be
    tested) and may read every table."""
    url = postgres_server.create_database()
    lg.run_into_postgres(url, ["failed"])
    dbname = url.split("/")[-1].split("?")[0]
    with psycopg.connect(postgres_server.tcp_url(dbname)) as conn:
        assert conn.execute("SELECT count(*) FROM checkpoints").fetchone() == (3,)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(postgres_server.tcp_url(dbname, password="wrong"))


@pytest.mark.parametrize("ci", ["", "true"])
def test_no_server_binaries_skip_here_and_fail_under_ci(
    ci: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres, "find_binaries", lambda: None)
    monkeypatch.setenv("CI", ci)
    if not ci:
        monkeypatch.delenv("CI")
    expected = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(expected, match="no PostgreSQL server binaries"), postgres.running_server():
        pass


def test_the_old_database_is_format_1_with_the_same_values() -> None:
    """old.sqlite (langgraph 0.2.60) holds format-1 checkpoints (start: channels, trigger
    channels named after nodes, no task_path) whose states LangGraph read as today's did."""
    old = committed("old")
    assert old["versions"]["langgraph"] == "0.2.60"
    path = FIXTURES / "old.sqlite"
    with contextlib.closing(sqlite3.connect(f"file:{path}?immutable=1", uri=True)) as conn:
        columns = [r[1] for r in conn.execute("PRAGMA table_info(writes)")]
        channels = {r[0] for r in conn.execute("SELECT DISTINCT channel FROM writes")}
    assert "task_path" not in columns
    assert {"start:plan", "plan", "branch:agent:tools_condition:tools"} <= channels
    assert old["storage"]["surrogate-json"][""]["checkpoints"] == {"json": 5}
    today = {t: v for name in lg.DATABASES for t, v in committed(name)["threads"].items()}
    for thread, truth in old["threads"].items():
        if thread in ("agent-weather", "surrogate-json"):
            continue  # langchain-core 0.3's messages had other fields; no such thread today
        for ns, entry in truth["namespaces"].items():
            now = next(
                v
                for k, v in today[thread]["namespaces"].items()
                if lg._stable_ns(k) == lg._stable_ns(ns)
            )
            was, got = lg.comparable(entry["state"]), lg.comparable(now["state"])
            assert (was["values"], was["next"]) == (got["values"], got["next"]), thread
