"""Ids seen in a file, in bytes per id: where each was seen, never the id.

A session names things by ids (a record's ``uuid``, a tool call's id, an
API message's id) that later lines refer to. Keeping every id as a string
costs about a hundred bytes each; :class:`IdTable` keeps a 64-bit hash and
the line it was seen at, in an open-addressing table of two arrays (12
bytes a slot, at most two thirds full: under 20 bytes an id). A hash found
again is confirmed by reading that line (``confirm``: does the record on it
hold this id?), so two ids that share a hash are never taken for one.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

import orjson

from replay_tui.core import strict_json


class IdTable:
    """Id -> the line it was (last) seen at, by hash, confirmed on the line."""

    def __init__(
        self,
        read_line: Callable[[int], bytes],
        confirm: Callable[[dict[str, Any], str], bool],
    ) -> None:
        self._read_line = read_line
        self._confirm = confirm
        self._keys = array("Q", bytes(8 * 1024))
        self._lines = array("I", bytes(4 * 1024))
        self._mask = 1023
        self._count = 0

    def __len__(self) -> int:
        return self._count

    @staticmethod
    def key(text: str) -> int:
        return (hash(text) & 0xFFFF_FFFF_FFFF_FFFF) or 1

    def has(self, key: int) -> bool:
        """Whether an id with this hash was seen (not confirmed)."""
        return self.first_line(key) != 0

    def first_line(self, key: int) -> int:
        """The line of the first id seen with this hash, unconfirmed; 0 if
        none (a parent: whoever reads that line confirms it)."""
        keys, mask = self._keys, self._mask
        i = key & mask
        while True:
            k = keys[i]
            if k == key:
                return self._lines[i]
            if k == 0:
                return 0
            i = (i + 1) & mask

    def line_of(self, text: str, key: int) -> int:
        """The line where ``text`` was seen, confirmed; 0 if it was not."""
        slot = self._slot(text, key)
        return self._lines[slot] if slot >= 0 else 0

    def add(self, key: int, line: int) -> None:
        """A new id (not seen before) at ``line``."""
        if 3 * (self._count + 1) > 2 * (self._mask + 1):
            self._grow()
        keys, mask = self._keys, self._mask
        i = key & mask
        while keys[i] != 0:
            i = (i + 1) & mask
        keys[i] = key
        self._lines[i] = line
        self._count += 1

    def move(self, key: int, line: int, to: int) -> None:
        """The id seen at ``line`` (with this hash) is now last seen at ``to``
        (a line holds one id of a kind, so hash and line name its slot)."""
        keys, lines, mask = self._keys, self._lines, self._mask
        i = key & mask
        while keys[i] != 0:
            if keys[i] == key and lines[i] == line:
                lines[i] = to
                return
            i = (i + 1) & mask
        raise KeyError(line)

    def _slot(self, text: str, key: int) -> int:
        keys, mask = self._keys, self._mask
        i = key & mask
        while True:
            k = keys[i]
            if k == 0:
                return -1
            if k == key and self._holds(self._lines[i], text):
                return i
            i = (i + 1) & mask

    def _holds(self, line: int, text: str) -> bool:
        try:
            earlier = strict_json.loads_written(self._read_line(line - 1))
        except (orjson.JSONDecodeError, OSError, IndexError):
            return False
        return type(earlier) is dict and self._confirm(earlier, text)

    def _grow(self) -> None:
        old_keys, old_lines = self._keys, self._lines
        size = 2 * (self._mask + 1)
        self._keys = keys = array("Q", bytes(8 * size))
        self._lines = lines = array("I", bytes(4 * size))
        self._mask = mask = size - 1
        for k, line in zip(old_keys, old_lines, strict=True):
            if k:
                i = k & mask
                while keys[i] != 0:
                    i = (i + 1) & mask
                keys[i] = k
                lines[i] = line
