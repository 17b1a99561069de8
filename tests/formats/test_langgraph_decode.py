"""Values written by LangGraph's own serializer read as its JSON conversion
renders them (issue 46, point 4): fields as a dict, a one-argument
constructor as its argument (a UUID hyphenated), several arguments as a list."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

serde = pytest.importorskip("langgraph.checkpoint.serde.jsonplus")
messages = pytest.importorskip("langchain_core.messages")

from langgraph.types import Send  # noqa: E402

from replay_tui.formats.langgraph.decode import decode_typed  # noqa: E402


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    y: int


def _round(value: Any) -> Any:
    kind, raw = serde.JsonPlusSerializer().dumps_typed(value)
    return decode_typed(kind, raw)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (uuid.UUID(int=2), "00000000-0000-0000-0000-000000000002"),
        (datetime.datetime(2024, 1, 2, 3, 4, 5), "2024-01-02T03:04:05"),
        (decimal.Decimal("1.50"), "1.50"),
        ({"b"}, ["b"]),
        (Colour.RED, "red"),
        (datetime.date(2024, 1, 2), [2024, 1, 2]),
        (datetime.timedelta(days=1, seconds=2), [1, 2, 0]),
        (Path("/a/b"), ["/", "a", "b"]),
        (Send("work", {"i": 1}), ["work", {"i": 1}]),
        (Point(1, 2), {"x": 1, "y": 2}),
        (b"\x00\x01", {"bytes": 2, "base64": "AAE="}),
        (None, None),
        ({"nested": [uuid.UUID(int=1)]}, {"nested": ["00000000-0000-0000-0000-000000000001"]}),
    ],
)
def test_values_render_as_langgraph_converts_them(value: Any, shown: Any) -> None:
    got = _round(value)
    assert got.value == shown
    assert got.warnings == []


def test_a_message_is_its_fields() -> None:
    msg = messages.AIMessage(
        content="hi",
        id="m1",
        tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1"}],
    )
    got = _round(msg)
    assert got.cls == "langchain_core.messages.ai.AIMessage"
    assert got.value["type"] == "ai" and got.value["id"] == "m1"
    assert got.value["tool_calls"][0]["name"] == "search"


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        (  # langgraph 0.2's json type: LangGraph's own constructor form
            b'{"lc": 2, "type": "constructor", "id": ["datetime", "datetime"],'
            b' "method": "fromisoformat", "args": ["2026-03-14T09:26:53+00:00"]}',
            "2026-03-14T09:26:53+00:00",
        ),
        (
            b'{"lc": 2, "type": "constructor", "id": ["uuid", "UUID"],'
            b' "args": ["00000000000000000000000000000002"]}',
            "00000000-0000-0000-0000-000000000002",
        ),
        (
            b'{"lc": 2, "type": "constructor", "id": ["datetime", "date"], "args": [2024, 1, 2]}',
            [2024, 1, 2],
        ),
        (  # LangChain's own serialization of a message: its fields
            b'{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages",'
            b' "AIMessage"], "kwargs": {"content": "hi", "type": "ai"}}',
            {"content": "hi", "type": "ai"},
        ),
    ],
)
def test_old_json_values(stored: bytes, shown: Any) -> None:
    assert decode_typed("json", stored).value == shown


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(_JSON)
def test_plain_json_reads_back_as_written(value: Any) -> None:
    """Whatever JSON LangGraph stores comes back as it was, nothing added."""
    got = _round(value)
    assert got.value == value and got.warnings == []
