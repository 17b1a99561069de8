"""The report's parts, as plain data with every string inert: the first
error, each chosen seq (its event, rule, changes, receipt and record), and
the timeline around them; and the lines the templates make of changes and
timelines."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replay_tui.core.safe_text import MASK, clip, escape_controls, is_secret_key, mask_secrets
from replay_tui.core.words import plural
from replay_tui.formats.envelope import Event
from replay_tui.handover.inert_text import inert_lines, inert_raw, inert_value, json_text, mask_raw
from replay_tui.state.diff import Change, path_str
from replay_tui.views.runview import PIN_WORDS, LineView, ReceiptView, RunView

#: Timeline rows shown on each side of a chosen seq.
WINDOW = 5
#: Longest value in a change line.
VALUE_LIMIT = 2_000


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
        "raw": inert_raw(lv.raw, reveal) if lv.raw is not None else None,
    }


def change_doc(change: Change, reveal: bool) -> dict[str, Any]:
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
        out["raw"] = inert_raw(r.raw.decode("utf-8", "backslashreplace"), reveal)
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


def error_doc(view: RunView, reveal: bool, marked: set[int]) -> dict[str, Any] | None:
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
        "kind": inert_value(err.kind),
        "code": escape_controls(err.code),
        "message": escape_controls(err.message),
        "artifact": inert_value(err.artifact),
        "one_line": escape_controls(err.one_line()),
        "traceback": inert_lines(err.traceback) if err.traceback else None,
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
    out["state_word"] = inert_value(replay.summarize(before))
    return out


def seq_doc(
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
        out["state_word"] = inert_value(lv.summary)
        return out
    index = seq - 1
    count = view.row_count()
    if index >= count:
        out["mode"] = "absent"
        why = f"the ledger has {plural(count, 'line', sep=True)}"
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
        out["rule"] = inert_value(lv.step.explanation)
        out["changes"] = [change_doc(c, reveal) for c in lv.step.changes]
        out["state_word"] = inert_value(lv.summary)
        out["cost"] = inert_value(lv.cost)
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
