"""``replay-tui open`` (the default command): the app on a run. Textual is
imported only when it runs, so the other commands start without it."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay_tui.cli.args import seq_or_zero
from replay_tui.cli.options import rules_options, skip_option
from replay_tui.core.errors import CannotRun
from replay_tui.core.links import run_and_seq, split_link
from replay_tui.formats.inspect import InspectLog
from replay_tui.formats.run import INSPECT, locate_run
from replay_tui.formats.sniff import run_sources
from replay_tui.questions.sidebyside import skip_seqs

if TYPE_CHECKING:
    from replay_tui.cli.options import Subparsers
    from replay_tui.ui.app import ReplayApp


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser("open", help="open the app on a run (the default command)")
    app_arguments(parser)
    parser.set_defaults(func=cmd_open)


def app_arguments(parser: argparse.ArgumentParser) -> None:
    """RUN and every flag of the app: ``open`` takes them, and ``serve``
    takes the same and hands them on to the app it runs per browser."""
    parser.add_argument(
        "run",
        nargs="?",
        help=f"the run: {run_sources()} (default: the bundled demo); RUN@SEQ opens at SEQ",
    )
    parser.add_argument(
        "--at",
        type=seq_or_zero,
        metavar="SEQ",
        help="open with the cursor on SEQ (0: the initial state; past the end: the last event)",
    )
    rules_options(parser)
    parser.add_argument(
        "--against",
        metavar="B",
        help="compare mode: run B beside RUN, aligned by seq (] / [ go to where they part)",
    )
    parser.add_argument(
        "--rules-b", metavar="R", help="compare mode: B's rules (as --reducer); B is RUN if alone"
    )
    skip_option(
        parser,
        "compare mode: B is the what-if branch without event SEQ (again for more)",
    )
    parser.add_argument(
        "--strict-events", action="store_true", help="compare mode: also compare run_id and ts"
    )
    parser.add_argument(
        "--follow",
        action="store_true",
        help="follow a growing ledger like tail -f (the run may not have started yet)",
    )
    parser.add_argument(
        "--watch-rules",
        action="store_true",
        help="with --reducer path/to/rules.py:NAME (or --graph module:attr): re-run every "
        "prefix when the file (the graph's module) changes",
    )


def cmd_open(args: argparse.Namespace) -> int:
    from replay_tui.ui.launch import open_app  # textual is imported only here

    if args.run is not None and not args.against and not args.follow:
        database = threads_to_pick(args.run)
        if database is not None:
            return pick_thread_and_open(database, args, open_app)
    log = log_to_pick_from(args)
    if log is not None and sys.stdout.isatty() and sys.stdin.isatty():
        return pick_sample_and_open(log, args, open_app)
    return open_app(app_of(args))


def threads_to_pick(run: str) -> Path | str | None:
    """The LangGraph database ``run`` names when no thread is chosen and it
    has more than one (or none): the threads picker opens on it."""
    from replay_tui.formats.langgraph.source import database_threads

    threads = database_threads(run)
    if threads is None or len(threads) == 1:
        return None
    return run if run.startswith(("postgresql://", "postgres://")) else Path(run)


def pick_thread_and_open(
    database: Path | str, args: argparse.Namespace, open_app: Callable[[Any], int]
) -> int:
    """The threads list, a thread opened from it (with the options given:
    ``--graph``, ``--reducer``...), and the list again when the app quits (on
    the thread opened), until q in the list."""
    from replay_tui.formats.langgraph.listing import thread_rows
    from replay_tui.ui.screens.threads import ThreadsApp

    if not (sys.stdout.isatty() and sys.stdin.isatty()) and not os.environ.get("TEXTUAL_DRIVER"):
        raise CannotRun("the app needs a terminal; for scripts use 'replay-tui check RUN'")
    chosen: str | None = None
    while True:
        chosen = ThreadsApp(database, thread_rows(database), at=chosen).run()
        if chosen is None:
            return 0
        args.run = chosen
        code = open_app(app_of(args))
        if code != 0:
            return code


def pick_sample_and_open(
    log: Path, args: argparse.Namespace, open_app: Callable[[Any], int]
) -> int:
    """The samples list, a sample opened from it, and the list again when the
    app quits, until q in the list."""
    from replay_tui.ui.screens.samples import pick_sample

    picked: str | None = None
    typed = ""
    while True:
        picked, typed = pick_sample(log, at=picked, filter_text=typed)
        if picked is None:
            return 0
        args.run = f"{log}#{picked}"
        code = open_app(app_of(args))
        if code != 0:
            return code


def log_to_pick_from(args: argparse.Namespace) -> Path | None:
    """The Inspect log RUN is, when it holds several samples and names none
    (nor a seq): its samples are listed to pick one from."""
    if args.run is None or args.follow:
        return None
    run, seq = split_link(args.run)
    if run is None or seq is not None or args.at is not None:
        return None
    paths = locate_run(run, fmt=args.format)
    if paths.format != INSPECT or paths.sample is not None:
        return None
    log = InspectLog(paths.events)
    try:
        return paths.events if len(log.samples) > 1 else None
    finally:
        log.close()


def app_of(args: argparse.Namespace) -> ReplayApp:
    """The app the arguments of :func:`app_arguments` ask for; raises
    CannotRun with the one line the terminal would give."""
    from replay_tui.ui.launch import make_app  # textual is imported only here

    run, seq = (None, args.at) if args.run is None else run_and_seq(args.run, args.at)
    if seq is not None and seq < 0:
        raise CannotRun(f"--at {seq}: seqs are 0 (the initial state) and up")
    return make_app(
        run,
        at=seq,
        against=args.against,
        rules_b=args.rules_b,
        skip=skip_seqs(args.skip),
        strict_events=args.strict_events,
        reducer=args.reducer,
        follow=args.follow,
        watch_rules=args.watch_rules,
        rules_timeout=args.rules_timeout,
        fmt=args.format,
    )
