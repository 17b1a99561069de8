"""Starting the app: the app factory shared by the CLI, tests and screenshots."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from replay_tui.core.errors import CannotRun
from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import open_ledger
from replay_tui.formats.run import RunPaths, locate_run
from replay_tui.questions.sidebyside import past_the_end
from replay_tui.reducers.calling.guard import DEFAULT_TIMEOUT
from replay_tui.reducers.langgraph.graph import GRAPH_SPEC
from replay_tui.ui.app import COMPARE_FINISHED, ReplayApp, ReplayScreen

#: The demo run shipped inside the package, opened by ``replay-tui`` alone.
BUNDLED_DEMO = Path(__file__).resolve().parent.parent / "demo" / "demo-001"


def make_app(
    run: str | Path | None = None,
    *,
    reducer: str | None = None,
    follow: bool = False,
    watch_rules: bool = False,
    rules_timeout: float = DEFAULT_TIMEOUT,
    fmt: str = "auto",
    at: int | None = None,
    against: str | Path | None = None,
    rules_b: str | None = None,
    skip: tuple[int, ...] = (),
    strict_events: bool = False,
) -> ReplayApp:
    """An app over ``run`` (the bundled demo when None); raises CannotRun.

    ``follow`` keeps the view in step with a growing ledger; ``watch_rules``
    re-evaluates every prefix when a ``--reducer path.py:NAME`` file changes;
    rules not built in that run longer than ``rules_timeout`` seconds on one
    event are stopped (0: never). ``at``: the seq to open at (a link).
    Compare mode: ``against`` a run B (or the same run with ``rules_b``, or
    its what-if branch without the seqs in ``skip``).
    """
    paths = locate_run(run if run is not None else BUNDLED_DEMO, may_be_empty=follow, fmt=fmt)
    by_file = reducer is not None and reducer.rpartition(":")[0].endswith(".py")
    if watch_rules and not (by_file or (reducer or "").startswith(GRAPH_SPEC)):
        raise CannotRun(
            "--watch-rules needs --reducer path/to/rules.py:NAME or --graph module:attr"
        )
    # no watchdog: the app's clock watches the rules (and says so on screen)
    replay, _ = open_replay(paths, reducer, watchdog=False, following=follow, history=True)
    replay.watch.timeout = rules_timeout if rules_timeout > 0 else None
    label = "demo-001 (bundled)" if run is None else paths.name
    other = None
    if against is not None or rules_b is not None or skip:
        if follow:
            raise CannotRun(f"{COMPARE_FINISHED}: not with --follow")
        b_paths = locate_run(against, fmt=fmt) if against is not None else paths
        past = past_the_end(skip, _ledger_lines(b_paths)) if skip else None
        if past is not None:
            raise CannotRun(past)
        other, _ = open_replay(b_paths, rules_b or reducer, watchdog=False, history=True, skip=skip)
        other.watch.timeout = replay.watch.timeout
    return ReplayApp(
        ReplayScreen(
            replay,
            label=label,
            reducer_spec=reducer,
            watch_rules=watch_rules,
            start_seq=at,
            against=other,
            strict_events=strict_events,
        )
    )


def _ledger_lines(paths: RunPaths) -> int:
    """Lines in a run's ledger (a last one without its newline counted):
    ``--skip`` past them is refused before the app opens."""
    try:
        ledger = open_ledger(paths)
    except OSError as exc:
        raise CannotRun(f"{paths.events}: {exc.strerror or exc}") from None
    try:
        for _ in ledger.scan():
            pass
        return len(ledger) + (1 if ledger.tail_size() else 0)
    finally:
        ledger.close()


def open_app(app: ReplayApp) -> int:
    """Run ``app`` (from :func:`make_app`) in this terminal; the exit code
    for the CLI."""
    # TEXTUAL_DRIVER (textual-serve's web driver: `replay-tui serve`) draws
    # through its own pipes, not the terminal
    web = os.environ.get("TEXTUAL_DRIVER")
    if not web and (not sys.stdout.isatty() or not sys.stdin.isatty()):
        raise CannotRun("the app needs a terminal; for scripts use 'replay-tui check RUN'")
    try:
        app.run()
    finally:
        stuck = app.replay.watch.oldest() is not None
        app.replay.close()
        if app.b is not None:
            app.b.close()
    if stuck:  # a worker thread is still inside rules that never return:
        sys.stdout.flush()  # waiting for it at exit would hang the terminal
        os._exit(0)
    return 0
