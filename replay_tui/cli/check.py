"""``replay-tui check``: strictly replay a run (or many, in parallel) and
print the verdict, or the report JSON."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from replay_tui.cli.args import positive_int
from replay_tui.cli.options import out, rules_options
from replay_tui.core.errors import CannotRun
from replay_tui.core.words import plural
from replay_tui.engine.batch import check_many, expand_runs, failing_warnings
from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import CHECK_CHECKPOINT_BUDGET
from replay_tui.engine.report import (
    build_report,
    human_summary,
    protected,
    refuse_inside_run,
    report_bytes,
    write_atomic,
)
from replay_tui.formats.run import locate_run
from replay_tui.formats.sniff import run_sources

if TYPE_CHECKING:
    from replay_tui.cli.options import Subparsers


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser("check", help="strictly replay a run and print the verdict")
    parser.add_argument(
        "run",
        nargs="+",
        help=f"the run: {run_sources()}; several runs, or a folder of runs, are "
        "checked in parallel, one line each",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the report JSON instead (JSON lines, one per run, for several runs)",
    )
    parser.add_argument(
        "--jobs",
        type=positive_int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="processes for several runs (default: one per CPU)",
    )
    parser.add_argument(
        "--out", type=Path, metavar="FILE", help="also write the report to FILE (atomically)"
    )
    parser.add_argument(
        "--fail-on",
        action="append",
        default=[],
        metavar="CODE",
        help="exit 1 if there is a warning of this code (e.g. broken_chain; any: every "
        "warning); give it again for more",
    )
    parser.add_argument(
        "--partial",
        action="store_true",
        help="best effort: report the state of the longest valid prefix (marked partial)",
    )
    rules_options(parser)
    parser.set_defaults(func=cmd_check, supervise=True)


def cmd_check(args: argparse.Namespace) -> int:
    runs = expand_runs(args.run)
    if len(runs) == 1 and runs[0] == args.run[0]:
        return _check_single(args)
    if args.out is not None:
        raise CannotRun("--out takes one run; with several, use --json and redirect")
    counts = {0: 0, 1: 0, 2: 0}
    for result in check_many(
        runs,
        reducer=args.reducer,
        partial=args.partial,
        jobs=args.jobs,
        rules_timeout=args.rules_timeout,
        fmt=args.format,
        fail_on=tuple(args.fail_on),
    ):
        counts[result.code] += 1
        if args.json:
            sys.stdout.buffer.write(result.json_line())
            sys.stdout.flush()
        else:
            out(result.one_line())
    if not args.json:
        out(
            f"{plural(len(runs), 'run')}: {counts[0]} verified, {counts[1]} failed, "
            f"{counts[2]} could not be checked"
        )
    return 2 if counts[2] else (1 if counts[1] else 0)


def _check_single(args: argparse.Namespace) -> int:
    if args.out is not None:
        # before the replay, which may take a while: a bad --out fails at once
        refuse_inside_run(locate_run(args.run[0], fmt=args.format), args.out)
    replay, dog = open_replay(
        args.run[0],
        args.reducer,
        timeout=args.rules_timeout,
        fmt=args.format,
        checkpoint_budget=CHECK_CHECKPOINT_BUDGET,
    )
    try:
        replay.verify()
        report = build_report(replay, partial=args.partial)
        data = report_bytes(report)
        if args.out is not None:
            write_atomic(args.out, data, protect=protected(replay.paths))
        failing = failing_warnings(replay, tuple(args.fail_on))
        if args.json:
            sys.stdout.buffer.write(data)
        else:
            out(human_summary(replay.paths.name, replay, report))
            if failing:
                named = ", ".join(args.fail_on)
                out(f"  failed: {plural(failing, 'warning')} of a code --fail-on names ({named})")
        return 0 if replay.error is None and not failing else 1
    finally:
        if dog is not None:
            dog.stop()
        replay.close()
