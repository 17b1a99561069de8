"""Compare mode's controller on its own, with no app."""

from __future__ import annotations

from rich.text import Text

from replay_tui.engine.open import open_replay, reopen
from replay_tui.ui.features.compare.controller import Comparison
from tests.conftest import SAMPLES


def test_a_what_if_branch_compared_step_by_step() -> None:
    a, _ = open_replay(str(SAMPLES / "refund-180"), history=True)
    a.verify()
    b = reopen(a, skip={2})
    compare = Comparison(None, strict=False)
    assert compare.lines(a, 3, reveal=False) is None  # not comparing
    compare.start(b)
    waiting = compare.lines(a, 3, reveal=False)
    assert waiting is not None and "B is being replayed…" in waiting[1].plain
    assert not compare.wants_differences(a)
    b.verify()
    compare.replayed()
    assert compare.wants_differences(a)
    shown = "\n".join(t.plain for t in compare.lines(a, 3, reveal=False) or [])
    assert "HYPOTHETICAL: refund-180 without seq 2" in shown
    assert "B has no state here" in shown and "illegal_transition" in shown
    compare.differs = [1, 2]
    assert compare.next_difference(0, 1) == 1 and compare.next_difference(2, 1) is None
    assert compare.next_difference(2, -1) == 1
    status = Text()
    compare.status(status)
    assert "HYPOTHETICAL" in status.plain and "B ✗ seq 3: illegal_transition" in status.plain
    assert "2 rows part" in status.plain
    assert compare.stop() is b and compare.b is None and compare.differs is None
    a.close()
    b.close()
