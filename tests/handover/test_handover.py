"""``replay-tui report``: a run handed over in one document. What it says
(verdict, digests, the error, each chosen seq), that run text stays data in
Markdown and in HTML, that secrets are masked, and that the run folder is
never written."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.cli import main
from replay_tui.core.errors import CannotRun
from replay_tui.engine.open import open_replay
from replay_tui.formats.run import locate_run
from replay_tui.handover import document as handover
from replay_tui.handover.bookmarks import Bookmarks
from replay_tui.handover.document import (
    build_report_doc,
    render_html,
    render_markdown,
    write_report,
)
from replay_tui.handover.sections import change_doc
from replay_tui.state.diff import Change
from tests.conftest import DEMO, ROOT, SAMPLES, TESTS, line, make_run, receipt, sha
from tests.helpers.cli import run_cli
from tests.helpers.files import make_read_only
from tests.helpers.inert import RAW_CONTROLS

BROKEN = SAMPLES / "broken-divergence"
CORPUS_HOSTILE = TESTS / "corpus" / "cases" / "hostile-text-everywhere"

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "</pre>",
    "| a | b |",
    "# heading",
    "```",
    "[link](javascript:x)",
    "````~~~",
]


def ats(seqs: Iterable[int]) -> list[str]:
    """``--at`` for each seq."""
    return [arg for seq in seqs for arg in ("--at", str(seq))]


def hostile_run(dest: Path) -> Path:
    """A valid agent run whose every free-text field is hostile, then one line
    that is not JSON (so the error shows a raw line) holding the same."""
    text = " ".join(HOSTILE)
    body = receipt("c1", output=text, **{text: text})
    lines = [
        line(1, "run_started", payload={"task": text, "model": "# heading\n| a | b |"}),
        line(2, "attempt_started", payload={"attempt": 1}),
        line(
            3,
            "model_proposed",
            payload={"call_id": "c1", "tool": "</pre>", "args": {text: text}, "tokens": 5},
        ),
        line(4, "tool_allowed", payload={"call_id": "c1"}),
        line(5, "tool_started", payload={"call_id": "c1"}),
        line(
            6,
            "tool_finished",
            payload={"call_id": "c1", "ok": True, "cost": 0.5, "receipt_sha256": sha(body)},
        ),
        line(7, "check_finished", payload={"name": text, "passed": False}),
        b'{"seq": 8, "kind": "state_changed", "payload": "' + text.encode() + b" ```` <b>\n",
    ]
    return make_run(dest, lines, receipts={"c1": body})


def secret_run(dest: Path) -> Path:
    body = receipt("c1", headers={"authorization": "Bearer xyz"})
    lines = [
        line(1, "run_started", payload={"task": "t", "api_key": "sk-live-123"}),
        line(2, "attempt_started", payload={"attempt": 1}),
        line(
            3,
            "model_proposed",
            payload={"call_id": "c1", "tool": "http", "args": {"api_key": "sk-live-123"}},
        ),
        line(4, "tool_allowed", payload={"call_id": "c1"}),
        line(5, "tool_started", payload={"call_id": "c1"}),
        line(
            6,
            "tool_finished",
            payload={"call_id": "c1", "ok": True, "cost": 0.5, "receipt_sha256": sha(body)},
        ),
        b'{"seq": 7, "kind": "check_finished", "password": "hunter2", "payload": {\n',
    ]
    return make_run(dest, lines, receipts={"c1": body})


# -- Markdown, read as Markdown reads it ----------------------------------------------

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def md_parts(doc: str) -> tuple[list[str], list[str], list[str]]:
    """(lines outside fenced blocks, the content of each fenced block, each
    inline code span's content), fences and spans closed as CommonMark closes
    them: a fence by a line of at least as many of its characters, a span by
    the next backtick run of the same length."""
    outside: list[str] = []
    blocks: list[str] = []
    spans: list[str] = []
    fence: str | None = None
    content: list[str] = []
    for text in doc.split("\n"):
        if fence is None:
            m = _FENCE_OPEN.match(text)
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence, content = m.group(1), []
                continue
            outside.append(text)
        else:
            stripped = text.strip()
            if (
                len(stripped) >= len(fence)
                and set(stripped) == {fence[0]}
                and len(text) - len(text.lstrip(" ")) <= 3
            ):
                blocks.append("\n".join(content))
                fence = None
            else:
                content.append(text)
    assert fence is None, "a fenced block is never closed"
    for text in outside:
        runs = list(re.finditer(r"`+", text))
        i = 0
        while i < len(runs):
            n = len(runs[i].group())
            close = next((j for j in range(i + 1, len(runs)) if len(runs[j].group()) == n), None)
            if close is None:
                i += 1
                continue
            spans.append(text[runs[i].end() : runs[close].start()])
            i = close + 1
    return outside, blocks, spans


def exposed(text: str) -> str:
    """A line outside fences with its code spans taken out: what Markdown
    would read as markup."""
    out, pos = [], 0
    runs = list(re.finditer(r"`+", text))
    i = 0
    while i < len(runs):
        n = len(runs[i].group())
        close = next((j for j in range(i + 1, len(runs)) if len(runs[j].group()) == n), None)
        if close is None:
            i += 1
            continue
        out.append(text[pos : runs[i].start()])
        pos = runs[close].end()
        i = close + 1
    out.append(text[pos:])
    return "".join(out)


TEMPLATE_HEADING = re.compile(
    r"^(# replay-tui report: |## Error: |## Seq \d+( \(the initial state\))?$)"
)


def assert_markdown_holds(doc: str, strings: list[str]) -> None:
    """Every string in ``strings`` is in a fenced block or a code span, and
    no run text outside them can start a heading, a table row or a tag."""
    outside, blocks, spans = md_parts(doc)
    for s in strings:
        assert any(s in b for b in blocks) or any(s in sp for sp in spans), s
    for text in outside:
        bare = exposed(text)
        for s in HOSTILE:
            assert s not in bare, (s, text)
        assert "<" not in bare and "|" not in bare, text
        assert not text.startswith(("|", "<")), text
        if text.startswith("#"):
            assert TEMPLATE_HEADING.match(text), text
    for ch in RAW_CONTROLS:
        assert ch not in doc, f"raw {ch!r}"


# -- HTML, read as a browser reads it ------------------------------------------------------

ALLOWED_TAGS = {
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
}
ALLOWED_ATTRS = {"class", "lang", "charset", "http-equiv", "content", "name"}


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def assert_html_holds(doc: str, strings: list[str]) -> Page:
    page = Page()
    page.feed(doc)
    page.close()
    for tag, attrs in page.tags:
        assert tag in ALLOWED_TAGS, tag
        for name, value in attrs:
            assert name in ALLOWED_ATTRS and not name.startswith("on"), (tag, name)
            assert "http" not in (value or "") and "javascript" not in (value or "")
    text = "".join(page.text)
    for s in strings:
        assert s in text, s
    assert "://" not in doc.replace("https://evil.example", "")  # nothing fetched or linked
    for ch in RAW_CONTROLS:
        assert ch not in doc, f"raw {ch!r}"
    return page


# -- what it says ------------------------------------------------------------------------


def test_markdown_of_demo_at_10(capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", str(DEMO)])
    verdict = capsys.readouterr().out.split("\n")[0]
    main(["check", str(DEMO), "--json"])
    digest = orjson.loads(capsys.readouterr().out)["events_sha256"]
    code, out, err = run_cli(capsys, "report", str(DEMO), "--at", "10")
    assert code == 0 and err == ""
    assert verdict == "demo-001: verified: 14 events, 1 receipt, state retrying (agent_run 1.0.0)"
    assert f"`{verdict}`" in out and f"`{digest}`" in out
    assert "`check_finished: tests failed in attempt 1; phase running -> retrying`" in out
    assert '~ phase: "running" → "retrying"' in out
    assert "`agent_run` `1.0.0`" in out
    section = out.split("## Seq 10", 1)[1]
    timeline = section.split("Timeline, lines 5..14 (▶ here):", 1)[1]
    _, blocks, _ = md_parts(timeline)
    seqs = [int(re.match(r"^[▶◆ ] +(\d+)", row).group(1)) for row in blocks[0].split("\n")]  # type: ignore[union-attr]
    assert seqs == list(range(5, 15))
    assert "▶ 10  check_finished" in blocks[0]
    assert_markdown_holds(out, [verdict])


def test_a_failing_run_shows_the_error_its_event_and_the_state_before(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(
        capsys, "report", str(BROKEN), "--at", "12", "--at", "10", "--at", "12"
    )
    assert code == 0 and err == ""
    assert "## Error: `divergence`" in out and "- at: seq 11, line 11" in out
    assert "`host recorded 'succeeded', rules derive 'retrying'`" in out
    assert "- artifact: `events.jsonl:11`" in out
    error = out.split("## Error", 1)[1].split("## Seq", 1)[0]
    _, blocks, _ = md_parts(error)
    event = orjson.loads(blocks[0])
    assert event["seq"] == 11 and event["payload"] == {"to": "succeeded"}
    before = orjson.loads(blocks[1])
    assert before["phase"] == "retrying" and before["checks"][0]["seq"] == 10
    assert "State before it, after 10 events (`retrying`):" in error
    # seqs deduplicated and sorted; past the valid prefix: not replayed, and why
    assert out.count("## Seq 12") == 1 and out.index("## Seq 10") < out.index("## Seq 12")
    after = out.split("## Seq 12", 1)[1]
    assert "not replayed: it comes after the first error: strict replay stopped at seq 11" in after
    assert "Changes:" not in after


def test_seq_0_and_seqs_past_the_ledger(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "report", str(DEMO), "--at", "0")
    assert code == 0
    initial = out.split("## Seq 0 (the initial state)", 1)[1]
    _, blocks, _ = md_parts(initial)
    assert orjson.loads(blocks[0])["phase"] == "new"
    # asked for on the command line, a seq past the ledger is a bad value: one line, exit 2
    code, out, err = run_cli(capsys, "report", str(DEMO), "--at", "0", "--at", "99")
    assert code == 2 and out == ""
    assert err == "replay-tui: --at 99: seq 99 is past the end of the run (14 events)\n"
    # the document itself (a bookmark on a ledger since cut short) says why there is none
    replay, _ = open_replay(str(DEMO), history=True)
    try:
        doc = build_report_doc(replay.verify(), [99], {}, False)
        assert "`not replayed: the ledger has 14 lines, none at seq 99`" in render_markdown(doc)
    finally:
        replay.close()


def test_receipt_and_pin_at_a_tool_finished(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "report", str(DEMO), "--at", "6")
    assert code == 0
    assert (
        "receipt `receipts/call-001.json` of call `call-001`: pin ✓ matches receipt_sha256" in out
    )
    assert "`da55aa494703a7984872f561dd725e6a407877d33658a1380e314f752fa9a7b9`" in out
    tampered = SAMPLES / "broken-receipt_tampered"
    code, out, _ = run_cli(capsys, "report", str(tampered))
    assert code == 0 and "pin ✗ TAMPERED" in out and "pinned sha256" in out


def test_a_temporal_history_is_reported_with_its_activity(
    capsys: pytest.CaptureFixture[str],
) -> None:
    history = SAMPLES / "temporal" / "sdk-python--research-workflow-history.json"
    code, out, err = run_cli(capsys, "report", str(history), "--at", "5", "--html")
    assert code == 0 and err == ""
    assert_html_holds(out, ["sdk-python--research-workflow-history.json", "verified"])


def test_the_report_names_each_file_the_rules_digest_covers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Markdown and HTML list the rules' files, each with its sha256, under
    rules_sha256: the digest of their sha256sum listing."""
    session = SAMPLES / "agent-sessions" / "claude-code-short.jsonl"
    code, out, err = run_cli(capsys, "report", str(session))
    assert code == 0 and err == "", err
    files = re.findall(r"^  - `(replay_tui/reducers/[^`]+)` `([0-9a-f]{64})`$", out, flags=re.M)
    names = [path for path, _ in files]
    assert "replay_tui/reducers/sessions/rules.py" in names and names == sorted(names)
    for path, digest in files:
        assert sha((ROOT / path).read_bytes()) == digest
    listing = "".join(f"{digest}  {path}\n" for path, digest in files)
    assert f"rules_sha256 `{sha(listing.encode())}`, of:" in out
    code, page, err = run_cli(capsys, "report", str(session), "--html")
    assert code == 0 and err == "", err
    assert_html_holds(page, [f"{path} {digest}" for path, digest in files])


def test_a_rules_files_name_in_the_report_is_inert(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "rules"
    folder.mkdir()
    rules = folder / "ru`les\x1b[2J.py"
    rules.write_text("import refund_helper\nfrom replay_tui.reducers.refund import REDUCER\n")
    (folder / "refund_helper.py").write_text("")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "refund_helper", raising=False)
    run = make_run(tmp_path / "run", [line(1, "requested", payload={"amount": 5})])
    spec = f"{rules}:REDUCER"
    code, out, err = run_cli(capsys, "report", str(run), "--reducer", spec)
    assert code == 0 and err == "", err
    assert "\x1b" not in out
    assert_markdown_holds(out, ["ru`les\\e[2J.py"])
    code, out, err = run_cli(capsys, "report", str(run), "--reducer", spec, "--html")
    assert code == 0 and "\x1b" not in out
    assert_html_holds(out, ["ru`les\\e[2J.py"])
    sys.modules.pop("refund_helper", None)


# -- run text is data ------------------------------------------------------------------


def test_html_keeps_hostile_text_as_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run = hostile_run(tmp_path / "<img src=x onerror=alert(1)>")
    code, out, err = run_cli(capsys, "report", str(run), "--html", "--at", "3", "--at", "6")
    assert code == 0 and err == "", err
    page = assert_html_holds(out, [*HOSTILE, "<img src=x onerror=alert(1)>"])
    assert "bad_json" in "".join(page.text)  # the raw line of the error is shown too
    assert "<script" not in out and "<img" not in out and "&lt;/pre&gt;" in out


def test_html_of_the_hostile_corpus_case(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        capsys,
        "report",
        str(CORPUS_HOSTILE),
        "--html",
        *ats(range(1, 8)),
    )
    assert code == 0 and err == ""
    markup = "[bold red]markup[/] [link=https://evil.example]x[/link] [/oops]"
    page = assert_html_holds(out, [markup, "\\u001b]52;c;ZWNobyBwd25lZA==\\u0007", "\\u202eevil"])
    assert "".join(page.text).count(markup) >= 3


def test_markdown_keeps_hostile_text_in_code(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = hostile_run(tmp_path / "run")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    marks = Bookmarks.load(locate_run(str(run)).events)
    marks.annotate(3, "# heading | a | b | <script>alert(1)</script> ``` ````")
    marks.save()
    code, out, err = run_cli(capsys, "report", str(run), "--bookmarks", "--at", "6", "--at", "8")
    assert code == 0 and err == "", err
    assert "- note: `````" in out  # a fence longer than the note's longest run
    assert_markdown_holds(out, [*HOSTILE, "# heading | a | b | <script>alert(1)</script> ``` ````"])
    code, out, _ = run_cli(capsys, "report", str(CORPUS_HOSTILE), *ats(range(8)))
    assert code == 0
    assert_markdown_holds(out, ["[bold red]markup[/] [link=https://evil.example]x[/link] [/oops]"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", "`plain`"),
        ("a`b", "``a`b``"),
        ("`start", "`` `start ``"),
        ("end``", "``` end`` ```"),
        ("two\nlines\x1b[2J", "`two\\nlines\\e[2J`"),
        ("", "(empty)"),
    ],
)
def test_inline_code_cannot_be_closed_by_its_text(text: str, expected: str) -> None:
    assert handover.md_code(text) == expected


def test_fenced_blocks_are_longer_than_any_backtick_run() -> None:
    assert handover.md_block("a\n```\nb", "json") == "````json\na\n```\nb\n````"
    assert handover.md_block("x") == "```\nx\n```"


# -- secrets ---------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_secrets_are_masked_unless_revealed(
    fmt: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run = secret_run(tmp_path / "run")
    args = ["report", str(run), "--at", "1", "--at", "3", "--at", "6"]
    if fmt == "html":
        args.append("--html")
    code, out, _ = run_cli(capsys, *args)
    assert code == 0
    for secret in ("sk-live-123", "Bearer xyz", "xyz", "hunter2"):
        assert secret not in out, secret
    assert "••••••" in out and "secret-looking values are masked" in out
    code, out, _ = run_cli(capsys, *args, "--reveal")
    assert code == 0
    for secret in ("sk-live-123", "Bearer xyz", "hunter2"):
        assert secret in out, secret


def test_change_values_under_secret_keys_are_masked(tmp_path: Path) -> None:
    run = make_run(
        tmp_path / "run",
        [
            line(1, "run_started", payload={"task": "t"}),
            line(2, "attempt_started", payload={"attempt": 1}),
        ],
    )
    replay, _ = open_replay(str(run), history=True)
    try:
        replay.verify()
        doc = build_report_doc(replay, [1], {}, False)
    finally:
        replay.close()
    masked = change_doc(Change(("auth", "token"), "old-secret", "new-secret"), False)
    assert masked["old"] == masked["new"] == "••••••"
    shown = change_doc(Change(("auth", "token"), "old-secret", "new-secret"), True)
    assert shown["new"] == '"new-secret"'
    assert doc["seqs"][0]["changes"]


# -- the run folder is evidence --------------------------------------------------------


def fingerprint(root: Path) -> dict[str, tuple[int, int, int, bytes | None]]:
    seen: dict[str, tuple[int, int, int, bytes | None]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [".", *dirnames, *filenames]:
            path = Path(dirpath) / name
            st_ = path.lstat()
            data = path.read_bytes() if stat.S_ISREG(st_.st_mode) else None
            seen[str(path.relative_to(root))] = (st_.st_mode, st_.st_size, st_.st_mtime_ns, data)
    return seen


def test_out_inside_the_run_folder_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(DEMO, run)
    link = tmp_path / "link.md"
    link.symlink_to(run / "report.md")
    folder_link = tmp_path / "into-run"
    folder_link.symlink_to(run / "receipts")
    before = fingerprint(run)
    for target in (
        run / "report.md",
        run / "events.jsonl",
        run / "receipts" / "x.html",
        run,
        run / ".." / "run" / "r.md",
        link,
        folder_link / "r.md",
    ):
        code, out, err = run_cli(capsys, "report", str(run), "--at", "3", "--out", str(target))
        assert code == 2 and out == "" and err.count("\n") == 1, (target, err)
        assert err.startswith("replay-tui: ") and "run" in err
    assert fingerprint(run) == before
    history = tmp_path / "history.json"
    shutil.copy(SAMPLES / "temporal" / "hand-written--update-after-reset.json", history)
    code, _, err = run_cli(capsys, "report", str(history), "--out", str(history))
    assert code == 2 and "ledger" in err
    # beside a history file is fine: only the history itself is evidence there
    code, out, _ = run_cli(capsys, "report", str(history), "--out", str(tmp_path / "h.md"))
    assert code == 0 and (tmp_path / "h.md").read_text().startswith("# replay-tui report: ")


def test_a_read_only_run_is_left_as_it_was(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # As root the modes are not enforced, but the fingerprint still proves
    # that nothing was written, touched or left behind.
    evidence = tmp_path / "evidence"
    shutil.copytree(DEMO, evidence / "demo")
    shutil.copytree(BROKEN, evidence / "broken")
    make_read_only(evidence)
    try:
        before = fingerprint(evidence)
        out_dir = tmp_path / "out"
        out_dir.mkdir()
        for name in ("demo", "broken"):
            for suffix in (".md", ".html"):
                target = out_dir / f"{name}{suffix}"
                code, out, err = run_cli(
                    capsys,
                    "report",
                    str(evidence / name),
                    "--at",
                    "10",
                    "--at",
                    "12",
                    "--out",
                    str(target),
                )
                assert code == 0 and err == "" and target.is_file(), err
                assert out.startswith("wrote ")
            code, out, _ = run_cli(capsys, "report", str(evidence / name), "--at", "3")
            assert code == 0 and out.startswith("# replay-tui report")
            replay, _ = open_replay(str(evidence / name), history=True)
            try:
                replay.verify()
                for html in (False, True):
                    path = write_report(replay, [3, 12], {12: "here"}, html=html, folder=out_dir)
                    assert path.parent == out_dir and path.is_file()
                with pytest.raises(CannotRun):
                    write_report(replay, [3], {}, html=False, folder=evidence / name / "receipts")
            finally:
                replay.close()
        assert fingerprint(evidence) == before
        assert (out_dir / "demo.html").read_text().startswith("<!DOCTYPE html>")
    finally:
        for dirpath, _, _ in os.walk(evidence):
            Path(dirpath).chmod(0o755)


def test_write_report_never_overwrites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Frozen(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Frozen:
            return cls(2026, 11, 1, 9, 0, 31, tzinfo=UTC)

    monkeypatch.setattr(handover, "datetime", Frozen)
    replay, _ = open_replay(str(DEMO), history=True)
    try:
        replay.verify()
        paths = [write_report(replay, [10], {}, html=False, folder=tmp_path) for _ in range(3)]
        page = write_report(replay, [10], {10: "<b>"}, html=True, folder=tmp_path)
        with pytest.raises(CannotRun):
            write_report(replay, [10], {}, html=False, folder=tmp_path / "nope")
        with pytest.raises(CannotRun):
            write_report(replay, [10], {}, html=False, folder=DEMO)
    finally:
        replay.close()
    assert [p.name for p in paths] == [
        "demo-001-report-20261101T090031.md",
        "demo-001-report-20261101T090031-2.md",
        "demo-001-report-20261101T090031-3.md",
    ]
    assert page.name == "demo-001-report-20261101T090031.html"
    assert paths[0].read_bytes() == paths[2].read_bytes()
    assert "`check_finished: tests failed" in paths[0].read_text()
    assert_html_holds(page.read_text(), ["<b>"])
    assert not list(tmp_path.glob(".replay_report.*"))  # no temp file left behind


# -- bookmarks, options, exit codes -------------------------------------------------------


def test_bookmarks_are_shown_with_their_notes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    code, out, err = run_cli(capsys, "report", str(DEMO), "--bookmarks")
    assert code == 0 and "no bookmarks" in err and "## Seq" not in out
    marks = Bookmarks.load(locate_run(str(DEMO)).events)
    marks.annotate(12, "the wrong call")
    marks.toggle(4)
    marks.save()
    code, out, err = run_cli(capsys, "report", str(DEMO), "--bookmarks", "--at", "12", "--at", "2")
    assert code == 0 and err == ""
    assert [int(n) for n in re.findall(r"^## Seq (\d+)", out, re.M)] == [2, 4, 12]
    assert "## Seq 12\n\n- note: `the wrong call`" in out
    assert re.search(r"^◆ +4  tool_allowed", out, re.M)  # another chosen seq, in a timeline
    code, out, _ = run_cli(capsys, "report", str(DEMO), "--bookmarks", "--html")
    assert code == 0 and "<li>note: <code>the wrong call</code></li>" in out


def test_out_ending_in_html_writes_html(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "ticket.HTML"
    code, out, _ = run_cli(capsys, "report", str(DEMO), "--at", "10", "--out", str(target))
    assert code == 0 and out.startswith(f"wrote {target}")
    assert_html_holds(target.read_text(), ["check_finished: tests failed in attempt 1"])
    assert stat.S_IMODE(target.stat().st_mode) & 0o044  # for sharing, like check --out


def test_stdout_and_out_are_the_same_bytes(
    capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path
) -> None:
    assert main(["report", str(BROKEN), "--at", "3"]) == 0
    printed = capsysbinary.readouterr().out
    assert main(["report", str(BROKEN), "--at", "3", "--out", str(tmp_path / "r.md")]) == 0
    assert (tmp_path / "r.md").read_bytes() == printed


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--at", "-1"], "--at: -1: seqs are 0 (the initial state) and up"),
        (["--at", "x"], "invalid int value"),
    ],
)
def test_bad_arguments_exit_2(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run_cli(capsys, "report", str(DEMO), *args)
    assert code == 2 and out == "" and err.count("\n") == 1 and words in err


def test_a_missing_run_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run_cli(capsys, "report", str(tmp_path / "nope"), "--at", "3")
    assert code == 2 and out == "" and err.count("\n") == 1 and "no such file or folder" in err
    (tmp_path / "empty").mkdir()
    code, out, err = run_cli(capsys, "report", str(tmp_path / "empty"))
    assert code == 2 and out == "" and "not a run folder" in err


def test_reducer_runs_supervised_and_help_has_examples(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "replay_tui",
            "report",
            str(DEMO),
            "--at",
            "10",
            "--reducer",
            "agent_run",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert "check_finished: tests failed in attempt 1" in out.stdout
    help_text = subprocess.run(
        [sys.executable, "-m", "replay_tui", "report", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    ).stdout
    assert "examples:" in help_text and "--bookmarks" in help_text and "--reveal" in help_text


def test_the_document_renders_from_plain_data() -> None:
    replay, _ = open_replay(str(BROKEN), history=True)
    try:
        replay.verify()
        doc = build_report_doc(replay, [12, 10, 10], {10: "first"})
    finally:
        replay.close()
    assert [s["seq"] for s in doc["seqs"]] == [10, 12]
    assert doc["error"]["code"] == "divergence" and doc["seqs"][1]["mode"] == "unreplayed"
    orjson.dumps(doc)  # plain data: it could be written as JSON too
    assert render_markdown(doc).startswith("# replay-tui report: `broken-divergence`")
    assert render_html(doc).startswith("<!DOCTYPE html>")


# -- the look is the templates' ----------------------------------------------------------


def broken_doc() -> dict[str, Any]:
    replay, _ = open_replay(str(BROKEN), history=True)
    try:
        replay.verify()
        return build_report_doc(replay, [8, 12], {8: "<b>note</b>"})
    finally:
        replay.close()


def test_the_templates_ship_in_the_package() -> None:
    from importlib.resources import files

    folder = files("replay_tui.handover") / "templates"
    html = (folder / handover.HTML_TEMPLATE).read_text()
    markdown = (folder / handover.MARKDOWN_TEMPLATE).read_text()
    assert "default-src 'none'" in html and "<script" not in html and "|safe" not in html
    # the HTML template's tags are the ones the page may hold, and no others
    assert set(re.findall(r"<([a-z][a-z0-9]*)", html)) == handover.HTML_TAGS
    assert "`replay-tui check` says:" in markdown
    tomls = (ROOT / "pyproject.toml").read_text()
    assert '"handover/templates/*"' in tomls and '"jinja2>=3.1"' in tomls


def test_a_template_is_all_it_takes_to_change_the_look(tmp_path: Path) -> None:
    doc = broken_doc()
    (tmp_path / handover.HTML_TEMPLATE).write_text(
        "<html><body><h1 class=custom>{{ doc.run }}</h1>"
        "{% for s in doc.seqs %}<p>{{ s.seq }}{% if s.note %}: {{ s.note }}{% endif %}</p>{% endfor %}"
        "</body></html>\n"
    )
    page = render_html(doc, templates=tmp_path)
    # the custom look, still autoescaped: a note cannot become markup
    assert page == (
        "<html><body><h1 class=custom>broken-divergence</h1>"
        "<p>8: &lt;b&gt;note&lt;/b&gt;</p><p>12</p></body></html>\n"
    )
    # a folder without the Markdown template falls back to the package's
    assert render_markdown(doc, templates=tmp_path) == render_markdown(doc)
    (tmp_path / handover.MARKDOWN_TEMPLATE).write_text(
        "{% for s in doc.seqs %}* seq {{ s.seq }}: {{ (s.note or '')|code }}\n{% endfor %}"
    )
    assert render_markdown(doc, templates=tmp_path) == "* seq 8: `<b>note</b>`\n* seq 12: (empty)\n"
    # the package's own templates are untouched by either
    assert render_html(doc).startswith("<!DOCTYPE html>")
    # a name the document does not have is an error, not an empty string
    (tmp_path / handover.MARKDOWN_TEMPLATE).write_text("{{ doc.no_such_field }}\n")
    with pytest.raises(Exception, match="no_such_field"):
        render_markdown(doc, templates=tmp_path)
