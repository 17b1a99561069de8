"""Each event's change to the state, as compact bytes (the patch log).

The forward pass records what every event changed (path, op, old, new); the
diff pane, ``state --diff``, the rules-reload mark and seeks read it instead
of diffing whole states. One event's patches are one JSON array in an
append-only byte buffer indexed by offset (8 bytes an event), not Python
objects: a million events would otherwise cost hundreds of MB. Past a memory
budget the bytes go to an unlinked temporary file and are read back with
``os.pread`` (the page cache keeps them warm; the process does not hold them).
"""

from __future__ import annotations

import os
import tempfile
import threading
from array import array
from typing import Any

from replay_tui.core import strict_json
from replay_tui.state.diff import MISSING, Change
from replay_tui.state.persistent import json_default

#: Bytes kept in memory before they are written to the temporary file.
SPILL_BYTES = 1 << 20

_CHANGED, _ADDED, _REMOVED = 0, 1, 2


def encode(changes: list[Change]) -> bytes:
    """``[[path, op, value(s)...], ...]``: op 0 changed (old, new), 1 added
    (new), 2 removed (old). JSON keeps keys (strings) and list indexes
    (integers) apart, so paths stay unambiguous."""
    rows: list[list[Any]] = []
    for c in changes:
        if c.old is MISSING:
            rows.append([c.path, _ADDED, c.new])
        elif c.new is MISSING:
            rows.append([c.path, _REMOVED, c.old])
        else:
            rows.append([c.path, _CHANGED, c.old, c.new])
    return strict_json.dumps(rows, default=json_default)


def decode(data: bytes) -> list[Change]:
    out: list[Change] = []
    for row in strict_json.loads_written(data):
        path = tuple(row[0])
        op = row[1]
        if op == _ADDED:
            out.append(Change(path, MISSING, row[2]))
        elif op == _REMOVED:
            out.append(Change(path, row[2], MISSING))
        else:
            out.append(Change(path, row[2], row[3]))
    return out


_EMPTY = encode([])


class PatchLog:
    """Patches of events 1..n, appended in order, read in any order, from any thread."""

    def __init__(self, *, spill_bytes: int = SPILL_BYTES) -> None:
        self._offsets = array("Q", [0])  # start of event n's record is _offsets[n - 1]
        self._buffer = bytearray()
        self._buffer_start = 0  # file offset of _buffer[0]
        self._spill_bytes = spill_bytes
        self._fd: int | None = None
        self._lock = threading.Lock()
        self._closed = False

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def append(self, changes: list[Change]) -> None:
        data = encode(changes) if changes else _EMPTY
        with self._lock:
            if self._closed:  # a log made behind a replay closed meanwhile (a reload)
                raise ValueError("the patch log is closed")
            self._buffer += data
            self._offsets.append(self._offsets[-1] + len(data))
            if len(self._buffer) >= self._spill_bytes:
                self._spill()

    def truncate(self, n: int) -> None:
        """Forget the patches after event ``n`` (only ever the unspilled tail)."""
        with self._lock:
            end = self._offsets[n]
            if end < self._buffer_start:
                raise ValueError("cannot truncate spilled patches")
            del self._offsets[n + 1 :]
            del self._buffer[end - self._buffer_start :]

    def _spill(self) -> None:
        if self._fd is None:
            fd, name = tempfile.mkstemp(prefix="replay-tui-patches-")
            os.unlink(name)  # gone with the process, whatever happens
            self._fd = fd
        os.pwrite(self._fd, self._buffer, self._buffer_start)
        self._buffer_start += len(self._buffer)
        self._buffer = bytearray()

    def raw(self, n: int) -> bytes:
        """The encoded patches of event ``n`` (1-based)."""
        with self._lock:
            if not 1 <= n < len(self._offsets):
                raise IndexError(f"no patches for event {n}")
            start, end = self._offsets[n - 1], self._offsets[n]
            if start >= self._buffer_start:
                return bytes(self._buffer[start - self._buffer_start : end - self._buffer_start])
            fd = self._fd
        assert fd is not None
        return os.pread(fd, end - start, start)

    def span(self, first: int, last: int) -> tuple[bytes, array[int]]:
        """The records of events ``first..last`` (1-based, inclusive) as one
        bytes object, and their starts relative to it (``last - first + 2``
        numbers, the final one its length): a scan reads the log in chunks
        and decodes only the events it needs."""
        with self._lock:
            if not 1 <= first <= last < len(self._offsets):
                raise IndexError(f"no patches for events {first}..{last}")
            start, end = self._offsets[first - 1], self._offsets[last]
            starts = array("Q", (o - start for o in self._offsets[first - 1 : last + 1]))
            if start >= self._buffer_start:
                lo = start - self._buffer_start
                return bytes(self._buffer[lo : lo + end - start]), starts
            fd = self._fd
            spilled_end = self._buffer_start
            tail = bytes(self._buffer[: max(0, end - spilled_end)])
        assert fd is not None
        head = os.pread(fd, min(end, spilled_end) - start, start)
        return head + tail, starts

    def changes(self, n: int) -> list[Change]:
        """What event ``n`` changed, as :class:`~replay_tui.state.diff.Change` objects."""
        return decode(self.raw(n))

    def memory_bytes(self) -> int:
        return len(self._buffer) + self._offsets.itemsize * len(self._offsets)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
