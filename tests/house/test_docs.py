"""The guide (docs/, a MkDocs site) builds with no warning, and its keys
page is the app's key table: a page that drifted, a broken link or a
missing picture fails here."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from replay_tui.ui.keys import KEYS
from tests.conftest import ROOT


class _Cells(HTMLParser):
    """The text of each table row's cells."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in {"td", "th"}:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in {"td", "th"} and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as CI would build it: strict, every warning an error."""
    out = tmp_path_factory.mktemp("site")
    got = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert got.returncode == 0, got.stdout + got.stderr
    return out


def test_the_guide_builds_strictly(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert (site / "keys" / "index.html").is_file()


def test_the_keys_page_lists_every_key(site: Path) -> None:
    page = (site / "keys" / "index.html").read_text()
    assert "<!-- keys -->" not in page
    parser = _Cells()
    parser.feed(page)
    listed = [tuple(row) for row in parser.rows if len(row) == 2 and row[0] != "key"]
    wanted = [(" ".join(k.shown.split()), k.description) for k in KEYS if k.shown]
    assert sorted(listed) == sorted(wanted)


def test_the_keys_page_says_nothing_untrue_above_its_table(site: Path) -> None:
    """The note for whoever reads docs/keys.md as a file (where there is no
    table) is not on the site, where the table is."""
    raw = (ROOT / "docs" / "keys.md").read_text()
    assert "this page ends here" in raw and "<!-- /keys -->" in raw
    text = re.sub(r"<[^>]+>", " ", (site / "keys" / "index.html").read_text())
    assert "ends here" not in text and "no table" not in text
    assert "<!-- /keys -->" not in text and "Everywhere" in text


def test_the_screenshots_are_in_the_site(site: Path) -> None:
    """Pages show the pictures of screenshots/ without a copy in docs/."""
    shown = {
        name
        for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
        for name in re.findall(r"screenshots/([\w.-]+\.(?:svg|png))", page.read_text())
    }
    assert "demo-seq-10.svg" in shown
    for name in shown:
        assert (site / "screenshots" / name).is_file(), name
    app = html.unescape((site / "app" / "index.html").read_text())
    assert 'src="../screenshots/broken-divergence.svg"' in app


def test_the_readme_key_table_names_only_keys_the_app_has() -> None:
    """The README's short table is written by hand: each key it names is a
    key of the app's table."""
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("| key | what it does |") :].split("\n\n")[0]
    known = {w for k in KEYS for w in k.shown.split()}
    for row in table.splitlines()[2:]:
        for key in re.findall(r"`([^`]+)`", row.split("|")[1]):
            assert key in known, (key, row)


_PACKAGES = "|".join(
    p.name for p in (ROOT / "replay_tui").iterdir() if p.is_dir() and p.name != "__pycache__"
)
#: A source path as the pages name it: ``replay_tui/ui/keys.py`` or ``ui/keys.py``.
_SOURCE = re.compile(rf"`((?:replay_tui/)?(?:{_PACKAGES})/[\w/]+\.py)`")


def test_every_source_file_the_guide_names_is_there() -> None:
    """Moving a module without telling the guide (how it is built, ...) fails here."""
    named = {
        (page.name, path)
        for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
        for path in _SOURCE.findall(page.read_text())
    }
    assert len(named) > 40
    missing = sorted(
        (page, path)
        for page, path in named
        if not (ROOT / path).is_file() and not (ROOT / "replay_tui" / path).is_file()
    )
    assert missing == []


def test_the_langgraph_guide_shows_what_it_says() -> None:
    """docs/langgraph.md shows a thread and the threads list, and the thread's
    picture shows what the text beside it says: the model's two parallel
    calls folded into one row, each call's arguments and result beside it."""
    page = (ROOT / "docs" / "langgraph.md").read_text()
    for name in ("langgraph-thread.svg", "langgraph-threads.svg"):
        assert f"../screenshots/{name}" in page, name
    shot = html.unescape((ROOT / "screenshots" / "langgraph-thread.svg").read_text())
    shot = shot.replace("\xa0", " ")
    assert "get_weather ×2" in shot and "Paris, London" in shot and "seq 5–8" in shot
    assert "2 calls · get_weather ok, get_weather ok" in shot
    assert "call_london" in shot and "sunny, 21 C" in shot
    assert "get_weather ×2 ok  Paris, London" in page
    listing = html.unescape((ROOT / "screenshots" / "langgraph-threads.svg").read_text())
    assert "subgraph research:" in listing.replace("\xa0", " ")
