"""A run handed over: one self-contained document for a support ticket.

``replay-tui report`` (and the app's ``X``) writes what someone else needs to
see a run as you saw it: the verdict as ``check`` says it, the digests that
name the exact bytes and rules, the error with its event and the state before
it, and, for each chosen seq, the event, the rule in words, the changes, the
receipt with its pin and the timeline around it.

The document is built once as plain data (:func:`build_report_doc`), every
piece of run text already made inert for a terminal (controls, bidi and
invisible characters spelled out) and secrets masked as the app masks them;
:func:`render_markdown` and :func:`render_html` then pour it into the
templates in ``templates/`` (Jinja2), which only have to keep run text from
being read as markup, so the look changes without touching Python. In
Markdown, run text goes in fenced blocks or inline code whose backtick fence is
longer than any backtick run in it (the template's ``code`` and ``fenced``
filters), so it cannot close them; the HTML template is autoescaped, and the
page loads and runs nothing.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import html as _html
import os
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from replay_tui.engine.report import build_report, human_summary, refuse_inside_run, write_temp
from replay_tui.formats.envelope import Event
from replay_tui.handover.charts import ChartSpec, chart_docs
from replay_tui.state.diff import Change, path_str
from replay_tui.state.paths import StatePath
from replay_tui.state.persistent import json_default, thaw
from replay_tui.views.runview import PIN_WORDS, LineView, ReceiptView, RunView

if TYPE_CHECKING:  # jinja2 is imported when a report is rendered, not at start-up
    import jinja2
    from markupsafe import Markup

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
    charts: Iterable[ChartSpec] = (),
) -> dict[str, Any]:
    """Everything the report says, as plain data, every string inert.

    ``replay`` is one opened with ``history=True`` and judged (``verify()``);
    ``seqs`` are deduplicated and sorted, and a seq with a note in ``notes``
    (a bookmark) is shown with it; each of ``charts`` is a value over the
    run, the chosen seqs marked (:mod:`.charts`). Rendering it is
    :func:`render_markdown` or :func:`render_html`.
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
        "charts": chart_docs(replay, charts, chosen, reveal),
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


# -- Markdown: run text only in code it cannot close ------------------------------------

_BACKTICKS = re.compile(r"`+")


def _longest_backticks(text: str) -> int:
    return max((len(m) for m in _BACKTICKS.findall(text)), default=0)


def md_code(text: str) -> str:
    """Inline code that ``text`` cannot close: a fence longer than any backtick
    run in it, padded when it starts or ends with a backtick or space. Newlines
    and controls are escaped, so it stays on its line. The Markdown
    template's ``code`` filter."""
    text = escape_controls(text)
    if not text:
        return "(empty)"
    fence = "`" * (_longest_backticks(text) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_block(text: str, info: str = "") -> str:
    """A fenced block that ``text`` cannot close (its fence is longer than any
    backtick run in it). The Markdown template's ``fenced`` filter."""
    fence = "`" * max(3, _longest_backticks(text) + 1)
    return f"{fence}{info}\n{text}\n{fence}"


# -- rendering: the document through a template -----------------------------------------

#: The templates, in ``replay_tui/handover/templates/`` (shipped in the wheel).
MARKDOWN_TEMPLATE = "report.md.j2"
HTML_TEMPLATE = "report.html.j2"

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
        # the charts (--chart): inline SVG drawn by the template, no script
        "svg",
        "g",
        "line",
        "path",
        "rect",
        "text",
    }
)


def _html_escape(value: Any) -> Markup:
    """Every value the HTML template writes, escaped as :func:`html.escape`
    does (``&#x27;``, ``&quot;``), so the page is what it was before templates;
    autoescape then leaves it as it is. Markup (a macro's output) is kept."""
    from markupsafe import Markup

    if isinstance(value, Markup):
        return value
    return Markup(_html.escape(str(value), quote=True))


def _environment(html: bool, folder: str | None) -> jinja2.Environment:
    """The templates' environment: the package's templates, or those in
    ``folder`` first (one it does not have comes from the package). HTML is
    autoescaped; an unknown name in a template is an error, not silence."""
    import jinja2

    loader: jinja2.BaseLoader = jinja2.PackageLoader("replay_tui.handover", "templates")
    if folder is not None:
        loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(folder), loader])
    env = jinja2.Environment(
        loader=loader,
        autoescape=html,
        finalize=_html_escape if html else None,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        plural=plural,
        change_line=change_line,
        timeline_label=timeline_label,
        timeline_lines=timeline_lines,
    )
    if not html:
        env.filters.update(code=md_code, fenced=md_block)
    return env


@functools.lru_cache(maxsize=2)
def _package_environment(html: bool) -> jinja2.Environment:
    """The package's templates, compiled once per process."""
    return _environment(html, None)


def _render(doc: Mapping[str, Any], html: bool, templates: str | os.PathLike[str] | None) -> str:
    # a folder of one's own is read afresh each time: it may be being edited
    env = (
        _package_environment(html)
        if templates is None
        else _environment(html, os.fspath(templates))
    )
    return env.get_template(HTML_TEMPLATE if html else MARKDOWN_TEMPLATE).render(doc=doc)


def render_markdown(doc: Mapping[str, Any], templates: str | os.PathLike[str] | None = None) -> str:
    """The report as Markdown (GitHub, Jira, Zendesk), from ``report.md.j2``:
    run text only in inline code or fenced blocks it cannot close.

    ``templates``: a folder whose ``report.md.j2`` is used instead of the
    package's (the look changes, the document does not)."""
    return _render(doc, False, templates)


def render_html(doc: Mapping[str, Any], templates: str | os.PathLike[str] | None = None) -> str:
    """The report as one HTML page, from ``report.html.j2``: inline CSS, no
    scripts, nothing fetched (its Content-Security-Policy forbids it too),
    every piece of run data escaped (the template is autoescaped).

    ``templates``: a folder whose ``report.html.j2`` is used instead of the
    package's; it is autoescaped all the same."""
    return _render(doc, True, templates)


# -- where it is written ---------------------------------------------------------------


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
    charts: Iterable[StatePath] = (),
) -> Path:
    """Write the report of ``seqs`` (notes beside bookmarked ones) into
    ``folder`` as ``<run>-report-<UTC time>.md`` (or ``.html``), never over
    an existing file (``-2``, ``-3``, ... are added), and return its path.

    The app's ``X``: ``replay`` is the app's (``history=True``), ``charts``
    the watched path. A folder
    inside the run folder is refused (:class:`CannotRun`), as is one that
    does not exist.
    """
    folder = Path(folder)
    refuse_inside_run(replay.paths, folder)
    if not folder.is_dir():
        raise CannotRun(f"{folder}: no such folder for the report")
    specs = [ChartSpec(path) for path in charts]
    doc = build_report_doc(replay, seqs, notes, reveal, specs)
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
