"""The receipt inspector's text: a call's receipt (name, size, sha256, pin
status, JSON) or an event's recorded result, and the causes and effects
atop it, as inert ``rich.text.Text`` (Rich only, no Textual)."""

from __future__ import annotations

from rich.text import Text

from replay_tui.core.safe_text import clip, escape_controls, mask_secrets
from replay_tui.core.words import plural
from replay_tui.ui.render.changes import CHANGED, CLIP_LONG, CLIP_SHORT, DIM, ERROR, HEAD, OK
from replay_tui.ui.render.json_text import json_text, was_cut
from replay_tui.views.runview import PIN_WORDS, LineView, ReceiptView


def cut_hint(shown: Text) -> list[Text]:
    """Above a value shown cut: where to read it whole."""
    if was_cut(shown):
        return [Text("cut to fit: o reads it whole, a screen at a time", style=DIM)]
    return []


def links_text(view: LineView | None) -> Text | None:
    """The event's causes (by ``parent_seq``) and effects, atop the inspector
    (a receipt below them can be long)."""
    if view is None or not (view.causes or view.effects):
        return None

    def seqs(links: tuple[tuple[int, str], ...], sep: str) -> Text:
        out = Text()
        for i, (seq, kind) in enumerate(links):
            if i:
                out.append(sep, style=DIM)
            out.append(f"seq {seq}", style=HEAD)
            out.append(f" {escape_controls(kind)}")
        return out

    lines = []
    if view.causes:
        line = Text.assemble(("caused by  ", DIM), seqs(view.causes, " ← "))
        if view.causes_more:
            line.append(" ← …", style=DIM)  # a conversation's chain is all of it
        lines.append(line)
    if view.effects:
        more = view.effects_count - len(view.effects)
        line = Text.assemble(("effects    ", DIM), seqs(view.effects, ", "))
        if more > 0:
            line.append(f" (and {more:,} more)", style=DIM)
        lines.append(line)
    keys = "p goes to the cause, P back" if view.causes else "P goes back after p"
    lines.append(Text(keys, style=DIM))
    lines.append(Text(""))
    return Text("\n").join(lines)


def receipt_text(
    rv: ReceiptView | None, view: LineView | None, *, reveal: bool, expand: bool
) -> Text:
    limit = CLIP_LONG if expand else CLIP_SHORT
    if view is not None and view.record is not None and rv is None:
        title, data = view.record
        head = Text(escape_controls(title), style=HEAD)
        if not reveal and mask_secrets(data) != data:
            head.append("\nsecret-looking values are masked: r reveals", style=DIM)
        body = json_text(data, reveal=reveal, limit=limit)
        parts = [head, *cut_hint(body), body]
        if view.record_later is not None:  # known only later: never shown as now
            parts.append(Text(""))
            parts.append(Text("later in this run (after the last valid event):", style=DIM))
            parts.append(json_text(view.record_later[1], reveal=reveal, limit=limit))
        return Text("\n").join(parts)
    if view is not None and view.mode == "initial":
        return Text("no event yet: prefix 0", style=DIM)
    if rv is None:
        return Text("no call at this event", style=DIM)
    name = escape_controls(rv.name)
    lines = [Text.assemble(("call ", DIM), (escape_controls(rv.call_id), HEAD), "  ", (name, DIM))]
    pin_styles = {
        "matches": OK,
        "tampered": ERROR,
        "missing": ERROR,
        "not pinned": CHANGED,
        "none yet": DIM,
        "denied": DIM,
        "pending": CHANGED,
    }
    lines.append(Text(PIN_WORDS[rv.pin], style=pin_styles[rv.pin]))
    if rv.receipt is None:
        if rv.problem and rv.pin not in ("none yet", "denied", "pending"):
            lines.append(Text(escape_controls(rv.problem), style=DIM))
        return Text("\n").join(lines)
    r = rv.receipt
    lines.append(
        Text.assemble(
            ("size ", DIM), plural(r.size, "byte", sep=True), ("  sha256 ", DIM), r.sha256
        )
    )
    if rv.pin == "tampered" and rv.pinned_sha256:
        lines.append(Text.assemble(("pinned ", DIM), escape_controls(clip(rv.pinned_sha256, 80))))
    if r.data is None:
        lines.append(Text(escape_controls(f"not usable: {r.problem}"), style=ERROR))
        lines.append(Text(clip(escape_controls(r.raw.decode("utf-8", "backslashreplace")), limit)))
    else:
        if not reveal and mask_secrets(r.data) != r.data:
            lines.append(Text("secret-looking values are masked: r reveals", style=DIM))
        body = json_text(r.data, reveal=reveal, limit=limit)
        lines += [*cut_hint(body), body]
    return Text("\n").join(lines)
