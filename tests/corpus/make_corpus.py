"""The hostile-input corpus: runs a customer could send, and the verdict each must get.

Every case is a function that writes a run folder, plus its verdict: the exit
status of ``replay-tui check`` (0 verified, 1 failed, 2 cannot run) and, for
a failure, the error code and seq (or line). ``tests/hostile/test_corpus.py`` builds
every case in a temporary folder and runs ``check`` and the app over it.

``python tests/corpus/make_corpus.py`` also writes the cases that are plain
files to ``tests/corpus/cases/<name>/`` (to open in the app, or feed to
another tool) and every verdict to ``tests/corpus/verdicts.json``. Cases
that need a symlink, a FIFO, a device, missing permissions or many
megabytes exist only when built (``committed`` false).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "cases"

#: Text that would act on a terminal, a markup parser or the reader's eyes.
HOSTILE = {
    "clear": "\x1b[2J\x1b[H",
    "osc52": "\x1b]52;c;ZWNobyBwd25lZA==\x07",
    "title": "\x1b]0;pwned\x07",
    "markup": "[bold red]markup[/] [link=https://evil.example]x[/link] [/oops]",
    "bidi": "\u202eevil\u202c \u2066isolate\u2069",
    "controls": "nul\x00 del\x7f c1\x9b bell\x07 bs\x08",
}


@dataclass(frozen=True)
class Verdict:
    """What ``check`` must say. ``code`` None means verified (exit 0) or
    cannot run (exit 2)."""

    exit: int
    code: str | None = None
    seq: int | None = None
    line: int | None = None
    why: str = ""


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Path], None]
    verdict: Verdict
    committed: bool = True
    needs_non_root: bool = False  # permissions mean nothing to root


def line(seq: int, kind: str, payload: dict[str, Any] | None = None, **extra: Any) -> bytes:
    obj: dict[str, Any] = {"seq": seq, "run_id": "corpus", "kind": kind, **extra}
    if payload is not None:
        obj["payload"] = payload
    return orjson.dumps(obj) + b"\n"


def receipt(call_id: str) -> bytes:
    return orjson.dumps({"call_id": call_id, "tool": "read_file", "ok": True, "output": "ok"})


def agent_run(call_id: str = "c1", pinned: bytes | None = None) -> list[bytes]:
    """Seven valid agent_run lines with one finished call."""
    fin: dict[str, Any] = {"call_id": call_id, "ok": True, "cost": 0.25}
    if pinned is not None:
        fin["receipt_sha256"] = hashlib.sha256(pinned).hexdigest()
    return [
        line(1, "run_started", {"task": "fix the parser", "model": "m"}),
        line(2, "attempt_started", {"attempt": 1}),
        line(3, "model_proposed", {"call_id": call_id, "tool": "read_file", "tokens": 10}),
        line(4, "tool_allowed", {"call_id": call_id}),
        line(5, "tool_started", {"call_id": call_id}),
        line(6, "tool_finished", fin),
        line(7, "check_finished", {"name": "tests", "passed": True}),
    ]


def write(run: Path, events: bytes | None, receipts: dict[str, bytes] | None = None) -> None:
    run.mkdir(parents=True, exist_ok=True)
    if events is not None:
        (run / "events.jsonl").write_bytes(events)
    if receipts is not None:
        (run / "receipts").mkdir(exist_ok=True)
        for cid, raw in receipts.items():
            (run / "receipts" / f"{cid}.json").write_bytes(raw)


def valid(run: Path) -> None:
    write(run, b"".join(agent_run()), {"c1": receipt("c1")})


def with_line(index: int, raw: bytes, *, cut_rest: bool = False) -> Callable[[Path], None]:
    """The valid run with line ``index`` (0-based) replaced by ``raw``."""

    def build(run: Path) -> None:
        lines = agent_run()
        lines[index] = raw
        if cut_rest:
            del lines[index + 1 :]
        write(run, b"".join(lines), {"c1": receipt("c1")})

    return build


def with_call_id(cid: str) -> Callable[[Path], None]:
    def build(run: Path) -> None:
        lines = agent_run()
        lines[2] = line(3, "model_proposed", {"call_id": cid, "tool": "read_file"})
        write(run, b"".join(lines), {"c1": receipt("c1")})

    return build


def with_receipt_file(make: Callable[[Path], None]) -> Callable[[Path], None]:
    """The valid run, but ``receipts/c1.json`` made by ``make(path)``."""

    def build(run: Path) -> None:
        write(run, b"".join(agent_run()), {})
        make(run / "receipts" / "c1.json")

    return build


def _outside_file(run: Path) -> Path:
    """A file outside the run (beside it), that a symlink may point at."""
    target = run.parent / f"{run.name}-outside.json"
    target.write_bytes(receipt("c1"))
    return target


def receipts_is_a_file(run: Path) -> None:
    write(run, VALID)
    (run / "receipts").write_bytes(b"not a folder")


def receipt_symlink_outside(run: Path) -> None:
    write(run, b"".join(agent_run()), {})
    (run / "receipts" / "c1.json").symlink_to(_outside_file(run))


def receipts_dir_symlink(run: Path) -> None:
    write(run, b"".join(agent_run()), None)
    elsewhere = run.parent / f"{run.name}-elsewhere"
    elsewhere.mkdir()
    (elsewhere / "c1.json").write_bytes(receipt("c1"))
    (run / "receipts").symlink_to(elsewhere, target_is_directory=True)


def ledger_to_dev_zero(run: Path) -> None:
    run.mkdir(parents=True)
    (run / "events.jsonl").symlink_to("/dev/zero")


def ledger_fifo(run: Path) -> None:
    run.mkdir(parents=True)
    os.mkfifo(run / "events.jsonl")


def budget_fifo(run: Path) -> None:
    valid(run)
    os.mkfifo(run / "budget.json")


def receipt_fifo(run: Path) -> None:
    write(run, b"".join(agent_run()), {})
    os.mkfifo(run / "receipts" / "c1.json")


def unreadable_ledger(run: Path) -> None:
    valid(run)
    (run / "events.jsonl").chmod(0)


def unreadable_receipt(run: Path) -> None:
    valid(run)
    (run / "receipts" / "c1.json").chmod(0)


def ten_mb_line(run: Path) -> None:
    lines = agent_run()
    lines[0] = line(1, "run_started", {"task": "x" * (10 << 20)})
    write(run, b"".join(lines), {"c1": receipt("c1")})


def deep_nesting(run: Path) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    raw = b'{"seq":2,"run_id":"corpus","kind":"attempt_started","payload":{"x":' + deep + b"}}\n"
    with_line(1, raw)(run)


def hostile_everywhere(run: Path) -> None:
    """Valid, with hostile text in every string field, as values and as keys."""
    bad = dict(HOSTILE)
    keyed = {f"{name}:{text}": text for name, text in HOSTILE.items()}
    lines = [
        line(1, "run_started", {"task": bad["clear"] + bad["title"], "model": bad["bidi"]}),
        line(2, "attempt_started", {"attempt": 1, **keyed}),
        line(3, "model_proposed", {"call_id": "c1", "tool": bad["osc52"], "args": keyed}),
        line(4, "tool_allowed", {"call_id": "c1"}, **{bad["markup"]: bad["controls"]}),
        line(5, "tool_started", {"call_id": "c1"}),
        line(6, "tool_finished", {"call_id": "c1", "ok": True, "cost": 0.25}),
        line(7, "check_finished", {"name": bad["markup"], "passed": True}),
    ]
    rc = orjson.dumps({"call_id": "c1", "tool": bad["title"], "ok": True, "output": keyed})
    write(run, b"".join(lines), {"c1": rc})


def escapes_in_kind(run: Path) -> None:
    lines = agent_run()
    lines[1] = line(2, HOSTILE["osc52"] + HOSTILE["clear"])
    write(run, b"".join(lines), {"c1": receipt("c1")})


def escapes_in_run_id(run: Path) -> None:
    lines = agent_run()
    lines[1] = (
        orjson.dumps(
            {
                "seq": 2,
                "run_id": HOSTILE["title"],
                "kind": "attempt_started",
                "payload": {"attempt": 1},
            }
        )
        + b"\n"
    )
    write(run, b"".join(lines), {"c1": receipt("c1")})


def _ledger(raw: bytes) -> Callable[[Path], None]:
    return lambda run: write(run, raw, {"c1": receipt("c1")})


VALID = b"".join(agent_run())

CASES: list[Case] = [
    # -- damage ---------------------------------------------------------------
    Case("valid", valid, Verdict(0, why="the baseline every case below damages")),
    Case(
        "cut-last-line",
        _ledger(VALID[:-40]),
        Verdict(1, "truncated_line", line=7, why="last line cut short, no newline"),
    ),
    Case(
        "cut-line-in-the-middle",
        _ledger(
            b"".join(agent_run()[:3]) + agent_run()[3][:20] + b"\n" + b"".join(agent_run()[4:])
        ),
        Verdict(1, "bad_json", line=4, why="a line cut short, the next lines intact"),
    ),
    Case("blank-line", with_line(3, b"\n"), Verdict(1, "blank_line", line=4)),
    Case(
        "nul-byte",
        with_line(2, agent_run()[2][:30] + b"\x00" + agent_run()[2][30:]),
        Verdict(1, "bad_json", line=3),
    ),
    Case(
        "invalid-utf8-in-the-middle",
        with_line(2, agent_run()[2].replace(b"read_file", b"read_\xff\xfefile")),
        Verdict(1, "bad_encoding", seq=None, line=3),
    ),
    Case(
        "utf16-ledger",
        _ledger(b"\xff\xfe" + VALID.decode().encode("utf-16-le")),
        Verdict(1, "bad_encoding", line=1, why="a PowerShell '>' redirect"),
    ),
    Case("bom", _ledger(b"\xef\xbb\xbf" + VALID), Verdict(0, why="a UTF-8 BOM is accepted")),
    Case("crlf", _ledger(VALID.replace(b"\n", b"\r\n")), Verdict(0, why="CRLF is accepted")),
    Case("empty-ledger", _ledger(b""), Verdict(0, why="0 bytes: verified, with a warning")),
    Case(
        "nan-literal",
        with_line(
            1, b'{"seq":2,"run_id":"corpus","kind":"attempt_started","payload":{"attempt":NaN}}\n'
        ),
        Verdict(1, "bad_json", line=2),
    ),
    Case(
        "infinity-literal",
        with_line(
            1, b'{"seq":2,"run_id":"corpus","kind":"attempt_started","payload":{"x":-Infinity}}\n'
        ),
        Verdict(1, "bad_json", line=2),
    ),
    Case(
        "huge-integer",
        with_line(
            2,
            b'{"seq":3,"run_id":"corpus","kind":"model_proposed","payload":{"call_id":"c1",'
            b'"tool":"read_file","tokens":123456789012345678901234567890}}\n',
        ),
        Verdict(0, why="beyond 64 bits: read and kept exactly, never rounded to a float"),
    ),
    Case(
        "duplicate-keys",
        with_line(
            1, b'{"seq":2,"run_id":"corpus","kind":"attempt_started","kind":"run_started"}\n'
        ),
        Verdict(1, "bad_json", line=2, why="readers disagree on which key counts"),
    ),
    Case(
        "duplicate-keys-in-receipt",
        lambda run: write(
            run,
            VALID,
            {"c1": b'{"call_id":"c1","call_id":"other","tool":"read_file","ok":true}'},
        ),
        Verdict(1, "bad_json", seq=6, why="readers disagree on which call_id counts"),
    ),
    Case(
        "no-ledger",
        lambda run: run.mkdir(parents=True),
        Verdict(2, why="no events.jsonl"),
        committed=False,  # git keeps no empty folder
    ),
    Case(
        "ledger-is-a-folder",
        lambda run: (run / "events.jsonl").mkdir(parents=True),
        Verdict(2, why="events.jsonl is a directory"),
        committed=False,
    ),
    Case("no-receipts-folder", lambda run: write(run, VALID), Verdict(1, "missing_receipt", seq=6)),
    Case(
        "receipts-is-a-file",
        receipts_is_a_file,
        Verdict(1, "missing_receipt", seq=6),
    ),
    Case(
        "receipt-not-json",
        lambda run: write(run, VALID, {"c1": b"\x1b]0;pwned\x07 not json"}),
        Verdict(1, "bad_json", seq=6, why="the receipt is the artifact"),
    ),
    Case(
        "line-of-10-mb",
        ten_mb_line,
        Verdict(0, why="one 10 MB line: read, shown clipped"),
        committed=False,
    ),
    Case(
        "nesting-100000-deep",
        deep_nesting,
        Verdict(1, "bad_json", line=2, why="deeper than the reader's 200 levels"),
        committed=False,
    ),
    Case(
        "unreadable-ledger",
        unreadable_ledger,
        Verdict(2, why="permission denied"),
        committed=False,
        needs_non_root=True,
    ),
    Case(
        "unreadable-receipt",
        unreadable_receipt,
        Verdict(1, "missing_receipt", seq=6),
        committed=False,
        needs_non_root=True,
    ),
    # -- attacks --------------------------------------------------------------
    Case("call-id-dotdot", with_call_id("../../../etc/passwd"), Verdict(1, "bad_call_id", seq=3)),
    Case("call-id-absolute", with_call_id("/etc/passwd"), Verdict(1, "bad_call_id", seq=3)),
    Case("call-id-nul", with_call_id("c1\x00.json"), Verdict(1, "bad_call_id", seq=3)),
    Case("call-id-backslash", with_call_id("..\\..\\windows"), Verdict(1, "bad_call_id", seq=3)),
    Case("call-id-dot-start", with_call_id(".hidden"), Verdict(1, "bad_call_id", seq=3)),
    Case(
        "receipt-symlink-outside",
        receipt_symlink_outside,
        Verdict(1, "missing_receipt", seq=6, why="a symlink is never followed"),
        committed=False,
    ),
    Case(
        "receipts-folder-symlink",
        receipts_dir_symlink,
        Verdict(1, "missing_receipt", seq=6, why="receipts/ itself a symlink"),
        committed=False,
    ),
    Case(
        "receipt-fifo",
        with_receipt_file(lambda p: os.mkfifo(p)),
        Verdict(1, "missing_receipt", seq=6, why="a FIFO would block a reader"),
        committed=False,
    ),
    Case(
        "ledger-symlink-to-dev-zero",
        ledger_to_dev_zero,
        Verdict(2, why="endless bytes, no newline"),
        committed=False,
    ),
    Case("ledger-fifo", ledger_fifo, Verdict(2, why="would block"), committed=False),
    Case("budget-fifo", budget_fifo, Verdict(1, "bad_budget"), committed=False),
    Case("hostile-text-everywhere", hostile_everywhere, Verdict(0, why="shown inert")),
    Case("escapes-in-kind", escapes_in_kind, Verdict(1, "unknown_kind", seq=2)),
    Case("escapes-in-run-id", escapes_in_run_id, Verdict(1, "mixed_run_ids", seq=2)),
]


def by_name() -> dict[str, Case]:
    return {case.name: case for case in CASES}


def main() -> int:
    """Rewrite tests/corpus/cases/ and verdicts.json from the definitions above."""
    if CASES_DIR.exists():
        shutil.rmtree(CASES_DIR)
    CASES_DIR.mkdir()
    verdicts: dict[str, Any] = {}
    for case in CASES:
        verdicts[case.name] = {
            **{k: v for k, v in asdict(case.verdict).items() if v not in (None, "")},
            "committed": case.committed,
        }
        if case.committed:
            case.build(CASES_DIR / case.name)
    (HERE / "verdicts.json").write_bytes(
        orjson.dumps(verdicts, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    )
    print(f"{sum(c.committed for c in CASES)} cases written to {CASES_DIR}, {len(CASES)} verdicts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
