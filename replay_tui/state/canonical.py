"""Canonical JSON: the same value gives the same bytes on any machine.

Sorted keys, compact separators, UTF-8; orjson makes this fast. Used for
reports, state digests and checkpoints; frozen states (see
:mod:`replay_tui.state.persistent`) are written as the JSON they stand for.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from replay_tui.state.persistent import json_default

_OPTS = orjson.OPT_SORT_KEYS  # no OPT_NON_STR_KEYS: a non-string key is not JSON


def dumps(value: Any) -> bytes:
    """Canonical bytes of a JSON value (raises ``TypeError`` if it is not JSON)."""
    return orjson.dumps(value, option=_OPTS, default=json_default)


def dumps_fast(value: Any) -> bytes:
    """Exact JSON bytes in the value's own key order: for checkpoints, which
    need a faithful copy, not a canonical one (about twice as fast)."""
    return orjson.dumps(value, default=json_default)


def dumps_pretty(value: Any) -> bytes:
    """Canonical, but indented for people; still deterministic."""
    return orjson.dumps(value, option=_OPTS | orjson.OPT_INDENT_2, default=json_default)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    """sha256 of the canonical JSON of ``value``."""
    return sha256_hex(dumps(value))
