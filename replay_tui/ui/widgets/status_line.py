"""The status line: the run's names, the verdict, compare mode, where the
cursor is, notes and questions, each piece from the controller that owns it.

:class:`StatusBar` draws it when Textual paints: anything may ask for a
refresh any number of times in a frame, and the line is composed once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from rich.text import Text
from textual.widget import Widget

from replay_tui.core.safe_text import clip, escape_controls

if TYPE_CHECKING:
    from textual.geometry import Size

    from replay_tui.ui.features.bookmarks.controller import Marks
    from replay_tui.ui.features.compare.controller import Comparison
    from replay_tui.ui.features.run.controller import RunSession
    from replay_tui.ui.features.run.cursor import CursorOwner
    from replay_tui.ui.features.search.controller import Search
    from replay_tui.ui.widgets.timeline import Timeline
    from replay_tui.ui.widgets.watch_pane import WatchPane
    from replay_tui.views.runview import LineView


class StatusSource(Protocol):
    """The screen, as the status line reads it."""

    session: RunSession
    cursor: CursorOwner
    compare: Comparison
    search: Search
    marks: Marks
    timeline: Timeline
    watchlist: WatchPane

    @property
    def validating(self) -> bool: ...

    @property
    def at_initial(self) -> bool: ...

    @property
    def line_view(self) -> LineView | None: ...

    @property
    def reveal(self) -> bool: ...

    @property
    def size(self) -> Size: ...


#: A run_id cut to fit the header keeps at least this many characters.
MIN_RUN_ID = 12


class StatusBar(Widget):
    """One line (two with a banner), composed at paint time."""

    def __init__(self, compose_text: Callable[[], Text], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._compose_text = compose_text

    def render(self) -> Text:
        return self._compose_text()

    def changed(self) -> None:
        """Something it shows changed: composed again at the next paint (a
        banner may add its line, hence the layout)."""
        self.refresh(layout=True)


#: How much each piece of the status line matters. When the line is too
#: long for the terminal, the least ranked is cut (with ``…``) or dropped
#: first; a piece with a short form (the same in fewer words) takes it at
#: its ``SHORT`` rank, a little before it would be dropped. What stays keeps
#: its place, and what was dropped comes back if the short forms made room.
RANK = {
    "verdict": 100,
    "compare": 98,  # B's verdict is said nowhere else
    "position": 95,  # the timeline's cursor row says the seq too
    "secrets": 88,
    "stuck": 86,
    "filter": 80,
    "playback": 75,
    "label": 70,
    "condition": 65,
    "new": 60,
    "rules_note": 55,
    "cost": 52,  # what the calls cost up to the cursor (sessions, traces)
    "warning": 50,
    "watch": 45,
    "bookmark": 40,
    "where": 35,  # which session of a resumed file: also in the state
    "run_id": 30,  # names the run in a ticket, when it says more than the label
    "rules": 20,
    "same_run_id": 0,  # the run_id is the label: said twice
}
SHORT = {"verdict": 92, "position": 68, "compare": 66, "condition": 62, "new": 57}

#: The least a cut piece keeps, in cells (less is dropped instead).
MIN_CUT = 12


@dataclass
class Piece:
    """One piece of the status line: its text, how much it matters, a
    shorter form and when to take it, and whether it may be cut with ``…``."""

    text: Text
    rank: int
    short: Text | None = None
    short_rank: int = 0
    cut: bool = False
    least: int = MIN_CUT  # cells a cut leaves at the least
    cut_rank: int | None = None  # cut sooner than it would be dropped

    @classmethod
    def named(cls, name: str, text: Text, short: Text | None = None, **kw: Any) -> Piece:
        return cls(text, RANK[name], short, SHORT.get(name, RANK[name]), **kw)


def fit(pieces: list[Piece], width: int) -> Text:
    """The pieces in their order on one line of ``width`` cells: short
    forms taken and pieces cut or dropped, least ranked first (among
    equals, the rightmost), until it fits; then what was dropped comes
    back, most ranked first, where there is room again."""
    kept = [p for p in pieces if p.text.cell_len]
    # (rank, rightmost first, what): 0 take the short form, 1 cut only, 2 cut or drop
    steps = [(p.short_rank, -i, 0, p) for i, p in enumerate(kept) if p.short is not None]
    steps += [(p.cut_rank, -i, 1, p) for i, p in enumerate(kept) if p.cut_rank is not None]
    steps += [(p.rank, -i, 2, p) for i, p in enumerate(kept)]
    steps.sort(key=lambda step: step[:3])

    def room() -> int:
        return width - sum(p.text.cell_len for p in kept)

    dropped: list[Piece] = []
    for _, _, what, piece in steps:
        if room() >= 0:
            break
        if piece not in kept:
            continue
        if what == 0:
            assert piece.short is not None
            piece.text = piece.short
        elif what == 1:  # as far as it takes, never below its least
            _cut(piece, max(piece.least, piece.text.cell_len + room()))
        elif not _cut(piece, piece.text.cell_len + room()):
            kept.remove(piece)
            dropped.append(piece)
    for piece in sorted(dropped, key=lambda p: -p.rank):
        if piece.text.cell_len <= room() or _cut(piece, room()):
            kept.append(piece)
    kept.sort(key=pieces.index)
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    for piece in kept:
        text.append_text(piece.text)
    return text


def _cut(piece: Piece, cells: int) -> bool:
    """Cut ``piece`` to ``cells`` if it may be cut that short; True if it
    now fits in them."""
    if not piece.cut or cells < piece.least:
        return False
    if piece.text.cell_len > cells:
        piece.text.truncate(cells, overflow="ellipsis")
    return True


def status_text(screen: StatusSource) -> Text:
    """The whole status line for ``screen`` at its width."""
    session, cursor = screen.session, screen.cursor
    pieces = _names(screen)
    verdicts = []
    for short in (False, True):
        verdict = Text("  ")
        session.verdict(
            verdict,
            validating=screen.validating,
            error_waiting=cursor.error_waiting is not None,
            short=short,
        )
        verdicts.append(verdict)
    # the verdict is cut (never dropped) on a terminal too narrow for its short form
    pieces.append(Piece.named("verdict", verdicts[0], verdicts[1], cut=True, least=4))
    pieces.append(
        Piece.named(
            "compare", _said(screen.compare.status), _said(screen.compare.status, short=True)
        )
    )
    total = session.view.row_count()
    timeline = screen.timeline  # (messages still arrive while the app exits)
    index = timeline.cursor_index if total and timeline.is_attached else None
    pieces.extend(_position(screen, index, total))
    pieces.extend(_notes(screen, index))
    seq = screen.timeline.prefix_seq()
    pieces.append(
        Piece.named(
            "condition",
            _said(screen.search.condition_status, seq),
            _said(screen.search.condition_status, seq, short=True),
            cut=True,
        )
    )
    watch = _said(screen.watchlist.status)
    pieces.append(Piece.named("watch", watch, cut=True))
    pieces.append(Piece.named("playback", _said(screen.timeline.playback.status)))
    if screen.reveal:
        pieces.append(Piece.named("secrets", Text("  secrets shown", style="bold #e78284")))
    text = fit(pieces, screen.size.width)
    if session.banner:  # on a line of its own: it must be read whole
        text.append("\n ")
        text.append(escape_controls(session.banner), style="bold #e78284")
    return text


def _said(status: Callable[..., None], *args: object, **kwargs: object) -> Text:
    """What a controller's ``status(text, ...)`` says, as a piece of its own."""
    text = Text()
    status(text, *args, **kwargs)
    return text


def _position(screen: StatusSource, index: int | None, total: int) -> list[Piece]:
    """Where the cursor is, and the state's word there; the warnings at it."""
    view = screen.line_view
    text, short = Text(), Text()
    warnings = Text()
    if index is not None and screen.at_initial and view is not None:
        word = escape_controls(view.summary or "")
        text.append(f"  initial state, prefix 0 of {total}  state ")
        text.append(word, style="bold #a6d189")
        short.append(f"  prefix 0/{total} ")
        short.append(word, style="bold #a6d189")
    elif index is not None:
        row = screen.session.view.row(index)
        if row.seq is not None:
            text.append(f"  seq {row.seq} of {total}")
            short.append(f"  seq {row.seq}/{total}")
        else:  # a line with no usable seq: say where it is
            text.append(f"  line {index + 1} of {total}")
            short.append(f"  line {index + 1}/{total}")
        if view is not None and view.index == index and view.summary:
            word = escape_controls(view.summary)
            if view.mode == "step":
                text.append("  state ")
                text.append(word, style="bold #a6d189")
                short.append(" ")
                short.append(word, style="bold #a6d189")
                for warning in view.warnings:
                    said = clip(f"{warning.code}: {warning.message}", 60)
                    warnings.append(f"  ⚠ {escape_controls(said)}", style="bold #e5c890")
            elif view.mode == "failed":
                text.append("  state before it ")
                text.append(word, style="bold #e5c890")
                short.append(" before: ")
                short.append(word, style="bold #e5c890")
    where = Text()
    if view is not None and view.index == index and view.where:
        where.append(f"  {escape_controls(view.where)}", style="#99d1db")
    cost = Text()
    if view is not None and view.cost and (view.index == index or screen.at_initial):
        cost.append(f"  {view.cost}", style="#e5c890")
    return [
        Piece.named("position", text, short),
        Piece.named("cost", cost),
        Piece.named("where", where, cut=True),
        Piece.named("warning", warnings, cut=True),
    ]


def _notes(screen: StatusSource, index: int | None) -> list[Piece]:
    """New rows while following, rules notes, the filter, a bookmark."""
    session = screen.session
    pieces = []
    if session.following:
        new_rows = screen.timeline.tail.unseen(session.view.row_count())
        if new_rows > 0:
            style = "bold #81c8be"
            long = Text(f"  +{new_rows:,} new {_events(new_rows)} (End returns to the tail)")
            long.stylize(style)
            short = Text(f"  +{new_rows:,} new (End)", style=style)
            pieces.append(Piece.named("new", long, short))
    note, stuck = Text(), Text()
    session.notes(note, stuck)
    pieces.append(Piece.named("rules_note", note, cut=True))
    pieces.append(Piece.named("stuck", stuck, cut=True))
    pieces.append(Piece.named("filter", _said(screen.search.filter_status), cut=True))
    at_initial = screen.at_initial
    here = session.view.row(index).seq if index is not None and not at_initial else None
    pieces.append(Piece.named("bookmark", _said(screen.marks.status, here), cut=True))
    return pieces


def _events(n: int) -> str:
    return "event" if n == 1 else "events"


def _names(screen: StatusSource) -> list[Piece]:
    """The run's label, its run_id and its rules: the run_id is the least
    needed when it is the label again, then the rules go (the default's
    name, most often); a long run_id (a Temporal run's UUID) is cut."""
    session = screen.session
    r = session.replay
    head = Text(" ")
    head.append(escape_controls(session.label), style="bold")
    pieces = [Piece.named("label", head, cut=True, least=8)]
    if r.run_id:
        run = escape_controls(r.run_id)
        same = run == escape_controls(session.label)
        text = Text(f"  run {run}", style="dim")
        pieces.append(
            Piece.named(
                "same_run_id" if same else "run_id",
                text,
                cut=len(run) > MIN_RUN_ID,
                least=len("  run ") + MIN_RUN_ID,
                cut_rank=15,  # a long run_id (a Temporal run's UUID) is cut before the rules go
            )
        )
    rules = Text(f"  rules {r.reducer.name} {r.reducer.version}", style="dim")
    pieces.append(Piece.named("rules", rules))
    return pieces
