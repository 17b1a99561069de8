"""Canonical JSON: the same value gives the same bytes on any machine.

Sorted keys, compact separators, UTF-8; orjson makes this fast. Used for
reports, state digests and checkpoints; frozen states (see
:mod:`replay_tui.state.persistent`) are written as the JSON they stand for.
An integer past 64 bits is written as its exact digits (see
:func:`replay_tui.core.strict_json.dumps`); every other value's bytes are
orjson's own, so digests of ordinary data are what they always were.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import orjson

from replay_tui.core.strict_json import dumps as _dumps
from replay_tui.state.persistent import BigDict, BigList, json_default

_OPTS = orjson.OPT_SORT_KEYS  # no OPT_NON_STR_KEYS: a non-string key is not JSON


def dumps(value: Any) -> bytes:
    """Canonical bytes of a JSON value (raises ``TypeError`` if it is not JSON)."""
    return _dumps(value, option=_OPTS, default=json_default)


def dumps_fast(value: Any) -> bytes:
    """Exact JSON bytes in the value's own key order: for checkpoints, which
    need a faithful copy, not a canonical one (about twice as fast)."""
    return _dumps(value, default=json_default)


def dumps_pretty(value: Any) -> bytes:
    """Canonical, but indented for people; still deterministic."""
    return _dumps(value, option=_OPTS | orjson.OPT_INDENT_2, default=json_default)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


#: A dict or list with more items than this is hashed a few items at a time.
STREAM_ITEMS = 1024
#: Items of a streamed dict or list written by one :func:`dumps` (their
#: bytes are orjson's either way; one call for many is 3x faster on a
#: million-event state's call table, and memory stays bounded).
GROUP_ITEMS = 256


def digest(value: Any, *, stream_past: int = STREAM_ITEMS, group: int = GROUP_ITEMS) -> str:
    """sha256 of the canonical JSON of ``value``, never holding all of it.

    The bytes hashed are those :func:`dumps` writes, but the top two levels
    and any dict or list of more than ``stream_past`` items are written
    ``group`` items at a time: at a million events the final state is 40 MB
    of JSON, and holding it at once was ``check``'s peak memory.
    Raises ``TypeError`` where :func:`dumps` does.
    """
    h = hashlib.sha256()
    _feed(h.update, value, stream_past, 0, max(1, group))
    return h.hexdigest()


def _streamed(value: Any, past: int, whole: bool) -> bool:
    """Is ``value`` a dict or list written an item (or group) at a time?"""
    t = type(value)
    if t is BigDict or t is BigList or isinstance(value, dict | list | tuple):
        return bool(value) and (len(value) > past or not whole)
    return False


def _feed(put: Callable[[bytes], object], value: Any, past: int, depth: int, group: int) -> None:
    whole = depth >= 2
    if not _streamed(value, past, whole):
        put(dumps(value))
        return
    kids_whole = depth + 1 >= 2
    if type(value) is BigDict or isinstance(value, dict):
        keys = list(value)
        if not all(type(k) is str for k in keys):
            raise TypeError("Dict key must be str")
        keys.sort()  # code point order: orjson sorts by UTF-8 bytes, the same order
        sep = b"{"
        at, n = 0, len(keys)
        while at < n:
            end = at
            while (
                kids_whole
                and end < n
                and end - at < group
                and not _streamed(value[keys[end]], past, True)
            ):
                end += 1
            put(sep)
            sep = b","
            if end > at:  # items written whole: one dumps of them (sorted again, the same)
                put(dumps({k: value[k] for k in keys[at:end]})[1:-1])
                at = end
                continue
            put(orjson.dumps(keys[at]))
            put(b":")
            _feed(put, value[keys[at]], past, depth + 1, group)
            at += 1
        put(b"}")
        return
    sep = b"["
    batch: list[Any] = []
    for item in value:
        whole = kids_whole and not _streamed(item, past, True)
        if whole:
            batch.append(item)
        if batch and (not whole or len(batch) == group):
            put(sep)
            sep = b","
            put(dumps(batch)[1:-1])
            batch = []
        if not whole:
            put(sep)
            sep = b","
            _feed(put, item, past, depth + 1, group)
    if batch:
        put(sep)
        put(dumps(batch)[1:-1])
    put(b"]")
