"""``replay-tui sessions``: the Claude Code, Codex and Gemini CLI sessions on
this machine, newest first. On a terminal, a list to pick one from and open
it in the app (Textual is imported only then); else, or with ``--print``, a
table; ``--json``, a JSON array."""

from __future__ import annotations

import argparse
import shutil
import sys
import unicodedata
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from replay_tui.cli.args import positive_int
from replay_tui.cli.options import out
from replay_tui.core import strict_json
from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import byte_size, plural
from replay_tui.formats.session_stores.counts import RecordCounts
from replay_tui.formats.session_stores.listing import (
    Listing,
    StoredSession,
    clip_start,
    describe,
    find_sessions,
    home_short,
)
from replay_tui.formats.sessions import SESSION_FORMATS

if TYPE_CHECKING:
    from replay_tui.cli.options import Subparsers

#: Widths of the table's columns before the project.
WIDTHS = {"modified": 21, "source": 11, "records": 9, "size": 10}
#: Cells those take, with the spaces between.
FIXED = sum(WIDTHS.values()) + 4
#: The project's column, at most (the first prompt takes the rest).
PROJECT = 32
#: The first prompt keeps at least this many cells, however narrow the terminal.
MIN_PROMPT = 20


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "sessions",
        help="list the Claude Code, Codex and Gemini CLI sessions here, newest first",
        description="List the Claude Code sessions ($CLAUDE_CONFIG_DIR/projects, default "
        "~/.claude/projects), Codex rollouts ($CODEX_HOME/sessions, default "
        "~/.codex/sessions) and Gemini CLI sessions ($GEMINI_CLI_HOME/.gemini/tmp, default "
        "~/.gemini/tmp), newest first. On a terminal, pick one to open in the app "
        "(Enter; / filters, q quits); else a table.",
    )
    parser.add_argument(
        "--json", action="store_true", help="print a JSON array, one object per session"
    )
    parser.add_argument("--source", choices=SESSION_FORMATS, help="only this tool's sessions")
    parser.add_argument(
        "--limit", type=positive_int, metavar="N", help="only the newest N sessions"
    )
    parser.add_argument(
        "--print",
        dest="plain",
        action="store_true",
        help="print the table even on a terminal (no list to pick from)",
    )
    parser.set_defaults(func=cmd_sessions)


def cmd_sessions(args: argparse.Namespace) -> int:
    listing = find_sessions(args.source, limit=args.limit)
    for note in listing.notes:
        sys.stderr.write(f"replay-tui: {escape_controls(note)}\n")
    if args.json:
        counts = RecordCounts()
        body = [describe(s, counts=counts).to_json() for s in listing.sessions]
        counts.save()
        sys.stdout.buffer.write(strict_json.dumps(body, option=orjson.OPT_INDENT_2) + b"\n")
        return 0
    if not listing.sessions:
        out(f"no sessions: looked in {listing.looked_in()}")
        return 0
    if not args.plain and sys.stdout.isatty() and sys.stdin.isatty():
        from replay_tui.ui.launch import open_app  # textual is imported only here
        from replay_tui.ui.screens.picker import app_for_session, pick_session

        return pick_and_open(listing, args, pick_session, app_for_session, open_app)
    print_table(listing, shutil.get_terminal_size().columns if sys.stdout.isatty() else None)
    return 0


def pick_and_open(
    listing: Listing,
    args: argparse.Namespace,
    pick: Callable[..., tuple[Path | None, str]],
    app_for: Callable[[Path], Any],
    open_app: Callable[[Any], int],
) -> int:
    """The list, a session opened from it, and the list again when the app
    quits (on the session opened, what was counted kept), until q in the list."""
    known: dict[Path, StoredSession] = {}
    chosen: Path | None = None
    typed = ""
    while True:
        chosen, typed = pick(listing, at=chosen, known=known, filter_text=typed)
        if chosen is None:
            return 0
        code = open_app(app_for(chosen))
        if code != 0:
            return code
        listing = find_sessions(args.source, limit=args.limit)


def _cells(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _fit(text: str, cells: int) -> str:
    """``text`` cut to ``cells`` terminal cells (wide characters count two)."""
    if _cells(text) <= cells:
        return text
    used, kept = 0, []
    for c in text:
        used += 2 if unicodedata.east_asian_width(c) in "WF" else 1
        if used > cells - 1:
            break
        kept.append(c)
    return "".join(kept) + "…"


def project_cells(width: int | None) -> int:
    """The project's column on a terminal ``width`` cells wide (10 to 32)."""
    return PROJECT if width is None else min(PROJECT, max(10, (width - FIXED) // 4))


def _row(cells: list[str], width: int | None) -> str:
    w = WIDTHS
    head = f"{cells[0]:<{w['modified']}} {cells[1]:<{w['source']}}"
    head += f"{cells[2]:>{w['records']}} {cells[3]:>{w['size']}}  "
    project = clip_start(cells[4], project_cells(width))
    head += project + " " * max(1, project_cells(width) + 1 - _cells(project))
    if width is None:  # not a terminal: whole (the first prompt is cut already)
        return head + cells[5]
    return head + _fit(cells[5], max(MIN_PROMPT, width - _cells(head)))


def session_row(session: StoredSession) -> list[str]:
    when = datetime.fromtimestamp(session.mtime).strftime("%Y-%m-%d %H:%M")
    return [
        when + (" live" if session.live else ""),
        session.source,
        "?" if session.records is None else f"{session.records:,}",
        byte_size(session.size),
        escape_controls(home_short(session.project or "")),
        session.first_prompt or "",
    ]


def print_table(listing: Listing, width: int | None) -> None:
    """The table, a session's row as soon as it is read (then its path,
    and its problem if it has one), and where they were found. On a
    terminal ``width`` cells wide, the first prompt is cut to fit."""
    out(_row(["MODIFIED", "SOURCE", "RECORDS", "SIZE", "PROJECT", "FIRST PROMPT"], width))
    counts = RecordCounts()
    for found in listing.sessions:
        session = describe(found, counts=counts)
        out(_row(session_row(session), width))
        out(f"  {session.path}")
        if session.problem is not None:
            out(f"  problem: {session.problem}")
        sys.stdout.flush()
    counts.save()
    shown = len(listing.sessions)
    said = plural(shown, "session")
    if listing.total > shown:
        said = f"the newest {shown} of {listing.total} sessions"
    out(f"{said}; looked in {listing.looked_in()}")
