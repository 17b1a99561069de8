"""The document through a template (Jinja2): the package's templates or a
folder's, HTML autoescaped, and the Markdown filters that put run text only
in code it cannot close."""

from __future__ import annotations

import functools
import html as _html
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from replay_tui.core.safe_text import escape_controls
from replay_tui.core.words import plural
from replay_tui.handover.sections import change_line, timeline_label, timeline_lines

if TYPE_CHECKING:  # jinja2 is imported when a report is rendered, not at start-up
    import jinja2
    from markupsafe import Markup

# -- Markdown: run text only in code it cannot close ------------------------------------

_BACKTICKS = re.compile(r"`+")


def _longest_backticks(text: str) -> int:
    return max((len(m) for m in _BACKTICKS.findall(text)), default=0)


def md_code(text: str) -> str:
    """Inline code that ``text`` cannot close: a fence longer than any backtick
    run in it, padded when it starts or ends with a backtick or space. Newlines
    and controls are escaped, so it stays on its line. The Markdown
    template's ``code`` filter."""
    text = escape_controls(text)
    if not text:
        return "(empty)"
    fence = "`" * (_longest_backticks(text) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_block(text: str, info: str = "") -> str:
    """A fenced block that ``text`` cannot close (its fence is longer than any
    backtick run in it). The Markdown template's ``fenced`` filter."""
    fence = "`" * max(3, _longest_backticks(text) + 1)
    return f"{fence}{info}\n{text}\n{fence}"


# -- rendering: the document through a template -----------------------------------------

#: The templates, in ``replay_tui/handover/templates/`` (shipped in the wheel).
MARKDOWN_TEMPLATE = "report.md.j2"
HTML_TEMPLATE = "report.html.j2"

#: The start tags the HTML template emits: run data never adds one.
HTML_TAGS = frozenset(
    {
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "h1",
        "h2",
        "p",
        "ul",
        "li",
        "code",
        "pre",
        "span",
        "table",
        "tr",
        "th",
        "td",
        # the charts (--chart): inline SVG drawn by the template, no script
        "svg",
        "g",
        "line",
        "path",
        "rect",
        "text",
    }
)


def _html_escape(value: Any) -> Markup:
    """Every value the HTML template writes, escaped as :func:`html.escape`
    does (``&#x27;``, ``&quot;``), so the page is what it was before templates;
    autoescape then leaves it as it is. Markup (a macro's output) is kept."""
    from markupsafe import Markup

    if isinstance(value, Markup):
        return value
    return Markup(_html.escape(str(value), quote=True))


def _environment(html: bool, folder: str | None) -> jinja2.Environment:
    """The templates' environment: the package's templates, or those in
    ``folder`` first (one it does not have comes from the package). HTML is
    autoescaped; an unknown name in a template is an error, not silence."""
    import jinja2

    loader: jinja2.BaseLoader = jinja2.PackageLoader("replay_tui.handover", "templates")
    if folder is not None:
        loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(folder), loader])
    env = jinja2.Environment(
        loader=loader,
        autoescape=html,
        finalize=_html_escape if html else None,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        plural=plural,
        change_line=change_line,
        timeline_label=timeline_label,
        timeline_lines=timeline_lines,
    )
    if not html:
        env.filters.update(code=md_code, fenced=md_block)
    return env


@functools.lru_cache(maxsize=2)
def _package_environment(html: bool) -> jinja2.Environment:
    """The package's templates, compiled once per process."""
    return _environment(html, None)


def _render(doc: Mapping[str, Any], html: bool, templates: str | os.PathLike[str] | None) -> str:
    # a folder of one's own is read afresh each time: it may be being edited
    env = (
        _package_environment(html)
        if templates is None
        else _environment(html, os.fspath(templates))
    )
    return env.get_template(HTML_TEMPLATE if html else MARKDOWN_TEMPLATE).render(doc=doc)


def render_markdown(doc: Mapping[str, Any], templates: str | os.PathLike[str] | None = None) -> str:
    """The report as Markdown (GitHub, Jira, Zendesk), from ``report.md.j2``:
    run text only in inline code or fenced blocks it cannot close.

    ``templates``: a folder whose ``report.md.j2`` is used instead of the
    package's (the look changes, the document does not)."""
    return _render(doc, False, templates)


def render_html(doc: Mapping[str, Any], templates: str | os.PathLike[str] | None = None) -> str:
    """The report as one HTML page, from ``report.html.j2``: inline CSS, no
    scripts, nothing fetched (its Content-Security-Policy forbids it too),
    every piece of run data escaped (the template is autoescaped).

    ``templates``: a folder whose ``report.html.j2`` is used instead of the
    package's; it is autoescaped all the same."""
    return _render(doc, True, templates)
