"""Locating a run: a folder with ``events.jsonl``, or that file itself."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from replay_tui.errors import CannotRun

EVENTS = "events.jsonl"


@dataclass(frozen=True, slots=True)
class RunPaths:
    """Where a run's files are; nothing is opened yet."""

    dir: Path
    events: Path

    @property
    def name(self) -> str:
        return self.dir.name or str(self.dir)


def locate_run(arg: str | Path, *, may_be_empty: bool = False) -> RunPaths:
    """Resolve a RUN argument; raises :class:`CannotRun` with a one-line reason.

    With ``may_be_empty`` (following a run that has not started), a folder
    without ``events.jsonl`` yet, or that file's future path, is accepted.
    """
    path = Path(arg)
    if may_be_empty:
        if path.is_dir() and not (path / EVENTS).exists():
            return RunPaths(path, path / EVENTS)
        if not path.exists() and path.name == EVENTS and path.parent.is_dir():
            return RunPaths(path.parent, path)
    if not path.exists():
        raise CannotRun(f"{arg}: no such file or folder")
    if path.is_dir():
        events = path / EVENTS
        if not events.exists():
            raise CannotRun(f"{arg}: not a run folder (no {EVENTS} in it)")
        if not events.is_file():
            raise CannotRun(f"{events}: not a regular file")
        return RunPaths(path, events)
    if path.is_file():
        return RunPaths(path.parent, path)
    raise CannotRun(f"{arg}: not a file or folder")
