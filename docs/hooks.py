"""MkDocs hooks: the keys page is filled from the app's key table when the
site is built, and the screenshots are served beside the pages.

- ``<!-- keys -->`` ... ``<!-- /keys -->`` on a page (a note for whoever
  reads the file as it is) becomes the table of every key, from
  ``KEYS`` (the table the bindings, the help screen, the footer and the
  palette come from), grouped by where each key works, so the page cannot
  drift from the app.
- The images in ``screenshots/`` (where ``screenshots/make_screenshots.py``
  writes them) are added to the site as they are, never copied into
  ``docs/``. Pages link them as ``../screenshots/NAME.svg``, which is right
  on GitHub too; on the site that is ``screenshots/NAME.svg``.
"""

from __future__ import annotations

import html
import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "screenshots"
MARKER = "<!-- keys -->"
END_MARKER = "<!-- /keys -->"

#: Where a key works, in the words of the page (a target not named here
#: gets a heading of its own name, so a new pane never breaks the build).
TARGETS = {
    "screen": "Everywhere",
    "focus": "Moving focus",
    "timeline": "In the timeline",
    "overview": "In the timeline: the overview strip",
    "state": "In the state pane",
    "watch": "In the watch list",
    "receipt": "In the receipt pane",
    "rows": "In a pane with a row cursor",
}


def _key_table() -> str:
    """The keys as Markdown: a table per target, in the table's order."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from replay_tui.ui.keys import KEYS

    groups: dict[str, list[tuple[str, str]]] = {}
    for key in KEYS:
        if key.shown:  # a row without its own keys is listed by the row above
            groups.setdefault(key.target, []).append((key.shown, key.description))
    order = [t for t in TARGETS if t in groups] + [t for t in groups if t not in TARGETS]
    parts = []
    for target in order:
        rows = "\n".join(f"| {_keys(shown)} | {_cell(what)} |" for shown, what in groups[target])
        heading = TARGETS.get(target, target)
        parts.append(f"## {heading}\n\n| key | what it does |\n|---|---|\n{rows}\n")
    return "\n".join(parts)


def _keys(shown: str) -> str:
    """``↓ / j`` as <kbd>↓</kbd> / <kbd>j</kbd>: a ``/`` or ``,`` between two
    keys stays text (``/`` alone is the filter's key)."""
    words = shown.split(" ")
    last = len(words) - 1
    return " ".join(
        w if w in {"/", ","} and 0 < i < last else f"<kbd>{_cell(w)}</kbd>"
        for i, w in enumerate(words)
    )


def _cell(text: str) -> str:
    """Text for a table cell: no markup, and no ``|`` to end the cell."""
    escaped = html.escape(text, quote=False).replace("|", "&#124;")
    for char in "\\`*_[]":
        escaped = escaped.replace(char, "\\" + char)
    return escaped


def on_files(files: Files, config: Any) -> Files:
    for image in sorted(SCREENSHOTS.iterdir()):
        if image.suffix in {".svg", ".png"}:
            files.append(
                File(
                    f"screenshots/{image.name}",
                    src_dir=str(ROOT),
                    dest_dir=config["site_dir"],
                    use_directory_urls=config["use_directory_urls"],
                )
            )
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    markdown = markdown.replace("](../screenshots/", "](screenshots/")
    if MARKER in markdown:
        head, _, rest = markdown.partition(MARKER)
        _, ended, tail = rest.partition(END_MARKER)
        markdown = head + _key_table() + (tail if ended else rest)
    return markdown
