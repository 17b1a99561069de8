"""Command line: ``replay-tui [RUN]`` opens the app; ``check``, ``state``,
``when``, ``history`` and ``compare`` answer from the shell.

Exit codes are a contract: 0 verified / same, 1 a violation / different,
2 cannot run (with a one-line reason on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from replay_tui import __version__
from replay_tui.cli import across as cli_across
from replay_tui.cli import diff as cli_diff
from replay_tui.cli import report as cli_report
from replay_tui.cli.args import event_seq, positive_int, seconds, seq_or_zero
from replay_tui.core.errors import CannotRun
from replay_tui.core.safe_text import escape_controls
from replay_tui.core.supervision import supervised
from replay_tui.core.words import plural
from replay_tui.engine.batch import check_many, expand_runs
from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import CHECK_CHECKPOINT_BUDGET
from replay_tui.engine.report import (
    build_report,
    compare_reports,
    human_summary,
    is_migration,
    load_report,
    report_bytes,
    write_atomic,
)
from replay_tui.formats.run import FORMATS, locate_run
from replay_tui.formats.sniff import describe
from replay_tui.questions.sidebyside import past_the_end, skip_seqs, without
from replay_tui.reducers import DEFAULT, available
from replay_tui.reducers.guard import (
    DEFAULT_TIMEOUT,
    EventChanged,
    RulesStuck,
)
from replay_tui.state import canonical

SUBCOMMANDS = ("open", "check", "state", "when", "history", "report", "diff", "compare")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2 via CannotRun."""

    def error(self, message: str) -> NoReturn:
        raise CannotRun(f"{message} (see '{self.prog} --help')")


def _reducer_help() -> str:
    return (
        f"rules to replay with: a name ({', '.join(sorted(available()))}), "
        "package.module:NAME, or path/to/rules.py:NAME; default: the built-in rules that "
        f"know the first event's kind ({DEFAULT} first)"
    )


def _timeout_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rules-timeout",
        type=seconds,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"rules (other than the built-in ones) that run longer than S seconds on one "
        f"event are stopped and reported as reducer_error (default {DEFAULT_TIMEOUT:g}; "
        "0: wait forever)",
    )


def _format_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="what RUN is: a run folder / events.jsonl, or a Temporal history export "
        "(temporal workflow show --output json); default auto: a file that starts "
        'like {"events": [ is a Temporal history',
    )


CONDITION_HELP = """\
paths: keys joined by dots (calls.call-003.status), [n] for a list item
  (checks[0].passed; checks.0.passed reads a list the same way), double quotes
  for a key with dots, spaces or quotes (calls."a.b".status); bare keys hold
  letters, digits, _ and -. Every command prints paths this way.
conditions: PATH OP VALUE with == != < <= > >= and VALUE a JSON literal
  ("retrying", 1000, true, null); PATH exists; len(PATH) as a number;
  combined with and, or, not and parentheses. An absent path makes a
  comparison false (absent is not null: use exists).
exit codes: 0 found, 1 never, 2 a bad condition or a run that cannot be read.
examples:
  replay-tui when sample_runs/demo-001 'phase == "retrying"'
  replay-tui when sample_runs/demo-001 --all \\
      'calls.call-003.status == "allowed" or phase == "running"'
  replay-tui when RUN 'spent.tokens > 1000 and not calls.call-007 exists'
  replay-tui history sample_runs/demo-001 calls.call-003.status
"""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="replay-tui",
        description=(
            "Step through an event-sourced run's history. A run is a folder with "
            "events.jsonl (the ledger), receipts/<call_id>.json and budget.json. "
            "With no command, opens the app on RUN (the bundled demo if RUN is omitted). "
            "RUN may also be a Temporal workflow history export."
        ),
        epilog=(
            "exit codes: 0 verified/same, 1 violation/different, 2 cannot run.\n"
            "examples:\n"
            "  replay-tui sample_runs/demo-001\n"
            "  replay-tui sample_runs/demo-001@10   (open at seq 10; or --at 10)\n"
            "  replay-tui --follow runs/live-run\n"
            "  replay-tui check sample_runs/demo-001 --json\n"
            "  replay-tui state sample_runs/refund-180 --at 2\n"
            "  replay-tui when sample_runs/demo-001 'phase == \"retrying\"'\n"
            "  replay-tui history sample_runs/demo-001 calls.call-003.status\n"
            "  replay-tui report sample_runs/demo-001 --at 10 --out ticket.md\n"
            "  replay-tui compare old_report.json new_report.json\n"
            "  replay-tui history.json   (a Temporal history: temporal workflow show "
            "--output json)"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"replay-tui {__version__}")
    sub = parser.add_subparsers(
        dest="command", metavar="{open,check,state,when,history,report,diff,compare}"
    )

    p_open = sub.add_parser("open", help="open the app on a run (the default command)")
    p_open.add_argument(
        "run",
        nargs="?",
        help="run folder or events.jsonl (default: bundled demo); RUN@SEQ opens at SEQ",
    )
    p_open.add_argument(
        "--at",
        type=seq_or_zero,
        metavar="SEQ",
        help="open with the cursor on SEQ (0: the initial state; past the end: the last event)",
    )
    p_open.add_argument("--reducer", help=_reducer_help())
    _timeout_option(p_open)
    _format_option(p_open)
    p_open.add_argument(
        "--against",
        metavar="B",
        help="compare mode: run B beside RUN, aligned by seq (] / [ go to where they part)",
    )
    p_open.add_argument(
        "--rules-b", metavar="R", help="compare mode: B's rules (as --reducer); B is RUN if alone"
    )
    p_open.add_argument(
        "--skip",
        type=event_seq,
        action="append",
        default=[],
        metavar="SEQ",
        help="compare mode: B is the what-if branch without event SEQ (again for more)",
    )
    p_open.add_argument(
        "--strict-events", action="store_true", help="compare mode: also compare run_id and ts"
    )
    p_open.add_argument(
        "--follow",
        action="store_true",
        help="follow a growing ledger like tail -f (the run may not have started yet)",
    )
    p_open.add_argument(
        "--watch-rules",
        action="store_true",
        help="with --reducer path/to/rules.py:NAME: re-run every prefix when the file changes",
    )

    p_check = sub.add_parser("check", help="strictly replay a run and print the verdict")
    p_check.add_argument(
        "run",
        nargs="+",
        help="run folder or its events.jsonl; several runs, or a folder of runs, are "
        "checked in parallel, one line each",
    )
    p_check.add_argument(
        "--json",
        action="store_true",
        help="print the report JSON instead (JSON lines, one per run, for several runs)",
    )
    p_check.add_argument(
        "--jobs",
        type=positive_int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="processes for several runs (default: one per CPU)",
    )
    p_check.add_argument(
        "--out", type=Path, metavar="FILE", help="also write the report to FILE (atomically)"
    )
    p_check.add_argument(
        "--partial",
        action="store_true",
        help="best effort: report the state of the longest valid prefix (marked partial)",
    )
    p_check.add_argument("--reducer", help=_reducer_help())
    _timeout_option(p_check)
    _format_option(p_check)

    p_state = sub.add_parser("state", help="print the state after the first N events")
    p_state.add_argument("run", help="run folder or its events.jsonl")
    p_state.add_argument(
        "--at", type=seq_or_zero, required=True, metavar="N", help="prefix length (0..)"
    )
    p_state.add_argument("--diff", action="store_true", help="print the change made by event N")
    p_state.add_argument(
        "--skip",
        type=event_seq,
        action="append",
        default=[],
        metavar="SEQ",
        help="the hypothetical branch without event SEQ (again for more); labelled on stderr",
    )
    p_state.add_argument("--pretty", action="store_true", help="indent the JSON")
    p_state.add_argument("--reducer", help=_reducer_help())
    _timeout_option(p_state)
    _format_option(p_state)

    p_when = sub.add_parser(
        "when",
        help="the seq at which a condition on the state turns true",
        description=(
            "Print the seq at which CONDITION turns true: false after n-1 events, true after n "
            "(0 if the initial state satisfies it); with --all, every such seq. Each line: the "
            "seq, the event's kind, and the changes that made it true."
        ),
        epilog=CONDITION_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_when.add_argument("run", help="run folder or its events.jsonl")
    p_when.add_argument("condition", help="e.g. 'phase == \"retrying\"' (quote it for the shell)")
    p_when.add_argument("--all", action="store_true", help="every seq it turns true, not the first")
    p_when.add_argument(
        "--json", action="store_true", help='print {"condition": ..., "seqs": [...], ...}'
    )
    p_when.add_argument("--reducer", help=_reducer_help())
    _timeout_option(p_when)
    _format_option(p_when)

    p_hist = sub.add_parser(
        "history",
        help="every seq at which the value at a state path changed",
        description=(
            "Print every seq at which the value at PATH changed, including when an object "
            "holding it was added or removed: seq, kind, old -> new (absent when not there)."
        ),
        epilog=CONDITION_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_hist.add_argument("run", help="run folder or its events.jsonl")
    p_hist.add_argument("path", help="e.g. calls.call-003.status, checks[0].passed")
    p_hist.add_argument(
        "--json", action="store_true", help='print [{"seq", "kind", "op", "old", "new"}, ...]'
    )
    p_hist.add_argument("--reducer", help=_reducer_help())
    _timeout_option(p_hist)
    _format_option(p_hist)

    p_report = sub.add_parser(
        "report",
        help="write a document about a run for a support ticket (Markdown or HTML)",
        description=cli_report.DESCRIPTION,
        epilog=cli_report.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cli_report.add_arguments(p_report)
    p_report.add_argument("--reducer", help=_reducer_help())
    _timeout_option(p_report)
    _format_option(p_report)

    p_diff = sub.add_parser(
        "diff",
        help="where two runs (or one run under two rules, or a what-if branch) part",
        description="Replay A and B and say the first seq whose events differ, the first "
        "prefix whose states differ, both verdicts and what differs in the state there.",
        epilog=cli_diff.DIFF_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cli_diff.add_arguments(p_diff)
    _timeout_option(p_diff)
    _format_option(p_diff)

    p_cmp = sub.add_parser(
        "compare",
        help="compare two replay reports field by field (two runs: as diff)",
    )
    p_cmp.add_argument("a", type=Path, help="first replay_report.json, or a run")
    p_cmp.add_argument("b", type=Path, help="second replay_report.json, or a run")
    return parser


def _out(text: str) -> None:
    """Print for people: run data (kinds, messages, file names) is escaped so
    it cannot act on the terminal."""
    safe = "\n".join(escape_controls(line) for line in text.rstrip("\n").split("\n"))
    sys.stdout.write(safe + "\n")


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
    ):
        counts[result.code] += 1
        if args.json:
            sys.stdout.buffer.write(result.json_line())
            sys.stdout.flush()
        else:
            _out(result.one_line())
    if not args.json:
        _out(
            f"{plural(len(runs), 'run')}: {counts[0]} verified, {counts[1]} failed, "
            f"{counts[2]} could not be checked"
        )
    return 2 if counts[2] else (1 if counts[1] else 0)


def _check_single(args: argparse.Namespace) -> int:
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
            protect = [
                replay.paths.events,
                replay.paths.dir / "receipts",
                replay.paths.dir / "budget.json",
            ]
            write_atomic(args.out, data, protect=protect)
        if args.json:
            sys.stdout.buffer.write(data)
        else:
            _out(human_summary(replay.paths.name, replay, report))
        return 0 if replay.error is None else 1
    finally:
        if dog is not None:
            dog.stop()
        replay.close()


def cmd_state(args: argparse.Namespace) -> int:
    n = args.at
    if n < 0 or (args.diff and n < 1):
        raise CannotRun(f"--at {n}: {'events are numbered from 1' if args.diff else 'N >= 0'}")
    skip = skip_seqs(args.skip)
    # the patch log gives --diff the event's own change, not a diff of two states
    replay, dog = open_replay(
        args.run,
        args.reducer,
        timeout=args.rules_timeout,
        fmt=args.format,
        history=args.diff,
        skip=skip,
    )
    try:
        replay.advance(limit=n)
        if replay.valid < n or (skip and skip[-1] > len(replay.ledger)):
            replay.finish()  # the whole ledger read: every line counted
        past = past_the_end(skip, len(replay.ledger))
        if past is not None:
            raise CannotRun(past)
        if skip:
            them = "it" if len(skip) == 1 else "them"
            sys.stderr.write(
                f"replay-tui: hypothetical: {without(skip)}: the branch of this run that "
                f"leaves {them} out, not what happened\n"
            )
        if replay.valid < n:
            if replay.error is not None:
                sys.stderr.write(
                    f"replay-tui: the valid prefix ends at {plural(replay.valid, 'event')}; "
                    f"first error {escape_controls(replay.error.one_line())}\n"
                )
                return 1
            raise CannotRun(f"--at {n}: the run has only {plural(replay.valid, 'event')}")
        dump = canonical.dumps_pretty if args.pretty else canonical.dumps
        if args.diff:
            step = replay.step(n)
            out: Any = {
                "seq": n,
                "kind": step.event.kind,
                "rule": step.explanation,
                "changes": [c.to_json() for c in step.changes],
            }
        else:
            out = replay.state_at(n)
        sys.stdout.buffer.write(dump(out) + b"\n")
        return 0
    finally:
        if dog is not None:
            dog.stop()
        replay.close()


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


def cmd_compare(args: argparse.Namespace) -> int:
    reports = cli_diff.is_report_file(args.a), cli_diff.is_report_file(args.b)
    if reports == (True, False):
        _report_and_run(args.a, args.b)
    if reports == (False, True):
        _report_and_run(args.b, args.a)
    if reports == (False, False):
        # runs, not reports: where they part
        diff_args = build_parser().parse_args(["diff", str(args.a), str(args.b)])
        return cli_diff.cmd_diff(diff_args)
    a, b = load_report(args.a), load_report(args.b)
    diffs = compare_reports(a, b)
    if not diffs:
        _out(f"same: {args.a} and {args.b} agree on every field")
        return 0
    _out(f"different: {plural(len(diffs), 'field')}")
    width = max(len(k) for k, _, _ in diffs)
    for key, va, vb in diffs:
        _out(
            f"  {key:<{width}}  {canonical.dumps(va).decode()}  ->  {canonical.dumps(vb).decode()}"
        )
    if is_migration(a, b):
        _out(
            "  migration: the rules changed and derive a different state "
            "(keep both reports; neither overwrites the other)"
        )
    else:
        for name, report in ((args.a, a), (args.b, b)):
            err = report.get("error")
            if isinstance(err, dict) and err.get("code") == "reducer_error":
                _out(f"  {name}: its rules failed (reducer_error): no state to compare")
    return 1


def split_link(run: str | None) -> tuple[str | None, int | None]:
    """``RUN@SEQ`` as (RUN, SEQ). A path that exists as given is a path,
    even with an ``@`` in it."""
    if run is None or Path(run).exists():
        return run, None
    head, at, tail = run.rpartition("@")
    if at and head and tail.isdigit():
        return head, int(tail)
    return run, None


def cmd_open(args: argparse.Namespace) -> int:
    from replay_tui.ui.launch import make_app, open_app  # textual is imported only here

    run, seq = split_link(args.run)
    if args.at is not None:
        if seq is not None and seq != args.at:
            raise CannotRun(f"{args.run} and --at {args.at} name two seqs: give one")
        seq = args.at
    if seq is not None and seq < 0:
        raise CannotRun(f"--at {seq}: seqs are 0 (the initial state) and up")
    app = make_app(
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
    return open_app(app)


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or (
        args_list[0] not in SUBCOMMANDS and args_list[0] not in ("-h", "--help", "--version")
    ):
        args_list.insert(0, "open")
    try:
        args = build_parser().parse_args(args_list)
    except CannotRun as exc:
        sys.stderr.write(f"replay-tui: {escape_controls(str(exc))}\n")
        return 2
    handler = {
        "open": cmd_open,
        "check": cmd_check,
        "state": cmd_state,
        "when": cli_across.cmd_when,
        "history": cli_across.cmd_history,
        "report": cli_report.cmd_report,
        "diff": cli_diff.cmd_diff,
        "compare": cmd_compare,
    }[args.command]
    if (
        args.command in ("check", "state", "when", "history", "report")
        and args.reducer
        and args.rules_timeout > 0
    ):
        # user rules: even stuck where nothing in this process can run, no hang
        return supervised(lambda: _dispatch(handler, args), args.rules_timeout)
    return _dispatch(handler, args)


def _dispatch(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a command: its exit code, and every failure as one line on stderr."""
    try:
        return handler(args)
    except CannotRun as exc:
        sys.stderr.write(f"replay-tui: {escape_controls(str(exc))}\n")
        return 2
    except (RulesStuck, EventChanged) as exc:  # in rules called outside a replay step
        sys.stderr.write(f"replay-tui: rules: {escape_controls(str(exc))}\n")
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # stdout closed early (e.g. piped into head): not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:  # never a traceback for users; REPLAY_TUI_DEBUG=1 shows it
        if os.environ.get("REPLAY_TUI_DEBUG"):
            raise
        sys.stderr.write(
            f"replay-tui: internal error: {type(exc).__name__}: {escape_controls(str(exc))} "
            "(set REPLAY_TUI_DEBUG=1 for the traceback)\n"
        )
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
