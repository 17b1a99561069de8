"""A run handed over: one self-contained document for a support ticket.

``replay-tui report`` (and the app's ``X``) writes what someone else needs to
see a run as you saw it: the verdict as ``check`` says it, the digests that
name the exact bytes and rules, the error with its event and the state before
it, and, for each chosen seq, the event, the rule in words, the changes, the
receipt with its pin and the timeline around it.

The document is built once as plain data (:func:`build_report_doc`, its parts
in :mod:`.sections`), every piece of run text already made inert for a
terminal (controls, bidi and invisible characters spelled out) and secrets
masked as the app masks them (:mod:`.inert_text`); :func:`render_markdown` and
:func:`render_html` (:mod:`.rendering`) then pour it into the
templates in ``templates/`` (Jinja2), which only have to keep run text from
being read as markup, so the look changes without touching Python. In
Markdown, run text goes in fenced blocks or inline code whose backtick fence is
longer than any backtick run in it (the template's ``code`` and ``fenced``
filters), so it cannot close them; the HTML template is autoescaped, and the
page loads and runs nothing. :func:`write_report` writes it into a folder.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from replay_tui import __version__
from replay_tui.core.errors import CannotRun
from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import plural
from replay_tui.engine.replay import Replay
from replay_tui.engine.report import build_report, human_summary, refuse_inside_run, write_temp
from replay_tui.handover.charts import ChartSpec, chart_docs
from replay_tui.handover.inert_text import BLOCK_LIMIT, inert_value, json_safe, json_text, mask_raw
from replay_tui.handover.rendering import (
    HTML_TAGS,
    HTML_TEMPLATE,
    MARKDOWN_TEMPLATE,
    md_block,
    md_code,
    render_html,
    render_markdown,
)
from replay_tui.handover.sections import (
    VALUE_LIMIT,
    WINDOW,
    change_line,
    error_doc,
    seq_doc,
    timeline_label,
    timeline_lines,
)
from replay_tui.state.paths import StatePath
from replay_tui.views.cost import cost_words, unpriced_words
from replay_tui.views.runview import RunView

__all__ = [
    "BLOCK_LIMIT",
    "HTML_TAGS",
    "HTML_TEMPLATE",
    "MARKDOWN_TEMPLATE",
    "VALUE_LIMIT",
    "WINDOW",
    "build_report_doc",
    "change_line",
    "json_safe",
    "json_text",
    "mask_raw",
    "md_block",
    "md_code",
    "render_html",
    "render_markdown",
    "timeline_label",
    "timeline_lines",
    "write_report",
]

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
        "run_id": inert_value(replay.run_id),
        "verdict": escape_controls(check[0]),
        "check": [escape_controls(line) for line in check],
        "ok": replay.error is None,
        "events_sha256": inert_value(report["events_sha256"]),
        "compressed": inert_value(report.get("compressed")),
        "rules": {
            "name": escape_controls(str(replay.reducer.name)),
            "version": escape_controls(str(replay.reducer.version)),
            "sha256": inert_value(replay.rules.rules_sha256),
            # what the digest covers: each file the rules run, with its own
            "files": [
                {"path": escape_controls(path), "sha256": digest}
                for path, digest in replay.rules.rules_files.items()
            ],
        },
        "cost": cost_doc(replay, report),
        "writer": f"replay-tui {__version__}",
        "reveal": reveal,
        "error": error_doc(view, reveal, marked),
        "seqs": [seq_doc(view, seq, notes.get(seq) or None, reveal, marked) for seq in chosen],
        "charts": chart_docs(replay, charts, chosen, reveal),
    }


def cost_doc(replay: Replay, report: dict[str, Any]) -> dict[str, Any] | None:
    """What the calls of the valid prefix cost and with what prices, where
    the rules keep a cost (agent sessions, traces)."""
    prices = report.get("prices")
    if prices is None:
        return None
    state = replay.frozen_at(replay.valid)
    said = prices["database"]
    if prices["file"] is not None:
        said = f"{prices['file']['name']} (sha256 {prices['file']['sha256']}), then {said}"
    return {
        "words": inert_value(cost_words(state)),
        "unpriced": inert_value(unpriced_words(state)),
        "events": replay.valid,
        "prices": escape_controls(said),
    }


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
