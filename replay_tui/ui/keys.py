"""Every key of the app in one table: the bindings of the screen and of
each pane, the help screen, the footer and the command palette all come
from it, so they cannot disagree.

A key's *target* is where it is bound: ``screen`` keys work from every pane
(Textual looks a key up from the focused widget to the screen); a pane's
keys work while it has focus. Rows with no keys document keys a Textual
widget brings itself (Tab, a scroll view's arrows).
"""

from __future__ import annotations

from typing import NamedTuple

from textual.binding import Binding


class Key(NamedTuple):
    #: Textual key names, comma-separated ("": a key the widget brings itself).
    keys: str
    action: str
    #: What it does: the help screen and the palette say this.
    description: str
    #: The keys as help shows them ("": the row above lists this one too).
    shown: str
    #: Its label in the footer (screen keys) or in Textual's keys panel (pane keys).
    label: str = ""
    target: str = "screen"


_ROWS = "↑ ↓ PgUp PgDn Home End"

KEYS: list[Key] = [
    Key("down,j", "step(1)", "Next event", "↓ / j"),
    Key("up,k", "step(-1)", "Previous event (before event 1: the initial state)", "↑ / k"),
    Key("pagedown", "page(1)", "Page down", "PgDn"),
    Key("pageup", "page(-1)", "Page up", "PgUp"),
    Key("home,g", "first", "First event", "Home / g"),
    Key("end,G", "last", "Last event (and ride the tail when following)", "End / G"),
    Key(
        "colon",
        "goto",
        "Go to a seq (0: the initial state), or to where a condition turns true",
        ":",
        "Go to",
    ),
    Key("e", "problem(1)", "Next error, warning or failed tool call", "e", "Next problem"),
    Key("E", "problem(-1)", "Previous error, warning or failed tool call", "E"),
    Key("p", "cause(1)", "Go to this event's cause (its parent_seq)", "p", "Cause"),
    Key("P", "cause(-1)", "Back to where p came from", "P"),
    Key(
        "v",
        "fold_calls",
        "Calls folded: one row per call (its tool, status, duration, cost), or every event; "
        "in a trace, a span tree with each span's bar over the run's time",
        "v",
        "Calls",
    ),
    Key("slash", "filter", "Filter rows by kind, call_id or text", "/", "Filter"),
    Key(
        "m",
        "resume_chain",
        "Claude Code: only the records claude --resume from here loads (its parentUuid "
        "chain back to a break, a compaction or the start); m again: all rows",
        "m",
    ),
    Key("n", "match(1)", "Next match: where the : condition turns true, or the filter's row", "n"),
    Key("N", "match(-1)", "Previous match (condition or filter)", "N"),
    Key("space", "play", "Play / pause at the recorded pace", "space", "Play"),
    Key("plus,equals_sign", "speed(2.0)", "Play faster", "+"),
    Key("minus", "speed(0.5)", "Play slower", "-"),
    Key("d", "flip('full')", "State diff / full state", "d", "Diff/full"),
    Key("r", "flip('reveal')", "Reveal / mask secret-looking values", "r", "Secrets"),
    Key("x", "flip('expand')", "Expand / cut long values", "x"),
    Key("y", "copy_state", "Copy the state at the cursor as JSON", "y", "Copy"),
    Key("c", "copy_link", "Copy a link to this seq (RUN@SEQ: replay-tui opens it there)", "c"),
    Key("b", "bookmark", "Bookmark this event, or remove its bookmark", "b", "Bookmark"),
    Key("B", "next_bookmark", "Next bookmark (Ctrl+P lists them with their notes)", "B"),
    Key("a", "annotate", "Attach a one-line note to this event (bookmarks it)", "a"),
    Key("s", "skip_event", "What if this event had not happened: compare with that branch", "s"),
    Key("right_square_bracket", "difference(1)", "Compare mode: next row where A and B part", "]"),
    Key(
        "left_square_bracket",
        "difference(-1)",
        "Compare mode: previous row where they part",
        "[",
    ),
    Key(
        "X",
        "write_report",
        "Write a report (Markdown) of the bookmarks and this seq into the current folder",
        "X",
    ),
    Key(
        "escape",
        "escape",
        "Stop watching; else leave compare mode; else forget the condition, the filter "
        "and a jump waiting for validation",
        "Esc",
    ),
    Key("f", "follow", "Follow the growing ledger (ride the tail)", "f", "Follow"),
    Key("F", "unfollow", "Stop following (judge the ledger as complete)", "F"),
    Key(
        "t",
        "open_transcript",
        "Open the sub-agent's transcript of this Task call (Claude Code), the rollout "
        "this one was forked from or spawned by (Codex, at session_meta), or the subgraph "
        "this task ran (LangGraph); Esc comes back",
        "t",
    ),
    Key(
        "o",
        "open_result",
        "Read the receipt or recorded result at the cursor whole (else the event itself), "
        "a screen at a time (Esc returns)",
        "o",
    ),
    Key("R", "reload_rules", "Reload the rules file and re-run every prefix", "R"),
    # the panes' own keys
    Key(
        "",
        "",
        "Move focus: timeline, state, watch list, receipt (the lit border)",
        "Tab / Shift+Tab",
        target="focus",
    ),
    Key("", "", "In the receipt pane: scroll it", _ROWS, target="receipt"),
    Key("", "", "In the state pane: move its row cursor (j / k still step)", _ROWS, target="state"),
    Key("up", "cursor(-1)", "", "", "Up", target="rows"),
    Key("down", "cursor(1)", "", "", "Down", target="rows"),
    Key("pageup", "cursor_page(-1)", "", "", "Page up", target="rows"),
    Key("pagedown", "cursor_page(1)", "", "", "Page down", target="rows"),
    Key("home", "cursor_to(0)", "", "", "Top", target="rows"),
    Key("end", "cursor_to(-1)", "", "", "Bottom", target="rows"),
    Key(
        "enter,right",
        "open_close(1)",
        "In the state pane: open / close the container at the cursor",
        "Enter / → , ←",
        "Open",
        target="state",
    ),
    Key("left", "open_close(0)", "", "", "Close", target="state"),
    Key(
        "enter,right",
        "unfold(1)",
        "In the timeline, calls folded: unfold the call at the cursor into its events / "
        "fold it. In a span tree: → opens a folded span (▸) one level, then unfolds its "
        "events; ← folds its events, then its whole subtree into its row, then goes to "
        "its parent",
        "Enter / → , ←",
        "Unfold",
        target="timeline",
    ),
    Key("left", "unfold(0)", "", "", "Fold", target="timeline"),
    Key(
        "right_curly_bracket",
        "slice(1)",
        "In the timeline: on to the next slice of the overview strip (a click there goes too)",
        "} , {",
        "Next slice",
        target="overview",
    ),
    Key("left_curly_bracket", "slice(-1)", "", "", "Previous slice", target="overview"),
    Key(
        "w",
        "watch",
        "In the state pane: watch the path at the cursor (every seq it changed)",
        "w",
        "Watch this path",
        target="state",
    ),
    Key(
        "enter",
        "jump",
        "In the watch list: go to that seq (Esc stops watching)",
        "Enter",
        "Go there",
        target="watch",
    ),
    Key(
        "C",
        "toggle_chart",
        "In the watch list: show / hide the chart of the value over seq",
        "C",
        "Chart",
        target="watch",
    ),
    Key("question_mark", "help", "Help: every key", "?", "Help"),
    Key("q", "quit", "Quit", "q", "Quit"),
]

#: Footer keys, most needed first (the help screen keeps the table's order).
FOOTER_ORDER = [
    "help",
    "quit",
    "goto",
    "flip('full')",
    "problem(1)",
    "filter",
    "play",
    "follow",
    "bookmark",
    "flip('reveal')",
    "copy_state",
]


def bindings_for(target: str) -> list[Binding]:
    """The bindings of ``target``. The screen's are in footer order, so a
    short footer (80 columns) keeps the ones a newcomer needs first."""
    keys = [k for k in KEYS if k.target == target and k.keys]
    if target != "screen":
        return [Binding(k.keys, k.action, k.label, show=False) for k in keys]
    keys.sort(key=lambda k: FOOTER_ORDER.index(k.action) if k.action in FOOTER_ORDER else 99)
    return [
        Binding(k.keys, k.action, k.label or k.description, show=bool(k.label), key_display=k.shown)
        for k in keys
    ]


def help_rows() -> list[tuple[str, str]]:
    """(keys, what they do) for the help screen, in the table's order."""
    return [(k.shown, k.description) for k in KEYS if k.shown]


def palette_keys() -> list[Key]:
    """The screen's keys, for the command palette."""
    return [k for k in KEYS if k.target == "screen"]
