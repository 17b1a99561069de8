"""The prompts: go to a seq or a condition, filter, note."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from replay_tui.core.safe_text import escape_controls
from replay_tui.questions.condition import (
    Condition,
    ConditionError,
    looks_like_seq,
    parse_condition,
)

ResultT = TypeVar("ResultT")


class PromptHost(Protocol):
    """The app, as a screen opening a prompt sees it."""

    def push_prompt(self, screen: PromptScreen[Any], done: Callable[[Any], None]) -> None: ...


class PromptScreen(ModalScreen[ResultT]):
    """A modal with one input (``:``, ``/``, ``a``). Keys typed in the same
    burst as the key that opened it (``:12`` Enter, as fast as a terminal
    sends them) arrive before its input has focus: the app hands them here
    (see ``ReplayApp.push_prompt``) and they go into the input, an Enter
    answering. Subclasses compose one :class:`Input` and implement
    :meth:`answer`."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self) -> None:
        super().__init__()
        #: Keys typed before the input was up (the app fills it).
        self.typed: list[str] = []
        self.is_dismissed = False

    def on_mount(self) -> None:
        if self.typed:
            self.call_after_refresh(self.type_ahead, "")

    def dismiss(self, result: ResultT | None = None) -> Any:
        """Answer once (an Enter typed ahead and the input's own can both come)."""
        self.is_dismissed = True
        return super().dismiss(result)

    def type_ahead(self, chars: str) -> None:
        """Keys typed before the input had focus: into it (an Enter submits)."""
        self.typed.append(chars)
        found = self.query(Input)
        if self.is_dismissed or not found:
            return
        field = found.first()
        text = "".join(self.typed)
        self.typed.clear()
        first, enter, _ = text.partition("\n")
        field.insert_text_at_cursor(first)
        if enter:
            field.post_message(Input.Submitted(field, field.value))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if not self.is_dismissed:
            self.answer(event.value)

    def answer(self, value: str) -> None:
        raise NotImplementedError


class GotoScreen(PromptScreen[int | Condition | None]):
    """``:`` asks for a seq number or a condition on the state (the next
    seq after the cursor where it turns true). A condition that does not
    parse is explained under the input, with a caret at its column."""

    def __init__(self, seq_range: Callable[[], str], current: str = "") -> None:
        super().__init__()
        #: The seqs there are to go to, asked again while the prompt is open
        #: (validation goes on behind it).
        self.seq_range = seq_range
        self.current = current

    def _label(self) -> Text:
        return Text(
            f"Go to a seq ({self.seq_range()}; 0: the initial state), or to where a "
            'condition turns true, e.g. phase == "retrying" (n / N: again)'
        )

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self._label(), id="goto-range")
            yield Input(
                value=self.current,
                placeholder='seq, or e.g. calls.call-003.status == "denied"',
                id="goto-input",
            )
            yield Static(id="goto-error")

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(0.25, self._refresh_range)

    def _refresh_range(self) -> None:
        self.query_one("#goto-range", Label).update(self._label())

    def answer(self, text: str) -> None:
        value = text.strip()
        if not value:
            self.dismiss(None)
            return
        if looks_like_seq(value):
            self.dismiss(int(value))
            return
        try:
            self.dismiss(parse_condition(value))
        except ConditionError as exc:
            offset = len(text) - len(text.lstrip())
            self._explain(text, exc.column, exc.message, offset)

    @on(Input.Changed, "#goto-input")
    def _changed(self) -> None:
        self.query_one("#goto-error", Static).remove_class("-shown")

    def _explain(self, text: str, column: int, message: str, offset: int) -> None:
        """The condition, a caret under the column, and what is wrong there."""
        error = self.query_one("#goto-error", Static)
        caret = " " * (column - 1 + offset) + "^"
        error.update(
            Text.assemble(
                (escape_controls(text), "bold"),
                "\n",
                (caret, "bold"),
                "\n",
                f"column {column + offset}: ",
                escape_controls(message),
            )
        )
        error.add_class("-shown")


class NoteScreen(PromptScreen[str | None]):
    """``a`` asks for a one-line note on an event (kept with its bookmark)."""

    def __init__(self, seq: int, current: str) -> None:
        super().__init__()
        self.seq = seq
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(
                Text(
                    f"A note on seq {self.seq} (it bookmarks the event; kept in your state "
                    "directory, never in the run folder)"
                )
            )
            yield Input(
                value=self.current,
                placeholder="e.g. denied, but the policy allows it",
                id="note-input",
            )

    def answer(self, value: str) -> None:
        self.dismiss(value)


class FilterScreen(PromptScreen[str | None]):
    """``/`` asks for text to keep rows by (kind, call_id or payload text)."""

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text("Filter rows by kind, call_id or text (empty: show all)"))
            yield Input(
                value=self.current, placeholder="e.g. tool_denied or call-002", id="filter-input"
            )

    def answer(self, value: str) -> None:
        self.dismiss(value)
