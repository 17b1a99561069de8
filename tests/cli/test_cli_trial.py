"""Faults found by a new user's trial of the CLI, each held here:

1. one path syntax everywhere (``checks[0]``; ``checks.0`` reads a list too);
2. a file that is neither a ledger nor a report is refused in one line that
   says what it looks like, while damaged ledgers are still judged strictly;
3. bad numeric arguments are one line and exit 2;
4. wording: counts in the singular, "leaves it out", clips that never grow.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay_tui.cli import main
from replay_tui.core.errors import CannotRun
from replay_tui.core.safe_text import clip, escape_controls
from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.formats.sniff import describe
from replay_tui.questions.across import HistorySearch, WhenSearch, condition_turns, path_changes
from replay_tui.questions.condition import ABSENT, format_path, lookup, parse_condition, parse_path
from replay_tui.reducers import load_reducer
from replay_tui.state.diff import path_str
from tests.conftest import DEMO, SAMPLES, agent_lines, line, make_run, receipt
from tests.helpers.cli import run_cli

#: Said after why a file is no run: every source a RUN can be.
RUN_IS = (
    "(a RUN is a run folder with events.jsonl, a ledger file, either gzip-compressed, a "
    "Temporal history JSON, a Claude Code session, a Codex rollout, a Gemini CLI session, "
    "an OpenTelemetry trace or Collector file, a LangGraph checkpointer database, or an "
    "Inspect AI eval log)"
)
NOT_JSON = "not JSON, and every file a RUN can be is JSON, SQLite or an Inspect AI .eval zip"


def one_line_exit_2(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run the CLI; assert exit 2, nothing on stdout and one line on stderr: that line."""
    code, out, err = run_cli(capsys, *args)
    assert code == 2, (args, out, err)
    assert out == "" and err.startswith("replay-tui: ") and err.count("\n") == 1, (args, err)
    return err.rstrip("\n")


# -- 1. one path syntax everywhere ---------------------------------------------


def test_diff_prints_paths_as_history_and_when_read_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(capsys, "diff", str(DEMO), "--skip", "10")
    assert code == 1
    assert "  A → B  checks[0]: " in out and "checks.0" not in out
    # and what diff printed, history reads as it is
    code, out, _ = run_cli(capsys, "history", str(DEMO), "checks[0]")
    assert code == 0 and out.startswith("10  check_finished  absent → ")


def test_a_key_that_needs_quotes_is_printed_quoted_by_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A call_id may hold dots and colons: ``calls."c.1:x".tool``, as parse_path reads it."""
    cid = "c.1:x"
    a = make_run(tmp_path / "a", agent_lines(call_id=cid), receipts={cid: receipt(cid)})
    lines = agent_lines(call_id=cid)
    lines[2] = lines[2].replace(b'"read_file"', b'"list_dir"')
    b = make_run(tmp_path / "b", lines, receipts={cid: receipt(cid)})
    code, out, _ = run_cli(capsys, "diff", str(a), str(b))
    assert code == 1
    assert '  A → B  calls."c.1:x".tool: "read_file" → "list_dir"' in out
    assert parse_path('calls."c.1:x".tool') == ("calls", cid, "tool")
    code, out, _ = run_cli(capsys, "history", str(b), 'calls."c.1:x".tool')
    assert code == 0 and out.startswith('3  model_proposed  absent → "list_dir"')


def test_path_str_is_format_path() -> None:
    for path in [("calls", "a:b", "x"), ("checks", 0, "passed"), ("d", "0"), ("and",), ("é",)]:
        assert path_str(path) == format_path(path)
        assert parse_path(path_str(path)) == path
    assert path_str(()) == "(state)"
    assert format_path(("café", "x")) == '"café".x'  # readable, quoted: bare keys are ASCII
    assert format_path(("a\u202eb",)) == '"a\\u202eb"'  # a bidi override never raw


@given(path=st.tuples(st.text(), st.lists(st.one_of(st.text(), st.integers(0, 10**9)), max_size=4)))
def test_format_path_reads_back_and_is_inert(path: tuple[str, list[str | int]]) -> None:
    whole = (path[0], *path[1])
    text = format_path(whole)
    assert parse_path(text) == whole
    assert escape_controls(text) == text  # nothing in it can act on a terminal


@pytest.mark.parametrize(
    ("dotted", "bracketed"),
    [("checks.0", "checks[0]"), ("checks.0.passed", "checks[0].passed"), ("checks.1", "checks[1]")],
)
def test_history_reads_a_dotted_list_index_as_the_index(
    dotted: str, bracketed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for extra in ([], ["--json"]):
        got = run_cli(capsys, "history", str(DEMO), dotted, *extra)
        want = run_cli(capsys, "history", str(DEMO), bracketed, *extra)
        assert got[:2] == want[:2]
    if dotted != "checks.1":
        assert got[0] == 0 and json.loads(got[1])["changes"][0]["seq"] == 10


def test_when_reads_a_dotted_list_index_as_the_index(capsys: pytest.CaptureFixture[str]) -> None:
    for extra in ([], ["--json"]):
        code, out, _ = run_cli(capsys, "when", str(DEMO), *extra, "checks.0.passed == false")
        assert code == 0
        _, want, _ = run_cli(capsys, "when", str(DEMO), *extra, "checks[0].passed == false")
        if extra:
            got_json, want_json = json.loads(out), json.loads(want)
            assert got_json["seqs"] == want_json["seqs"] == [10]
        else:
            assert out.split("  ")[:2] == want.split("  ")[:2] == ["10", "check_finished"]


# A value ``m`` that is an object, then a list, then an object again: the
# rules change it in place where they can (patch rows under ``m``, keys as
# strings or list indexes), else replace it (a patch above the path).
SHAPES = [
    {"0": 1},
    {"0": 2, "1": 3},
    [2],  # m.0 still 2: its container changed, not its value
    [2, 6],
    [7],
    {"0": 7},
    {},
    [[1, 2]],
    [[1, 3]],
]
RULES = """\
class R:
    name = 'shapes'
    version = '1'
    kinds = frozenset({'set'})
    drafts = True

    def initial_state(self):
        return {'m': None}

    def summary(self, state):
        return type(state['m']).__name__

    def apply(self, state, event, ctx):
        new, m = event.payload['m'], state['m']
        if isinstance(new, list) and isinstance(m, list):
            while len(m) > len(new):
                m.pop()
            for i, v in enumerate(new):
                if i < len(m):
                    m[i] = v
                else:
                    m.append(v)
        elif isinstance(new, dict) and isinstance(m, dict):
            for k in [k for k in m if k not in new]:
                del m[k]
            for k, v in new.items():
                m[k] = v
        else:
            state['m'] = new
        return state

REDUCER = R()
"""


@pytest.fixture
def shapes_run(tmp_path: Path) -> tuple[Path, str]:
    rules = tmp_path / "rules.py"
    rules.write_text(RULES)
    lines = [orjson.dumps({"seq": i, "run_id": "r", "kind": "set", "payload": {"m": m}}) + b"\n"
             for i, m in enumerate(SHAPES, 1)]  # fmt: skip
    return make_run(tmp_path / "run", lines), f"{rules}:REDUCER"


@pytest.mark.parametrize(
    ("text", "seqs"),
    [
        ("m.0", [1, 2, 5, 7, 8, 9]),  # a key of an object, an index of a list
        ('m."0"', [1, 2, 5, 7, 8, 9]),  # quoted, the same key
        ("m[0]", [3, 5, 6, 8, 9]),  # an index only: absent while m is an object
        ("m.1", [2, 3, 4, 5]),
        ("m.0.1", [8, 9]),
        ("m.0[1]", [8, 9]),
        ("m", list(range(1, 10))),
    ],
)
def test_the_three_ways_of_answering_agree_on_dotted_indexes(
    shapes_run: tuple[Path, str], text: str, seqs: list[int]
) -> None:
    """The CLI's watcher, the patch-log scan and the rules run again give the
    same changes for a path with a key of digits, whether it reads an object
    or a list; and a key "0" of an object is still that key."""
    run, rules = shapes_run
    reducer = load_reducer(rules)
    paths = locate_run(run)
    where = parse_path(text)
    full = Replay(paths, reducer, history=True).verify()
    try:
        assert full.error is None and full.history is not None
        states = [full.state_at(k) for k in range(len(SHAPES) + 1)]
        values = [lookup(s, where) for s in states]
        moved = [k for k in range(1, len(values)) if values[k] != values[k - 1]]
        assert moved == seqs
        scanned = path_changes(full, where, full.valid)  # the app: the patch log
        assert [(c.seq, c.old, c.new) for c in scanned] == [
            (k, values[k - 1], values[k]) for k in seqs
        ]
        cond = parse_condition(f"{text} exists")
        truth = [cond.evaluate(s) for s in states]
        turns = [k for k in range(len(truth)) if truth[k] and (k == 0 or not truth[k - 1])]
        assert [t.seq for t in condition_turns(full, cond, full.valid)] == turns
    finally:
        full.close()
    forward = Replay(paths, reducer)  # the CLI: a watcher on check's pass
    hist, when = HistorySearch(where), WhenSearch(cond)
    try:
        hist.start(forward.state_at(0))
        when.start(forward.state_at(0))

        def both(seq: int, state: Any, kind: str) -> None:
            hist.see(seq, state, kind)
            when.see(seq, state, kind)

        forward.observer = both
        forward.verify()
    finally:
        forward.close()
    assert [c.seq for c in hist.changes] == seqs
    assert [t.seq for t in when.turns] == turns
    plain = Replay(paths, reducer, history=True)  # rules without a patch log: run again
    plain.history = None
    try:
        plain.verify()
        assert [c.seq for c in path_changes(plain, where, plain.valid)] == seqs
        assert [t.seq for t in condition_turns(plain, cond, plain.valid)] == turns
    finally:
        plain.close()


def test_a_digit_key_reads_a_list_and_an_object_key_stays_a_key() -> None:
    assert lookup({"m": [4, 5]}, ("m", "1")) == 5
    assert lookup({"m": {"1": "one"}}, ("m", "1")) == "one"
    assert lookup({"m": {"1": "one"}}, ("m", 1)) is ABSENT
    assert lookup({"m": [4, 5]}, ("m", "01")) == 5  # digits alone: the number they write
    assert lookup({"m": [4, 5]}, ("m", "x1")) is ABSENT
    assert lookup({"m": "45"}, ("m", "1")) is ABSENT  # a string is not a list


# -- 2. what is not a run is refused, saying what it looks like ---------------

DOCUMENT = (
    'it looks like a JSON document: neither a Temporal history (no "events" list) nor an '
    'OpenTelemetry trace (no "resourceSpans")'
)
NOT_RUNS = [
    ("ticket.md", b"# Ticket 4521\n\nThe run failed at seq 11.\n\n- see the report\n",
     f"it looks like Markdown text: {NOT_JSON}"),
    ("page.html", b"<!DOCTYPE html>\n<html><body>report</body></html>\n", f"it looks like HTML: {NOT_JSON}"),
    ("notes.txt", b"the run was fine yesterday\nand not today\n", f"it looks like plain text: {NOT_JSON}"),
    ("doc.json", b'{\n  "name": "x",\n  "items": [1, 2]\n}\n', DOCUMENT),
    ("one.json", b'{"name": "x"}\n', DOCUMENT),
    ("list.json", b'[{"seq": 1}]\n',
     "it looks like a JSON array: a RUN's JSON is objects (one a line, or one document), never an array"),
    ("lines.log", b'{"name": "x"}\n{"name": "y"}\n',
     "it looks like JSON lines that are not events: its first line is no event (no seq, run_id or kind), "
     "no Claude Code or Codex record and no OTLP export; --format jsonl replays it anyway"),
    ("empty.log", b"", "it is empty: no event, record or span in it"),
    ("blob.bin", bytes(range(256)) * 4, f"it looks like binary data: {NOT_JSON}"),
    ("run.zip", b"PK\x03\x04" + bytes(100),
     "it looks like a zip archive: a zip that is no Inspect AI .eval log (no header.json, "
     "_journal/ or samples/ in it), and every other file a RUN can be is JSON or SQLite; "
     "unzip it and give the run folder"),
    ("t16.md", "# Ticket\n\nsome text\n".encode("utf-16"), f"it looks like Markdown text in UTF-16: {NOT_JSON}"),
]  # fmt: skip
COMMANDS = [
    ["check"],
    ["check", "--json"],
    ["state", "--at", "1"],
    ["when", "phase == 'x'"],
    ["history", "phase"],
    ["report"],
    ["diff", str(DEMO)],
    ["open"],
    [],  # the app, the default command
]


@pytest.mark.parametrize(("name", "data", "looks"), NOT_RUNS, ids=[n for n, _, _ in NOT_RUNS])
def test_a_file_that_is_no_run_is_refused_in_one_line_saying_what_it_looks_like(
    name: str, data: bytes, looks: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    want = f"replay-tui: {path}: not a run: {looks} {RUN_IS}"
    for command in COMMANDS:
        args = [*command[:1], str(path), *command[1:]] if command else [str(path)]
        if command[:1] == ["when"]:
            args = ["when", str(path), 'phase == "x"']
        assert one_line_exit_2(capsys, *args) == want, args


#: Every source a RUN can be, as --help and the refusals name them.
SOURCES = (
    "a run folder with events.jsonl",
    "a ledger file",
    "gzip-compressed",
    "a Temporal history JSON",
    "a Claude Code session",
    "a Codex rollout",
    "a Gemini CLI session",
    "an OpenTelemetry trace or Collector file",
    "a LangGraph checkpointer database",
    "an Inspect AI eval log",
)


@pytest.mark.parametrize(
    "command", [[], ["open"], ["check"], ["state"], ["when"], ["history"], ["report"], ["diff"],
                ["compare"]],
    ids=lambda c: " ".join(c) or "replay-tui",
)  # fmt: skip
def test_help_names_every_source_a_run_can_be(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    assert exited.value.code == 0
    said = " ".join(capsys.readouterr().out.split())
    for source in SOURCES:
        assert source in said, (command, source)


def test_a_folder_that_is_no_run_names_every_source_a_run_can_be(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = one_line_exit_2(capsys, "report", str(tmp_path))
    assert err == f"replay-tui: {tmp_path}: not a run folder: no events.jsonl in it {RUN_IS}"


def test_diff_says_which_of_the_two_is_no_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ticket = tmp_path / "ticket.md"
    ticket.write_bytes(NOT_RUNS[0][1])
    want = f"replay-tui: {ticket}: not a run: it looks like Markdown text: {NOT_JSON} {RUN_IS}"
    assert one_line_exit_2(capsys, "diff", str(DEMO), str(ticket)) == want
    assert one_line_exit_2(capsys, "compare", str(DEMO), str(ticket)) == want


def test_compare_a_report_with_a_markdown_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    assert main(["check", str(DEMO), "--out", str(report)]) == 0
    capsys.readouterr()
    ticket = tmp_path / "ticket.md"
    ticket.write_bytes(NOT_RUNS[0][1])
    want = (
        f"replay-tui: {ticket}: not a report or a run: it looks like Markdown text "
        "(compare takes two check --json reports, or two runs)"
    )
    assert one_line_exit_2(capsys, "compare", str(report), str(ticket)) == want
    assert one_line_exit_2(capsys, "compare", str(ticket), str(report)) == want
    # a report and a run: compare takes two of a kind
    err = one_line_exit_2(capsys, "compare", str(report), str(DEMO))
    assert "is a check --json report and" in err and "compare takes two reports" in err
    # a report given as a run says so
    err = one_line_exit_2(capsys, "check", str(report))
    assert err == (
        f"replay-tui: {report}: not a run: it looks like a replay-tui check --json report: "
        f"compare takes two reports; the other commands take a run {RUN_IS}"
    )
    # two reports still compare, whatever their names
    other = tmp_path / "report.txt"
    shutil.copy(report, other)
    code, out, _ = run_cli(capsys, "compare", str(report), str(other))
    assert code == 0 and out.startswith("same: ")


def test_a_gz_file_is_looked_at_decompressed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    zipped = tmp_path / "ticket.md.gz"
    zipped.write_bytes(gzip.compress(NOT_RUNS[0][1]))
    assert one_line_exit_2(capsys, "check", str(zipped)) == (
        f"replay-tui: {zipped}: not a run: it looks like Markdown text, gzip-compressed: "
        f"{NOT_JSON} {RUN_IS}"
    )
    fake = tmp_path / "fake.gz"
    fake.write_bytes(NOT_RUNS[0][1])
    err = one_line_exit_2(capsys, "check", str(fake))
    assert "it looks like Markdown text, not gzip data whatever its name says" in err
    ledger = tmp_path / "prod.gz"  # a gzip ledger under any name
    ledger.write_bytes(gzip.compress((DEMO / "events.jsonl").read_bytes()))
    code, out, _ = run_cli(capsys, "check", "--json", str(ledger))
    assert code == 1 and orjson.loads(out)["error"]["code"] == "missing_receipt"  # no receipts/


def test_jsonl_files_are_ledgers_whatever_they_hold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Named as a ledger (``*.jsonl``, ``*.jsonl.gz``), a file is replayed
    strictly, never sniffed: agent transcripts will come as .jsonl too."""
    for name in ("notes.jsonl", "transcript.jsonl.gz"):
        path = tmp_path / name
        data = NOT_RUNS[0][1]
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
        code, out, _ = run_cli(capsys, "check", "--json", str(path))
        assert code == 1 and orjson.loads(out)["error"]["code"] == "bad_json", name


def _error_of(capsys: pytest.CaptureFixture[str], run: Path) -> tuple[int, dict[str, Any]]:
    code, out, err = run_cli(capsys, "check", "--json", str(run))
    assert out, err
    report = orjson.loads(out)
    report["error"] and report["error"].pop("artifact")
    return code, report


BROKEN = sorted(p.name for p in SAMPLES.glob("broken-*"))


@pytest.mark.parametrize("sample", BROKEN)
def test_a_broken_ledger_under_another_name_is_judged_as_under_its_own(
    sample: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its first line damaged or not, in UTF-16 or not: a ledger that is not
    called events.jsonl still fails strictly with its code, not refused."""
    run = tmp_path / sample
    shutil.copytree(SAMPLES / sample, run)
    want = _error_of(capsys, run)
    (run / "events.jsonl").rename(run / "ledger.log")
    code, got = _error_of(capsys, run / "ledger.log")
    if got["error"]:  # its messages name the file
        got["error"]["message"] = got["error"]["message"].replace("ledger.log", "events.jsonl")
    assert (code, got) == want


@pytest.mark.parametrize(
    ("first", "code"),
    [
        (b'{"seq":1,"run_id":"r","kind":\n', "bad_json"),  # cut in the middle
        (b'{"seq":1,"run_id":"r","kind":"run_started",}\n', "bad_json"),
        (b'{"seq":1,"run_id":"r","kind":"run_started","payload":{"a":1,"a":2}}\n', "bad_json"),
        (b"\n", "blank_line"),
        (b'{"seq":"1","run_id":"r","kind":"run_started"}\n', "bad_envelope"),
        (b'\xef\xbb\xbf{"seq":1,"run_id":"r","kind":"nope"}\n', "unknown_kind"),
        (b'{"seq":1,"run_id":"r","kind":"run_started","payload":{"task":"\xff"}}\n', "bad_encoding"),
    ],
)  # fmt: skip
def test_a_ledger_whose_first_line_is_damaged_is_replayed_not_refused(
    first: bytes, code: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "support-ticket-ledger.txt"
    path.write_bytes(first + b"".join(agent_lines()[1:]))
    exit_code, report = _error_of(capsys, path)
    assert exit_code == 1 and report["error"]["code"] == code and report["error"]["line"] == 1


def test_utf16_ledger_under_another_name_gets_its_conversion_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "export.txt"
    path.write_bytes(b"".join(agent_lines()).decode().encode("utf-16"))
    code, out, _ = run_cli(capsys, "check", str(path))
    assert code == 1 and "bad_encoding" in out and "iconv -f UTF-16 -t UTF-8" in out


def test_a_ledger_under_another_name_is_named_after_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = make_run(tmp_path / "folder", agent_lines(call_id="c1"), receipts={"c1": receipt("c1")})
    (run / "events.jsonl").rename(run / "prod-7731.log")
    code, out, _ = run_cli(capsys, "check", str(run / "prod-7731.log"))
    assert code == 0 and out.startswith("prod-7731.log: verified: 8 events")
    code, out, _ = run_cli(capsys, "check", str(DEMO / "events.jsonl"))
    assert code == 0 and out.startswith("demo-001: verified: ")  # events.jsonl: its folder


def test_following_an_empty_file_is_not_refused(tmp_path: Path) -> None:
    """``--follow`` on a ledger not written to yet: empty is fine then."""
    live = tmp_path / "live.log"
    live.write_bytes(b"")
    assert describe(live) == ("it is empty", "no event, record or span in it")
    with pytest.raises(CannotRun, match=r"live\.log: not a run: it is empty"):
        locate_run(live)
    assert locate_run(live, may_be_empty=True).events == live
    assert describe(DEMO / "events.jsonl") is None


# -- 3. bad numbers: one line, exit 2 --------------------------------------------


def test_diff_skip_past_the_end_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_exit_2(capsys, "diff", str(DEMO), "--skip", "99")
    assert err == "replay-tui: --skip 99: seq 99 is past the end of the run (14 events)"
    err = one_line_exit_2(capsys, "diff", str(DEMO), "--skip", "3", "--skip", "15")
    assert err == "replay-tui: --skip 15: seq 15 is past the end of the run (14 events)"
    code, out, _ = run_cli(capsys, "diff", str(DEMO), "--skip", "14")  # the last one: fine
    assert code == 1 and out.splitlines()[-1] == "different"


def test_state_and_report_past_the_end_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_exit_2(capsys, "state", str(DEMO), "--at", "3", "--skip", "99")
    assert err == "replay-tui: --skip 99: seq 99 is past the end of the run (14 events)"
    err = one_line_exit_2(capsys, "report", str(DEMO), "--at", "99")
    assert err == "replay-tui: --at 99: seq 99 is past the end of the run (14 events)"
    err = one_line_exit_2(capsys, "state", str(DEMO), "--at", "99")
    assert err == "replay-tui: --at 99: the run has only 14 events"


BAD_NUMBERS = [
    (["check", str(DEMO), str(DEMO), "--jobs", "-2"], "argument --jobs: -2: give 1 or more"),
    (["check", str(DEMO), "--jobs", "0"], "argument --jobs: 0: give 1 or more"),
    (["check", str(DEMO), "--jobs", "two"], "argument --jobs: invalid int value: 'two'"),
    *[
        ([cmd, str(DEMO), *more, "--rules-timeout", value],
         f"argument --rules-timeout: {value}: give 0 or more seconds (0: wait forever)")
        for cmd, more in [("check", []), ("state", ["--at", "1"]), ("when", ["phase == 'x'"]),
                          ("history", ["phase"]), ("report", []), ("diff", ["--skip", "1"]),
                          ("open", [])]
        for value in ("-1", "nan", "inf")
    ],
    (["state", str(DEMO), "--at", "-1"], "argument --at: -1: seqs are 0 (the initial state) and up"),
    (["report", str(DEMO), "--at", "-3"], "argument --at: -3: seqs are 0 (the initial state) and up"),
    (["open", str(DEMO), "--at", "-1"], "argument --at: -1: seqs are 0 (the initial state) and up"),
    (["diff", str(DEMO), "--skip", "0"], "argument --skip: 0: events are numbered from 1"),
    (["diff", str(DEMO), "--skip", "-2"], "argument --skip: -2: events are numbered from 1"),
    (["state", str(DEMO), "--at", "1", "--skip", "0"], "argument --skip: 0: events are numbered from 1"),
    (["open", str(DEMO), "--skip", "-1"], "argument --skip: -1: events are numbered from 1"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "words"), BAD_NUMBERS, ids=lambda a: " ".join(a)[-40:])
def test_bad_numbers_are_one_line_and_exit_2(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = one_line_exit_2(capsys, *args)
    assert err == f"replay-tui: {words} (see 'replay-tui {args[0]} --help')"


def test_a_timeout_of_0_still_means_wait_forever(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "check", str(DEMO), "--rules-timeout", "0")
    assert code == 0 and "verified" in out


# -- 4. wording --------------------------------------------------------------------


def test_counts_of_one_are_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = make_run(tmp_path / "runs" / "one", [line(1, "run_started", payload={"task": "t"})])
    code, out, _ = run_cli(capsys, "check", str(one))
    assert code == 0 and "verified: 1 event, 0 receipts" in out
    code, out, _ = run_cli(capsys, "check", str(tmp_path / "runs"))  # a folder of one run
    assert out.splitlines()[-1] == "1 run: 1 verified, 0 failed, 0 could not be checked"
    err = one_line_exit_2(capsys, "state", str(one), "--at", "5")
    assert err == "replay-tui: --at 5: the run has only 1 event"
    cut = make_run(tmp_path / "cut", line(1, "run_started", payload={"task": "t"}).rstrip(b"\n"))
    code, out, _ = run_cli(capsys, "check", str(cut))
    assert code == 0 and "  1 warning:\n    no_final_newline" in out
    bad = make_run(tmp_path / "bad", [line(1, "run_started", payload={"task": "t"}), b"{\n"])
    code, out, _ = run_cli(capsys, "check", str(bad))
    assert code == 1 and "  valid prefix: 1 event\n" in out
    code, _, err = run_cli(capsys, "state", str(bad), "--at", "2")
    assert code == 1 and err.startswith("replay-tui: the valid prefix ends at 1 event; ")


def test_compare_counts_one_field_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["check", str(DEMO), "--out", str(a)]) == 0
    report = orjson.loads(a.read_bytes())
    report["partial"] = True
    b.write_bytes(orjson.dumps(report))
    capsys.readouterr()
    code, out, _ = run_cli(capsys, "compare", str(a), str(b))
    assert code == 1 and out.splitlines()[0] == "different: 1 field"


def test_a_branch_without_one_seq_leaves_it_out(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "state", str(DEMO), "--at", "1", "--skip", "2")
    assert code == 0
    assert err == (
        "replay-tui: hypothetical: without seq 2: the branch of this run that leaves it out, "
        "not what happened\n"
    )
    code, _, err = run_cli(capsys, "state", str(DEMO), "--at", "1", "--skip", "2", "--skip", "4")
    assert code == 0 and "without seq 2, 4: the branch of this run that leaves them out" in err


def test_clip_shows_a_short_value_whole() -> None:
    assert clip("null", 3) == "null"  # not "nul… (+1 char)"
    assert clip('"retrying"', 8) == '"retrying"'
    assert clip("x" * 30, 10) == "x" * 10 + "… (+20 chars)"
    assert clip("x" * 1300, 10) == "x" * 10 + "… (+1,290 chars)"
    assert clip("abc", 0) == "abc"  # no limit


@given(text=st.text(max_size=200), limit=st.integers(0, 120))
def test_a_clip_never_grows_a_value_nor_hides_less_than_its_note(text: str, limit: int) -> None:
    out = clip(text, limit)
    assert len(out) <= len(text)
    if out != text:
        kept, _, note = out.partition("… (+")
        assert kept == text[:limit]
        hidden = len(text) - limit
        assert note == f"{hidden:,} chars)" and hidden > len("… (+") + len(note)
