"""The record counts of agent sessions, remembered between runs of
``replay-tui sessions``: counting reads every byte (a store of 1,000 sessions
of 100 MB took about 45 s), while a file whose size and mtime are as they
were holds the same records. Kept in the state folder, never beside a
session; a file that changed in any way is counted again."""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from pathlib import Path

import orjson

from replay_tui.core.state_dir import state_dir

#: Sessions remembered at most (the least recently counted are forgotten).
MAX_ENTRIES = 20_000
_NAME = "session-records.json"


class RecordCounts:
    """path -> (size, mtime in ns, records, whether the last line ended)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else state_dir() / _NAME
        self._known: dict[str, list[int]] = {}
        self._changed = False
        self._lock = threading.Lock()
        with contextlib.suppress(OSError, ValueError):
            data = orjson.loads(self.path.read_bytes())
            if isinstance(data, dict):
                self._known = {
                    k: v
                    for k, v in data.items()
                    if isinstance(v, list) and len(v) == 4 and all(type(x) is int for x in v)
                }

    def get(self, path: Path, size: int, mtime_ns: int) -> tuple[int, bool] | None:
        """(records, ended) if ``path`` was counted at this size and mtime."""
        with self._lock:
            seen = self._known.get(str(path))
        if seen is None or seen[0] != size or seen[1] != mtime_ns:
            return None
        return seen[2], bool(seen[3])

    def put(self, path: Path, size: int, mtime_ns: int, records: int, ended: bool) -> None:
        with self._lock:
            key = str(path)
            self._known.pop(key, None)  # newest last: the oldest are forgotten first
            self._known[key] = [size, mtime_ns, records, int(ended)]
            while len(self._known) > MAX_ENTRIES:
                del self._known[next(iter(self._known))]
            self._changed = True

    def save(self) -> None:
        """Write them (atomically) if anything was counted; a state folder
        that cannot be written costs the next run a count, nothing more."""
        with self._lock:
            if not self._changed:
                return
            data = orjson.dumps(self._known)
            self._changed = False
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".records-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, self.path)
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
