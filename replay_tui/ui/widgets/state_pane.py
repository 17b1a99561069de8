"""The state pane: what the event changed, or the whole state with the
change marked. It renders a :class:`~replay_tui.views.runview.LineView` into
``rich.text.Text``: data is never markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.binding import BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from replay_tui.core.errors import ReplayError
from replay_tui.core.safe_text import clip, escape_controls
from replay_tui.engine.replay import Step
from replay_tui.state.diff import Path
from replay_tui.ui.keys import bindings_for
from replay_tui.ui.render.changes import (
    CLIP_LONG,
    CLIP_SHORT,
    DIM,
    ERROR,
    HEAD,
    OK,
    WARN,
    change_lines,
)
from replay_tui.ui.render.json_text import MAX_DEPTH, json_text
from replay_tui.ui.render.json_tree import JsonTree
from replay_tui.views.runview import LineView

#: The keys of a pane with a row cursor (the state pane, the watch list):
#: its actions ``cursor``, ``cursor_page`` and ``cursor_to``.
ROW_CURSOR_KEYS: list[BindingType] = list(bindings_for("rows"))


class StatePane(ScrollView, can_focus=True):
    """The change made by the selected event, or the whole state with it marked.

    On the Line API: the pane is a few lines of text (wrapped to its width)
    around at most one :class:`JsonTree`, and :meth:`render_line` draws only
    the rows on screen. A step costs what the event changed, however big the
    state. Focused (Tab), arrows and PgUp/PgDn move a row cursor, Enter or
    ``→`` opens a container and ``←`` closes it.
    """

    BINDINGS: ClassVar[list[BindingType]] = [*ROW_CURSOR_KEYS, *bindings_for("state")]
    COMPONENT_CLASSES = {"state-pane--cursor"}

    class Watch(Message):
        """Watch the value at ``path`` across the run (``w``); None: no
        path at the cursor."""

        def __init__(self, path: Path | None) -> None:
            super().__init__()
            self.path = path

    cursor: reactive[int] = reactive(0, repaint=False, init=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._head: list[Text] = []  # text above the tree (or all of it)
        self._tail: list[Text] = []  # text below the tree
        self._tree: JsonTree | None = None
        self._head_rows: list[Strip] = []
        self._tail_rows: list[Strip] = []
        self._rows_width = -1
        self._cache: LRUCache[int, Strip] = LRUCache(512)
        #: Containers the person opened or closed, kept while stepping.
        self.opened: set[Path] = set()
        self.closed: set[Path] = set()
        self._shown: tuple[Any, ...] | None = None  # what the text was made from (held)
        self._tree_key: Any = None
        #: The state path of a line above the tree (a change line), by line.
        self._line_paths: dict[int, Path] = {}
        self._head_row_paths: list[Path | None] = []
        self._scroll_target: int | None = None  # see _scroll_to_row

    # -- what to show -----------------------------------------------------
    def show(
        self,
        view: LineView | None,
        *,
        full: bool,
        reveal: bool,
        expand: bool,
        pending_note: str = "",
        compare: list[Text] | None = None,
    ) -> None:
        # the view and B's lines are held, not their id(): a freed list's id is reused, and
        # B's lines made once B is replayed were taken for those that said it was not yet
        key = (view, full, reveal, expand, pending_note, compare)
        shown = self._shown
        if (
            shown is not None
            and shown[0] is view
            and shown[5] is compare
            and shown[1:5] == key[1:5]
        ):
            return
        same_tree = (
            self._tree is not None and self._shown is not None and (self._shown[1:4] == key[1:4])
        )
        self._shown = key
        self._line_paths = {}
        head, tree_value, marks, tail = self.compose_view(
            view, full=full, reveal=reveal, expand=expand, pending_note=pending_note
        )
        if compare:  # compare mode: B beside A, on top
            self._line_paths = {i + len(compare): p for i, p in self._line_paths.items()}
            head = [*compare, *head]
        limit = CLIP_LONG if expand else CLIP_SHORT
        self._head, self._tail = head, tail
        self._tree = (
            JsonTree(
                tree_value,
                marked=marks,
                opened=self.opened,
                closed=self.closed,
                reveal=reveal,
                limit=limit,
            )
            if tree_value is not None
            else None
        )
        self._rows_width = -1
        self._relayout()
        # keep the place while stepping through the full state; show the change
        first_mark = self._first_mark_row(marks)
        if first_mark is not None and not self._row_visible(first_mark):
            self._scroll_to_row(max(0, first_mark - 2))
        elif not same_tree:
            self._scroll_to_row(0)
        self.cursor = min(self.cursor, max(0, self._total() - 1))

    def _scroll_to_row(self, row: int) -> None:
        """Scroll so ``row`` is at the top, now and again once the new
        virtual size is laid out (until then a row past the old size would
        be clamped to it: the change would stay off screen)."""
        self.scroll_to(y=row, animate=False, immediate=True)
        if self.scroll_offset.y != row:  # clamped to the old size: again once laid out
            self._scroll_target = row
            self.call_after_refresh(self._scroll_again)

    def _scroll_again(self) -> None:
        if self._scroll_target is not None:
            target, self._scroll_target = self._scroll_target, None
            self.scroll_to(y=target, animate=False, immediate=True)

    def compose_view(
        self,
        view: LineView | None,
        *,
        full: bool,
        reveal: bool,
        expand: bool,
        pending_note: str = "",
    ) -> Composed:
        """(text above, state to draw as a tree or None, changed paths, text below)."""
        limit = CLIP_LONG if expand else CLIP_SHORT
        if view is None:
            return [Text(pending_note or "no events yet", style=DIM)], None, [], []
        if view.mode == "step" and view.step is not None:
            return self._step_view(view, view.step, full=full, reveal=reveal, limit=limit)
        if view.mode == "initial":
            return _initial_view(view)
        if view.mode == "failed" and view.error is not None:
            return self._failed_view(view, view.error, reveal=reveal, limit=limit)
        if view.mode == "broken":
            return [Text(escape_controls(view.raw or ""), style="#e78284")], None, [], []
        lines = [_why_not_replayed(view, pending_note), Text("")]
        lines.extend(self._event_block(view, reveal, limit).split("\n"))
        return lines, None, [], []

    def _step_view(
        self, view: LineView, step: Step, *, full: bool, reveal: bool, limit: int
    ) -> Composed:
        """A replayed event: what it changed (or, ``full``, the state after it)."""
        ev = view.event
        seq = ev.seq if ev is not None else None
        kind = escape_controls(ev.kind) if ev is not None else "?"
        lines: list[Text] = [
            Text.assemble(
                (f"seq {seq}", HEAD),
                " · ",
                (kind, HEAD),
                "  prefix 1..",
                str(seq),
                " → ",
                (escape_controls(view.summary or ""), OK),
            )
        ]
        if step.explanation:
            lines.append(Text(escape_controls(step.explanation), style="italic"))
        for warning in view.warnings:  # as check prints it
            lines.append(
                Text.assemble(
                    (f"⚠ warning {escape_controls(warning.code)}: ", WARN),
                    escape_controls(warning.message),
                )
            )
        if view.still_open:
            lines.append(
                Text.assemble(
                    ("the ledger ends here; still open: ", "bold #e5c890"),
                    escape_controls("; ".join(view.still_open)),
                )
            )
        lines.append(Text(""))
        if full:
            lines.append(Text("state after this event (● changed):", style=DIM))
            return lines, step.after, [c.path for c in step.changes], []
        if step.changes:
            first = len(lines)
            lines.extend(change_lines(step.changes, reveal=reveal, limit=limit))
            self._line_paths.update(
                (first + i, change.path) for i, change in enumerate(step.changes)
            )
        else:
            lines.append(Text("no change to the state", style=DIM))
        lines.append(Text(""))
        lines.extend(self._event_block(view, reveal, limit).split("\n"))
        return lines, None, [], []

    def _failed_view(
        self, view: LineView, err: ReplayError, *, reveal: bool, limit: int
    ) -> Composed:
        """The first inconsistency: the error, the event, the state before it."""
        where = f"seq {err.seq}" if err.seq is not None else f"line {err.line}"
        lines = [
            Text.assemble(
                ("✗ strict replay stops here: ", ERROR), (f"{where} · {err.code}", ERROR)
            ),
            Text(escape_controls(err.message), style="#e78284"),
        ]
        if err.artifact:
            lines.append(Text.assemble(("artifact: ", DIM), escape_controls(err.artifact)))
        if err.traceback:
            lines.append(Text(""))
            lines.append(Text("traceback (a bug in the rules):", style=DIM))
            lines.extend(Text(escape_controls(t)) for t in err.traceback.rstrip().splitlines())
        lines.append(Text(""))
        lines.extend(self._event_block(view, reveal, limit).split("\n"))
        lines.append(Text(""))
        n = (err.seq - 1) if err.seq is not None else None
        label = f"state before it (prefix 1..{n})" if n else "state before it"
        lines.append(Text(f"{label}: {escape_controls(view.summary or '')}", style=DIM))
        return lines, view.state_before, [], []

    def render_text(self) -> str:
        """Everything the pane holds as plain text (tests, copying)."""
        rows = [t.plain for t in self._head]
        if self._tree is not None:
            rows.extend(self._tree.text(self._tree.line(y)).plain for y in range(len(self._tree)))
        rows.extend(t.plain for t in self._tail)
        return "\n".join(rows)

    # -- layout -------------------------------------------------------------
    def _relayout(self) -> None:
        width = max(1, self.scrollable_content_region.width)
        if width != self._rows_width:
            self._head_rows = self._wrap(self._head, width)
            self._head_row_paths = []
            for i, line in enumerate(self._head):
                rows = len(line.wrap(self.app.console, width, overflow="fold"))
                self._head_row_paths.extend([self._line_paths.get(i)] * rows)
            self._tail_rows = self._wrap(self._tail, width)
            self._rows_width = width
        self._cache.clear()
        self.virtual_size = Size(width, self._total())
        self.refresh()

    def _wrap(self, lines: list[Text], width: int) -> list[Strip]:
        console = self.app.console
        rows: list[Strip] = []
        for line in lines:
            for part in line.wrap(console, width, overflow="fold"):
                rows.append(Strip(part.render(console)))
        return rows

    def _total(self) -> int:
        tree = len(self._tree) if self._tree is not None else 0
        return len(self._head_rows) + tree + len(self._tail_rows)

    def _first_mark_row(self, marks: list[Path]) -> int | None:
        if self._tree is None or not marks:
            return None
        found = self._tree.line_of(marks[0])
        return None if found is None else len(self._head_rows) + found

    def _row_visible(self, row: int) -> bool:
        top = self.scroll_offset.y
        return top <= row < top + self.scrollable_content_region.height

    def on_resize(self) -> None:
        self._relayout()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    # -- drawing ------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        row = y + self.scroll_offset.y
        width = self.scrollable_content_region.width
        mine = self.has_focus and row == self.cursor
        strip = None if mine else self._cache.get(row)
        if strip is None:
            base = self.rich_style
            strip = self._row(row, width).apply_style(base).crop_extend(0, width, base)
            if mine:  # over the row's own colours, not under them
                style = self.get_component_rich_style("state-pane--cursor")
                strip = Strip(Segment.apply_style(iter(strip), post_style=style), width)
            else:
                self._cache[row] = strip
        return strip

    def _row(self, row: int, width: int) -> Strip:
        head = len(self._head_rows)
        if row < head:
            return self._head_rows[row]
        row -= head
        if self._tree is not None:
            if row < len(self._tree):
                text = self._tree.text(self._tree.line(row))
                text.truncate(width, overflow="ellipsis")  # one row a line: cut, marked
                return Strip(text.render(self.app.console))
            row -= len(self._tree)
        if row < len(self._tail_rows):
            return self._tail_rows[row]
        return Strip.blank(0)

    # -- keys -----------------------------------------------------------------
    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh_lines(old - self.scroll_offset.y)
        self.refresh_lines(new - self.scroll_offset.y)
        self.scroll_to_region(Region(0, new, 1, 1), animate=False, immediate=True)

    def on_focus(self) -> None:
        top = self.scroll_offset.y
        if not self._row_visible(self.cursor):
            self.cursor = top
        if self.path_at_cursor() is None:  # start on the first change: what w watches
            first = next(
                (row for row, path in enumerate(self._head_row_paths) if path is not None), None
            )
            if first is not None and self._row_visible(first):
                self.cursor = first
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def action_cursor(self, delta: int) -> None:
        self.cursor = max(0, min(self.cursor + delta, self._total() - 1))

    def action_cursor_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.scrollable_content_region.height - 1))

    def action_cursor_to(self, row: int) -> None:
        self.cursor = max(0, self._total() - 1) if row < 0 else row

    def path_at_cursor(self) -> Path | None:
        """The state path of the row at the cursor: a change line's, or a
        tree line's (None for text and the state itself)."""
        row = self.cursor
        if row < len(self._head_rows):
            return self._head_row_paths[row] if row < len(self._head_row_paths) else None
        row -= len(self._head_rows)
        if self._tree is not None and row < len(self._tree):
            return self._tree.line(row).path or None
        return None

    def action_watch(self) -> None:
        self.post_message(self.Watch(self.path_at_cursor()))

    def action_open_close(self, want_open: int) -> None:
        """Open (1) or close (0) the container at the cursor; closing a
        value inside a container closes that container."""
        tree = self._tree
        row = self.cursor - len(self._head_rows)
        if tree is None or not 0 <= row < len(tree):
            return
        line = tree.line(row)
        path = line.path
        is_open = line.part in ("open", "close")
        if want_open and not is_open:
            if not _has_children(line.value) or len(path) >= MAX_DEPTH:
                return
            # its containers were open when the person opened it: keep them so
            for i in range(1, len(path) + 1):
                self.closed.discard(path[:i])
                self.opened.add(path[:i])
        elif not want_open:
            if not is_open:
                path = path[:-1]  # close the container this line is in
                if not path:
                    return
            self.opened.discard(path)
            self.closed.add(path)
        else:
            return
        self._rebuild_tree()
        found = self._tree.line_of(path) if self._tree is not None else None
        if found is not None:
            self.cursor = len(self._head_rows) + found

    def _rebuild_tree(self) -> None:
        old = self._tree
        if old is None:
            return
        self._tree = JsonTree(
            old.value,
            marked=old.marks,
            opened=self.opened,
            closed=self.closed,
            reveal=old.reveal,
            limit=old.limit,
        )
        self._relayout()

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        self.cursor = offset.y + self.scroll_offset.y
        if event.chain >= 2:
            tree = self._tree
            row = self.cursor - len(self._head_rows)
            if tree is not None and 0 <= row < len(tree):
                self.action_open_close(0 if tree.line(row).part == "open" else 1)

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


Composed = tuple[list[Text], Any, list[Path], list[Text]]
"""What the state pane shows: text above, a state drawn as a tree (or None),
the changed paths marked in it, text below."""


def _initial_view(view: LineView) -> Composed:
    """Prefix 0: the state the rules start from."""
    lines = [
        Text.assemble(
            ("initial state", HEAD),
            "  prefix 0, before event 1 → ",
            (escape_controls(view.summary or ""), OK),
        ),
        Text("what the rules start from, before any event (j: event 1)", style=DIM),
        Text(""),
    ]
    return lines, view.state_before, [], []


def _why_not_replayed(view: LineView, pending_note: str) -> Text:
    """Why a line has no state: its receipt is awaited, replay stopped
    before it, or validation has not reached it yet."""
    if view.mode == "receipt" and view.receipt is not None:
        return Text(
            f"receipt pending: waiting for {escape_controls(view.receipt.name)} "
            "(not an error while following; strict again when following stops)",
            style="#e5c890",
        )
    err = view.error
    if view.mode == "unreplayed" and err is not None:
        if err.seq is not None:
            where = f"seq {err.seq} (line {err.line})"
        elif err.line is not None:
            where = f"line {err.line}"
        else:
            where = f"the start ({err.code}: {err.message})"
        return Text(
            escape_controls(
                f"not replayed: strict replay stopped at {where}; "
                "a replay past it would prove nothing"
            ),
            style="#e78284",
        )
    return Text(pending_note or "validating: not reached yet", style=DIM)


def _has_children(value: Any) -> bool:
    is_container = isinstance(value, Mapping | Sequence) and not isinstance(value, str)
    return is_container and bool(value)
