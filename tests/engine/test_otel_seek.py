"""The trace rules keep what they read (the store of spans) in their memo, not
their state: a prefix's state must be the same reached by stepping through
the records or by seeking to it, however the engine gets there.

Over every trace fixture (tests/fixtures/otel-producers/ and the shared
recordings in tests/fixtures/otel-traces/): the digest of the state after
each prefix, replayed straight with one memo, equals the state the engine
gives at that prefix with its state store (the app), and without it (JSON
checkpoints a few records apart: seeks, steps and walks from a prefix
replay from the first record, since a checkpoint has no memo).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from replay_tui.engine.open import open_replay
from replay_tui.formats.budget import Budget
from replay_tui.formats.envelope import Event
from replay_tui.formats.receipts import ReceiptStore
from replay_tui.reducers.base import Context
from replay_tui.reducers.otel_genai import REDUCER
from replay_tui.state import canonical
from tests.conftest import ROOT, TESTS
from tests.helpers.otel_records import TRACE_FIXTURES as FILES

#: Seeks without a state store replay from the first record: past this many
#: records, a sample of prefixes (each seek costs its prefix).
EVERY_PREFIX_UP_TO = 150


def _name(path: Path) -> str:
    return str(path.relative_to(TESTS / "fixtures").with_suffix(""))


def _straight(events: list[Event]) -> list[str]:
    """The digest after each prefix (0..n), the rules applied in order with one memo."""
    ctx = Context(Budget(), ReceiptStore(ROOT, enabled=False))
    state = REDUCER.initial_state()
    digests = [canonical.digest(state)]
    for event in events:
        state = REDUCER.apply(state, event, ctx)
        digests.append(canonical.digest(state))
    return digests


def test_the_fixtures_are_here() -> None:
    assert len(FILES) >= 80


@pytest.mark.parametrize("path", FILES, ids=_name)
def test_every_prefix_is_the_same_stepped_or_sought(path: Path) -> None:
    app, _ = open_replay(str(path), fmt="otel", history=True)
    plain, _ = open_replay(str(path), fmt="otel", checkpoint_every=3)
    try:
        app.verify()
        plain.verify()
        assert app.error is None and plain.error is None
        events = [app.event(i) for i in range(app.valid)]
        assert all(isinstance(e, Event) for e in events)
        want = _straight(events)  # type: ignore[arg-type]
        n = len(events)
        rng = random.Random(path.name)
        order = rng.sample(range(n + 1), n + 1)  # seeks in any order, back and forth
        for at in order:
            assert canonical.digest(app.frozen_at(at)) == want[at], ("app", at)
        some = order if n <= EVERY_PREFIX_UP_TO else order[:40]
        for at in some:
            assert canonical.digest(plain.state_at(at)) == want[at], ("seek", at)
            if at:
                step = plain.step(at)
                assert canonical.digest(step.after) == want[at], ("step", at)
                assert canonical.digest(step.before) == want[at - 1], ("step", at)
                assert app.step(at).changes == step.changes, ("changes", at)
        start = some[0]
        walked = [canonical.digest(s) for _, s in plain.iter_states(n, start=start)]
        assert walked == want[start:], "iter_states"
    finally:
        app.close()
        plain.close()
