"""``replay-tui usage``: the tokens of Claude Code sessions and Codex
rollouts, counted as the built-in rules count them, per session, day or
model, with what they cost at the API's list prices and what was left out
and why (:mod:`replay_tui.questions.usage`), and of OpenTelemetry traces, per
turn and model (:mod:`replay_tui.questions.trace_usage`). A table for people,
or ``--json``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from replay_tui.cli.inspect_usage import log_usage_json, logs_usage, split_logs
from replay_tui.cli.options import out, prices_option
from replay_tui.core import strict_json
from replay_tui.core.errors import CannotRun
from replay_tui.core.links import whole_run
from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import plural
from replay_tui.formats.session_stores.listing import NAMES, clip_start, find_sessions
from replay_tui.formats.session_stores.subagents import SubagentIndex
from replay_tui.formats.sessions import CLAUDE_CODE, CODEX, GEMINI, run_id_of, session_format_of
from replay_tui.questions.token_audit import amounts, audit_lines
from replay_tui.questions.trace_usage import FIELDS as TRACE_FIELDS
from replay_tui.questions.trace_usage import TraceUsage, is_trace, trace_usage
from replay_tui.questions.usage import (
    FIELDS,
    GROUPINGS,
    Group,
    NotASession,
    SessionUsage,
    Tally,
    group_sessions,
    session_usage,
    total_of,
)
from replay_tui.reducers import pricing

if TYPE_CHECKING:
    from replay_tui.cli.options import Subparsers

#: The table's token columns, by source (Claude Code's TOTAL is the four added).
COLUMNS = {
    "claude-code": ["INPUT", "OUTPUT", "CACHE CREATE", "CACHE READ", "TOTAL", "COST"],
    CODEX: ["INPUT", "CACHED INPUT", "OUTPUT", "REASONING", "TOTAL", "COST"],
    GEMINI: ["INPUT", "CACHED", "OUTPUT", "THOUGHTS", "TOOL", "TOTAL", "COST"],
}
#: What the table's columns hold, under it.
COLUMN_NOTES = {
    "claude-code": "INPUT leaves out the cache's tokens; TOTAL: the four added "
    "(Claude Code records no total).",
    CODEX: "INPUT holds CACHED INPUT, OUTPUT holds REASONING; TOTAL: Codex's total_tokens "
    "(INPUT + OUTPUT).",
    GEMINI: "INPUT holds CACHED; TOOL: tool-use prompt tokens; TOTAL: Gemini's own total "
    "(INPUT + OUTPUT + THOUGHTS).",
}
#: A row's label is cut (from its start: a path's end names it) to this many characters.
LABEL = 44

EPILOG = (
    "Counts are the built-in rules' (replay-tui state SESSION usage): Claude Code, each "
    "API message once (message.id) with the usage of its last line; Codex, the last "
    "token_count's total_token_usage; Gemini CLI, each response once with its last copy's "
    "tokens, those a rewind dropped included. COST: each message (Codex: each new total) at the "
    "API's list price at its time, from the bundled genai-prices data or your --prices "
    "file, never fetched; a model with no price is named and its tokens left out of the "
    "cost (partial), never counted as free. A plan or a discount is not in the files.\n"
    "examples:\n"
    "  replay-tui usage   (the sessions in ~/.claude/projects and ~/.codex/sessions)\n"
    "  replay-tui usage ~/.claude/projects/my-project --by day\n"
    "  replay-tui usage --by model --prices my-prices.toml\n"
    "  replay-tui usage session.jsonl --json"
)


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "usage",
        help="count the tokens of agent sessions and what they cost, and say what was left "
        "out and why",
        description="Count the tokens of Claude Code sessions, Codex rollouts and Gemini CLI "
        "sessions as the "
        "built-in rules count them and what they cost, per session, day, month or model, "
        "with an audit of what was "
        "left out (streamed lines of one message, repeated token_count events) and what "
        "was added (sub-agents' transcripts); and those of an OpenTelemetry trace, per turn "
        "and model, as the otel_genai rules count them; and those of an Inspect AI log, per "
        "sample and model, from the log's own summaries. PATH: a session file, a trace file, "
        "an Inspect AI log or a folder holding sessions; none: the sessions in "
        "$CLAUDE_CONFIG_DIR/projects (default ~/.claude/projects), $CODEX_HOME/sessions "
        "(default ~/.codex/sessions) and "
        "$GEMINI_CLI_HOME/.gemini/tmp (default ~/.gemini/tmp).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="session file, trace file, Inspect AI log or folder of sessions",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON document: groups, totals, audit"
    )
    parser.add_argument(
        "--by",
        choices=GROUPINGS,
        default="session",
        help="a row per session (default), day, month (UTC) or model",
    )
    prices_option(parser)
    parser.set_defaults(func=cmd_usage)


def cmd_usage(args: argparse.Namespace) -> int:
    looked = ""
    traces: list[TraceUsage] = []
    logs, args.paths = split_logs(args.paths)  # Inspect AI logs: their own tables
    if logs and not args.paths:
        return logs_usage(logs, args.json)
    if args.paths:
        found, trace_files = _sessions_named(args.paths)
        traces = [trace_usage(path) for path in trace_files]
    else:
        found, looked = _stored_sessions()
    seen: dict[str, str] = {}
    index = SubagentIndex()
    sessions: list[SessionUsage] = []
    for path, source, label in found:
        try:
            sessions.append(session_usage(path, source, label=label, seen=seen, index=index))
        except (OSError, NotASession) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            sys.stderr.write(f"replay-tui: {escape_controls(f'{path}: cannot read: {why}')}\n")
    if args.json:
        body = usage_json(sessions, args.by)
        if traces:
            body["traces"] = [trace_json(t) for t in traces]
        if logs:
            body["inspect_logs"] = [log_usage_json(p) for p in logs]
        sys.stdout.buffer.write(strict_json.dumps(body, option=orjson.OPT_INDENT_2) + b"\n")
        return 0
    if not sessions and not traces:
        out(f"no sessions: looked in {looked}" if looked else "no sessions")
        return 0
    if sessions:
        print_usage(sessions, args.by)
    for number, trace in enumerate(traces):
        if sessions or number:
            out("")
        print_trace_usage(trace)
    return logs_usage(logs, False, after=bool(sessions or traces))


# -- which sessions ----------------------------------------------------------------


def _stored_sessions() -> tuple[list[tuple[Path, str | None, str]], str]:
    """The stores' sessions, as ``replay-tui sessions`` finds them, oldest first
    (a message met again is said of the later file), and where it looked."""
    listing = find_sessions()
    for note in listing.notes:
        sys.stderr.write(f"replay-tui: {escape_controls(note)}\n")
    found: list[tuple[Path, str | None, str]] = []
    for stored in sorted(listing.sessions, key=lambda s: (s.mtime, str(s.path))):
        if stored.problem is not None:
            sys.stderr.write(f"replay-tui: {escape_controls(f'{stored.path}: {stored.problem}')}\n")
            continue
        found.append((stored.path, stored.source, _label(stored.path, stored.store)))
    return found, listing.looked_in()


def _sessions_named(paths: list[str]) -> tuple[list[tuple[Path, str | None, str]], list[Path]]:
    """Each PATH's sessions (a file: itself; a folder: those in it), each
    once, and the trace files among them."""
    found: list[tuple[Path, str | None, str]] = []
    traces: list[Path] = []
    known: set[Path] = set()
    for arg in paths:
        path = Path(whole_run(arg, "usage", "counts the tokens of whole sessions"))
        if path.is_dir():
            inside = session_files_in(path)
            if not inside:
                raise CannotRun(f"usage: {arg}: holds no Claude Code session or Codex rollout")
            named = [(p, _label(p, path)) for p in inside]
        elif path.is_file():
            if session_format_of(path) is None and is_trace(path):
                if path.resolve() not in known:
                    known.add(path.resolve())
                    traces.append(path)
                continue
            if session_format_of(path) is None:
                raise CannotRun(
                    f"usage: {arg}: not a Claude Code session, Codex rollout or OpenTelemetry trace"
                )
            named = [(path, run_id_of(path))]
        else:
            raise CannotRun(f"usage: {arg}: no such file or folder")
        for p, label in named:
            real = p.resolve()
            if real not in known:
                known.add(real)
                found.append((p, None, label))
    return found, traces


def session_files_in(folder: Path) -> list[Path]:
    """The session files (``*.jsonl`` that are Claude Code's or Codex's, by
    their first records) in ``folder`` and the folders in it, sorted; not
    sub-agents' transcripts (``subagents/``, ``agent-*.jsonl``), which count
    with their session. Links to folders are not followed."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "subagents")
        for name in files:
            if name.endswith(".jsonl") and not name.startswith("agent-"):
                path = Path(root) / name
                if path.is_file() and session_format_of(path) is not None:
                    found.append(path)
    return sorted(found)


def _label(path: Path, under: Path) -> str:
    try:
        inner = path.relative_to(under)
    except ValueError:
        inner = Path(path.name)
    return str(inner.parent / run_id_of(inner))


# -- the table and the audit ------------------------------------------------------------


def _cells(tally: Tally, source: str) -> list[str]:
    numbers = list(tally.tokens)
    if source == CLAUDE_CODE:
        numbers.append(sum(numbers))
    return [f"{n:,}" for n in numbers] + [cost_cell(tally)]


def cost_cell(tally: Tally) -> str:
    """``$1.23``, ``$1.23+?`` when some model has no price (partial)."""
    return pricing.money(pricing.usd(tally.micros)) + ("+?" if tally.unpriced else "")


def cost_note() -> str:
    """Where the prices come from, under the table."""
    said = pricing.active().identity()
    where = said["database"]
    if said["file"] is not None:
        where = f"{escape_controls(said['file']['name'])}, then {where}"
    return (
        f"COST: API list prices ({where}) at each call's time; +?: partial, some model has "
        "no price (named below), its tokens are not in the cost."
    )


def print_usage(sessions: list[SessionUsage], by: str) -> None:
    """Per source, the table (a row per group, a total row), what its columns
    hold, then each group's audit in words."""
    first = True
    for source, groups in group_sessions(sessions, by).items():
        if not first:
            out("")
        first = False
        mine = [s for s in sessions if s.source == source]
        total = total_of(mine, source)
        out(f"{NAMES[source]}, by {by}")
        labels = [clip_start(escape_controls(g.key), LABEL) for g in groups]
        last = f"total ({plural(len(mine), 'session')})"
        rows = [[by.upper(), *COLUMNS[source]]]
        rows += [[label, *_cells(g.tally, source)] for label, g in zip(labels, groups, strict=True)]
        rows.append([last, *_cells(total, source)])
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            cells = [row[0].ljust(widths[0])]
            cells += [c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)]
            out("  ".join(cells).rstrip())
        out(COLUMN_NOTES[source])
        out(cost_note())
        for label, group in zip(labels, groups, strict=True):
            out("")
            out(_heading(label, group, by))
            for line in audit_lines(group.tally, source, by):
                out(f"  {line}")
            if by == "session":
                for line in _subagent_lines(group.sessions[0]):
                    out(f"    {line}")
        if len(groups) > 1:
            out("")
            out(f"{last}:")
            for line in audit_lines(total, source, "all"):
                out(f"  {line}")


def _heading(label: str, group: Group, by: str) -> str:
    models = ", ".join(escape_controls(m) for m in sorted(group.models)) or "no model named"
    days = _days(sorted(group.days))
    if by == "session":
        return f"{escape_controls(str(group.sessions[0].path))}: {models}; {days}"
    if by in ("day", "month"):
        return f"{label}: {plural(len(group.sessions), 'session')}; {models}"
    return f"{label}: {plural(len(group.sessions), 'session')}; {days}"


def _days(days: list[str]) -> str:
    if not days:
        return "no day recorded"
    return days[0] if len(days) == 1 else f"{days[0]} to {days[-1]} ({len(days)} days)"


def _subagent_lines(session: SessionUsage) -> list[str]:
    lines = []
    for usage in session.subagents:
        total = usage.total()
        where = escape_controls(str(usage.path))
        lines.append(
            f"{where}: {plural(total.counted, 'API message', sep=True)}, "
            f"{amounts(total.tokens, session.source)}"
        )
    return lines


# -- the JSON document -----------------------------------------------------------------


def usage_json(sessions: list[SessionUsage], by: str) -> dict[str, Any]:
    """The groups, totals and audit of ``sessions``, as one JSON document."""
    sources = []
    for source, groups in group_sessions(sessions, by).items():
        total = total_of(sessions, source)
        sources.append(
            {
                "source": source,
                "fields": list(FIELDS[source]),
                "groups": [group_json(g, by) for g in groups],
                "total": {
                    "sessions": sum(s.source == source for s in sessions),
                    "tokens": _named(total.tokens, source),
                    "cost": cost_json(total),
                    "audit": audit_json(total, source),
                },
            }
        )
    return {"by": by, "prices": pricing.active().identity(), "sources": sources}


def cost_json(tally: Tally) -> dict[str, Any]:
    """``{usd, partial, unpriced}``: USD a float of whole micro-dollars."""
    return {
        "usd": pricing.usd(tally.micros),
        "partial": bool(tally.unpriced),
        "unpriced": sorted(tally.unpriced),
    }


def _named(vector: list[int], source: str) -> dict[str, int]:
    return dict(zip(FIELDS[source], vector, strict=True))


def group_json(group: Group, by: str) -> dict[str, Any]:
    """A group: its key (a session's: its path, id, own tokens and
    sub-agents), models, days, tokens and audit."""
    body: dict[str, Any] = {"key": group.key}
    if by == "session":
        session = group.sessions[0]
        body["path"] = str(session.path)
        body["session_id"] = session.session_id
        body["own_tokens"] = session.file.tokens
        body["subagents"] = [
            {"path": str(u.path), "tokens": u.tokens, "messages": u.total().counted}
            for u in session.subagents
        ]
    else:
        body["sessions"] = len(group.sessions)
    body["models"] = sorted(group.models)
    body["days"] = sorted(group.days)
    body["tokens"] = _named(group.tally.tokens, group.source)
    body["cost"] = cost_json(group.tally)
    body["audit"] = audit_json(group.tally, group.source)
    return body


def audit_json(t: Tally, source: str) -> dict[str, Any]:
    """What was counted, left out and added, as data."""
    common = {
        "subagents": {
            "transcripts": sorted(t.subagents),
            "tokens": _named(t.subagent_tokens, source),
        },
        "unreadable_lines": t.unreadable,
    }
    if source == GEMINI:
        return {
            "responses": t.counted,
            "lines": t.lines,
            "copies": {
                "lines": t.streamed_lines,
                "responses": t.streamed_messages,
                "per_line_sum_adds": _named(t.per_line_adds, source),
            },
            **common,
        }
    if source == CODEX:
        return {
            "events_counted": t.counted,
            "token_count_events": t.lines + t.no_usage,
            "repeated": {
                "events": t.repeated,
                "per_event_sum_adds": _named(t.per_line_adds, source),
            },
            "without_usage": t.no_usage,
            "per_event_sum": _named(t.per_event_sum, source),
            **common,
        }
    return {
        "messages": t.counted,
        "lines": t.lines,
        "streamed": {
            "lines": t.streamed_lines,
            "messages": t.streamed_messages,
            "messages_without_request_id": t.no_request_id,
            "per_line_sum_adds": _named(t.per_line_adds, source),
            "first_line_count_misses": _named(t.first_line_misses, source),
        },
        "sidechain_in_file": {
            "messages": t.sidechain_messages,
            "tokens": _named(t.sidechain_tokens, source),
        },
        "also_in_earlier_files": {
            "messages": t.elsewhere_messages,
            "files": sorted(t.elsewhere_in),
            "tokens": _named(t.elsewhere_tokens, source),
        },
        **common,
    }


# -- an OpenTelemetry trace -------------------------------------------------------------

#: A trace's token columns.
TRACE_COLUMNS = ["INPUT", "OUTPUT", "CACHE READ", "CACHE CREATE"]
#: Characters of a turn's user text shown in its row.
TURN_TEXT = 32


def print_trace_usage(trace: TraceUsage) -> None:
    """A row per turn and model, a total row, a row per model, and how the
    calls were counted."""
    out(f"OpenTelemetry trace {escape_controls(str(trace.path))}, by turn ({trace.rules})")
    rows = [["TURN", "MODEL", *TRACE_COLUMNS]]
    for turn in trace.turns:
        said = escape_controls(turn.user_text or "")
        said = said if len(said) <= TURN_TEXT else said[: TURN_TEXT - 1] + "…"
        label = f"{turn.number} {said}".rstrip()
        for model, vector in turn.models.items() or [("", [0] * len(TRACE_FIELDS))]:
            rows.append([label, escape_controls(model), *(f"{n:,}" for n in vector)])
            label = ""
    rows.append([f"total ({plural(len(trace.turns), 'turn')})", "", *_trace_cells(trace.total())])
    for model, vector in trace.by_model().items():
        rows.append(["", escape_controls(model), *_trace_cells(vector)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        cells += [c.rjust(w) for c, w in zip(row[2:], widths[2:], strict=True)]
        out("  ".join(cells).rstrip())
    out(
        "INPUT holds CACHE READ and CACHE CREATE, as the GenAI conventions count them; the "
        "rows under the total are per model."
    )
    out(
        f"  {plural(trace.calls, 'model call', sep=True)} counted, each once (a wrapper span "
        "and the provider span inside it are one call; a span exported twice counts once)"
    )
    if trace.stopped is not None:
        out(f"  strict replay stopped ({trace.stopped}): the counts are those of its valid prefix")


def _trace_cells(vector: list[int]) -> list[str]:
    return [f"{n:,}" for n in vector]


def trace_json(trace: TraceUsage) -> dict[str, Any]:
    """A trace's usage as data: per turn and model, per model, the total."""

    def named(vector: list[int]) -> dict[str, int]:
        return dict(zip(TRACE_FIELDS, vector, strict=True))

    return {
        "path": str(trace.path),
        "rules": trace.rules,
        "events": trace.events,
        "stopped": trace.stopped,
        "fields": list(TRACE_FIELDS),
        "turns": [
            {
                "turn": t.number,
                "trace_id": t.trace,
                "user_text": t.user_text,
                "status": t.status,
                "llm_calls": t.calls,
                "models": {m: named(v) for m, v in t.models.items()},
                "tokens": named(t.total()),
            }
            for t in trace.turns
        ],
        "models": {m: named(v) for m, v in trace.by_model().items()},
        "tokens": named(trace.total()),
        "llm_calls": trace.calls,
    }
