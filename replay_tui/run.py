"""Kept for scripts written before the layout in subpackages: locating a
run is :mod:`replay_tui.formats.run` now."""

from replay_tui.formats.run import (
    EVENTS,
    FORMATS,
    JSONL,
    TEMPORAL,
    RunPaths,
    has_ledger,
    locate_run,
)

__all__ = ["EVENTS", "FORMATS", "JSONL", "TEMPORAL", "RunPaths", "has_ledger", "locate_run"]
