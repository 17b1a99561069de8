"""A run handed over: one self-contained document for a support ticket.

``replay-tui report`` (and the app's ``X``) writes what someone else needs to
see a run as you saw it: the verdict as ``check`` says it, the digests that
name the exact bytes and rules, the error with its event and the state before
it, and, for each chosen seq, the event, the rule in words, the changes, the
receipt with its pin and the timeline around it.

The document is built once as plain data (:func:`build_report_doc`), every
piece of run text already made inert for a terminal (controls, bidi and
invisible characters spelled out) and secrets masked as the app masks them;
:func:`render_markdown` and :func:`render_html` then only have to keep run
text from being read as markup. In Markdown, run text goes in fenced blocks or
inline code whose backtick fence is longer than any backtick run in it, so it
cannot close them; in HTML it is escaped, and the page loads and runs nothing.
"""

from __future__ import annotations

import contextlib
import errno
import html as _html
import os
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from replay_tui import __version__
from replay_tui.core.errors import CannotRun
from replay_tui.core.safe_text import (
    _UNSAFE,
    MASK,
    clip,
    escape_controls,
    is_secret_key,
    mask_secrets,
)
from replay_tui.core.words import plural
from replay_tui.engine.replay import Replay
from replay_tui.engine.report import build_report, human_summary, write_temp
from replay_tui.formats.envelope import Event
from replay_tui.formats.run import JSONL, RunPaths
from replay_tui.state.diff import Change, path_str
from replay_tui.state.persistent import json_default, thaw
from replay_tui.views.runview import PIN_WORDS, LineView, ReceiptView, RunView

#: Timeline rows shown on each side of a chosen seq.
WINDOW = 5
#: Longest JSON block (an event, a state, a receipt), in characters. A state of
#: a long run can be hundreds of MB: the report is for a ticket, and
#: ``replay-tui state RUN --at N`` prints it whole.
BLOCK_LIMIT = 200_000
#: Longest value in a change line.
VALUE_LIMIT = 2_000

# -- run text made inert -----------------------------------------------------------


def _json_escape(match: re.Match[str]) -> str:
    ch = match.group()
    if ch == "\n":  # orjson escapes controls inside strings: a raw newline is layout
        return ch
    code = ord(ch)
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_safe(text: str) -> str:
    """JSON text with bidi, invisible and C1 characters written as ``\\uXXXX``
    escapes: still the same JSON, and nothing in it acts on a terminal or
    reorders what people read."""
    return _UNSAFE.sub(_json_escape, text)


def json_text(value: Any, *, reveal: bool, pretty: bool = True, limit: int = BLOCK_LIMIT) -> str:
    """A JSON value (plain or frozen) for people: secrets masked unless
    ``reveal``, inert, cut at ``limit`` characters."""
    plain = thaw(value)
    shown = plain if reveal else mask_secrets(plain)
    try:
        data = orjson.dumps(
            shown, option=orjson.OPT_INDENT_2 if pretty else 0, default=json_default
        )
    except TypeError as exc:  # orjson.JSONEncodeError is one
        return f"(not shown: {escape_controls(str(exc))})"
    return clip(json_safe(data.decode()), limit)


_RAW_SECRET = re.compile(r'"((?:[^"\\]|\\.){1,200})"(\s*:\s*)("(?:[^"\\]|\\.)*"?|[^\s,}\]]+)')


def mask_raw(text: str) -> str:
    """A line that is not JSON (it did not parse) with the values of
    secret-looking ``"key": value`` pairs masked: best effort, as the line
    cannot be read as JSON."""

    def repl(match: re.Match[str]) -> str:
        if not is_secret_key(match.group(1)):
            return match.group()
        return f'"{match.group(1)}"{match.group(2)}"{MASK}"'

    return _RAW_SECRET.sub(repl, text)


def _raw_text(raw: str, reveal: bool) -> str:
    return clip(escape_controls(raw if reveal else mask_raw(raw)), BLOCK_LIMIT)


def _lines_text(text: str) -> str:
    """Text of several lines (a traceback): each line made inert, the lines kept."""
    lines = text.rstrip("\n").split("\n")
    return clip("\n".join(escape_controls(line) for line in lines), BLOCK_LIMIT)


def _text(value: Any) -> str | None:
    """A string from the run (or the rules) for people, or None."""
    return None if value is None else escape_controls(str(value))


# -- the document --------------------------------------------------------------------


def build_report_doc(
    replay: Replay,
    seqs: Iterable[int],
    notes: Mapping[int, str] | None = None,
    reveal: bool = False,
) -> dict[str, Any]:
    """Everything the report says, as plain data, every string inert.

    ``replay`` is one opened with ``history=True`` and judged (``verify()``);
    ``seqs`` are deduplicated and sorted, and a seq with a note in ``notes``
    (a bookmark) is shown with it. Rendering it is :func:`render_markdown`
    or :func:`render_html`.
    """
    notes = dict(notes or {})
    chosen = sorted(set(seqs) | set(notes))
    if chosen and chosen[0] < 0:
        raise CannotRun(f"seq {chosen[0]}: seqs are 0 (the initial state) and up")
    view = RunView(replay)
    name = replay.paths.name
    report = build_report(replay)
    if replay.error is None and not replay.finished:
        # the app, validating or following: nothing is judged complete yet
        check = [
            f"{name}: not judged yet: no error in the {plural(replay.valid, 'event')} read so far"
        ]
    else:
        check = human_summary(name, replay, report).split("\n")
    marked = {s for s in chosen if s >= 1}
    return {
        "run": escape_controls(name),
        "run_id": _text(replay.run_id),
        "verdict": escape_controls(check[0]),
        "check": [escape_controls(line) for line in check],
        "ok": replay.error is None,
        "events_sha256": _text(report["events_sha256"]),
        "compressed": _text(report.get("compressed")),
        "rules": {
            "name": escape_controls(str(replay.reducer.name)),
            "version": escape_controls(str(replay.reducer.version)),
            "sha256": _text(replay.rules.rules_sha256),
        },
        "writer": f"replay-tui {__version__}",
        "reveal": reveal,
        "error": _error_doc(view, reveal, marked),
        "seqs": [_seq_doc(view, seq, notes.get(seq) or None, reveal, marked) for seq in chosen],
    }


def _event_parts(lv: LineView, reveal: bool) -> dict[str, Any]:
    """The event of a line as JSON, or the line as read when it is not one."""
    event = lv.event
    if isinstance(event, Event):
        return {
            "line": event.line,
            "kind": escape_controls(event.kind),
            "event": json_text(event.fields, reveal=reveal),
            "raw": None,
        }
    return {
        "line": lv.index + 1,
        "kind": None,
        "event": None,
        "raw": _raw_text(lv.raw, reveal) if lv.raw is not None else None,
    }


def _change_doc(change: Change, reveal: bool) -> dict[str, Any]:
    """One change as the state pane shows it: a secret-looking key's value is
    the mask, other values have their secrets masked."""
    key = change.path[-1] if change.path else None
    hide = isinstance(key, str) and is_secret_key(key) and not reveal

    def shown(value: Any) -> str:
        if hide and value is not None:
            return MASK
        return json_text(value, reveal=reveal, pretty=False, limit=VALUE_LIMIT)

    return {
        "op": change.op,
        "path": escape_controls(path_str(change.path)),
        "old": None if change.op == "added" else shown(change.old),
        "new": None if change.op == "removed" else shown(change.new),
    }


def change_line(change: Mapping[str, Any]) -> str:
    """``+ path = new``, ``- path (was old)``, ``~ path: old → new``."""
    if change["op"] == "added":
        return f"+ {change['path']} = {change['new']}"
    if change["op"] == "removed":
        return f"- {change['path']} (was {change['old']})"
    return f"~ {change['path']}: {change['old']} → {change['new']}"


def _receipt_doc(rv: ReceiptView | None, reveal: bool) -> dict[str, Any] | None:
    """A call's receipt and its pin, as the receipt pane shows them."""
    if rv is None:
        return None
    out: dict[str, Any] = {
        "call_id": escape_controls(rv.call_id),
        "name": escape_controls(rv.name),
        "pin": rv.pin,
        "pin_words": PIN_WORDS.get(rv.pin, escape_controls(rv.pin)),
        "pinned": None,
        "problem": None,
        "size": None,
        "sha256": None,
        "json": None,
        "raw": None,
        "masked": False,
    }
    if rv.pin == "tampered" and rv.pinned_sha256:
        out["pinned"] = escape_controls(clip(rv.pinned_sha256, 80))
    r = rv.receipt
    if r is None:
        if rv.problem and rv.pin not in ("none yet", "denied", "pending"):
            out["problem"] = escape_controls(rv.problem)
        return out
    out["size"] = r.size
    out["sha256"] = r.sha256
    if r.data is None:
        out["problem"] = escape_controls(f"not usable: {r.problem}")
        out["raw"] = _raw_text(r.raw.decode("utf-8", "backslashreplace"), reveal)
    else:
        out["masked"] = not reveal and mask_secrets(r.data) != r.data
        out["json"] = json_text(r.data, reveal=reveal)
    return out


def _record_doc(lv: LineView, reveal: bool) -> dict[str, Any] | None:
    """What the rules keep beside an event with no receipt (a Temporal
    activity's input and result), as known then and, if it changed, later."""
    if lv.record is None or lv.receipt is not None:
        return None
    title, data = lv.record
    later = lv.record_later[1] if lv.record_later is not None else None
    return {
        "title": escape_controls(str(title)),
        "json": json_text(data, reveal=reveal),
        "later": json_text(later, reveal=reveal) if lv.record_later is not None else None,
    }


def _timeline(view: RunView, index: int, marked: set[int], reveal: bool) -> dict[str, Any]:
    """The rows of seqs ``index+1-WINDOW .. index+1+WINDOW`` (those that exist).

    Rows come escaped, and masked when they are events; a line that is not
    one is shown as read, so its secrets are masked here."""
    count = view.row_count()
    first, last = max(0, index - WINDOW), min(count - 1, index + WINDOW)
    err = view.error_index()
    rows = []
    for i in range(first, last + 1):
        row = view.row(i)
        if err is not None and i == err:
            status = f"✗ {view.replay.error.code}" if view.replay.error else "✗"
        elif err is not None and i > err:
            status = "not replayed"
        elif row.problem:
            status = escape_controls(row.problem)
        else:
            status = ""
        rows.append(
            {
                "here": i == index,
                "chosen": row.seq in marked if row.seq is not None else False,
                "seq": row.seq if row.seq is not None else None,
                "line": row.line,
                "kind": row.kind,  # rows are escaped and masked already
                "call_id": row.call_id,
                "summary": row.summary if reveal or not row.problem else mask_raw(row.summary),
                "status": status,
            }
        )
    span = (rows[0]["line"], rows[-1]["line"]) if rows else None
    return {"rows": rows, "lines": span}


def timeline_label(timeline: Mapping[str, Any]) -> str:
    """``Timeline, lines 5..14 (▶ here, ◆ another seq in this report):``."""
    first, last = timeline["lines"]
    rows = timeline["rows"]
    marks = (["▶ here"] if any(r["here"] for r in rows) else []) + (
        ["◆ another seq in this report"] if any(r["chosen"] and not r["here"] for r in rows) else []
    )
    legend = f" ({', '.join(marks)})" if marks else ""
    return f"Timeline, lines {int(first)}..{int(last)}{legend}:"


def timeline_lines(timeline: Mapping[str, Any]) -> list[str]:
    """The timeline rows as aligned text: ``▶`` this seq, ``◆`` another chosen one."""
    rows = timeline["rows"]
    if not rows:
        return []
    seq_w = max(len(str(r["seq"] if r["seq"] is not None else "?")) for r in rows)
    kind_w = max(len(r["kind"]) for r in rows)
    cid_w = max(len(r["call_id"]) for r in rows)
    out = []
    for r in rows:
        mark = "▶" if r["here"] else ("◆" if r["chosen"] else " ")
        seq = str(r["seq"]) if r["seq"] is not None else "?"
        parts = [f"{mark} {seq:>{seq_w}}", f"{r['kind']:<{kind_w}}"]
        if cid_w:
            parts.append(f"{r['call_id']:<{cid_w}}")
        if r["status"]:
            parts.append(f"[{r['status']}]")
        parts.append(r["summary"])
        out.append("  ".join(parts).rstrip())
    return out


def _error_doc(view: RunView, reveal: bool, marked: set[int]) -> dict[str, Any] | None:
    """The first error: where and what, its event and the state before it."""
    replay = view.replay
    err = replay.error
    if err is None:
        return None
    out: dict[str, Any] = {
        "seq": err.seq,
        "line": err.line,
        "at": ", ".join(
            [
                *([f"seq {err.seq}"] if err.seq is not None else []),
                *([f"line {err.line}"] if err.line is not None else []),
            ]
        )
        or "before the first event",
        "kind": _text(err.kind),
        "code": escape_controls(err.code),
        "message": escape_controls(err.message),
        "artifact": _text(err.artifact),
        "one_line": escape_controls(err.one_line()),
        "traceback": _lines_text(err.traceback) if err.traceback else None,
        "event": None,
        "raw": None,
        "valid": replay.valid,
        "state_before": None,
        "state_word": None,
        "receipt": None,
        "record": None,
        "timeline": None,
    }
    index = view.error_index()
    lv: LineView | None = None
    if index is not None and 0 <= index < view.row_count():
        lv = view.line_view(index)
        out.update(_event_parts(lv, reveal))
        out["line"] = err.line
        out["receipt"] = _receipt_doc(lv.receipt, reveal)
        out["record"] = _record_doc(lv, reveal)
        out["timeline"] = _timeline(view, index, marked, reveal)
    before = lv.state_before if lv is not None and lv.mode == "failed" else None
    if before is None:
        before = replay.frozen_at(replay.valid)
    out["state_before"] = json_text(before, reveal=reveal)
    out["state_word"] = _text(replay.summarize(before))
    return out


def _seq_doc(
    view: RunView, seq: int, note: str | None, reveal: bool, marked: set[int]
) -> dict[str, Any]:
    """One chosen seq: its event, rule, changes, receipt and timeline."""
    replay = view.replay
    out: dict[str, Any] = {
        "seq": seq,
        "note": escape_controls(note) if note else None,
        "mode": "step",
        "line": None,
        "kind": None,
        "event": None,
        "raw": None,
        "rule": None,
        "changes": None,
        "not_replayed": None,
        "state": None,
        "state_word": None,
        "still_open": None,
        "receipt": None,
        "record": None,
        "timeline": _timeline(view, seq - 1, marked, reveal),
    }
    err = replay.error
    stopped = f"strict replay stopped {err.one_line()}" if err is not None else ""
    if seq == 0:
        lv = view.initial_view()
        out["mode"] = "initial"
        out["state"] = json_text(lv.state_before, reveal=reveal)
        out["state_word"] = _text(lv.summary)
        return out
    index = seq - 1
    count = view.row_count()
    if index >= count:
        out["mode"] = "absent"
        why = f"the ledger has {count:,} line{'s' if count != 1 else ''}"
        out["not_replayed"] = escape_controls(
            f"not replayed: {why}, none at seq {seq}" + (f"; {stopped}" if stopped else "")
        )
        return out
    lv = view.line_view(index)
    out["mode"] = lv.mode
    out.update(_event_parts(lv, reveal))
    out["receipt"] = _receipt_doc(lv.receipt, reveal)
    out["record"] = _record_doc(lv, reveal)
    if lv.mode == "step" and lv.step is not None:
        out["rule"] = _text(lv.step.explanation)
        out["changes"] = [_change_doc(c, reveal) for c in lv.step.changes]
        out["state_word"] = _text(lv.summary)
        if lv.still_open:
            out["still_open"] = [escape_controls(s) for s in lv.still_open]
        return out
    if lv.mode == "failed":
        why = f"this is where {stopped} (the state before it is under Error)"
    elif lv.mode == "unreplayed":
        why = f"it comes after the first error: {stopped}"
    elif lv.mode == "broken":
        why = lv.raw or "it could not be read again"
        out["raw"] = None
    else:  # pending, receipt: the app's validation has not got there
        so_far = plural(replay.valid, "event", sep=True)
        why = f"validation has not reached it yet ({so_far} replayed so far)"
    out["not_replayed"] = escape_controls(f"not replayed: {why}")
    return out


# -- Markdown --------------------------------------------------------------------------

_BACKTICKS = re.compile(r"`+")


def _longest_backticks(text: str) -> int:
    return max((len(m) for m in _BACKTICKS.findall(text)), default=0)


def md_code(text: str) -> str:
    """Inline code that ``text`` cannot close: a fence longer than any backtick
    run in it, padded when it starts or ends with a backtick or space. Newlines
    and controls are escaped, so it stays on its line."""
    text = escape_controls(text)
    if not text:
        return "(empty)"
    fence = "`" * (_longest_backticks(text) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_block(text: str, info: str = "") -> str:
    """A fenced block that ``text`` cannot close (its fence is longer than any
    backtick run in it)."""
    fence = "`" * max(3, _longest_backticks(text) + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _md_receipt(rc: Mapping[str, Any]) -> list[str]:
    lines = [f"- receipt {md_code(rc['name'])} of call {md_code(rc['call_id'])}: {rc['pin_words']}"]
    if rc["size"] is not None:
        lines.append(
            f"- size {plural(rc['size'], 'byte', sep=True)}, sha256 {md_code(rc['sha256'])}"
        )
    if rc["pinned"]:
        lines.append(f"- pinned sha256 {md_code(rc['pinned'])}")
    if rc["problem"]:
        lines.append(f"- {md_code(rc['problem'])}")
    if rc["masked"]:
        lines.append("- secret-looking values are masked")
    out = ["\n".join(lines)]
    if rc["json"] is not None:
        out.append(md_block(rc["json"], "json"))
    if rc["raw"] is not None:
        out.append(md_block(rc["raw"], "text"))
    return out


def _md_record(rec: Mapping[str, Any]) -> list[str]:
    out = [f"{md_code(rec['title'])}:", md_block(rec["json"], "json")]
    if rec["later"] is not None:
        out += ["Later in this run (after the last valid event):", md_block(rec["later"], "json")]
    return out


def _md_event(part: Mapping[str, Any]) -> list[str]:
    if part["event"] is not None:
        return [f"Event (line {part['line']}):", md_block(part["event"], "json")]
    if part["raw"] is not None:
        return [f"Line {part['line']} as read (not an event):", md_block(part["raw"], "text")]
    return []


def _md_timeline(timeline: Mapping[str, Any] | None) -> list[str]:
    if not timeline or not timeline["rows"]:
        return []
    return [
        timeline_label(timeline),
        md_block("\n".join(timeline_lines(timeline)), "text"),
    ]


def render_markdown(doc: Mapping[str, Any]) -> str:
    """The report as Markdown (GitHub, Jira, Zendesk): run text only in inline
    code or fenced blocks it cannot close."""
    rules = doc["rules"]
    parts = [f"# replay-tui report: {md_code(doc['run'])}"]
    facts = [
        f"- run: {md_code(doc['run'])}",
        f"- run_id: {md_code(doc['run_id']) if doc['run_id'] is not None else '(none)'}",
        f"- verdict: {md_code(doc['verdict'])}",
        f"- events_sha256: {md_code(doc['events_sha256'])}",
    ]
    if doc["compressed"]:
        facts.append(f"- compressed: {md_code(doc['compressed'])} (the digest is of the events)")
    facts.append(
        f"- rules: {md_code(rules['name'])} {md_code(rules['version'])}, "
        f"rules_sha256 {md_code(rules['sha256'] or '(none)')}"
    )
    facts.append(
        "- secret-looking values: "
        + ("shown (--reveal)" if doc["reveal"] else "masked (`--reveal` shows them)")
    )
    facts.append(f"- written by {doc['writer']}")
    parts.append("\n".join(facts))
    parts += ["`replay-tui check` says:", md_block("\n".join(doc["check"]), "text")]

    err = doc["error"]
    if err is not None:
        parts.append(f"## Error: {md_code(err['code'])}")
        items = [f"- at: {err['at']}"]
        if err["kind"] is not None:
            items.append(f"- kind: {md_code(err['kind'])}")
        items.append(f"- code: {md_code(err['code'])}")
        items.append(f"- message: {md_code(err['message'])}")
        if err["artifact"] is not None:
            items.append(f"- artifact: {md_code(err['artifact'])}")
        parts.append("\n".join(items))
        parts += _md_event(err)
        if err["traceback"]:
            parts += ["The rules' traceback:", md_block(err["traceback"], "text")]
        word = f" ({md_code(err['state_word'])})" if err["state_word"] else ""
        parts += [
            f"State before it, after {plural(err['valid'], 'event', sep=True)}{word}:",
            md_block(err["state_before"], "json"),
        ]
        if err["receipt"] is not None:
            parts += _md_receipt(err["receipt"])
        if err["record"] is not None:
            parts += _md_record(err["record"])
        parts += _md_timeline(err["timeline"])

    for s in doc["seqs"]:
        title = f"## Seq {s['seq']}" + (" (the initial state)" if s["mode"] == "initial" else "")
        parts.append(title)
        if s["note"]:
            parts.append(f"- note: {md_code(s['note'])}")
        if s["mode"] == "initial":
            word = f" ({md_code(s['state_word'])})" if s["state_word"] else ""
            parts += [f"State before any event{word}:", md_block(s["state"], "json")]
        parts += _md_event(s)
        if s["not_replayed"]:
            parts.append(f"- {md_code(s['not_replayed'])}")
        if s["rule"] is not None:
            parts.append(f"- rule: {md_code(s['rule'])}")
        if s["changes"] is not None:
            if s["changes"]:
                lines = "\n".join(change_line(c) for c in s["changes"])
                parts += ["Changes:", md_block(lines, "text")]
            else:
                parts.append("- changes: none")
        if s["state_word"] and s["mode"] == "step":
            parts.append(f"- state after it: {md_code(s['state_word'])}")
        if s["still_open"]:
            parts.append(f"- still open: {md_code('; '.join(s['still_open']))}")
        if s["receipt"] is not None:
            parts += _md_receipt(s["receipt"])
        if s["record"] is not None:
            parts += _md_record(s["record"])
        parts += _md_timeline(s["timeline"])
    return "\n\n".join(parts) + "\n"


# -- HTML ------------------------------------------------------------------------------

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em;
  padding: 0 1em; color: #222; background: #fff; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em;
  border-bottom: 1px solid #ccc; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 12.5px; }
pre { background: #f6f8fa; border: 1px solid #ddd; padding: .6em .8em;
  overflow-x: auto; white-space: pre; }
p.label { margin: 1em 0 .2em; color: #555; }
.bad { color: #b00020; font-weight: bold; } .good { color: #1a7f37; font-weight: bold; }
table.timeline { border-collapse: collapse; font-family: ui-monospace, monospace;
  font-size: 12.5px; }
table.timeline td, table.timeline th { padding: .1em .6em; text-align: left;
  vertical-align: top; border-bottom: 1px solid #eee; }
tr.here { background: #fff3bf; } tr.error { color: #b00020; }
tr.later { color: #999; }
td.summary { word-break: break-all; }
"""

#: The start tags the HTML template emits: run data never adds one.
HTML_TAGS = frozenset(
    {
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "h1",
        "h2",
        "p",
        "ul",
        "li",
        "code",
        "pre",
        "span",
        "table",
        "tr",
        "th",
        "td",
    }
)


def _e(text: Any) -> str:
    return _html.escape(str(text), quote=True)


def _code(text: str) -> str:
    return f"<code>{_e(text)}</code>"


def _pre(text: str) -> str:
    return f"<pre><code>{_e(text)}</code></pre>"


def _label(text: str) -> str:
    """A label the template writes (its only run data is pre-escaped by callers)."""
    return f'<p class="label">{text}</p>'


def _html_receipt(rc: Mapping[str, Any]) -> list[str]:
    pin_class = (
        "good"
        if rc["pin"] == "matches"
        else ("bad" if rc["pin"] in ("tampered", "missing") else "plain")
    )
    items = [
        f"<li>receipt {_code(rc['name'])} of call {_code(rc['call_id'])}: "
        f'<span class="{pin_class}">{_e(rc["pin_words"])}</span></li>'
    ]
    if rc["size"] is not None:
        items.append(
            f"<li>size {plural(rc['size'], 'byte', sep=True)}, sha256 {_code(rc['sha256'])}</li>"
        )
    if rc["pinned"]:
        items.append(f"<li>pinned sha256 {_code(rc['pinned'])}</li>")
    if rc["problem"]:
        items.append(f"<li>{_code(rc['problem'])}</li>")
    if rc["masked"]:
        items.append("<li>secret-looking values are masked</li>")
    out = ["<ul>" + "".join(items) + "</ul>"]
    if rc["json"] is not None:
        out.append(_pre(rc["json"]))
    if rc["raw"] is not None:
        out.append(_pre(rc["raw"]))
    return out


def _html_record(rec: Mapping[str, Any]) -> list[str]:
    out = [_label(f"{_code(rec['title'])}:"), _pre(rec["json"])]
    if rec["later"] is not None:
        out += [_label("Later in this run (after the last valid event):"), _pre(rec["later"])]
    return out


def _html_event(part: Mapping[str, Any]) -> list[str]:
    if part["event"] is not None:
        return [_label(f"Event (line {int(part['line'])}):"), _pre(part["event"])]
    if part["raw"] is not None:
        return [_label(f"Line {int(part['line'])} as read (not an event):"), _pre(part["raw"])]
    return []


def _html_timeline(timeline: Mapping[str, Any] | None) -> list[str]:
    if not timeline or not timeline["rows"]:
        return []
    rows = ["<tr><th></th><th>seq</th><th>kind</th><th>call_id</th><th></th><th>payload</th></tr>"]
    for r in timeline["rows"]:
        classes = []
        if r["here"]:
            classes.append("here")
        if r["status"].startswith("✗"):
            classes.append("error")
        elif r["status"] == "not replayed":
            classes.append("later")
        cls = f' class="{" ".join(classes)}"' if classes else ""
        mark = "▶" if r["here"] else ("◆" if r["chosen"] else "")
        seq = r["seq"] if r["seq"] is not None else "?"
        rows.append(
            f"<tr{cls}><td>{mark}</td><td>{_e(seq)}</td><td>{_e(r['kind'])}</td>"
            f"<td>{_e(r['call_id'])}</td><td>{_e(r['status'])}</td>"
            f'<td class="summary">{_e(r["summary"])}</td></tr>'
        )
    return [
        _label(_e(timeline_label(timeline))),
        '<table class="timeline">' + "\n".join(rows) + "</table>",
    ]


def render_html(doc: Mapping[str, Any]) -> str:
    """The report as one HTML page: inline CSS, no scripts, nothing fetched
    (its Content-Security-Policy forbids it too), every piece of run data
    escaped."""
    rules = doc["rules"]
    verdict_class = "good" if doc["ok"] else "bad"
    body = [f"<h1>replay-tui report: {_code(doc['run'])}</h1>"]
    facts = [
        f"<li>run: {_code(doc['run'])}</li>",
        f"<li>run_id: {_code(doc['run_id']) if doc['run_id'] is not None else '(none)'}</li>",
        f'<li>verdict: <span class="{verdict_class}">{_code(doc["verdict"])}</span></li>',
        f"<li>events_sha256: {_code(doc['events_sha256'])}</li>",
    ]
    if doc["compressed"]:
        facts.append(
            f"<li>compressed: {_code(doc['compressed'])} (the digest is of the events)</li>"
        )
    facts.append(
        f"<li>rules: {_code(rules['name'])} {_code(rules['version'])}, "
        f"rules_sha256 {_code(rules['sha256'] or '(none)')}</li>"
    )
    facts.append(
        "<li>secret-looking values: "
        + ("shown (--reveal)" if doc["reveal"] else "masked (<code>--reveal</code> shows them)")
        + "</li>"
    )
    facts.append(f"<li>written by {_e(doc['writer'])}</li>")
    body.append("<ul>" + "".join(facts) + "</ul>")
    body += [_label("<code>replay-tui check</code> says:"), _pre("\n".join(doc["check"]))]

    err = doc["error"]
    if err is not None:
        body.append(f'<h2>Error: <span class="bad">{_code(err["code"])}</span></h2>')
        items = [f"<li>at: {_e(err['at'])}</li>"]
        if err["kind"] is not None:
            items.append(f"<li>kind: {_code(err['kind'])}</li>")
        items.append(f"<li>code: {_code(err['code'])}</li>")
        items.append(f"<li>message: {_code(err['message'])}</li>")
        if err["artifact"] is not None:
            items.append(f"<li>artifact: {_code(err['artifact'])}</li>")
        body.append("<ul>" + "".join(items) + "</ul>")
        body += _html_event(err)
        if err["traceback"]:
            body += [_label("The rules' traceback:"), _pre(err["traceback"])]
        word = f" ({_code(err['state_word'])})" if err["state_word"] else ""
        body += [
            _label(f"State before it, after {plural(int(err['valid']), 'event', sep=True)}{word}:"),
            _pre(err["state_before"]),
        ]
        if err["receipt"] is not None:
            body += _html_receipt(err["receipt"])
        if err["record"] is not None:
            body += _html_record(err["record"])
        body += _html_timeline(err["timeline"])

    for s in doc["seqs"]:
        initial = " (the initial state)" if s["mode"] == "initial" else ""
        body.append(f"<h2>Seq {int(s['seq'])}{initial}</h2>")
        if s["note"]:
            body.append(f"<ul><li>note: {_code(s['note'])}</li></ul>")
        if s["mode"] == "initial":
            word = f" ({_code(s['state_word'])})" if s["state_word"] else ""
            body += [_label(f"State before any event{word}:"), _pre(s["state"])]
        body += _html_event(s)
        items = []
        if s["not_replayed"]:
            items.append(f"<li>{_code(s['not_replayed'])}</li>")
        if s["rule"] is not None:
            items.append(f"<li>rule: {_code(s['rule'])}</li>")
        if s["changes"] == []:
            items.append("<li>changes: none</li>")
        if items:
            body.append("<ul>" + "".join(items) + "</ul>")
        if s["changes"]:
            body += [_label("Changes:"), _pre("\n".join(change_line(c) for c in s["changes"]))]
        items = []
        if s["state_word"] and s["mode"] == "step":
            items.append(f"<li>state after it: {_code(s['state_word'])}</li>")
        if s["still_open"]:
            items.append(f"<li>still open: {_code('; '.join(s['still_open']))}</li>")
        if items:
            body.append("<ul>" + "".join(items) + "</ul>")
        if s["receipt"] is not None:
            body += _html_receipt(s["receipt"])
        if s["record"] is not None:
            body += _html_record(s["record"])
        body += _html_timeline(s["timeline"])

    head = (
        '<meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>replay-tui report: {_e(doc['run'])}</title>\n"
        f"<style>{_CSS}</style>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n'
        + head
        + "\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


# -- where it is written ---------------------------------------------------------------


def refuse_inside_run(paths: RunPaths, place: Path) -> None:
    """Raise :class:`CannotRun` if ``place`` is the ledger or (for a run
    folder) anywhere inside the run folder: a run is evidence, and nothing
    is ever written there. Symlinks are resolved on both sides."""
    target = place.resolve()
    if target == paths.events.resolve():
        raise CannotRun(f"{place}: that is the run's ledger; refusing to write the report there")
    if paths.format == JSONL:
        run = paths.dir.resolve()
        if target == run or target.is_relative_to(run):
            raise CannotRun(
                f"{place}: inside the run folder {paths.dir}; a report is never written there "
                "(the run is evidence): choose a path outside it"
            )


def protected(paths: RunPaths) -> list[Path]:
    """What :func:`replay_tui.engine.report.write_atomic` must never replace."""
    return [paths.events, paths.dir] if paths.format == JSONL else [paths.events]


_STEM_BAD = re.compile(r"[^A-Za-z0-9._-]+")


def _file_stem(name: str) -> str:
    """A run's name made safe for a file name."""
    return _STEM_BAD.sub("_", name).lstrip(".")[:80] or "run"


def _publish(tmp: str, target: Path) -> bool:
    """Give the written temp file the name ``target`` unless it exists (a
    hard link never replaces a file); False if the name is taken."""
    try:
        os.link(tmp, target)
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
    # a file system without hard links: create the name exclusively, then copy
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as out, open(tmp, "rb") as src:
        out.write(src.read())
        out.flush()
        os.fsync(out.fileno())
    return True


def write_report(
    replay: Replay,
    seqs: list[int],
    notes: dict[int, str],
    *,
    html: bool,
    folder: Path,
    reveal: bool = False,
) -> Path:
    """Write the report of ``seqs`` (notes beside bookmarked ones) into
    ``folder`` as ``<run>-report-<UTC time>.md`` (or ``.html``), never over
    an existing file (``-2``, ``-3``, ... are added), and return its path.

    The app's ``X``: ``replay`` is the app's (``history=True``). A folder
    inside the run folder is refused (:class:`CannotRun`), as is one that
    does not exist.
    """
    folder = Path(folder)
    refuse_inside_run(replay.paths, folder)
    if not folder.is_dir():
        raise CannotRun(f"{folder}: no such folder for the report")
    doc = build_report_doc(replay, seqs, notes, reveal)
    data = (render_html(doc) if html else render_markdown(doc)).encode()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    base = f"{_file_stem(replay.paths.name)}-report-{stamp}"
    suffix = ".html" if html else ".md"
    tmp = write_temp(folder, data, folder)
    try:
        for n in range(1, 1000):
            target = folder / f"{base}{'' if n == 1 else f'-{n}'}{suffix}"
            if _publish(tmp, target):
                return target
        raise CannotRun(f"{folder}: {base}{suffix} and 998 more names are taken")
    except OSError as exc:
        raise CannotRun(f"{folder}: cannot write the report ({exc.strerror or exc})") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
