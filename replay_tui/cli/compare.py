"""``replay-tui compare``: two replay reports field by field (two runs: as
``diff``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from replay_tui.cli import diff as cli_diff
from replay_tui.cli.options import Parser, out
from replay_tui.core.errors import CannotRun
from replay_tui.core.words import plural
from replay_tui.engine.report import compare_reports, is_migration, load_report
from replay_tui.formats.run import locate_run
from replay_tui.formats.sniff import describe, run_sources
from replay_tui.state import canonical

if TYPE_CHECKING:
    from replay_tui.cli.options import Subparsers


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "compare",
        help="compare two replay reports field by field (two runs: as diff)",
    )
    parser.add_argument(
        "a", type=Path, help=f"first replay_report.json, or a run ({run_sources()})"
    )
    parser.add_argument("b", type=Path, help="second replay_report.json, or a run (as A)")
    parser.set_defaults(func=cmd_compare)


def _report_and_run(report: Path, other: Path) -> NoReturn:
    """``compare`` given one report and something else: say what the other is."""
    looks = describe(other) if other.is_file() else None
    if looks is not None:
        raise CannotRun(
            f"{other}: not a report or a run: {looks[0]} "
            "(compare takes two check --json reports, or two runs)"
        )
    locate_run(other)  # not there, or a folder that is no run: says so
    raise CannotRun(
        f"{report} is a check --json report and {other} a run: compare takes two reports "
        "(check --json RUN makes one), or two runs"
    )


def _diff_runs(a: Path, b: Path) -> int:
    """Two runs, not reports: where they part, as ``replay-tui diff A B``."""
    parser = Parser(prog="replay-tui")
    cli_diff.add_parser(parser.add_subparsers(dest="command"))
    return cli_diff.cmd_diff(parser.parse_args(["diff", str(a), str(b)]))


def cmd_compare(args: argparse.Namespace) -> int:
    reports = cli_diff.is_report_file(args.a), cli_diff.is_report_file(args.b)
    if reports == (True, False):
        _report_and_run(args.a, args.b)
    if reports == (False, True):
        _report_and_run(args.b, args.a)
    if reports == (False, False):
        return _diff_runs(args.a, args.b)
    a, b = load_report(args.a), load_report(args.b)
    diffs = compare_reports(a, b)
    if not diffs:
        out(f"same: {args.a} and {args.b} agree on every field")
        return 0
    out(f"different: {plural(len(diffs), 'field')}")
    width = max(len(k) for k, _, _ in diffs)
    for key, va, vb in diffs:
        out(f"  {key:<{width}}  {canonical.dumps(va).decode()}  ->  {canonical.dumps(vb).decode()}")
    if is_migration(a, b):
        out(
            "  migration: the rules changed and derive a different state "
            "(keep both reports; neither overwrites the other)"
        )
    else:
        for name, report in ((args.a, a), (args.b, b)):
            err = report.get("error")
            if isinstance(err, dict) and err.get("code") == "reducer_error":
                out(f"  {name}: its rules failed (reducer_error): no state to compare")
    return 1
