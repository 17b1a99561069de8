"""The span tree (``v``) whatever order the spans came in: an SDK's simple
span processor exports a span when it ends, so children come before their
parents, one export request each. A span is drawn under its parent once the
parent has come (a parent that never comes leaves it a root), in a file
read complete as in one followed line by line; the seqs never move."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from replay_tui.engine.indexes.calls import NO_CALL, CallIndex
from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import OTEL, locate_run
from replay_tui.reducers import load_reducer
from replay_tui.views.calls import Folding
from tests.conftest import TESTS

RULES = load_reducer("otel_genai")
TRACE = "0af7651916cd43dd8448eb211c80319c"
#: A real run of Strands under the SDK's SimpleSpanProcessor: 7 export
#: requests, each span's children before it.
STRANDS = TESTS / "fixtures" / "otel-producers" / "strands_default_tools_simple.jsonl"

#: A span tree as drawn: (span id, depth) per row, depth first.
Drawn = list[tuple[str, int]]


def drawn(index: CallIndex, folding: Folding | None = None) -> Drawn:
    folding = folding or Folding(index)
    out: Drawn = []
    for line in folding.rows(len(index)):
        number = index.call_at(line)
        assert number != NO_CALL and index.first[number] == line
        out.append((index.keys[number].partition(":")[2], folding.depth(number)))
    return out


# -- a call placed under a parent that comes later --------------------------------
@dataclass
class _Line:
    key: str | None
    up: str | None = None  # the parent's name, as the rules' call_parent says it
    parent_seq: int | None = None


def _index(lines: list[_Line]) -> CallIndex:
    index = CallIndex(
        lambda line: line.key,  # type: ignore[attr-defined]
        nests=True,
        parent_of=lambda line: line.up,  # type: ignore[attr-defined]
    )
    for at, line in enumerate(lines):
        index.note(at, line)  # type: ignore[arg-type]
    return index


def test_a_child_that_came_first_goes_under_its_parent_when_it_comes() -> None:
    index = _index([_Line("b", "a"), _Line("c", "a"), _Line("d", "gone")])
    assert list(index.parent) == [NO_CALL] * 3 and index.awaiting == 3
    assert Folding(index).tree  # named parents: drawn as a tree of roots already
    index.note(3, _Line("a"))  # type: ignore[arg-type]
    assert list(index.parent) == [3, 3, NO_CALL, NO_CALL]
    assert list(index.children) == [0, 0, 0, 2] and index.nested == 2
    assert index.awaiting == 1  # d waits for a parent that never comes: a root
    folding = Folding(index)
    assert list(folding.rows(4)) == [2, 3, 0, 1]  # d, then a and its children
    assert [folding.depth(n) for n in range(4)] == [1, 1, 0, 0]


def test_a_span_s_start_after_its_own_logs_still_names_its_parent() -> None:
    index = _index([_Line("a"), _Line("b"), _Line("b", "a")])  # b's log, then b's start
    assert list(index.parent) == [NO_CALL, 0]


def test_parent_links_that_would_make_a_loop_leave_a_root() -> None:
    index = _index([_Line("a", "b"), _Line("c", "a"), _Line("b", "c")])
    # a waits for b; c is inside a; b's parent is c, so a under b would be a loop
    assert list(index.parent) == [NO_CALL, 0, 1]
    rows = Folding(index).rows(3)
    assert sorted(rows) == [0, 1, 2]
    self_named = _index([_Line("x", "x")])
    assert list(self_named.parent) == [NO_CALL] and self_named.awaiting == 0


def test_closing_a_parent_that_came_last_folds_the_children_that_came_first() -> None:
    index = _index([_Line("b", "a"), _Line("c", "b"), _Line("b"), _Line("a"), _Line("e")])
    folding = Folding(index)
    assert list(folding.rows(5)) == [3, 0, 1, 4]
    assert folding.toggle(3, unfold=False) == 3  # ← on a: its subtree folds
    assert list(folding.rows(5)) == [3, 4] and folding.is_closed(0)  # b too
    assert folding.row_of(2) == 3 and folding.holds(3, 1)
    assert folding.target(3) == 3  # the prefix through the subtree's last line
    assert folding.toggle(3, unfold=True) == 3  # → opens one level: b, closed
    assert list(folding.rows(5)) == [3, 0, 4] and folding.target(0) == 2
    folding.reveal(1)  # going to c's line opens the way
    assert 1 in folding.rows(5) and not folding.is_closed(0)


# -- the invariant ------------------------------------------------------------------
@dataclass(frozen=True)
class _Span:
    span_id: str
    parent: str | None
    start_ns: int
    end_ns: int

    def otlp(self) -> dict[str, Any]:
        span = {
            "traceId": TRACE,
            "spanId": self.span_id,
            "name": f"op {self.span_id[-2:]}",
            "kind": 1,
            "startTimeUnixNano": str(self.start_ns),
            "endTimeUnixNano": str(self.end_ns),
            "status": {},
        }
        if self.parent is not None:
            span["parentSpanId"] = self.parent
        return span


@st.composite
def _exports(draw: st.DrawFn) -> tuple[list[_Span], list[list[_Span]]]:
    """A forest of spans, some never exported; the rest exported in a random
    order, in random batches (one export request each)."""
    n = draw(st.integers(1, 10))
    base = 1_796_560_252_000_000_000
    starts = draw(st.permutations(range(n)))  # a millisecond apart: no ties
    spans: list[_Span] = []
    for i in range(n):
        up = draw(st.one_of(st.none(), st.integers(0, i - 1))) if i else None
        start = base + starts[i] * 1_000_000
        end = start + draw(st.integers(0, 5_000_000))
        parent = None if up is None else spans[up].span_id
        spans.append(_Span(f"{i + 1:016x}", parent, start, end))
    lost = draw(st.sets(st.integers(0, n - 1), max_size=n - 1))  # never exported
    sent = [span for i, span in enumerate(spans) if i not in lost]
    order = draw(st.permutations(sent))
    batches: list[list[_Span]] = []
    at = 0
    while at < len(order):
        size = draw(st.integers(1, 3))
        batches.append(list(order[at : at + size]))
        at += size
    return spans, batches


def _line(batch: list[_Span]) -> bytes:
    spans = [s.otlp() for s in batch]
    request = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": spans}]}]}
    return orjson.dumps(request) + b"\n"


def _expected(batches: list[list[_Span]]) -> Drawn:
    """The forest of the spans in ``batches``: a span under its parent if
    that came, else a root; children in the order they started; roots in
    the order they came (batch, then start)."""
    came = {s.span_id: s for batch in batches for s in batch}
    arrival = {s.span_id: (b, s.start_ns) for b, batch in enumerate(batches) for s in batch}
    kids: dict[str | None, list[_Span]] = {}
    for span in came.values():
        kids.setdefault(span.parent if span.parent in came else None, []).append(span)
    out: Drawn = []

    def walk(span: _Span, depth: int) -> None:
        out.append((span.span_id, depth))
        for child in sorted(kids.get(span.span_id, []), key=lambda s: s.start_ns):
            walk(child, depth + 1)

    for root in sorted(kids.get(None, []), key=lambda s: arrival[s.span_id]):
        walk(root, 0)
    return out


def _seqs(replay: Replay) -> list[bytes]:
    return [replay.ledger.raw_line(i) for i in range(len(replay.ledger))]


@settings(max_examples=60, deadline=None)
@given(_exports())
def test_a_forest_exported_in_any_order_is_the_same_tree_cold_and_followed(
    exports: tuple[list[_Span], list[list[_Span]]],
) -> None:
    _, batches = exports
    with tempfile.TemporaryDirectory() as folder:
        _follow_then_read_cold(Path(folder) / "traces.jsonl", batches)


def _follow_then_read_cold(live: Path, batches: list[list[_Span]]) -> None:
    followed = Replay(
        locate_run(live, fmt=OTEL, may_be_empty=True), RULES, following=True, history=True
    )
    try:
        with live.open("ab") as out:
            for sent in range(1, len(batches) + 1):
                out.write(_line(batches[sent - 1]))
                out.flush()
                followed.advance()
                assert followed.error is None, followed.error
                assert followed.calls is not None
                assert drawn(followed.calls) == _expected(batches[:sent])
        followed.finish()
        cold, _ = open_replay(str(live), history=True)
        try:
            cold.verify()
            assert cold.calls is not None and followed.calls is not None
            assert drawn(cold.calls) == drawn(followed.calls) == _expected(batches)
            assert _seqs(cold) == _seqs(followed)  # a seq, once given, never moved
        finally:
            cold.close()
    finally:
        followed.close()


def test_a_simple_span_processor_s_run_is_a_tree_cold() -> None:
    replay, _ = open_replay(str(STRANDS), history=True)
    try:
        replay.verify()
        assert replay.calls is not None
        names = {k.partition(":")[2]: n for n, k in enumerate(replay.calls.keys)}
        tree = [(span[-1], depth) for span, depth in drawn(replay.calls)]
        # invoke_agent > (cycle > chat, tool, tool), (cycle > chat)
        assert tree == [("2", 0), ("3", 1), ("4", 2), ("5", 2), ("6", 2), ("7", 1), ("8", 2)]
        assert len(names) == 7
    finally:
        replay.close()


# -- drawn while the forward pass notes lines --------------------------------------
def test_the_tree_drawn_while_spans_are_noted_never_reads_past_a_call_s_entries() -> None:
    """The app draws the tree on its own thread while the forward pass
    notes lines (a followed trace's progress): a call is counted only once
    all its entries are there, so a draw mid-note sees a smaller tree, never
    an index error that would end the app."""
    import sys
    import threading

    lines = [_Line(f"span:{n}", up=f"span:{n + 1}" if n % 3 else None) for n in range(4000)]
    index = CallIndex(
        lambda line: line.key,  # type: ignore[attr-defined]
        nests=True,
        parent_of=lambda line: line.up,  # type: ignore[attr-defined]
    )
    failures: list[BaseException] = []
    done = threading.Event()

    def draw() -> None:
        while not done.is_set():
            try:
                drawn(index)
            except BaseException as exc:  # what the app's thread would meet
                failures.append(exc)
                return

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as can be
    drawer = threading.Thread(target=draw)
    drawer.start()
    try:
        for at, line in enumerate(lines):
            index.note(at, line)  # type: ignore[arg-type]
    finally:
        done.set()
        drawer.join()
        sys.setswitchinterval(interval)
    assert not failures, repr(failures[0])
    assert len(drawn(index)) == 4000
