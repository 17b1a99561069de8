"""``replay-tui report``: a run handed over, from the shell.

The document itself is :mod:`replay_tui.handover.document`'s; this is the glue:
arguments, the bookmarks, where it goes (stdout, or ``--out`` written
atomically, never inside the run folder).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from replay_tui.cli.args import seq_or_zero
from replay_tui.cli.options import rules_options
from replay_tui.core.errors import CannotRun
from replay_tui.core.links import split_link
from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import plural
from replay_tui.engine.open import open_replay
from replay_tui.engine.report import protected, refuse_inside_run, write_atomic
from replay_tui.formats.run import locate_run
from replay_tui.formats.sniff import run_sources
from replay_tui.handover.bookmarks import Bookmarks
from replay_tui.handover.charts import ChartSpec
from replay_tui.handover.document import (
    build_report_doc,
    render_html,
    render_markdown,
)

if TYPE_CHECKING:
    from replay_tui.cli.options import Subparsers

DESCRIPTION = """\
Write a self-contained document about RUN for a support ticket: the verdict
as check says it, events_sha256 and the rules' digest; on a failing run the
error, its event and the state before it; and for each chosen seq the event,
the rule in words, the changes, the receipt with its pin and the timeline
around it. Markdown by default (GitHub, Jira, Zendesk), or one HTML file that
fetches nothing and runs no script. Secret-looking values are masked as in
the app unless --reveal.
"""

EPILOG = """\
exit codes: 0 written (whatever the verdict), 2 cannot run (with one line on stderr).
Nothing is written under the run folder: --out refuses any path in it.
examples:
  replay-tui report sample_runs/demo-001 --at 10
  replay-tui report sample_runs/broken-divergence --at 8 --at 10 --out ticket-4521.md
  replay-tui report RUN --bookmarks --html --out ~/tickets/run.html
  replay-tui report RUN --at 0 --at 12 --reveal   (the initial state; secrets shown)
  replay-tui report RUN --at 10 --chart spent.tokens --chart phase --html --out run.html
"""


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "report",
        help="write a document about a run for a support ticket (Markdown or HTML)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    rules_options(parser)
    parser.set_defaults(func=cmd_report, supervise=True)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's own options (``--reducer`` and friends are shared: cli.options)."""
    parser.add_argument("run", help=f"the run: {run_sources()}; RUN@SEQ shows SEQ (as --at)")
    parser.add_argument(
        "--at",
        type=seq_or_zero,
        action="append",
        metavar="SEQ",
        help="a seq to show (0: the initial state); give it again for more",
    )
    parser.add_argument(
        "--bookmarks",
        action="store_true",
        help="also show the seqs you bookmarked in the app, with their notes",
    )
    parser.add_argument(
        "--html", action="store_true", help="write HTML (also when --out ends in .html)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="write to FILE (atomically) instead of stdout; never inside the run folder",
    )
    parser.add_argument(
        "--chart",
        action="append",
        metavar="PATH",
        help="also chart the value at PATH over the run, the chosen seqs marked (an SVG in "
        "HTML, min/max/last in Markdown); len(PATH), or an object or list, charts its length; "
        "give it again for more",
    )
    parser.add_argument(
        "--reveal",
        action="store_true",
        help="show secret-looking values (token, secret, password, api_key, ...) unmasked",
    )


def wants_html(args: argparse.Namespace) -> bool:
    out: Path | None = args.out
    return bool(args.html) or (out is not None and out.suffix.lower() in (".html", ".htm"))


def cmd_report(args: argparse.Namespace) -> int:
    run, linked = split_link(args.run)
    assert run is not None
    args.run = run
    seqs: list[int] = ([] if linked is None else [linked]) + list(args.at or [])
    negative = [s for s in seqs if s < 0]
    if negative:
        raise CannotRun(f"--at {negative[0]}: seqs are 0 (the initial state) and up")
    charts = [ChartSpec.parse(text) for text in args.chart or []]  # a bad path fails at once
    if args.out is not None:
        # before the replay, which may take a while: a bad --out fails at once
        refuse_inside_run(locate_run(args.run, fmt=args.format), args.out)
    replay, dog = open_replay(
        args.run,
        args.reducer,
        timeout=args.rules_timeout,
        fmt=args.format,
        history=True,
        record_patches=bool(charts),  # a chart reads every event's patches
    )
    try:
        replay.verify()
        lines = len(replay.ledger)
        past = sorted(s for s in seqs if s > lines)
        if past:
            named = f"{run}@{linked}" if past[0] == linked else f"--at {past[0]}"
            raise CannotRun(
                f"{named}: seq {past[0]} is past the end of the run ({plural(lines, 'event')})"
            )
        notes: dict[int, str] = {}
        if args.bookmarks:
            marks = Bookmarks.load(replay.paths.events)
            if marks.problem:
                sys.stderr.write(f"replay-tui: {escape_controls(marks.problem)}\n")
            found = marks.ordered()
            if not found:
                sys.stderr.write("replay-tui: no bookmarks for this run\n")
            for seq, note in found:
                notes[seq] = note
                seqs.append(seq)
        doc = build_report_doc(replay, seqs, notes, args.reveal, charts)
        text = render_html(doc) if wants_html(args) else render_markdown(doc)
        data = text.encode()
        if args.out is not None:
            write_atomic(args.out, data, protect=protected(replay.paths))
            sys.stdout.write(escape_controls(f"wrote {args.out} ({len(data):,} bytes)") + "\n")
        else:
            sys.stdout.flush()
            sys.stdout.buffer.write(data)  # the very bytes --out would write
            sys.stdout.flush()
        return 0
    finally:
        if dog is not None:
            dog.stop()
        replay.close()
