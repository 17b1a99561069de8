"""The state the native rules hold, read without making it whole in Python.

A million-event ``agent_run`` state is 40 MB of JSON and some 190 MB of
Python objects: ``check`` needs only its digest, its summary and what it
leaves open. :class:`NativeView` is the rules' ``StateView`` of it, whose
calls are read from the native state only when asked for, and which hashes
its canonical JSON a group of calls at a time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from replay_tui.core.allocator import collector_paused
from replay_tui.core.native_rules import CALLS, HEAD, SORTED_CALLS, NativeRules
from replay_tui.core.strict_json import loads_written, loads_written_big
from replay_tui.state import canonical


class NativeView(Mapping[str, Any]):
    """The rules' read-only view of the state ``rules`` hold: its small
    members read at once, ``calls`` from the native state when first asked
    for (a run that ended asks ``still_open`` nothing of them)."""

    def __init__(self, rules: NativeRules) -> None:
        self._rules = rules
        self._head: dict[str, Any] = loads_written(rules.state(HEAD))
        self._calls: dict[str, Any] | None = None

    def __getitem__(self, key: str) -> Any:
        if key == "calls":
            if self._calls is None:
                self._calls = loads_written_big(self._rules.state(CALLS))
            return self._calls
        return self._head[key]

    def digest(self, group: int = canonical.GROUP_ITEMS) -> str:
        """:func:`canonical.digest` of the state: the same bytes hashed
        (keys sorted at every level), the calls ``group`` at a time."""
        head = self._head
        h = hashlib.sha256()
        put = h.update
        sep = b"{"
        for key in sorted(head):
            put(sep)
            sep = b","
            put(orjson.dumps(key))
            put(b":")
            if key != "calls":
                put(canonical.dumps(head[key]))
                continue
            put(b"{")
            first = True
            with collector_paused():
                for line in self._rules.state(SORTED_CALLS, group).split(b"\n"):
                    part = canonical.dumps(loads_written(line))[1:-1]  # ({} where there is none)
                    if part:
                        put(part if first else b"," + part)
                        first = False
            put(b"}")
        put(b"}")
        return h.hexdigest()

    def __iter__(self) -> Iterator[str]:
        return iter(self._head)

    def __len__(self) -> int:
        return len(self._head)
