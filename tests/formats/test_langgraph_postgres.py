"""A PostgresSaver database given as a ``postgresql://`` URL reads as the
same threads do from SQLite, against a real server the suite starts
(issue 46, points 1, 5 and 8): every thread proved, its state get_state's;
a URL's password never shown; a server that refuses, or is not there, a
database that is no checkpointer's: one line, exit 2."""

from __future__ import annotations

import socket
import sys
from typing import Any

import orjson
import pytest

pytest.importorskip("psycopg")
postgres = pytest.importorskip("tests.helpers.postgres")

from replay_tui.engine.open import open_replay  # noqa: E402
from replay_tui.formats.langgraph.store import thread_run  # noqa: E402
from tests.helpers.cli import run_cli  # noqa: E402


def _canon(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _same(ours: Any, truth: Any) -> bool:
    """Equal; a set equal as a multiset; a pickled value (never loaded: its
    size) where LangGraph names its class."""
    if ours == truth:
        return True
    if isinstance(truth, dict) and set(truth) == {"__pickle__"}:
        return isinstance(ours, dict) and set(ours) == {"pickle"}
    if isinstance(ours, list) and isinstance(truth, list):
        return sorted(map(_canon, ours)) == sorted(map(_canon, truth))
    if isinstance(ours, dict) and isinstance(truth, dict):
        return ours.keys() == truth.keys() and all(_same(ours[k], truth[k]) for k in ours)
    return False


def _final(run: str) -> tuple[Any, dict[str, Any]]:
    replay, _ = open_replay(run)
    try:
        replay.verify()
        return replay.error, replay.state_at(replay.valid)
    finally:
        replay.close()


def _valid(run: str) -> int:
    replay, _ = open_replay(run)
    try:
        return replay.verify().valid
    finally:
        replay.close()


def test_every_thread_reads_as_get_state(langgraph_postgres: Any) -> None:
    checked = 0
    for threads in langgraph_postgres.truths.values():
        for thread, body in threads.items():
            for ns, kept in body["namespaces"].items():
                truth = kept["state"]
                error, state = _final(thread_run(langgraph_postgres.url, thread, ns))
                assert error is None, (thread, error)
                assert state["step"] == truth["step"], thread
                if state["unknown"]:  # pickled: never loaded
                    continue
                differ = [
                    k
                    for k in set(state["values"]) | set(truth["values"])
                    if not _same(state["values"].get(k), truth["values"].get(k))
                ]
                assert not differ, (thread, differ)
                checked += 1
    assert checked >= 10


def test_check_lists_every_thread(
    langgraph_postgres: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "check", langgraph_postgres.url, "--json", "--jobs", "1")
    assert code == 0, err
    lines = [orjson.loads(x) for x in out.splitlines()]
    threads = {t for threads in langgraph_postgres.truths.values() for t in threads}
    assert {x["run"].rpartition("#thread=")[2] for x in lines} >= {
        t.replace(":", "%3A") for t in threads
    } - {""}


def test_the_password_is_never_shown(
    postgres_server: Any, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = postgres.PASSWORD
    dbname = postgres_url.split("?")[0].rsplit("/", 1)[1]
    said = []
    good = postgres_server.tcp_url(dbname)
    wrong = postgres_server.tcp_url(dbname, password="wr0ng-pw")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    down = good.replace(f":{postgres_server.port}/", f":{closed}/")
    missing = postgres_server.tcp_url("no_such_database")
    for url, words in (
        (good, "not a LangGraph checkpointer's database"),  # an empty database
        (wrong, "cannot connect"),
        (down, "cannot connect"),
        (missing, "cannot connect"),
        (good + "#thread=x", "not a LangGraph checkpointer's database"),
    ):
        code, out, err = run_cli(capsys, "check", url)
        assert code == 2, (url, out, err)
        assert words in err and err.count("\n") == 1 and "Traceback" not in err
        assert "***" in err
        said.append(out + err)
    assert not any(secret in s or "wr0ng-pw" in s for s in said)


def test_a_password_in_the_url_is_not_in_check_output(
    postgres_server: Any, langgraph_postgres: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    dbname = langgraph_postgres.url.split("?")[0].rsplit("/", 1)[1]
    for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
        postgres_server.execute(f"GRANT SELECT ON {table} TO {postgres.PASSWORD_USER}", dbname)
    url = postgres_server.tcp_url(dbname)
    for args in (("--json",), ()):
        code, out, err = run_cli(capsys, "check", url, "--jobs", "1", *args)
        assert code == 0, err
        assert postgres.PASSWORD not in out + err and ":***@" in out


def test_without_the_driver_it_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg fails
    code, _, err = run_cli(capsys, "check", "postgresql://me:pw@db.example/lg")
    assert code == 2
    assert "pip install 'replay-tui[postgres]'" in err and "pw@" not in err


def test_the_threads_list_reads_postgres(langgraph_postgres: Any) -> None:
    from replay_tui.formats.langgraph.listing import thread_rows

    rows = {r.thread_id: r for r in thread_rows(langgraph_postgres.url)}
    assert rows["failed-parse"].status == "failed"
    assert rows["interrupt-waiting"].status == "interrupted"
    assert rows["agent-weather"].status == "done"
    assert [s.ns.split(":")[0] for s in rows["subgraph-research"].subgraphs] == ["research"]
    assert len(rows["fork-edits"].forks) == 2


async def test_a_postgres_thread_followed_in_the_app(postgres_url: str) -> None:
    """The app follows a PostgreSQL thread by polling it: a new turn written
    while it is open appears, proved, and ends as a cold open."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.postgres import PostgresSaver

    from replay_tui.ui.launch import make_app
    from tests.helpers.langgraph_db import agent_graph
    from tests.helpers.waiting import until

    with PostgresSaver.from_conn_string(postgres_url) as saver:
        saver.setup()
        graph = agent_graph().compile(checkpointer=saver)
        cfg: Any = {"configurable": {"thread_id": "live"}}
        graph.invoke({"messages": [HumanMessage("hi", id="h0")], "count": 0}, cfg)
        run = thread_run(postgres_url, "live")
        app = make_app(run, follow=True)
        async with app.run_test(size=(160, 40)) as pilot:
            await until(pilot, lambda: app.replay.valid > 0 and app.replay.error is None)
            first = app.replay.valid
            graph.invoke({"messages": [HumanMessage("again", id="h9")]}, cfg)
            # the turn is several checkpoints and a poll may land between two
            # of them: wait for all that a cold open reads
            error, state = _final(run)
            want = _valid(run)
            await until(pilot, lambda: app.replay.valid >= want)
            assert app.replay.valid > first
            live = app.replay.state_at(app.replay.valid)
            assert app.replay.error is None
        app.replay.close()
    assert error is None and state == live


def test_a_turn_written_during_a_read_is_seen_whole_or_not_at_all(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread is read in several statements (values, checkpoints, writes):
    a turn a graph commits between two of them must not come out as
    checkpoints without their values. Followed live, that was a state the
    graph never had, given once and never read again."""
    from contextlib import contextmanager

    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.postgres import PostgresSaver

    from replay_tui.formats.langgraph import postgres as pg
    from replay_tui.formats.langgraph.thread import load_thread
    from tests.helpers.langgraph_db import agent_graph

    with PostgresSaver.from_conn_string(postgres_url) as saver:
        saver.setup()
        graph = agent_graph().compile(checkpointer=saver)
        cfg: Any = {"configurable": {"thread_id": "torn"}}
        graph.invoke({"messages": [HumanMessage("hi", id="h0")], "count": 0}, cfg)
        connect = pg.connect

        @contextmanager
        def writer_between_statements(url: str) -> Any:
            with connect(url) as conn:
                execute, calls = conn.execute, []

                def execute_then_write(*args: Any, **kwargs: Any) -> Any:
                    cursor = execute(*args, **kwargs)
                    calls.append(cursor.fetchall())
                    if len(calls) == 1:  # after the first statement: a whole turn committed
                        graph.invoke({"messages": [HumanMessage("again", id="h9")]}, cfg)
                    return iter(calls[-1])

                conn.execute = execute_then_write
                yield conn

        monkeypatch.setattr(pg, "connect", writer_between_statements)
        during = load_thread(postgres_url, "torn")
        monkeypatch.setattr(pg, "connect", connect)
        after = {c.id: c for c in load_thread(postgres_url, "torn").checkpoints}
    assert during.checkpoints, "the read saw the thread"
    for c in during.checkpoints:
        assert c.body == after[c.id].body, f"checkpoint {c.id} read without its values"
