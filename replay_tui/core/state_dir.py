"""Where replay-tui keeps what it remembers between runs (bookmarks, the
record counts of agent sessions): never beside a run, which is evidence."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    """``$XDG_STATE_HOME/replay-tui`` (default ``~/.local/state/replay-tui``)."""
    base = os.environ.get("XDG_STATE_HOME")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "state"
    return root / "replay-tui"
