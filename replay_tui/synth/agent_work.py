"""What the synthetic agent sessions share, whichever tool writes them: the
made-up billing project the agent works on (its tasks, files and test
runs), the order of the tasks, and the lines of a session with at most one
planted error (see :mod:`replay_tui.synth.sessions`)."""

from __future__ import annotations

import calendar
import copy
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from replay_tui.synth.chance import Rand

START_MS = calendar.timegm((2026, 11, 2, 9, 30, 0, 0, 0, 0)) * 1000
CWD = "/home/dev/src/harbor"
BRANCH = "main"
RESULT_KINDS = frozenset({"tool_result", "function_call_output", "custom_tool_call_output"})


# -- what the agent works on -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Task:
    prompt: str
    plan: tuple[tuple[str, str], ...]  # (todo, what the agent says while doing it)
    pattern: str  # what it searches for
    path: str  # the file to fix
    others: tuple[str, ...]  # other files the search finds
    body: str  # the function to fix, as it is
    old: str  # the line(s) the fix replaces
    new: str
    miss: str  # an old string that is not quite in the file (an edit that misses)
    test: str  # the regression test file it adds
    test_body: str
    failing: str  # the failing test, as pytest names it
    reply: str
    explore: str  # what a sub-agent is asked to find
    found: str  # what it reports ({line}: the line of the function)


TASKS = (
    Task(
        prompt="The CSV export drops the last invoice when the file has no trailing newline. "
        "Can you find out why and fix it?",
        plan=(
            ("Find where exported rows are read back", "Finding where exported rows are read"),
            ("Fix the row splitting in read_rows", "Fixing the row splitting in read_rows"),
            ("Add a regression test and run the suite", "Adding a regression test"),
        ),
        pattern="def read_rows",
        path="src/harbor/export/csv_reader.py",
        others=("src/harbor/export/__init__.py", "tests/test_export.py"),
        body='def read_rows(text: str) -> list[list[str]]:\n    """Split exported text into '
        'rows of fields."""\n    rows = []\n    for line in text.split("\\n")[:-1]:\n'
        '        rows.append(line.split(","))\n    return rows',
        old='    for line in text.split("\\n")[:-1]:',
        new="    for line in text.splitlines():",
        miss="    for line in text.split('\\n')[:-1]:",
        test="tests/test_csv_reader_last_row.py",
        test_body="from harbor.export.csv_reader import read_rows\n\n\n"
        "def test_last_row_without_newline() -> None:\n"
        '    assert read_rows("a,1\\nb,2") == [["a", "1"], ["b", "2"]]\n',
        failing="tests/test_export.py::test_roundtrip_without_newline - assert 2 == 3",
        reply="Fixed. `read_rows` split the text on newlines and always dropped the last "
        "piece, assuming the file ended with a newline, so without one the last invoice was "
        "lost. It now uses `splitlines()`, which keeps the last line either way. I added "
        "`test_last_row_without_newline`; the whole suite passes.",
        explore="Find where invoices exported to CSV are read back and which function splits "
        "the text into rows. Report the file and line.",
        found="Rows are read back by `read_rows` in src/harbor/export/csv_reader.py (line "
        "{line}); it splits on newlines and drops the last piece.",
    ),
    Task(
        prompt="Invoice totals are a cent off for amounts ending in 5: we round half to even, "
        "finance wants half up. Please fix the rounding.",
        plan=(
            ("Find the rounding helper", "Finding the rounding helper"),
            ("Round half up with Decimal", "Rounding half up with Decimal"),
            ("Add a test for amounts ending in 5", "Adding a test for amounts ending in 5"),
        ),
        pattern="def round_amount",
        path="src/harbor/money.py",
        others=("src/harbor/invoice.py",),
        body='def round_amount(value: Decimal, places: int = 2) -> Decimal:\n    """An amount '
        'rounded for an invoice line."""\n    return round(value, places)',
        old="    return round(value, places)",
        new="    return value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)",
        miss="    return round(value, ndigits=places)",
        test="tests/test_money_half_up.py",
        test_body="from decimal import Decimal\n\nfrom harbor.money import round_amount\n\n\n"
        "def test_half_up() -> None:\n"
        '    assert round_amount(Decimal("2.675")) == Decimal("2.68")\n',
        failing="tests/test_invoice.py::test_total_rounding - assert Decimal('10.12') == "
        "Decimal('10.13')",
        reply="Done. `round_amount` used `round()`, which rounds half to even on Decimals. It "
        "now quantizes with `ROUND_HALF_UP`, so 2.675 becomes 2.68. The new test covers "
        "amounts ending in 5 and the suite passes.",
        explore="Find the helper that rounds invoice amounts and every caller of it.",
        found="`round_amount` is in src/harbor/money.py (line {line}); invoice.py calls it "
        "for each line total.",
    ),
    Task(
        prompt="The webhook sender keeps retrying after the overall timeout has passed. Make "
        "the retry loop respect the deadline.",
        plan=(
            ("Read the retry loop in the webhook sender", "Reading the retry loop"),
            ("Stop retrying past the deadline", "Stopping the retries past the deadline"),
            ("Test the deadline with a fake clock", "Testing the deadline with a fake clock"),
        ),
        pattern="for attempt in range",
        path="src/harbor/webhooks.py",
        others=("src/harbor/jobs.py", "tests/test_jobs.py"),
        body="def send(self, event: Event) -> bool:\n    deadline = self.clock() + self.timeout\n"
        "    for attempt in range(self.retries):\n        if self._post(event):\n"
        "            return True\n        self.sleep(self.backoff * 2**attempt)\n    return False",
        old="    for attempt in range(self.retries):\n        if self._post(event):",
        new="    for attempt in range(self.retries):\n        if self.clock() > deadline:\n"
        "            break\n        if self._post(event):",
        miss="    for attempt in range(self.retries + 1):\n        if self._post(event):",
        test="tests/test_webhook_deadline.py",
        test_body="from harbor.webhooks import Sender\n\n\n"
        "def test_no_retry_past_deadline(fake_clock) -> None:\n"
        "    sender = Sender(retries=5, timeout=1.0, clock=fake_clock.now)\n"
        "    fake_clock.advance_on_post(2.0)\n"
        "    assert sender.send(object()) is False and fake_clock.posts == 1\n",
        failing="tests/test_webhooks.py::test_gives_up_at_deadline - assert 5 == 1",
        reply="The loop computed the deadline but never looked at it. It now stops before an "
        "attempt once the deadline has passed; the new test drives it with a fake clock. All "
        "tests pass.",
        explore="Find the webhook retry loop and where its timeout is set.",
        found="The loop is `Sender.send` in src/harbor/webhooks.py (line {line}); the timeout "
        "comes from settings.WEBHOOK_TIMEOUT.",
    ),
    Task(
        prompt="Remove the deprecated `legacy_tax_mode` setting: nothing sets it since 3.0, "
        "but the loader still reads it.",
        plan=(
            ("Find every reader of legacy_tax_mode", "Finding every reader of legacy_tax_mode"),
            ("Remove the setting and its reader", "Removing the setting and its reader"),
            ("Check that old config files still load", "Checking that old config files load"),
        ),
        pattern="legacy_tax_mode",
        path="src/harbor/settings.py",
        others=("docs/configuration.md", "tests/test_settings.py"),
        body="def load(raw: dict[str, Any]) -> Settings:\n    settings = Settings(**raw)\n"
        '    if raw.get("legacy_tax_mode"):\n        settings.tax = LegacyTax()\n'
        "    return settings",
        old='    if raw.get("legacy_tax_mode"):\n        settings.tax = LegacyTax()\n',
        new="",
        miss='    if raw["legacy_tax_mode"]:\n        settings.tax = LegacyTax()\n',
        test="tests/test_settings_legacy.py",
        test_body="from harbor.settings import load\n\n\n"
        "def test_old_config_still_loads() -> None:\n"
        '    assert load({"currency": "EUR", "legacy_tax_mode": True}).tax.name == "standard"\n',
        failing="tests/test_settings.py::test_legacy_key_ignored - AssertionError: LegacyTax",
        reply="Removed: `load` no longer reads `legacy_tax_mode`, and `LegacyTax` is gone with "
        "it. A config file that still has the key loads with the standard tax rules (new "
        "test); the docs no longer mention it.",
        explore="List every place that reads or documents the legacy_tax_mode setting.",
        found="Only `load` in src/harbor/settings.py (line {line}) reads it; "
        "docs/configuration.md documents it.",
    ),
)

FILLERS = (
    'def _clean(value: str) -> str:\n    """Strip spaces and a byte order mark."""\n'
    '    return value.lstrip("\\ufeff").strip()',
    'def _log_skipped(reason: str, row: int) -> None:\n    logger.debug("skipped row %d: %s", '
    "row, reason)",
    'class HarborError(Exception):\n    """Something the billing run cannot go on with."""',
    "def chunked(items: list[str], size: int) -> list[list[str]]:\n"
    "    return [items[i : i + size] for i in range(0, len(items), size)]",
    'DEFAULT_ENCODING = "utf-8"\nMAX_ROWS = 100_000',
    "def _now() -> datetime:\n    return datetime.now(tz=timezone.utc)",
    "def _is_blank(row: list[str]) -> bool:\n    return all(not cell.strip() for cell in row)",
)
HEAD = (
    "from __future__ import annotations\n\nimport logging\n"
    "from datetime import datetime, timezone\n\nlogger = logging.getLogger(__name__)"
)
THOUGHTS = (
    "The user wants this fixed: {prompt} First find where `{pattern}` lives.",
    "Before editing I should read {path} and its test, to see what the code assumes.",
    "I have the cause. The change is small; I will make it and add a test for this case.",
    "Tests are green. I should mark the todos done and sum up what changed.",
)


def source_of(task: Task, rng: Rand) -> str:
    """The file the task fixes, as it is before the fix."""
    fillers = rng.sample(FILLERS, rng.int_in(2, 4))
    cut = rng.int_in(1, len(fillers))
    parts = [f'"""{task.path.rsplit("/", 1)[-1]}: part of harbor."""', HEAD]
    return "\n\n\n".join([*parts, *fillers[:cut], task.body, *fillers[cut:]]) + "\n"


def numbered(text: str, start: int = 1) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(text.split("\n"), start))


def line_of(text: str, part: str) -> int:
    return text[: text.index(part)].count("\n") + 1


def pytest_output(rng: Rand, failing: str | None) -> str:
    """What ``pytest -q`` prints: all passing, or one failing test."""
    n = rng.int_in(12, 60)
    secs = rng.uniform(0.2, 4.0)
    if failing is None:
        return f"{'.' * n}  [100%]\n{n} passed in {secs:.2f}s"
    at = rng.int_in(0, n - 1)
    dots = "." * at + "F" + "." * (n - at - 1)
    return (
        f"{dots}  [100%]\n=== FAILURES ===\n{failing}\n=== short test summary info ===\n"
        f"FAILED {failing}\n1 failed, {n - 1} passed in {secs:.2f}s"
    )


def check_plant(plant: str | None, at: int | None, known: frozenset[str]) -> None:
    if plant is None:
        if at is not None:
            raise ValueError("at needs plant")
        return
    if plant not in known:
        raise ValueError(f"cannot plant {plant!r}; one of: {', '.join(sorted(known))}")
    if at is None or at < 1:
        raise ValueError(f"plant {plant} needs at >= 1 (a line)")


# -- the lines of a session, with the plant -------------------------------------------


class Lines:
    """Where a session's records go: one JSON line each, the plant (if any)
    applied, and whether each record is still in the valid prefix."""

    def __init__(self, out: IO[bytes], plant: str | None, at: int, rng: Rand) -> None:
        self.out = out
        self.plant = plant
        self.at = at
        self.rng = rng  # for the plant only: the clean session's draws stay the same
        self.lines = 0
        self.bytes = 0
        self.error: dict[str, Any] | None = None
        #: Findings the plant makes: ``{"code", "line"}``.
        self.warnings: list[dict[str, Any]] = []
        self._lost: str | None = None

    def _write(self, rec: dict[str, Any]) -> None:
        data = orjson.dumps(rec, option=orjson.OPT_APPEND_NEWLINE)
        self.out.write(data)
        self.lines += 1
        self.bytes += len(data)

    def _fail(self, code: str, kind: str) -> None:
        self.error = {"code": code, "seq": self.lines, "line": self.lines, "kind": kind}

    def put(self, rec: dict[str, Any], kind: str) -> bool:
        """Write ``rec`` (of kind ``kind``); True if it is in the valid prefix,
        so what it does counts."""
        if (
            self.error is None
            and not self.warnings
            and self.plant is not None
            and self.lines + 1 >= self.at
        ):
            return self._planted(rec, kind)
        self._write(rec)
        return self.error is None

    def _planted(self, rec: dict[str, Any], kind: str) -> bool:
        plant = self.plant
        if plant == "broken_chain" and kind == "user" and rec.get("parentUuid"):
            self._write({**rec, "parentUuid": self.rng.uuid4()})  # a record never written
            self.warnings.append({"code": "broken_chain", "line": self.lines})
            return True
        if plant == "lost_line":
            if self._lost is None and kind == "tool_use":
                self._lost = rec["uuid"]  # this line is lost
                return False
            if self._lost is not None and rec.get("parentUuid") == self._lost:
                self._write(rec)
                self.warnings.append({"code": "broken_chain", "line": self.lines})
                self._fail("illegal_transition", kind)
                return False
        elif plant == "illegal_transition" and kind in RESULT_KINDS:
            self._write(self._answers_another(rec))
            self._fail("illegal_transition", kind)
            return False
        elif plant == "seq_duplicate" and "uuid" in rec:
            self._write(rec)
            self._write(rec)  # a retried append: the same record twice
            self._fail("seq_duplicate", kind)
            return True  # the first copy is valid
        self._write(rec)
        return True

    def _answers_another(self, rec: dict[str, Any]) -> dict[str, Any]:
        """``rec`` answering a call that was never requested."""
        rec = copy.deepcopy(rec)
        if "payload" in rec:
            rec["payload"]["call_id"] = "call_" + self.rng.b62(24)
        else:
            rec["message"]["content"][0]["tool_use_id"] = "toolu_01" + self.rng.b62(22)
        return rec


def order(rng: Rand, turns: int) -> list[Task]:
    """The task of each turn: the tasks in a seeded order, again and again."""
    order = list(TASKS)
    rng.shuffle(order)
    return [order[i % len(order)] for i in range(turns)]


def check_common(turns: int, errors: int | None, dest: Path, name: str) -> Path:
    if turns < 1:
        raise ValueError("turns must be >= 1")
    if errors is not None and not 0 <= errors <= turns:
        raise ValueError(f"errors must be in 0..{turns} (one a turn) or None")
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"bad session name {name!r}")
    path = Path(dest) / f"{name}.jsonl"
    if path.exists():
        raise FileExistsError(f"{path} exists")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def planted(
    facts: dict[str, Any], plant: str | None, at: int | None, lines: Lines
) -> dict[str, Any]:
    if plant is None:
        return facts
    if lines.error is None and not lines.warnings:
        raise ValueError(f"no place for {plant} at or after line {at}")
    facts["warnings"] = lines.warnings
    if lines.error is not None:
        facts["error"] = lines.error
        facts["phase"] = None  # strict replay proves no state once it stops
    return facts
