"""Where the values of a JSON document are, without reading them.

A trace document can be hundreds of megabytes, one object. These
functions find the byte ranges of an array's items and an object's
members, skipping everything inside them (strings, with their escapes,
and nested brackets) by regular expressions run in C: Python touches only
the brackets. Nothing is decoded here; a range found is read with orjson
on its own, so no more than one item is ever held as Python objects.

The scan checks the document's skeleton (commas, colons, brackets that
close) where it walks; what it skips is checked when it is read.
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Iterator

import orjson

from replay_tui.core import strict_json

_WS = re.compile(rb"[ \t\n\r]*")
_STRING = re.compile(rb'"(?:[^"\\]+|\\.)*"', re.S)
#: Up to the next bracket outside a string (strings skipped whole).
_SKIP = re.compile(rb'(?:[^"\[\]{}]+|"(?:[^"\\]+|\\.)*")*', re.S)
_SCALAR = re.compile(rb"[^,:\]}\[{\s\"]+")
_OPEN, _CLOSE = frozenset(b"[{"), frozenset(b"]}")
_OBJECT, _ARRAY, _QUOTE, _COMMA, _COLON = b"{"[0], b"["[0], b'"'[0], b","[0], b":"[0]
_END_OF = {_OBJECT: b"}"[0], _ARRAY: b"]"[0]}


class Malformed(ValueError):
    """The document is not JSON at byte ``pos``."""

    def __init__(self, what: str, pos: int) -> None:
        super().__init__(f"{what} at byte {pos}")
        self.pos = pos


Buffer = bytes | mmap.mmap  # what re and slicing take


#: How far a walk goes between letting go of the mapped pages behind it.
_RELEASE_EVERY = 8 << 20


def release(buf: Buffer, upto: int) -> None:
    """Let go of the mapped pages before ``upto``: they count in the
    process's resident memory once touched, and a walk goes forward (a page
    read again is read again from the page cache, nothing is lost)."""
    if isinstance(buf, mmap.mmap) and hasattr(buf, "madvise") and not buf.closed:
        upto -= upto % mmap.PAGESIZE
        if upto > 0:
            buf.madvise(mmap.MADV_DONTNEED, 0, upto)


def skip_ws(buf: Buffer, pos: int) -> int:
    match = _WS.match(buf, pos)
    return match.end() if match else pos


def byte_at(buf: Buffer, pos: int) -> int:
    """The byte at ``pos`` (-1 past the end)."""
    return buf[pos] if pos < len(buf) else -1


def value_end(buf: Buffer, pos: int) -> int:
    """Where the value starting at ``pos`` ends (one past its last byte)."""
    first = byte_at(buf, pos)
    if first == _QUOTE:
        match = _STRING.match(buf, pos)
        if match is None:
            raise Malformed("a string that does not end", pos)
        return int(match.end())
    if first in _OPEN:
        end = _read_end(buf, pos)
        return end if end is not None else _brackets_end(buf, pos)
    match = _SCALAR.match(buf, pos)
    if match is None:
        raise Malformed("no value", pos)
    return int(match.end())


def _brackets_end(buf: Buffer, pos: int) -> int:
    stack = [_END_OF[buf[pos]]]
    pos += 1
    skip, size = _SKIP.match, len(buf)
    released = pos
    while stack:
        pos = skip(buf, pos).end()  # type: ignore[union-attr]
        if pos - released >= _RELEASE_EVERY:
            release(buf, pos)
            released = pos
        if pos >= size:
            raise Malformed("a bracket that does not close", pos)
        byte = buf[pos]
        if byte in _OPEN:
            end = _read_end(buf, pos)
            if end is not None:  # read through in C: the usual way
                pos = end
                continue
            stack.append(_END_OF[byte])
        elif byte == stack[-1]:
            stack.pop()
        else:
            raise Malformed("a string that does not end or a bracket that does not match", pos)
        pos += 1
    return pos


#: How far orjson is asked to read for one nested value: past this, its
#: brackets are walked here and its own nested values read by orjson.
_WINDOW_FIRST, _WINDOW_LAST = 1 << 12, 1 << 20


def _read_end(buf: Buffer, pos: int) -> int | None:
    """Where the object or array at ``pos`` ends, found by orjson reading a
    window of the bytes from ``pos`` (it stops where the value ends and
    says so: "unexpected content after document"); None when the value
    is longer than the last window or orjson cannot read it (the caller
    walks it, and finds any fault itself)."""
    window, size = _WINDOW_FIRST, len(buf)
    while True:
        stop = min(pos + window, size)
        while stop > pos and buf[stop - 1] & 0xC0 == 0x80:  # not inside a character
            stop -= 1
        if stop < size and stop > pos and buf[stop - 1] >= 0xC0:
            stop -= 1
        try:
            orjson.loads(buf[pos:stop])
        except orjson.JSONDecodeError as exc:
            if exc.msg.startswith("unexpected content after document"):
                return pos + len(exc.doc[: exc.pos].rstrip(" \t\r\n").encode())
            if not exc.msg.startswith("unexpected end of data") or stop >= size:
                return None
        else:  # the value ends where the window does (or in the spaces before)
            return pos + len(bytes(buf[pos:stop]).rstrip(b" \t\r\n"))
        if window >= _WINDOW_LAST:
            return None
        window *= 4


def items(buf: Buffer, pos: int) -> Iterator[tuple[int, int]]:
    """The ranges of the items of the array at ``pos`` (its ``[``)."""
    pos = skip_ws(buf, pos + 1)
    if byte_at(buf, pos) == _END_OF[_ARRAY]:
        return
    released = pos
    while True:
        end = value_end(buf, pos)
        yield pos, end
        if end - released >= _RELEASE_EVERY:
            release(buf, end)
            released = end
        pos = skip_ws(buf, end)
        byte = byte_at(buf, pos)
        if byte == _COMMA:
            pos = skip_ws(buf, pos + 1)
        elif byte == _END_OF[_ARRAY]:
            return
        else:
            raise Malformed("no comma between items", pos)


def members(buf: Buffer, pos: int) -> Iterator[tuple[str, int, int]]:
    """The keys and value ranges of the object at ``pos`` (its ``{``)."""
    pos = skip_ws(buf, pos + 1)
    if byte_at(buf, pos) == _END_OF[_OBJECT]:
        return
    while True:
        if byte_at(buf, pos) != _QUOTE:
            raise Malformed("no key", pos)
        key_end = value_end(buf, pos)
        key = strict_json.loads_written(bytes(buf[pos:key_end]))
        pos = skip_ws(buf, key_end)
        if byte_at(buf, pos) != _COLON:
            raise Malformed("no colon after a key", pos)
        start = skip_ws(buf, pos + 1)
        end = value_end(buf, start)
        yield key, start, end
        pos = skip_ws(buf, end)
        byte = byte_at(buf, pos)
        if byte == _COMMA:
            pos = skip_ws(buf, pos + 1)
        elif byte == _END_OF[_OBJECT]:
            return
        else:
            raise Malformed("no comma between members", pos)


class Skeleton:
    """An object whose array members named in ``cut`` are set aside: the
    object read with those arrays empty (``value``), and each array's
    range (``arrays``: the last one given for a key, as a JSON reader
    keeps the last) and whether it has items (``filled``)."""

    __slots__ = ("arrays", "filled", "value")

    def __init__(self, buf: Buffer, start: int, end: int, cut: tuple[str, ...]) -> None:
        self.arrays: dict[str, int] = {}
        self.filled: dict[str, bool] = {}
        parts: list[bytes] = []
        at = start
        for key, v_start, v_end in members(buf, start):
            if key in cut:
                self.arrays.pop(key, None)
                if byte_at(buf, v_start) == _ARRAY:
                    self.arrays[key] = v_start
                    self.filled[key] = byte_at(buf, skip_ws(buf, v_start + 1)) != _END_OF[_ARRAY]
                    parts.append(bytes(buf[at : v_start + 1]))
                    at = v_end - 1
        parts.append(bytes(buf[at:end]))
        self.value = strict_json.loads_written(b"".join(parts))

    def chosen(self, *keys: str) -> int | None:
        """The array of the first of ``keys`` that is truthy, as
        ``value.get(a) or value.get(b)`` would choose it (None: no array)."""
        for key in keys:
            if key in self.arrays:
                if self.filled[key]:
                    return self.arrays[key]
            elif isinstance(self.value, dict) and self.value.get(key):
                return None  # truthy but not an array: nothing to read
        return None
