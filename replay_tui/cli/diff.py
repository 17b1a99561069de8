"""``replay-tui diff``: where two histories part (see :mod:`replay_tui.questions.sidebyside`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from replay_tui.cli.options import (
    format_option,
    graph_option,
    sample_option,
    skip_option,
    thread_option,
    timeout_option,
)
from replay_tui.core import strict_json
from replay_tui.core.errors import CannotRun
from replay_tui.core.links import whole_run
from replay_tui.core.safe_text import clip, escape_controls
from replay_tui.formats.run import locate_run
from replay_tui.formats.sniff import named_as_ledger, run_sources
from replay_tui.questions.sidebyside import Side, side_by_side, skip_seqs
from replay_tui.state import canonical

if TYPE_CHECKING:
    from replay_tui.cli.options import Subparsers

DIFF_HELP = """\
A and B are replayed strictly, each in its own process, and aligned by seq.
Events are compared by kind, payload and parent (run_id and ts are ignored
unless --strict-events: the same task run by two customers compares equal).

  replay-tui diff RUN_A RUN_B                       two runs
  replay-tui diff RUN RUN --rules-a OLD --rules-b NEW   one run, two rules
  replay-tui diff RUN --skip 2                      what if seq 2 had not happened

A branch (--skip) is replayed strictly, but for the seqs it leaves out; it is
labelled "hypothetical" wherever it is spoken of. Nothing is written.
exit codes: 0 nothing differs, 1 something does, 2 cannot run.
"""

#: Longest value shown in a human line (--json has them whole).
SHOWN = 100


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "diff",
        help="where two runs (or one run under two rules, or a what-if branch) part",
        description="Replay A and B and say the first seq whose events differ, the first "
        "prefix whose states differ, both verdicts and what differs in the state there.",
        epilog=DIFF_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    timeout_option(parser)
    format_option(parser)
    thread_option(parser)
    graph_option(parser)
    sample_option(parser)
    parser.set_defaults(func=cmd_diff)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's own options (``--rules-timeout`` and ``--format`` are shared)."""
    parser.add_argument("a", help=f"run A: {run_sources()}")
    parser.add_argument("b", nargs="?", help="run B (default: A, for --skip or two rules)")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument("--rules-a", metavar="R", help="rules for A (as --reducer)")
    parser.add_argument("--rules-b", metavar="R", help="rules for B (as --reducer)")
    parser.add_argument(
        "--strict-events", action="store_true", help="also compare run_id and ts of events"
    )
    skip_option(
        parser,
        "B is the branch of its run without event SEQ (give it again for more)",
    )


def _sides(args: argparse.Namespace) -> tuple[Side, Side]:
    why = "compares whole runs, seq by seq (the app opens RUN@SEQ --against B at SEQ)"
    args.a = whole_run(args.a, "diff", why)
    args.b = None if args.b is None else whole_run(args.b, "diff", why)
    if args.b is None and not args.skip and not (args.rules_a or args.rules_b):
        raise CannotRun("diff needs a run B, --skip SEQ, or --rules-a/--rules-b")
    for run in (args.a, args.b or args.a):
        locate_run(run, fmt=args.format)  # one line before any process starts: not a run
    common = {"fmt": args.format, "strict_events": args.strict_events}
    timeout = args.rules_timeout
    a = Side(args.a, args.rules_a, rules_timeout=timeout, **common)
    b = Side(
        args.b or args.a, args.rules_b, skip=skip_seqs(args.skip), rules_timeout=timeout,
        **common,
    )  # fmt: skip
    return a, b


def _shown(value: Any) -> str:
    return escape_controls(clip(canonical.dumps(value).decode(), SHOWN))


def _event_text(event: Any, left_out: bool) -> str:
    if left_out:
        return "(left out)"
    if event is None:
        return "(no event here)"
    return f"{escape_controls(str(event.get('kind')))} {_shown(event.get('payload', {}))}"


def cmd_diff(args: argparse.Namespace) -> int:
    a, b = _sides(args)
    result = side_by_side(a, b)
    if args.json:
        sys.stdout.buffer.write(strict_json.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
        return 0 if result["same"] else 1
    tag = f"  ({b.label()})" if b.hypothetical else ""
    lines = [f"A: {escape_controls(result['verdicts']['a'])}"]
    lines.append(f"B: {escape_controls(result['verdicts']['b'])}{tag}")
    ev = result["first_event_difference"]
    if ev is None:
        lines.append(
            "events: the same" + (" (run_id and ts ignored)" if not a.strict_events else "")
        )
    else:
        seq = ev["seq"]
        lines.append(f"first event difference: seq {seq}{tag}")
        lines.append(f"  A: {_event_text(ev['a'], seq in a.skip)}")
        lines.append(f"  B: {_event_text(ev['b'], seq in b.skip)}{tag}")
    st = result["first_state_difference"]
    if st is None:
        lines.append("states: the same after every prefix")
    else:
        n = st["seq"]
        where = "in the initial state" if n == 0 else f"after seq {n}"
        lines.append(f"first state difference: {where}{tag}")
        if not (st["a_state"] and st["b_state"]):
            gone = "A" if not st["a_state"] else "B"
            lines.append(f"  {gone} has no state there: its strict replay stopped before it{tag}")
        for change in result["changes"]:
            path = change["path"] or "(state)"
            old = _shown(change["old"]) if "old" in change else "absent"
            new = _shown(change["new"]) if "new" in change else "absent"
            lines.append(f"  A → B  {escape_controls(path)}: {old} → {new}{tag}")
    lines.append("same" if result["same"] else "different")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0 if result["same"] else 1


#: Bytes a report may have (they have a few hundred): a bigger file is a run.
REPORT_BYTES = 1 << 20


def is_report_file(path: Path) -> bool:
    """A ``check --json`` report (``compare`` compares those field by field),
    whatever its name, not a run (a folder, a ledger, a history, a session, a trace)."""
    try:
        if not path.is_file() or named_as_ledger(path) or path.stat().st_size > REPORT_BYTES:
            return False
        data = strict_json.loads_written(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False
    return (isinstance(data, dict) and "events_sha256" in data and "events" not in data) or (
        isinstance(data, dict) and "reader_version" in data
    )
