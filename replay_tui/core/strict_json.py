"""JSON as a careful reader must take it, on top of orjson's speed.

orjson accepts two things a run's reader must not take silently:

- a key given twice in one object (``{"seq": 1, "seq": 2}``): orjson keeps
  the last, other readers keep the first, so two tools would replay two
  different histories from the same bytes;
- an integer beyond 64 bits: orjson reads it as a float, so
  ``123456789012345678901234567890`` quietly loses its last digits.

:func:`doubt` finds both at the cost of one ``orjson.dumps`` and two byte
counts per line; only a line that looks suspicious is parsed again, slowly
and exactly, with the standard library.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

#: Digits to 0x00, ``-`` to 0x02, every other byte to 0x01: a number that
#: may be beyond 64 bits (20 digits, or ``-`` and 19) is then a run of zero
#: bytes, found at C speed (``re`` is 2.5x slower on a line, 9x on a 20 MB
#: document).
_DIGITS_TO_ZERO = bytes(0 if 0x30 <= i <= 0x39 else (2 if i == 0x2D else 1) for i in range(256))
_TWENTY_DIGITS = b"\0" * 20
_MINUS_NINETEEN = b"\2" + b"\0" * 19
#: An escaped quote or colon can hide a key from the ``":`` count: bytes
#: with one get the exact check.
_QUOTE_ESCAPES = (b"\\u0022", b"\\u003a", b"\\u003A")


def _maybe_beyond_64_bits(raw: bytes) -> bool:
    """True if ``raw`` has 20 ASCII digits in a row, or ``-`` and 19 (a
    number beyond 64 bits, or a long digit string inside a string: the exact
    check then tells them apart)."""
    if len(raw) < 20:
        return False
    mapped = raw.translate(_DIGITS_TO_ZERO)
    return _TWENTY_DIGITS in mapped or _MINUS_NINETEEN in mapped


def _keys_in(raw: bytes) -> int:
    """How many ``"...":`` keys the bytes spell, ``" :`` included (at least:
    whitespace inside strings can only add to the count, and a count above
    orjson's sends the bytes to the exact check)."""
    if b'" ' in raw or b'"\t' in raw or b'"\r' in raw or b'"\n' in raw:
        raw = raw.translate(None, b" \t\r\n")
    return raw.count(b'":')


_I64_MIN = -(2**63)
_U64_MAX = 2**64 - 1


class JSONDoubt(ValueError):
    """Bytes that parse, but not to one value every reader agrees on."""


def doubt(raw: bytes, value: Any) -> str | None:
    """Why ``value`` (orjson's reading of ``raw``) cannot be trusted, or None.

    Every key of an object is followed by ``":`` in the bytes; orjson's own
    compact output of the same value has exactly as many unless a key was
    dropped as a duplicate (or the bytes escape quotes unusually, or put
    space before a colon: then the exact check below settles it).
    """
    try:
        dumped = orjson.dumps(value)
    except orjson.JSONEncodeError:
        return _exact_problem(raw)
    if dumped == raw:
        # written compactly, as orjson, JSON.stringify and most writers do:
        # the value gives back every byte, so no key was dropped, no number
        # rounded (a 20-digit integer comes back as a float's digits)
        return None
    if raw[:2] == b"{\n" and _pretty(value) == raw.rstrip(b" \t\r\n"):
        return None  # the same, written with an indent of 2 (json.dumps(indent=2))
    if _counts_agree(raw, dumped):
        return None
    return _exact_problem(raw)


def _counts_agree(raw: bytes, dumped: bytes) -> bool:
    """No key dropped (as many ``":`` as orjson's own output of the value,
    no escaped quote or colon to hide one) and no number past 64 bits."""
    if b"\\u00" in raw and any(e in raw for e in _QUOTE_ESCAPES):
        return False
    return _keys_in(raw) == dumped.count(b'":') and not _maybe_beyond_64_bits(raw)


#: How a chunk of lines was trusted (:func:`trust_chunk`).
COMPACT, COUNTED = "compact", "counted"


def trust_chunk(lines: list[bytes], values: list[dict[str, Any]]) -> str | None:
    """Whether :func:`doubt` finds nothing in any of ``lines`` (each read by
    orjson as the object at the same place in ``values``), proven of the
    whole chunk at once: :data:`COMPACT` (every line is ``orjson.dumps`` of
    its value, byte for byte), :data:`COUNTED`, or None where a line needs
    looking at alone.

    Objects written compactly give their bytes back in one ``orjson.dumps``
    of the list (an object ends at its own closing brace, so equal chunks
    are equal lines). Otherwise a line's ``":`` count is at least its
    value's, so equal sums over the chunk are equal counts in every line.
    """
    try:
        dumped = orjson.dumps(values)
    except orjson.JSONEncodeError:
        return None
    joined = b",".join(lines)
    if len(dumped) == len(joined) + 2 and dumped[1:-1] == joined:
        return COMPACT
    return COUNTED if _counts_agree(joined, dumped) else None


def _pretty(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:
        return b""


def _exact_problem(raw: bytes) -> str | None:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                shown = key if len(key) <= 40 else key[:37] + "..."
                raise JSONDoubt(
                    f"key {shown!r} appears twice in one object "
                    "(JSON readers disagree on which one counts)"
                )
            seen.add(key)
        return dict(items)

    def integer(text: str) -> int:
        value = int(text) if len(text) <= 21 else None  # int() of 5,000 digits refuses
        if value is None or not _I64_MIN <= value <= _U64_MAX:
            shown = text if len(text) <= 30 else text[:27] + "..."
            raise JSONDoubt(
                f"integer {shown} is beyond 64 bits: it cannot be kept exactly "
                "(this reader's limit)"
            )
        return value

    try:
        json.loads(raw, object_pairs_hook=pairs, parse_int=integer)
    except JSONDoubt as exc:
        return str(exc)
    except RecursionError:
        return "nested too deep to check for repeated keys (this reader's limit)"
    except ValueError:
        return None  # orjson read it; its own answer stands
    return None


def loads(raw: bytes) -> Any:
    """``orjson.loads`` that also refuses what :func:`doubt` finds.

    Raises ``ValueError`` (``orjson.JSONDecodeError`` or :class:`JSONDoubt`).
    """
    value = orjson.loads(raw)
    problem = doubt(raw, value)
    if problem is not None:
        raise JSONDoubt(problem)
    return value
