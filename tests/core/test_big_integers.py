"""Integers past 64 bits: read, kept and written exactly, and nothing else
changed: bytes without such an integer are orjson's own, so digests stand;
the slow exact reading refuses all that the fast one refuses."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay_tui.core import strict_json
from replay_tui.state import canonical

WIDE = st.one_of(
    st.integers(min_value=2**64, max_value=10**400),
    st.integers(min_value=-(10**400), max_value=-(2**63) - 1),
)
NARROW = st.integers(min_value=-(2**63), max_value=2**64 - 1)
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


def json_values(ints: st.SearchStrategy[int]) -> st.SearchStrategy[Any]:
    leaves = st.none() | st.booleans() | ints | FLOATS | TEXT
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
        max_leaves=20,
    )


def has_wide(value: Any) -> bool:
    if type(value) is int:
        return not strict_json.fits_64_bits(value)
    if isinstance(value, dict):
        return any(map(has_wide, value.values()))
    if isinstance(value, list):
        return any(map(has_wide, value))
    return False


def same(a: Any, b: Any) -> bool:
    """Equal, type for type (1 is not 1.0, -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return bool(a == b)


@settings(max_examples=300, deadline=None)
@given(json_values(WIDE | NARROW))
def test_canonical_bytes_read_back_to_the_same_value(value: Any) -> None:
    data = canonical.dumps(value)
    assert same(strict_json.loads(data), value)
    assert same(strict_json.loads_written(canonical.dumps_fast(value)), value)
    assert same(strict_json.loads(canonical.dumps_pretty(value)), value)
    assert canonical.digest(value, stream_past=2) == canonical.sha256_hex(data)


@settings(max_examples=300, deadline=None)
@given(json_values(NARROW))
def test_without_wide_integers_the_bytes_are_orjsons(value: Any) -> None:
    sort = orjson.OPT_SORT_KEYS
    assert canonical.dumps(value) == orjson.dumps(value, option=sort)
    assert canonical.dumps_fast(value) == orjson.dumps(value)
    assert strict_json.dumps(value) == orjson.dumps(value)
    assert strict_json.loads(orjson.dumps(value)) == orjson.loads(orjson.dumps(value))


@settings(max_examples=200, deadline=None)
@given(json_values(WIDE | NARROW))
def test_a_wide_integer_is_written_as_its_digits_everything_else_as_orjson_writes(
    value: Any,
) -> None:
    """The standard library writes ints exactly: where orjson and it agree
    on everything else, the bytes are the standard library's too."""
    got = strict_json.dumps(value)
    assert same(json.loads(got), value)
    if has_wide(value):
        with pytest.raises(TypeError):
            orjson.dumps(value)


def test_the_numbers_of_the_issue_read_and_write_exactly() -> None:
    raw = b'{"big":1180591620717411303424,"neg":-1180591620717411303424,"ok":18446744073709551615}'
    value = strict_json.loads(raw)
    assert value == {"big": 2**70, "neg": -(2**70), "ok": 2**64 - 1}
    assert type(value["big"]) is int
    assert strict_json.dumps(value) == raw
    huge = b"[1" + b"0" * 400 + b"]"  # past a double: orjson refuses it outright
    assert strict_json.loads(huge) == [10**400]
    assert strict_json.loads_written(huge) == [10**400]


WIDE_TEXT = "1" + "0" * 400  # orjson refuses this one itself: the by-hand path


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (f"[{WIDE_TEXT},NaN]", "NaN"),
        (f"[{WIDE_TEXT},-Infinity]", "Infinity"),
        (f"[{WIDE_TEXT},1e400]", "past a double"),
        (f'[{WIDE_TEXT},"\\ud800"]', "surrogate"),
        (f'[{WIDE_TEXT},"a\x01"]', "control character"),
        (f"[{WIDE_TEXT},]", "Expecting value"),
        (f"[{WIDE_TEXT}] x", "Extra data"),
        (f'{{"a":{WIDE_TEXT},"a":1}}', "appears twice"),
        ('{"a":18446744073709551616,"a":1}', "appears twice"),
        ("[1" + "0" * 5000 + "]", "longer than this reader takes"),
    ],
)
def test_the_exact_reading_refuses_what_orjson_refuses(raw: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        strict_json.loads(raw.encode())


@pytest.mark.parametrize(
    "raw",
    [
        b"\xef\xbb\xbf[" + WIDE_TEXT.encode() + b"]",  # a BOM
        b"[" + WIDE_TEXT.encode() + b',"\xff"]',  # not UTF-8
        b"[" + WIDE_TEXT.encode() + b',"\xed\xa0\x80"]',  # an encoded surrogate
    ],
)
def test_the_exact_reading_refuses_bytes_orjson_refuses(raw: bytes) -> None:
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(raw)
    with pytest.raises(orjson.JSONDecodeError):
        strict_json.loads(raw)
    with pytest.raises(orjson.JSONDecodeError):
        strict_json.loads_written(raw)


def test_a_frozen_state_with_a_wide_integer_is_written_exactly() -> None:
    from replay_tui.state.persistent import freeze

    state = freeze(
        {"n": 2**70, "rows": [{"k": -(2**70)}] * 3, "keys": {str(i): i for i in range(2000)}}
    )
    data = canonical.dumps(state)
    assert strict_json.loads(data)["n"] == 2**70
    assert canonical.digest(state) == canonical.sha256_hex(data)
