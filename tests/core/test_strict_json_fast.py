"""A line written compactly is trusted when its value gives back every byte;
every doubt the careful checks raise still stands on such lines."""

from __future__ import annotations

import pytest

from replay_tui.core.strict_json import doubt
from replay_tui.formats.envelope import LineError, parse_line


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (b'{"seq":1,"seq":2}', "appears twice"),
        (b'{"a":{"k":1,"k":1}}', "appears twice"),
        (b'{"a\\u0022":1,"a\\u0022":2}', "appears twice"),
    ],
)
def test_a_compact_line_with_a_doubt_is_still_refused(raw: bytes, why: str) -> None:
    import orjson

    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return  # orjson refuses it itself: no doubt needed
    problem = doubt(raw, value)
    assert problem is not None and why in problem


def test_a_compact_line_that_round_trips_is_trusted() -> None:
    raw = b'{"seq":1,"run_id":"r","kind":"run_started","payload":{"n":18446744073709551615}}'
    event = parse_line(raw, 1, 0)
    assert not isinstance(event, LineError) and event.payload["n"] == 2**64 - 1


def test_a_duplicate_seq_in_a_compact_envelope_is_bad_json() -> None:
    raw = b'{"seq":1,"seq":2,"run_id":"r","kind":"run_started","payload":{}}'
    got = parse_line(raw, 1, 0)
    assert isinstance(got, LineError) and got.code == "bad_json"


@pytest.mark.parametrize(
    "raw",
    [
        b'{"n":123456789012345678901234567890}',
        b'{"n":-123456789012345678901}',
        b'{\n  "n": 123456789012345678901234567890\n}\n',
    ],
)
def test_an_integer_past_64_bits_is_read_exactly(raw: bytes) -> None:
    import json

    import orjson

    from replay_tui.core.strict_json import checked

    assert checked(raw, orjson.loads(raw)) == json.loads(raw)  # not orjson's float


def test_a_receipt_written_with_an_indent_keeps_its_doubts() -> None:
    raw = b'{\n  "call_id": "c",\n  "call_id": "d"\n}\n'
    import orjson

    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return
    assert doubt(raw, value) is not None


def test_a_receipt_written_with_an_indent_is_trusted() -> None:
    import json

    value = {"call_id": "call-1", "ok": True, "output": "x\ny", "cost": 0.0011, "n": [1, {}]}
    raw = (json.dumps(value, indent=2) + "\n").encode()
    assert doubt(raw, value) is None
