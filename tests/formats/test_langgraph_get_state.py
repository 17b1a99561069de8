"""Every thread of the LangGraph fixture databases (made by real graphs,
with truths from LangGraph's own ``get_state``: tests/fixtures/langgraph/)
verifies, and its final state is ``get_state``'s: values, next, step
(issue 46, "Done when"). Values kept with pickle are never loaded: those
checkpoints are said to be unreadable, not guessed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.engine.open import open_replay
from replay_tui.formats.langgraph.store import thread_run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "langgraph"
TRUTHS = sorted(FIXTURES.glob("*.truth.json"))


#: Format 1 (2024) keeps no task path, and these threads stop at a task that
#: raised or was interrupted before writing anything that names its node.
UNNAMED = ("interrupt-waiting", "failed-parse")
UNNAMED_WHY = "format 1: a task that wrote nothing naming it cannot be named without the graph"


def _cases() -> list[Any]:
    found = []
    for truth in TRUTHS:
        doc = orjson.loads(truth.read_bytes())
        db = truth.with_name(truth.name.removesuffix(".truth.json") + ".sqlite")
        for thread, body in doc["threads"].items():
            for ns, kept in body["namespaces"].items():
                unnamed = db.name == "old.sqlite" and thread in UNNAMED
                marks = [pytest.mark.xfail(reason=UNNAMED_WHY, strict=True)] if unnamed else []
                found.append(pytest.param(db, thread, ns, kept["state"], marks=marks))
    return found


def _canon(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _same(ours: Any, truth: Any) -> bool:
    """Equal; a set (a list in no given order) equal as a multiset."""
    if ours == truth:
        return True
    if isinstance(ours, list) and isinstance(truth, list):
        return sorted(map(_canon, ours)) == sorted(map(_canon, truth))
    if isinstance(ours, dict) and isinstance(truth, dict):
        return ours.keys() == truth.keys() and all(_same(ours[k], truth[k]) for k in ours)
    return False


@pytest.mark.skipif(not TRUTHS, reason="the LangGraph fixtures are not in this tree")
@pytest.mark.parametrize(
    ("db", "thread", "ns", "truth"),
    _cases(),
    ids=lambda x: x.name if isinstance(x, Path) else (x[:24] if isinstance(x, str) else ""),
)
def test_each_fixture_thread_verifies_as_get_state(
    db: Path, thread: str, ns: str, truth: dict[str, Any]
) -> None:
    replay, _ = open_replay(thread_run(str(db), thread, ns))
    try:
        replay.verify()
        assert replay.error is None, replay.error
        state = replay.state_at(replay.valid)
    finally:
        replay.close()
    assert state["step"] == truth["step"]
    assert sorted(state["next"]) == sorted(truth["next"])
    if state["unknown"]:  # its checkpoint is pickled: never loaded, not guessed
        assert any(w.message.endswith("is never loaded: shown as opaque") for w in replay.warnings)
        return
    differ = {
        k for k in set(state["values"]) | set(truth["values"])
        if not _same(state["values"].get(k), truth["values"].get(k))
    }  # fmt: skip
    assert not differ, {k: (state["values"].get(k), truth["values"].get(k)) for k in differ}
