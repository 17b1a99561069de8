"""Traces as real instrumentation libraries write them (tests/fixtures/otel-producers/, made by
its make_producers.py), each file opened as `replay-tui check` opens it and its final state
compared with the truth written from what the script sent.

A file the reader gets wrong would be listed in KNOWN_WRONG and expected to fail (strictly:
once one reads right, its test says so, and it leaves the list). None is: every file reads
to its truth (the fixtures' README says what the reader got wrong before).
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from replay_tui.engine.open import open_replay
from tests.conftest import TESTS
from tests.helpers.otel_truth import compare

FOLDER = TESTS / "fixtures" / "otel-producers"
TRUTHS = sorted(FOLDER.glob("*.truth.json"))
FILES = sorted(
    p
    for t in TRUTHS
    for p in (t.with_name(t.name.replace(".truth.json", s)) for s in (".jsonl", ".json"))
    if p.is_file()
)
#: What the reader misses, by file stem (none now; the README's table says what it missed).
KNOWN_WRONG: set[str] = set()


def _differences(path: Path) -> list[str]:
    truth = orjson.loads(path.with_name(path.stem + ".truth.json").read_bytes())
    replay, watchdog = open_replay(str(path), fmt="otel")
    try:
        replay.verify()
        return compare(truth, replay.final_state())
    finally:
        replay.close()
        if watchdog is not None:
            watchdog.stop()


def test_every_fixture_has_its_truth_and_both_shapes_are_here() -> None:
    assert len(TRUTHS) >= 28
    assert all(t.with_name(t.name.replace(".truth.json", ".jsonl")).is_file() for t in TRUTHS)
    assert sum(p.suffix == ".json" for p in FILES) >= 7
    assert {t.name.replace(".truth.json", "") for t in TRUTHS} >= KNOWN_WRONG


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, marks=pytest.mark.xfail(strict=True)) if p.stem in KNOWN_WRONG else p
        for p in FILES
    ],
    ids=lambda p: p.name,
)
def test_the_reader_finds_what_the_producer_sent(path: Path) -> None:
    assert _differences(path) == []
