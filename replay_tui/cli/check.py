"""``replay-tui check``: strictly replay a run (or many, in parallel) and
print the verdict, or the report JSON."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from replay_tui.cli.args import finding_code, positive_int
from replay_tui.cli.options import out, rules_options
from replay_tui.core.errors import CannotRun
from replay_tui.core.links import split_link
from replay_tui.core.words import plural
from replay_tui.engine.batch import (
    check_many,
    failing_warnings,
    gather_runs,
    judge,
    no_runs_in,
    prefix_report,
    reasons,
    summary_of,
)
from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import CHECK_CHECKPOINT_BUDGET
from replay_tui.engine.report import (
    build_report,
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
        help=f"the run: {run_sources()}; RUN@SEQ checks events 1..SEQ only; several "
        "runs, or a folder (every run in it that a source reads; the rest skipped, with "
        "the reason), are checked in parallel, one line each",
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
        type=finding_code,
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
    gathered = gather_runs(args.run)
    runs, skipped = gathered.runs, gathered.skipped
    if len(runs) == 1 and runs[0] == args.run[0]:
        if runs[0] in gathered.empty:
            raise CannotRun(no_runs_in(runs[0], gathered.empty[runs[0]]))
        return _check_single(args)
    if args.out is not None:
        raise CannotRun("--out takes one run; with several, use --json and redirect")
    counts = {0: 0, 1: 0, 2: 0}
    warned = 0
    for result in check_many(
        runs,
        reducer=args.reducer,
        partial=args.partial,
        jobs=args.jobs,
        rules_timeout=args.rules_timeout,
        fmt=args.format,
        fail_on=tuple(args.fail_on),
    ):
        if result.run in gathered.empty:  # a folder with no run: what it skipped
            why = no_runs_in(result.run, gathered.empty[result.run])
            result = replace(result, summary=why.removeprefix(f"{result.run}: "))
        counts[result.code] += 1
        warned += bool(result.warnings)
        if args.json:
            sys.stdout.buffer.write(result.json_line())
            sys.stdout.flush()
        else:
            out(result.one_line())
    for item in skipped:
        if args.json:
            sys.stdout.buffer.write(item.json_line())
        else:
            out(item.one_line())
    if not args.json:
        line = (
            f"{plural(len(runs), 'run')}: {counts[0]} verified, {counts[1]} failed, "
            f"{counts[2]} could not be checked"
        )
        if warned:
            line += f"; {warned} with warnings"
        if skipped:
            line += f"; {len(skipped)} skipped ({reasons(skipped)})"
        out(line)
    return 2 if counts[2] else (1 if counts[1] else 0)


def _check_single(args: argparse.Namespace) -> int:
    run, at = split_link(args.run[0])
    assert run is not None
    if args.out is not None:
        # before the replay, which may take a while: a bad --out fails at once
        refuse_inside_run(locate_run(run, fmt=args.format), args.out)
    replay, dog = open_replay(
        run,
        args.reducer,
        timeout=args.rules_timeout,
        fmt=args.format,
        checkpoint_budget=CHECK_CHECKPOINT_BUDGET,
    )
    try:
        judge(replay, at, run)
        report = prefix_report(build_report(replay, partial=args.partial), at)
        data = report_bytes(report)
        if args.out is not None:
            write_atomic(args.out, data, protect=protected(replay.paths))
        failing = failing_warnings(replay, tuple(args.fail_on))
        if args.json:
            sys.stdout.buffer.write(data)
        else:
            out(summary_of(replay.paths.name, replay, report, at))
            if failing:
                named = ", ".join(args.fail_on)
                out(f"  failed: {plural(failing, 'warning')} of a code --fail-on names ({named})")
        return 0 if replay.error is None and not failing else 1
    finally:
        if dog is not None:
            dog.stop()
        replay.close()
