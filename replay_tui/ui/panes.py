"""The state pane (what the event changed, or the whole state) and the
receipt inspector. Both render a :class:`~replay_tui.runview.LineView` into
``rich.text.Text``: data is never markup.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from replay_tui.diff import Change, path_str
from replay_tui.runview import LineView, ReceiptView
from replay_tui.safe_text import MASK, clip, escape_controls, is_secret_key, mask_secrets
from replay_tui.ui.jsonview import json_text, scalar_text

ADDED = "bold #a6d189"
REMOVED = "bold #e78284"
CHANGED = "bold #e5c890"
HEAD = "bold"
DIM = "dim"
ERROR = "bold #e78284"
OK = "bold #a6d189"

#: How much of a long value is shown before it is cut (``x`` expands).
CLIP_SHORT = 160
CLIP_LONG = 20_000


def _value(value: Any, key: str | int | None, reveal: bool, limit: int) -> Text:
    if isinstance(key, str) and is_secret_key(key) and value is not None and not reveal:
        return Text(MASK, style="reverse #e78284")
    return scalar_text(value if reveal else mask_secrets(value), limit)


def change_lines(changes: list[Change], *, reveal: bool, limit: int) -> list[Text]:
    """``+ path = new``, ``- path (was old)``, ``~ path: old -> new``."""
    out: list[Text] = []
    for c in changes:
        key = c.path[-1] if c.path else None
        where = escape_controls(path_str(c.path))
        if c.op == "added":
            out.append(
                Text.assemble(
                    ("+ ", ADDED), (where, ADDED), " = ", _value(c.new, key, reveal, limit)
                )
            )
        elif c.op == "removed":
            out.append(
                Text.assemble(
                    ("- ", REMOVED),
                    (where, REMOVED),
                    " (was ",
                    _value(c.old, key, reveal, limit),
                    ")",
                )
            )
        else:
            out.append(
                Text.assemble(
                    ("~ ", CHANGED),
                    (where, CHANGED),
                    ": ",
                    _value(c.old, key, reveal, limit),
                    " → ",
                    _value(c.new, key, reveal, limit),
                )
            )
    return out


def event_json(view: LineView) -> Any:
    return view.event.fields if view.event is not None else None


class StatePane(VerticalScroll, can_focus=False):
    """The change made by the selected event, or the full state with it marked."""

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(id="state-body")

    def show(
        self,
        view: LineView | None,
        *,
        full: bool,
        reveal: bool,
        expand: bool,
        pending_note: str = "",
    ) -> None:
        found = self.query("#state-body")
        if not found:  # not mounted yet, or already gone while the app exits
            return
        body = found.first(Static)
        body.update(
            self.render_view(
                view, full=full, reveal=reveal, expand=expand, pending_note=pending_note
            )
        )

    def render_view(
        self,
        view: LineView | None,
        *,
        full: bool,
        reveal: bool,
        expand: bool,
        pending_note: str = "",
    ) -> Text:
        limit = CLIP_LONG if expand else CLIP_SHORT
        if view is None:
            return Text(pending_note or "no events yet", style=DIM)
        lines: list[Text] = []
        ev = view.event
        seq = ev.seq if ev is not None else None
        kind = escape_controls(ev.kind) if ev is not None else "?"
        if view.mode == "step" and view.step is not None:
            step = view.step
            lines.append(
                Text.assemble(
                    (f"seq {seq}", HEAD),
                    " · ",
                    (kind, HEAD),
                    "  prefix 1..",
                    str(seq),
                    " → ",
                    (escape_controls(view.summary or ""), OK),
                )
            )
            if step.explanation:
                lines.append(Text(escape_controls(step.explanation), style="italic"))
            lines.append(Text(""))
            if full:
                lines.append(Text("state after this event (● changed):", style=DIM))
                lines.append(
                    json_text(
                        step.after,
                        marked=[c.path for c in step.changes],
                        reveal=reveal,
                        limit=limit,
                    )
                )
            elif step.changes:
                lines.extend(change_lines(step.changes, reveal=reveal, limit=limit))
            else:
                lines.append(Text("no change to the state", style=DIM))
        elif view.mode == "failed" and view.error is not None:
            err = view.error
            where = f"seq {err.seq}" if err.seq is not None else f"line {err.line}"
            lines.append(
                Text.assemble(
                    ("✗ strict replay stops here: ", ERROR), (f"{where} · {err.code}", ERROR)
                )
            )
            lines.append(Text(escape_controls(err.message), style="#e78284"))
            if err.artifact:
                lines.append(Text.assemble(("artifact: ", DIM), escape_controls(err.artifact)))
            if err.traceback:
                lines.append(Text(""))
                lines.append(Text("traceback (a bug in the rules):", style=DIM))
                lines.extend(Text(escape_controls(t)) for t in err.traceback.rstrip().splitlines())
            lines.append(Text(""))
            lines.append(self._event_block(view, reveal, limit))
            lines.append(Text(""))
            n = (err.seq - 1) if err.seq is not None else None
            label = f"state before it (prefix 1..{n})" if n else "state before it"
            lines.append(Text(f"{label}: {escape_controls(view.summary or '')}", style=DIM))
            lines.append(json_text(view.state_before, reveal=reveal, limit=limit))
        else:
            if view.mode == "broken":
                lines.append(Text(escape_controls(view.raw or ""), style="#e78284"))
                return Text("\n").join(lines)
            if view.mode == "receipt" and view.receipt is not None:
                lines.append(
                    Text(
                        f"receipt pending: waiting for {escape_controls(view.receipt.name)} "
                        "(not an error while following; strict again when following stops)",
                        style="#e5c890",
                    )
                )
            elif view.mode == "unreplayed" and view.error is not None:
                err = view.error
                if err.seq is not None:
                    where = f"seq {err.seq} (line {err.line})"
                elif err.line is not None:
                    where = f"line {err.line}"
                else:
                    where = f"the start ({err.code}: {err.message})"
                lines.append(
                    Text(
                        escape_controls(
                            f"not replayed: strict replay stopped at {where}; "
                            "a replay past it would prove nothing"
                        ),
                        style="#e78284",
                    )
                )
            else:
                lines.append(Text(pending_note or "validating: not reached yet", style=DIM))
            lines.append(Text(""))
            lines.append(self._event_block(view, reveal, limit))
        if view.mode == "step" and not full:
            lines.append(Text(""))
            lines.append(self._event_block(view, reveal, limit))
        return Text("\n").join(lines)

    def _event_block(self, view: LineView, reveal: bool, limit: int) -> Text:
        if view.event is not None:
            return Text.assemble(
                Text(f"event (line {view.event.line}):\n", style=DIM),
                json_text(view.event.fields, reveal=reveal, limit=limit),
            )
        raw = escape_controls(view.raw or "")
        return Text.assemble(
            Text(f"line {view.index + 1} as read:\n", style=DIM), Text(clip(raw, limit))
        )


class ReceiptPane(VerticalScroll, can_focus=False):
    """The selected call's receipt: name, size, sha256, pin status, JSON."""

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(id="receipt-body")

    def show(self, view: LineView | None, *, reveal: bool, expand: bool) -> None:
        found = self.query("#receipt-body")
        if not found:
            return
        record = view.record if view is not None and view.receipt is None else None
        # a Temporal activity is its own receipt: name the pane after it
        self.border_title = escape_controls(record[0].split(" · ")[0]) if record else "receipt"
        found.first(Static).update(
            self.render_receipt(view.receipt if view else None, view, reveal=reveal, expand=expand)
        )

    def render_receipt(
        self, rv: ReceiptView | None, view: LineView | None, *, reveal: bool, expand: bool
    ) -> Text:
        limit = CLIP_LONG if expand else CLIP_SHORT
        if view is not None and view.record is not None and rv is None:
            title, data = view.record
            head = Text(escape_controls(title), style=HEAD)
            if not reveal and mask_secrets(data) != data:
                head.append("\nsecret-looking values are masked: r reveals", style=DIM)
            return Text("\n").join([head, json_text(data, reveal=reveal, limit=limit)])
        if rv is None:
            return Text("no call at this event", style=DIM)
        name = escape_controls(rv.name)
        lines = [
            Text.assemble(("call ", DIM), (escape_controls(rv.call_id), HEAD), "  ", (name, DIM))
        ]
        pin_styles = {
            "matches": OK,
            "tampered": ERROR,
            "missing": ERROR,
            "not pinned": CHANGED,
            "none yet": DIM,
        }
        pin_words = {
            "matches": "pin ✓ matches receipt_sha256",
            "tampered": "pin ✗ TAMPERED: file differs from receipt_sha256",
            "missing": "receipt ✗ missing",
            "not pinned": "pin: not pinned (no receipt_sha256)",
            "none yet": "no receipt for this call yet (none is needed so far)",
        }
        lines.append(Text(pin_words[rv.pin], style=pin_styles[rv.pin]))
        if rv.receipt is None:
            if rv.problem and rv.pin != "none yet":
                lines.append(Text(escape_controls(rv.problem), style=DIM))
            return Text("\n").join(lines)
        r = rv.receipt
        lines.append(
            Text.assemble(("size ", DIM), f"{r.size:,} bytes", ("  sha256 ", DIM), r.sha256)
        )
        if rv.pin == "tampered" and rv.pinned_sha256:
            lines.append(
                Text.assemble(("pinned ", DIM), escape_controls(clip(rv.pinned_sha256, 80)))
            )
        if r.data is None:
            lines.append(Text(escape_controls(f"not usable: {r.problem}"), style=ERROR))
            lines.append(
                Text(clip(escape_controls(r.raw.decode("utf-8", "backslashreplace")), limit))
            )
        else:
            if not reveal and mask_secrets(r.data) != r.data:
                lines.append(Text("secret-looking values are masked: r reveals", style=DIM))
            lines.append(json_text(r.data, reveal=reveal, limit=limit))
        return Text("\n").join(lines)
