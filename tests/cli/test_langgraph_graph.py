"""``--graph module:attr`` (issue 46, point 5): a LangGraph thread's reducers
taken from the user's graph, imported as uvicorn imports ``module:app``,
instead of inferred: named "(from the graph)", a custom reducer called on
the decoded values (or, where it cannot take them, said once), channels the
graph and the thread do not share warned of, the graph's module in the rules'
digest, and every mistake one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

pytest.importorskip("langgraph.graph")

from tests.helpers.cli import run_cli
from tests.helpers.langgraph_graph import CUSTOM, graph_module, graph_of

SCORES = """
import operator
from typing import Annotated, TypedDict
from langgraph.graph import StateGraph, START, END
from tests.fixtures.langgraph.graphs import merge_max, union, reducer_graph

graph = reducer_graph()
compiled = graph.compile()
not_a_graph = 42
"""


def test_the_custom_reducers_thread_verifies_with_its_graph(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mod = graph_module(here, SCORES)
    for attr in ("graph", "compiled"):  # a StateGraph (compiled here) or the compiled graph
        code, out, err = run_cli(capsys, "check", CUSTOM, "--graph", f"{mod}:{attr}")
        assert code == 0, err
        assert "verified: 27 events" in out and "warning" not in out
        for line in (
            "scores: merge_max (from the graph)",
            "tags: union (from the graph)",
            "log: operator.add (from the graph)",
            "total: operator.add (from the graph)",
            "last: last value (from the graph)",
        ):
            assert line in out
        assert "inferred" not in out
    code, out, _ = run_cli(capsys, "check", CUSTOM)
    assert code == 0 and "scores: dict merge, max per key, inferred from 3 steps" in out


def test_the_graphs_reducer_is_the_one_held_to(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A graph whose reducers are not the thread's: the step that shows it is
    a divergence naming the graph's reducer (inference verifies the thread)."""
    fields = """    scores: Annotated[dict[str, int], merge_max]
    tags: Annotated[set[str], union]
    log: Annotated[list[str], operator.add]
    total: Annotated[int, operator.add]
    last: Annotated[str, operator.add]"""
    mod = graph_module(here, graph_of(fields))
    code, out, _ = run_cli(capsys, "check", CUSTOM, "--graph", f"{mod}:graph")
    assert code == 1
    assert (
        "channel 'last': the writes of tally do not explain its value by "
        "operator.add (from the graph)" in out
    )
    smallest = (
        "def merge_min(a, b):\n    return {**a, **{k: min(a.get(k, v), v) for k, v in b.items()}}\n"
    )
    fields = fields.replace("merge_max]", "merge_min]").replace(
        "Annotated[str, operator.add]", "str"
    )
    mod = graph_module(here, smallest + graph_of(fields))
    code, out, _ = run_cli(capsys, "check", CUSTOM, "--graph", f"{mod}:graph")
    assert code == 1
    assert "do not explain its value by merge_min (from the graph)" in out
    assert "first difference at scores.alice" in out


def test_a_reducer_that_cannot_take_decoded_values_is_said_once(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fields = """    scores: Annotated[dict[str, int], merge_objects]
    tags: Annotated[set[str], union]
    log: Annotated[list[str], operator.add]
    total: Annotated[int, operator.add]
    last: str"""
    objects = "def merge_objects(a, b):\n    return a.merged_with(b)\n"
    mod = graph_module(here, objects + graph_of(fields))
    code, out, _ = run_cli(capsys, "check", CUSTOM, "--graph", f"{mod}:graph")
    assert code == 0 and "verified" in out
    said = [line for line in out.splitlines() if "reducer merge_objects" in line]
    assert len(said) == 1 and "1 warning" in out
    assert "cannot take its values as decoded from JSON (AttributeError" in said[0]
    assert "only a change with no write is checked" in said[0]


def test_channels_the_graph_and_the_thread_do_not_share_are_named(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fields = """    scores: Annotated[dict[str, int], merge_max]
    tags: Annotated[set[str], union]
    log: Annotated[list[str], operator.add]
    total: Annotated[int, operator.add]
    extra: Annotated[list[str], operator.add]"""
    mod = graph_module(here, graph_of(fields))
    code, out, _ = run_cli(capsys, "check", CUSTOM, "--graph", f"{mod}:graph")
    messages = out.splitlines()
    assert code == 0 and "verified" in out
    assert any(f"channel last that the graph {mod}:graph lacks" in m for m in messages)
    assert any(
        f"the graph {mod}:graph has channel extra that this thread never held" in m
        for m in messages
    )


def test_the_graphs_module_is_in_the_rules_digest(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    digests = []
    for body in (SCORES, SCORES + "# another file\n"):
        mod = graph_module(here, body)
        code, out, _ = run_cli(capsys, "check", CUSTOM, "--graph", f"{mod}:graph", "--json")
        assert code == 0
        report = orjson.loads(out)
        digests.append(report["rules_sha256"])
        assert f"{mod}.py" in report["rules_files"]
    code, out, _ = run_cli(capsys, "check", CUSTOM, "--json")
    digests.append(orjson.loads(out)["rules_sha256"])
    assert len(set(digests)) == 3


@pytest.mark.parametrize(
    ("attr", "said"),
    [
        ("no_such_module:graph", "cannot import no_such_module: ModuleNotFoundError"),
        ("{mod}:missing", "module {mod} has no missing"),
        ("{mod}:not_a_graph", "an object of type int, not a LangGraph graph"),
        ("{mod}", "give it as module:attr"),
        ("broken_{mod}:graph", "cannot import broken_{mod}: ZeroDivisionError"),
    ],
)
def test_a_graph_that_cannot_be_read_is_one_line(
    here: Path, capsys: pytest.CaptureFixture[str], attr: str, said: str
) -> None:
    mod = graph_module(here, SCORES)
    (here / f"broken_{mod}.py").write_text("1 / 0\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "check", CUSTOM, "--graph", attr.format(mod=mod))
    assert code == 2
    lines = (out + err).strip().splitlines()
    assert len(lines) == 1 and said.format(mod=mod) in lines[0]
    assert "Traceback" not in err


def test_graph_on_a_run_that_is_not_langgraph(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mod = graph_module(here, SCORES)
    run = Path(__file__).resolve().parents[2] / "sample_runs" / "agent-succeeds"
    code, out, err = run_cli(capsys, "check", str(run), "--graph", f"{mod}:graph")
    assert code == 2 and "is not a LangGraph thread" in out + err
    code, out, err = run_cli(
        capsys, "check", CUSTOM, "--graph", f"{mod}:graph", "--reducer", "langgraph"
    )
    assert code == 2 and "--graph and --reducer: give one" in out + err
