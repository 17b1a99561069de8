"""One way to open a run: find it, load its rules, build the replay.

The CLI's commands, ``diff``'s side processes, ``check --jobs`` and the app
all open runs through :func:`open_replay`; the app's reloads (new rules, a
rewritten ledger, following, a what-if branch) go through :func:`reopen`.
An unreadable ledger is a :class:`~replay_tui.core.errors.CannotRun` with
one line, never an ``OSError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replay_tui.core.errors import CannotRun
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import RunPaths, locate_run
from replay_tui.reducers import LoadedReducer, rules_for_run
from replay_tui.reducers.calling.guard import DEFAULT_TIMEOUT, RulesWatch, Watchdog, stop_when_stuck


def replay_of(paths: RunPaths, rules: LoadedReducer, **options: Any) -> Replay:
    """``Replay(paths, rules, **options)``, its ``OSError`` a one-line :class:`CannotRun`."""
    try:
        return Replay(paths, rules, **options)
    except OSError as exc:
        raise CannotRun(f"{paths.events}: {exc.strerror or exc}") from None


def open_replay(
    run: str | RunPaths,
    reducer: str | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    fmt: str = "auto",
    watchdog: bool = True,
    may_be_empty: bool = False,
    skip: Sequence[int] = (),
    **options: Any,
) -> tuple[Replay, Watchdog | None]:
    """The replay of ``run`` (of its branch without ``skip``, if any) under
    ``reducer`` (None: the rules the run names, else the default), and the
    watchdog that stops user rules stuck past ``timeout`` (None for built-in
    rules, or without ``watchdog``: the app has its own clock). Stop the
    watchdog when done. ``options`` go to :class:`Replay`."""
    paths = (
        run if isinstance(run, RunPaths) else locate_run(run, fmt=fmt, may_be_empty=may_be_empty)
    )
    watch = RulesWatch()
    # started before the rules are even imported: a rules file can hang there too
    dog = stop_when_stuck(watch, timeout, paths.name) if reducer and watchdog else None
    try:
        if reducer:
            rules = watch.call(None, rules_for_run, reducer, paths.events, paths.format)
        else:
            rules = rules_for_run(reducer, paths.events, paths.format)
        replay = replay_of(paths, rules, watch=watch, skip=tuple(skip), **options)
    except BaseException:
        if dog is not None:
            dog.stop()
        raise
    return replay, dog


def reopen(replay: Replay, **changes: Any) -> Replay:
    """Another replay of the same run, as ``replay`` was opened but for
    ``changes`` (``rules``, ``following``, ``skip``, ``history``): the same
    rules watch, so a clock watching the one watches the other."""
    options: dict[str, Any] = {
        "following": replay.following,
        "history": replay.history is not None,
        "skip": replay.skip,
    }
    options.update(changes)
    rules = options.pop("rules", replay.rules)
    fresh = replay_of(replay.paths, rules, **options)
    fresh.watch = replay.watch
    return fresh
