"""Where a run's problems are: the lines with a warning, the failing line,
and the lines that end a call in failure, in order, for the timeline's marks
and ``e`` / ``E``."""

from __future__ import annotations

from replay_tui.core.errors import Warning_
from replay_tui.engine.replay import Replay


class Problems:
    """The problems of ``replay`` so far; warnings are indexed again only
    when more have come (they are asked for every row drawn)."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        #: (warnings seen, their lines' warnings, those lines)
        self._warned: tuple[int, dict[int, tuple[Warning_, ...]], frozenset[int]] = (
            0,
            {},
            frozenset(),
        )

    def _by_line(self) -> dict[int, tuple[Warning_, ...]]:
        """The replay's warnings by line index, rebuilt only when warnings
        are added."""
        warnings = self.replay.warnings
        if self._warned[0] != len(warnings):
            found: dict[int, tuple[Warning_, ...]] = {}
            for w in warnings:
                if w.line is not None:
                    found[w.line - 1] = (*found.get(w.line - 1, ()), w)
            self._warned = (len(warnings), found, frozenset(found))
        return self._warned[1]

    def warning_indexes(self) -> frozenset[int]:
        """Lines with a warning."""
        self._by_line()
        return self._warned[2]

    def warnings_at(self, index: int) -> tuple[Warning_, ...]:
        """The warnings at line ``index``, as ``check`` prints them."""
        return self._by_line().get(index, ())

    def indexes(self) -> list[int]:
        """Lines with an error or warning, or that end a call in failure, in order."""
        found = set(self.warning_indexes())
        err = self.replay.error
        if err is not None and err.line is not None:
            found.add(err.line - 1)
        calls = self.replay.calls
        if calls is not None:
            found.update(calls.failed)
        return sorted(found)

    def next_problem(self, here: int, direction: int) -> int | None:
        """The next problem line past ``here`` (before it, for -1)."""
        ahead = [i for i in self.indexes() if (i > here if direction > 0 else i < here)]
        if not ahead:
            return None
        return ahead[0] if direction > 0 else ahead[-1]
