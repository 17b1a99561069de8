"""JSON as a careful reader must take it, on top of orjson's speed.

orjson accepts one thing a run's reader must not take silently, and
rounds another:

- a key given twice in one object (``{"seq": 1, "seq": 2}``): orjson keeps
  the last, other readers keep the first, so two tools would replay two
  different histories from the same bytes: refused (:class:`JSONDoubt`);
- an integer beyond 64 bits: orjson reads it as a float, so
  ``123456789012345678901234567890`` would quietly lose its last digits
  (and one past a double's range it refuses). Such integers are read
  exactly, as Python ints, and written back exactly (:func:`dumps`).

:func:`checked` finds both at the cost of one ``orjson.dumps`` and two byte
counts per line; only a line that looks suspicious is parsed again, slowly
and exactly, with the standard library. That slow reading never accepts
what orjson refuses: it runs only on bytes orjson read, or (a number past
a double) with NaN, Infinity, numbers out of range, lone surrogates and
bad UTF-8 refused by hand.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import orjson

from replay_tui.core.allocator import collector_paused

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
#: What ``orjson.dumps`` says of an int it cannot write.
_TOO_WIDE = "64-bit"
#: What ``orjson.loads`` says of a number past a double's range.
_PAST_DOUBLE = "infinity"


class JSONDoubt(ValueError):
    """Bytes that parse, but not to one value every reader agrees on."""


def fits_64_bits(value: int) -> bool:
    """Whether orjson writes ``value`` itself (-2**63 to 2**64-1)."""
    return _I64_MIN <= value <= _U64_MAX


def trusted(raw: bytes, value: Any) -> bool:
    """Whether ``value`` (orjson's reading of ``raw``) is certainly the
    exact one, by the quick checks alone.

    Every key of an object is followed by ``":`` in the bytes; orjson's own
    compact output of the same value has exactly as many unless a key was
    dropped as a duplicate (or the bytes escape quotes unusually, or put
    space before a colon: then the exact reading settles it).
    """
    try:
        dumped = orjson.dumps(value)
    except orjson.JSONEncodeError:
        return False
    if dumped == raw:
        # written compactly, as orjson, JSON.stringify and most writers do:
        # the value gives back every byte, so no key was dropped, no number
        # rounded (a 20-digit integer comes back as a float's digits)
        return True
    if raw[:2] == b"{\n" and _pretty(value) == raw.rstrip(b" \t\r\n"):
        return True  # the same, written with an indent of 2 (json.dumps(indent=2))
    return _counts_agree(raw, dumped)


def checked(raw: bytes, value: Any) -> Any:
    """``value`` (orjson's reading of ``raw``) where it is exact; the exact
    reading where ``raw`` holds an integer past 64 bits (which orjson
    rounded to a float). Raises :class:`JSONDoubt` for a repeated key."""
    if trusted(raw, value):
        return value
    return _exact(raw, value)


def doubt(raw: bytes, value: Any) -> str | None:
    """Why ``raw`` cannot be read as one value (a repeated key), or None."""
    try:
        checked(raw, value)
    except JSONDoubt as exc:
        return str(exc)
    return None


def _counts_agree(raw: bytes, dumped: bytes) -> bool:
    """No key dropped (as many ``":`` as orjson's own output of the value,
    no escaped quote or colon to hide one) and no number past 64 bits."""
    if b"\\u00" in raw and any(e in raw for e in _QUOTE_ESCAPES):
        return False
    return _keys_in(raw) == dumped.count(b'":') and not _maybe_beyond_64_bits(raw)


#: How a chunk of lines was trusted (:func:`trust_chunk`).
COMPACT, COUNTED = "compact", "counted"


def trust_chunk(lines: list[bytes], values: list[dict[str, Any]]) -> str | None:
    """Whether :func:`trusted` holds for each of ``lines`` (each read by
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


def _no_repeated_keys(items: list[tuple[str, Any]]) -> dict[str, Any]:
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


class _Integers:
    """``parse_int`` of the exact reading: notes whether any integer was
    past 64 bits (else orjson's reading stands, the same objects)."""

    __slots__ = ("wide",)

    def __init__(self) -> None:
        self.wide = False

    def __call__(self, text: str) -> int:
        try:
            value = int(text)
        except ValueError:  # past Python's 4,300 digits
            raise JSONDoubt(
                f"an integer of {len(text.lstrip('-'))} digits is longer than this reader "
                f"takes ({sys.get_int_max_str_digits()} digits)"
            ) from None
        if not self.wide and not fits_64_bits(value):
            self.wide = True
        return value


def _exact(raw: bytes, value: Any, *, strict: bool = True) -> Any:
    """The standard library's reading of bytes orjson read as ``value``:
    ``value`` itself unless an integer is past 64 bits. ``strict``: a
    repeated key is refused (:class:`JSONDoubt`); else the last one counts,
    as in orjson's reading."""
    integers = _Integers()
    pairs = _no_repeated_keys if strict else None
    try:
        exact = json.loads(raw, object_pairs_hook=pairs, parse_int=integers)
    except JSONDoubt:
        if strict:
            raise
        return value  # an integer past Python's digits: orjson's reading stands
    except RecursionError:
        raise JSONDoubt("nested too deep to read exactly (this reader's limit)") from None
    except ValueError:
        return value  # orjson read it; its own answer stands
    return exact if integers.wide else value


class _Refused(ValueError):
    """What the by-hand checks of :func:`_past_double` refuse, and where."""

    def __init__(self, message: str, found: str) -> None:
        super().__init__(message)
        self.found = found


def _refuse_constant(text: str) -> Any:
    raise _Refused(f"{text} is not a JSON number (JSON has no NaN or Infinity)", text)


def _finite(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise _Refused(f"number {text} is past a double's range", text)
    return number


def _past_double(raw: bytes, exc: orjson.JSONDecodeError, *, strict: bool = True) -> Any:
    """The exact reading of bytes orjson refused with ``exc``, where the
    only fault is an integer past a double's range (hundreds of digits);
    otherwise an ``orjson.JSONDecodeError`` saying what is wrong, and where.
    Refuses, by hand, everything orjson refuses: bad UTF-8, a BOM, NaN and
    Infinity, a float past a double's range, lone surrogates, control
    characters in strings; and, ``strict``, a repeated key (:class:`JSONDoubt`)."""
    if _PAST_DOUBLE not in str(exc) or not _maybe_beyond_64_bits(raw):
        raise exc
    try:
        text = raw.decode("utf-8")  # strict: no encoded surrogates either
    except UnicodeDecodeError:
        raise exc from None
    try:
        exact = json.loads(
            text,
            object_pairs_hook=_no_repeated_keys if strict else None,
            parse_int=_Integers(),
            parse_float=_finite,
            parse_constant=_refuse_constant,
        )
    except JSONDoubt as err:
        if strict:
            raise
        raise orjson.JSONDecodeError(str(err), text, 0) from None
    except json.JSONDecodeError as err:  # BOM, syntax, control characters
        raise orjson.JSONDecodeError(err.msg, err.doc, err.pos) from None
    except _Refused as err:
        raise orjson.JSONDecodeError(str(err), text, max(text.find(err.found), 0)) from None
    except RecursionError:
        raise JSONDoubt("nested too deep to read exactly (this reader's limit)") from None
    try:
        orjson.dumps(_wide_as_fragments(exact, None))
    except orjson.JSONEncodeError:  # a lone surrogate (\\ud800) in a string
        at = max(text.lower().find("\\ud"), 0)
        raise orjson.JSONDecodeError("a lone surrogate in a string", text, at) from None
    return exact


def loads(raw: bytes) -> Any:
    """``orjson.loads`` that refuses a repeated key and reads integers past
    64 bits exactly.

    Raises ``ValueError`` (``orjson.JSONDecodeError`` or :class:`JSONDoubt`).
    """
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return _past_double(raw, exc)
    return checked(raw, value)


def loads_written_big(data: bytes) -> Any:
    """:func:`loads_written` with the cyclic collector paused (see
    :func:`~replay_tui.core.allocator.collector_paused`)."""
    with collector_paused():
        return loads_written(data)


def loads_written(data: bytes | memoryview) -> Any:
    """``orjson.loads`` with integers past 64 bits read exactly, and no
    other check: for bytes this program wrote (a checkpoint, a state, a
    patch log) or a line already judged. Costs one scan of the bytes where
    no such integer is. Raises ``orjson.JSONDecodeError`` as orjson does."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return _past_double(bytes(data), exc, strict=False)
    if type(data) is not bytes:
        data = bytes(data)  # a line of a mapped file: copied to be scanned
    if not _maybe_beyond_64_bits(data):
        return value
    try:
        return _exact(data, value, strict=False)
    except JSONDoubt:
        return value  # nested past the standard reader's depth: orjson's reading


def loads_written_many(lines: list[bytes]) -> list[Any]:
    """:func:`loads_written` of each of ``lines``: one scan of them all for
    an integer past 64 bits, and orjson mapped over them where none is."""
    if not _maybe_beyond_64_bits(b"\n".join(lines)):
        try:
            return list(map(orjson.loads, lines))
        except orjson.JSONDecodeError:
            pass  # each line says where
    return [loads_written(raw) for raw in lines]


def dumps(value: Any, default: Any = None, option: int | None = None) -> bytes:
    """``orjson.dumps``, and integers past 64 bits written exactly.

    orjson writes every other value; an int it cannot write (it refuses
    with ``TypeError``) is given to it, on a second try, as its decimal
    digits (``orjson.Fragment``). So the bytes are orjson's own wherever
    no such int is, and the same digits the reader read where one is.
    """
    try:
        return orjson.dumps(value, default=default, option=option)
    except orjson.JSONEncodeError as exc:
        if _TOO_WIDE not in str(exc):
            raise
    return orjson.dumps(_wide_as_fragments(value, default), default=default, option=option)


_PLAIN = frozenset({str, float, bool, type(None), orjson.Fragment})


def _wide_as_fragments(value: Any, default: Any) -> Any:
    """``value`` with each int past 64 bits as its digits (a Fragment);
    what ``default`` turns into JSON turned first (a frozen state's dict)."""
    t = type(value)
    if t is int:
        return value if fits_64_bits(value) else orjson.Fragment(str(value).encode())
    if t in _PLAIN:
        return value
    if isinstance(value, dict):
        return {k: _wide_as_fragments(v, default) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_wide_as_fragments(v, default) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and not fits_64_bits(value):
        return orjson.Fragment(str(int(value)).encode())
    if default is not None:
        try:
            turned = default(value)
        except TypeError:
            return value  # orjson's own error, on the second try
        return _wide_as_fragments(turned, default)
    return value
