"""Questions across time: at which seq a condition *turns* true (``when``),
and every seq at which the value at a path changed (``history``).

Two ways to answer, one meaning:

- :class:`StateWatcher` looks at each state as the forward pass makes it
  (``Replay.observer``): the CLI answers at the cost of ``check`` plus a
  few lookups an event (:mod:`.watching`).
- :class:`PatchScan` reads the patch log of a replay already done (the app):
  it finds the events whose patches can touch the paths by searching the
  log's bytes, decodes only those, and keeps the values at the paths up to
  date from their patches, so a question costs what touched its paths, not
  the run's length times the state's size (:mod:`.scans`, the rows it reads
  in :mod:`.patch_rows`).

Both give, per seq where something watched changed, ``{path: (old, new)}``
(:mod:`.changes`); :func:`iter_turns` and :func:`path_changes` make the
answers of it (:mod:`.searches`).
"""

from replay_tui.questions.across.changes import (
    BRIEF_ITEMS,
    Moves,
    PathChange,
    Turn,
    needs_of,
    shown_value,
)
from replay_tui.questions.across.scans import (
    Later,
    LengthScan,
    PatchScan,
    PathScan,
    patch_log_turns,
    resolve,
    scan_turns,
)
from replay_tui.questions.across.searches import (
    HistorySearch,
    WhenSearch,
    condition_turns,
    iter_path_changes,
    iter_turns,
    path_changes,
)
from replay_tui.questions.across.watching import WATCH_BYTES, StateWatcher, TooBigToWatch

__all__ = [
    "BRIEF_ITEMS",
    "WATCH_BYTES",
    "HistorySearch",
    "Later",
    "LengthScan",
    "Moves",
    "PatchScan",
    "PathChange",
    "PathScan",
    "StateWatcher",
    "TooBigToWatch",
    "Turn",
    "WhenSearch",
    "condition_turns",
    "iter_path_changes",
    "iter_turns",
    "needs_of",
    "patch_log_turns",
    "path_changes",
    "resolve",
    "scan_turns",
    "shown_value",
]
