"""A worker's cancel flag as the scans read it (no Textual import needed)."""

from __future__ import annotations

import threading
from typing import Any


class WorkerCancelled(threading.Event):
    """A scan's cancel flag read from its worker: a worker cancelled (Esc, a
    new search) stops its scan at the next chunk."""

    def __init__(self, worker: Any) -> None:
        super().__init__()
        self._worker = worker

    def is_set(self) -> bool:
        return bool(self._worker.is_cancelled)
