"""The receipt inspector: the selected call's receipt, or the event's
recorded result, with its causes and effects above it."""

from __future__ import annotations

from rich.markup import escape
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from replay_tui.core.safe_text import escape_controls
from replay_tui.ui.render.receipt import links_text, receipt_text
from replay_tui.views.runview import LineView


class ReceiptPane(VerticalScroll, can_focus=True):
    """The selected call's receipt: name, size, sha256, pin status, JSON.

    Focusable (Tab): arrows, PgUp/PgDn and Home/End scroll a long receipt."""

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(id="receipt-body")

    def show(self, view: LineView | None, *, reveal: bool, expand: bool) -> None:
        found = self.query("#receipt-body")
        if not found:
            return
        record = view.record if view is not None and view.receipt is None else None
        # a Temporal activity is its own receipt: name the pane after it
        # a title is markup to Textual: the tool's name is the run's data, escaped
        title = escape(escape_controls(record[0].split(" · ")[0])) if record else "receipt"
        self.border_title = title
        body = receipt_text(view.receipt if view else None, view, reveal=reveal, expand=expand)
        links = links_text(view)
        found.first(Static).update(body if links is None else Text("\n").join([links, body]))
