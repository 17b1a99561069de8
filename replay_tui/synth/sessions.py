"""Synthetic agent sessions: Claude Code transcripts and Codex rollouts of any length.

The sample sessions (``sample_runs/agent-sessions/``), the tests and the
benchmarks need sessions the project writes itself, shaped as the tools
write them (see :mod:`replay_tui.formats.sessions`), from one turn to
thousands. A coding agent works on a small made-up billing project: each turn
is a task (a prompt) it answers by searching, reading, sometimes running the
failing test first (an error result), editing, adding a regression test and
running the suite, then replying.

- :func:`write_claude_code_session`: records with ``type``, ``uuid``, a
  ``parentUuid`` chain, ``sessionId``, ``timestamp``, ``cwd``, ``version``,
  ``isSidechain``; assistant messages (``message.id``, ``model``, content
  blocks, ``usage``) split over one line per block, sharing ``message.id``
  with growing usage; ``tool_use`` and ``tool_result`` blocks with the
  result's ``toolUseResult``; TodoWrite calls; ``file-history-snapshot``,
  ``progress`` (hooks) and ``system`` records; ``Task`` calls whose
  sub-agent transcript is written to ``<name>/subagents/agent-<id>.jsonl``
  (``isSidechain: true``, ``agentId``).
- :func:`write_codex_rollout`: ``{timestamp, type, payload}`` lines:
  ``session_meta``, ``turn_context``, ``response_item`` messages and
  reasoning, ``function_call`` / ``function_call_output`` sharing
  ``call_id``, ``custom_tool_call`` (apply_patch) and its output,
  ``event_msg`` (``task_started``, ``user_message``, ``token_count`` with
  ``info.total_token_usage``, ``exec_command_end``, ``agent_message``, ...).

Everything is derived from ``seed``: the same arguments give the same bytes.
Each writer returns facts counted as the lines were written (not by reading
them back): the calls (id -> tool and status), the usage the rules must
derive, the turns, the todo list, the sub-agents, the phase.

A plant (``plant=CODE, at=LINE``) changes the clean session in one place
only, at the first fitting record at or after line ``at``:
``broken_chain`` gives a prompt a ``parentUuid`` that names a record never
written (as Claude Code writes after ``--resume`` of a compacted session):
a finding, not a stop, so the facts stay the clean session's and
``warnings`` says where; ``lost_line`` loses a ``tool_use`` line, so the
next record names a parent that is not there (a finding) and answers a call
never requested (``illegal_transition``); ``illegal_transition`` answers a
call never requested; ``seq_duplicate`` writes a record twice. With an
error, the facts describe the valid prefix, and ``error`` says what strict
replay must report.
"""

from __future__ import annotations

import argparse
import calendar
import copy
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from replay_tui.synth.chance import Clock, Rand

__all__ = [
    "CLAUDE_PLANTS",
    "CODEX_PLANTS",
    "USAGE_FIELDS",
    "main",
    "write_claude_code_session",
    "write_codex_rollout",
]

#: Errors each writer can plant.
CLAUDE_PLANTS = frozenset({"broken_chain", "lost_line", "illegal_transition", "seq_duplicate"})
CODEX_PLANTS = frozenset({"illegal_transition"})
#: The token counts the claude_code rules sum over messages.
USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)

_START_MS = calendar.timegm((2026, 11, 2, 9, 30, 0, 0, 0, 0)) * 1000
_CWD = "/home/dev/src/harbor"
_BRANCH = "main"
CLAUDE_VERSION = "2.1.12"
CLAUDE_MODEL = "claude-sonnet-4-5-20250929"
CODEX_VERSION = "0.128.0"
CODEX_MODEL = "gpt-5-codex"
_WINDOW = 272_000
_RESULT_KINDS = frozenset({"tool_result", "function_call_output", "custom_tool_call_output"})


# -- what the agent works on -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Task:
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


_TASKS = (
    _Task(
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
    _Task(
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
    _Task(
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
    _Task(
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

_FILLERS = (
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
_HEAD = (
    "from __future__ import annotations\n\nimport logging\n"
    "from datetime import datetime, timezone\n\nlogger = logging.getLogger(__name__)"
)
_THOUGHTS = (
    "The user wants this fixed: {prompt} First find where `{pattern}` lives.",
    "Before editing I should read {path} and its test, to see what the code assumes.",
    "I have the cause. The change is small; I will make it and add a test for this case.",
    "Tests are green. I should mark the todos done and sum up what changed.",
)


def _source(task: _Task, rng: Rand) -> str:
    """The file the task fixes, as it is before the fix."""
    fillers = rng.sample(_FILLERS, rng.int_in(2, 4))
    cut = rng.int_in(1, len(fillers))
    parts = [f'"""{task.path.rsplit("/", 1)[-1]}: part of harbor."""', _HEAD]
    return "\n\n\n".join([*parts, *fillers[:cut], task.body, *fillers[cut:]]) + "\n"


def _numbered(text: str, start: int = 1) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(text.split("\n"), start))


def _line_of(text: str, part: str) -> int:
    return text[: text.index(part)].count("\n") + 1


def _pytest(rng: Rand, failing: str | None) -> str:
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


def _check_plant(plant: str | None, at: int | None, known: frozenset[str]) -> None:
    if plant is None:
        if at is not None:
            raise ValueError("at needs plant")
        return
    if plant not in known:
        raise ValueError(f"cannot plant {plant!r}; one of: {', '.join(sorted(known))}")
    if at is None or at < 1:
        raise ValueError(f"plant {plant} needs at >= 1 (a line)")


# -- the lines of a session, with the plant -------------------------------------------


class _Lines:
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
        elif plant == "illegal_transition" and kind in _RESULT_KINDS:
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


# -- Claude Code -----------------------------------------------------------------------


class _ClaudeFacts:
    """What a transcript's valid prefix holds, counted as it is written."""

    def __init__(self) -> None:
        self.calls: dict[str, dict[str, str]] = {}
        self.messages: dict[str, list[int]] = {}
        self.turns = 0
        self.todos: list[dict[str, str]] = []
        self.agents: dict[str, str | None] = {}
        self.in_flight = 0
        self.phase = "new"

    def to(self, phase: str) -> None:
        self.phase = "tools_running" if self.in_flight else phase

    def usage(self) -> dict[str, int]:
        return {f: sum(m[i] for m in self.messages.values()) for i, f in enumerate(USAGE_FIELDS)}

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "usage": self.usage(),
            "messages": len(self.messages),
            "turns": self.turns,
            "todos": self.todos,
            "agents": self.agents,
            "phase": self.phase,
        }


class _Claude:
    """Writes one Claude Code transcript's records: the main session's, or a
    sub-agent's (``agent_id``)."""

    def __init__(
        self,
        lines: _Lines,
        rng: Rand,
        clock: Clock,
        session_id: str,
        agent_id: str | None = None,
    ) -> None:
        self.lines = lines
        self.rng = rng
        self.clock = clock
        self.session_id = session_id
        self.agent_id = agent_id
        self.facts = _ClaudeFacts()
        self.parent: str | None = None
        self.context = rng.int_in(9_000, 16_000)  # tokens of the system prompt and tools
        self.cached = 0

    def _base(self) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "parentUuid": self.parent,
            "isSidechain": self.agent_id is not None,
            "userType": "external",
            "cwd": _CWD,
            "sessionId": self.session_id,
            "version": CLAUDE_VERSION,
            "gitBranch": _BRANCH,
        }
        if self.agent_id is not None:
            rec["agentId"] = self.agent_id
        return rec

    def _put(self, rec: dict[str, Any], kind: str) -> bool:
        valid = self.lines.put(rec, kind)
        if "uuid" in rec:
            self.parent = rec["uuid"]
        return valid

    def snapshot(self, message_id: str, files: dict[str, Any], update: bool) -> None:
        """A ``file-history-snapshot`` record (no uuid: outside the chain)."""
        rec = {
            "type": "file-history-snapshot",
            "messageId": message_id if not update else self.rng.uuid4(),
            "snapshot": {
                "messageId": message_id,
                "trackedFileBackups": files,
                "timestamp": self.clock.tick(1, 20),
            },
            "isSnapshotUpdate": update,
        }
        self._put(rec, "file-history-snapshot")

    def prompt(self, text: str, uuid: str) -> None:
        rec = self._base()
        rec.update(
            type="user",
            message={"role": "user", "content": text},
            uuid=uuid,
            timestamp=self.clock.tick(2_000, 40_000),
        )
        if self._put(rec, "user"):
            self.facts.turns += 1
            self.facts.to("awaiting_model")

    def message(self, blocks: list[dict[str, Any]]) -> list[str]:
        """One API message, one line per block (the same ``message.id``, usage
        growing line by line); the lines' uuids."""
        rng = self.rng
        mid = "msg_01" + rng.b62(22)
        request = "req_011C" + rng.b62(20)
        created = max(0, self.context - self.cached)
        usage_in = (rng.int_in(3, 12), created, self.cached)
        self.cached = self.context
        final = rng.int_in(30, 700)
        last = blocks[-1]["type"]
        stop = "tool_use" if last == "tool_use" else "end_turn" if last == "text" else None
        uuids = []
        for i, block in enumerate(blocks):
            done = i == len(blocks) - 1
            out = final if done else max(1, final * (i + 1) // (len(blocks) + 2))
            usage = {
                "input_tokens": usage_in[0],
                "cache_creation_input_tokens": usage_in[1],
                "cache_read_input_tokens": usage_in[2],
                "cache_creation": {
                    "ephemeral_5m_input_tokens": usage_in[1],
                    "ephemeral_1h_input_tokens": 0,
                },
                "output_tokens": out,
                "service_tier": "standard",
            }
            msg = {
                "model": CLAUDE_MODEL,
                "id": mid,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop if done else None,
                "stop_sequence": None,
                "usage": usage,
            }
            uuid = rng.uuid4()
            rec = self._base()
            rec.update(
                message=msg,
                requestId=request,
                type="assistant",
                uuid=uuid,
                timestamp=self.clock.tick(300, 4_000) if i == 0 else self.clock.tick(20, 600),
            )
            uuids.append(uuid)
            kind = {"tool_use": "tool_use", "thinking": "thinking"}.get(block["type"], "assistant")
            if self._put(rec, kind):
                self._counted(block, kind, mid, [usage_in[0], out, usage_in[1], usage_in[2]])
        self.context += final
        return uuids

    def _counted(self, block: dict[str, Any], kind: str, mid: str, usage: list[int]) -> None:
        facts = self.facts
        facts.messages[mid] = usage
        if kind == "tool_use":
            facts.calls[block["id"]] = {"tool": block["name"], "status": "requested"}
            facts.in_flight += 1
            if block["name"] == "TodoWrite":
                facts.todos = block["input"]["todos"]
            elif block["name"] == "Task":
                facts.agents[block["id"]] = None
            facts.to("tools_running")
        else:
            facts.to("awaiting_user" if kind == "assistant" else "awaiting_model")

    def result(
        self,
        call_id: str,
        tool_uuid: str,
        content: str | list[dict[str, Any]],
        result: Any,
        error: bool = False,
        agent_id: str | None = None,
        took: tuple[int, int] = (30, 2_500),
    ) -> None:
        block: dict[str, Any] = {"tool_use_id": call_id, "type": "tool_result", "content": content}
        if error or isinstance(content, str):
            block["is_error"] = error
        rec = self._base()
        rec.update(
            type="user",
            message={"role": "user", "content": [block]},
            uuid=self.rng.uuid4(),
            timestamp=self.clock.tick(*took),
            toolUseResult=result,
            sourceToolAssistantUUID=tool_uuid,
        )
        text = content if isinstance(content, str) else " ".join(b["text"] for b in content)
        self.context += len(text) // 4 + 20
        if self._put(rec, "tool_result"):
            facts = self.facts
            facts.calls[call_id]["status"] = "error" if error else "ok"
            facts.in_flight -= 1
            if agent_id is not None:
                facts.agents[call_id] = agent_id
            facts.to("awaiting_model")

    def hook(self, call_id: str, tool: str, command: str) -> None:
        """A ``progress`` record: a PostToolUse hook ran."""
        rec = self._base()
        rec.update(
            type="progress",
            data={
                "type": "hook_progress",
                "hookEvent": "PostToolUse",
                "hookName": f"PostToolUse:{tool}",
                "command": command,
            },
            parentToolUseID=call_id,
            toolUseID=call_id,
            timestamp=self.clock.tick(5, 200),
            uuid=self.rng.uuid4(),
        )
        self._put(rec, "progress")

    def turn_took(self, ms: int) -> None:
        rec = self._base()
        rec.update(
            type="system",
            subtype="turn_duration",
            durationMs=ms,
            timestamp=self.clock.tick(5, 60),
            uuid=self.rng.uuid4(),
            isMeta=False,
        )
        self._put(rec, "system")


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _abs(path: str) -> str:
    return f"{_CWD}/{path}"


def _tool_use(call_id: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": tool, "input": args}


def _read_result(path: str, text: str) -> dict[str, Any]:
    n = text.count("\n") + 1
    file = {"filePath": _abs(path), "content": text, "numLines": n, "startLine": 1, "totalLines": n}
    return {"type": "text", "file": file}


class _ClaudeSession:
    """The turns of a coding agent, as Claude Code records them."""

    def __init__(self, w: _Claude, rng: Rand, folder: Path, name: str) -> None:
        self.w = w
        self.rng = rng
        self.folder = folder  # sub-agents' transcripts go to <folder>/<name>/subagents/
        self.name = name
        self.prompt_id = ""
        self.todos: list[dict[str, str]] = []  # as written (the facts: as counted)
        self.subagents: dict[str, dict[str, Any]] = {}

    def _id(self) -> str:
        return "toolu_01" + self.rng.b62(22)

    def _call(
        self, tool: str, args: dict[str, Any], before: Sequence[dict[str, Any]] = ()
    ) -> tuple[str, str]:
        """A message requesting one call, after its thinking or text if any:
        (the call's id, the uuid of its line)."""
        cid = self._id()
        return cid, self.w.message([*before, _tool_use(cid, tool, args)])[-1]

    def _think(self, i: int, task: _Task) -> dict[str, Any]:
        words = _THOUGHTS[i].format(prompt=task.prompt, pattern=task.pattern, path=task.path)
        return {"type": "thinking", "thinking": words, "signature": self.rng.blob(96)}

    def turn(self, task: _Task, *, todo: bool, explore: bool, reproduce: bool, miss: bool) -> None:
        """One prompt and the work it takes: plan, search, read (two files in
        one message), maybe run the failing test first, maybe miss an edit,
        edit, add a test, run the suite, reply."""
        w, rng = self.w, self.rng
        start = w.clock.ms
        self.prompt_id = rng.uuid4()
        w.snapshot(self.prompt_id, {}, update=False)
        w.prompt(task.prompt, self.prompt_id)
        source = _source(task, rng)
        before: list[dict[str, Any]] = [
            self._think(0, task),
            _text("I'll look into it, starting with a plan." if todo else "Let me look."),
        ]
        if todo:
            self._todos(task, 0, before)
            before = []
        if explore:
            self._explore(task, source, before)
            before = []
        files = [task.path, *task.others[: rng.int_in(1, len(task.others))]]
        grep = {"pattern": task.pattern, "output_mode": "files_with_matches"}
        cid, uuid = self._call("Grep", grep, before)
        found = f"Found {len(files)} files\n" + "\n".join(files)
        result = {"mode": "files_with_matches", "filenames": files, "numFiles": len(files)}
        w.result(cid, uuid, found, result, took=(20, 300))
        stem = task.path.rsplit("/", 1)[-1].removesuffix(".py")
        reads = [(task.path, source), (files[-1], f"from harbor import {stem}\n")]
        ids = [self._id() for _ in reads]
        blocks = [
            _tool_use(c, "Read", {"file_path": _abs(p)})
            for c, (p, _) in zip(ids, reads, strict=True)
        ]
        uuids = w.message([self._think(1, task), *blocks])
        for (path, text), cid, uuid in zip(reads, ids, uuids[1:], strict=True):
            w.result(cid, uuid, _numbered(text), _read_result(path, text), took=(10, 120))
        if reproduce:
            out = _pytest(rng, task.failing)
            self._bash("Let me reproduce the failure first.", out, 1)
        if miss:
            args = {"file_path": _abs(task.path), "old_string": task.miss, "new_string": task.new}
            cid, uuid = self._call("Edit", args, [self._think(2, task)])
            said = f"String to replace not found in file.\nString: {task.miss}"
            w.result(
                cid,
                uuid,
                f"<tool_use_error>{said}</tool_use_error>",
                f"Error: {said}",
                error=True,
                took=(5, 40),
            )
            self._edit(task, source, [_text("The quoting differs; retrying with the exact line.")])
        else:
            self._edit(task, source, [self._think(2, task)])
        cid, uuid = self._call("Write", {"file_path": _abs(task.test), "content": task.test_body})
        created = {
            "type": "create",
            "filePath": _abs(task.test),
            "content": task.test_body,
            "structuredPatch": [],
        }
        w.result(cid, uuid, f"File created successfully at: {_abs(task.test)}", created)
        w.hook(cid, "Write", "ruff format --quiet")
        self._bash("", _pytest(rng, None), 0)
        if todo:
            self._todos(task, len(task.plan), [self._think(3, task)])
        w.message([_text(task.reply)])
        w.turn_took(w.clock.ms - start + rng.int_in(50, 400))

    def _todos(self, task: _Task, done: int, before: Sequence[dict[str, Any]]) -> None:
        """A TodoWrite call: the first ``done`` items completed, the next in progress."""
        old = self.todos
        todos = [
            {
                "content": content,
                "status": "completed" if i < done else "in_progress" if i == done else "pending",
                "activeForm": active,
            }
            for i, (content, active) in enumerate(task.plan)
        ]
        cid, uuid = self._call("TodoWrite", {"todos": todos}, before)
        self.todos = todos
        said = f"Todo list updated: {min(done, len(todos))} of {len(todos)} done."
        self.w.result(cid, uuid, said, {"oldTodos": old, "newTodos": todos}, took=(10, 60))

    def _bash(self, words: str, out: str, code: int) -> None:
        """``pytest -q`` through Bash: an error result (``is_error``) when it fails."""
        args = {"command": "python -m pytest -q", "description": "Run the test suite"}
        cid, uuid = self._call("Bash", args, [_text(words)] if words else [])
        if code == 0:
            result: Any = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
            self.w.result(cid, uuid, out, result, took=(400, 9_000))
        else:
            said = f"Exit code {code}\n{out}"
            self.w.result(cid, uuid, said, f"Error: {said}", error=True, took=(400, 9_000))

    def _edit(self, task: _Task, source: str, before: list[dict[str, Any]]) -> None:
        w = self.w
        args = {"file_path": _abs(task.path), "old_string": task.old, "new_string": task.new}
        cid, uuid = self._call("Edit", args, before)
        at = _line_of(source, task.old)
        old_lines = task.old.split("\n")
        new_lines = task.new.split("\n") if task.new else []
        patch = {
            "oldStart": at,
            "oldLines": len(old_lines),
            "newStart": at,
            "newLines": len(new_lines),
            "lines": [f"-{x}" for x in old_lines] + [f"+{x}" for x in new_lines],
        }
        edited = source.replace(task.old, task.new, 1).split("\n")
        snippet = "\n".join(edited[max(0, at - 3) : at + 3])
        said = f"The file {_abs(task.path)} has been updated. The edited part now reads:\n"
        said += _numbered(snippet, max(1, at - 2))
        result = {
            "filePath": _abs(task.path),
            "oldString": task.old,
            "newString": task.new,
            "originalFile": source,
            "structuredPatch": [patch],
            "userModified": False,
            "replaceAll": False,
        }
        w.result(cid, uuid, said, result, took=(10, 90))
        w.hook(cid, "Edit", "ruff format --quiet")
        backup = {"backupFileName": f"{self.rng.hexs(16)}@v1", "version": 1}
        w.snapshot(self.prompt_id, {task.path: {**backup, "backupTime": w.clock.now()}}, True)

    def _explore(self, task: _Task, source: str, before: Sequence[dict[str, Any]]) -> None:
        """A ``Task`` call: the sub-agent's own transcript, then the call's result."""
        w, rng = self.w, self.rng
        args = {
            "description": task.plan[0][0],
            "prompt": task.explore,
            "subagent_type": "Explore",
        }
        cid, uuid = self._call("Task", args, before)
        agent_id = rng.hexs(7)
        path = self.folder / self.name / "subagents" / f"agent-{agent_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        started = w.clock.ms
        first = task.body.split("\n", 1)[0]
        at = _line_of(source, first)
        report = task.found.format(line=at)
        with path.open("wb") as out:
            lines = _Lines(out, None, 0, rng)
            sub = _Claude(lines, rng, w.clock, w.session_id, agent_id=agent_id)
            sub.prompt(task.explore, rng.uuid4())
            sid = self._id()
            grep = {"pattern": task.pattern, "output_mode": "content", "-n": True}
            suuid = sub.message([_tool_use(sid, "Grep", grep)])[0]
            hit = f"{task.path}:{at}:{first}"
            found = {"mode": "content", "numFiles": 1, "filenames": [], "content": hit}
            sub.result(sid, suuid, hit, {**found, "numLines": 1}, took=(20, 300))
            sid = self._id()
            suuid = sub.message([_tool_use(sid, "Read", {"file_path": _abs(task.path)})])[0]
            sub.result(sid, suuid, _numbered(source), _read_result(task.path, source))
            sub.message([_text(report)])
        facts = sub.facts.as_dict()
        facts.update(
            format="claude-code",
            path=str(path),
            name=path.stem,
            session_id=w.session_id,
            agent_id=agent_id,
            lines=lines.lines,
            bytes=lines.bytes,
            model=CLAUDE_MODEL,
            version=CLAUDE_VERSION,
        )
        self.subagents[agent_id] = facts
        last = list(sub.facts.messages.values())[-1]
        content = [_text(report), _text(f"agentId: {agent_id} (use this id to resume the agent)")]
        result = {
            "status": "completed",
            "prompt": task.explore,
            "agentId": agent_id,
            "content": [_text(report)],
            "totalDurationMs": w.clock.ms - started,
            "totalTokens": sum(last),
            "totalToolUseCount": len(sub.facts.calls),
            "usage": dict(zip(USAGE_FIELDS, last, strict=True)),
        }
        w.result(cid, uuid, content, result, agent_id=agent_id, took=(200, 1_500))


def _order(rng: Rand, turns: int) -> list[_Task]:
    """The task of each turn: the tasks in a seeded order, again and again."""
    order = list(_TASKS)
    rng.shuffle(order)
    return [order[i % len(order)] for i in range(turns)]


def _check_common(turns: int, errors: int | None, dest: Path, name: str) -> Path:
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


def write_claude_code_session(
    dest: Path,
    turns: int = 3,
    *,
    seed: int = 0,
    name: str | None = None,
    session_id: str | None = None,
    errors: int | None = None,
    subagents: int = 0,
    plant: str | None = None,
    at: int | None = None,
) -> dict[str, Any]:
    """Write a Claude Code transcript of ``turns`` prompts to
    ``dest/<name>.jsonl`` (``name``: the session id, as Claude Code names its
    files), and its sub-agents' transcripts to ``dest/<name>/subagents/``.

    ``errors``: how many turns (the first ones) run the failing test before
    the fix, a Bash result with ``is_error: true``; None: about 40% of the
    turns, and about 10% also miss an edit (another error result).
    ``subagents``: how many turns (the first ones) start with a ``Task``
    call whose sub-agent's transcript is written. The first turn, and about
    30% of the others, keep a todo list (TodoWrite). ``plant``/``at``: see
    the module.

    Returns facts: format, path, name, session_id, lines, bytes, turns,
    calls (id -> ``{tool, status}``), usage (each message once, its last
    line's), messages, todos (the last TodoWrite's), agents (Task call ->
    agent id), subagents (agent id -> the same facts for its transcript),
    model, version, phase; with a plant, ``error`` (code, seq, line, kind)
    and the facts of the valid prefix.
    """
    name = name or session_id or Rand(f"{seed}/id").uuid4()
    _check_plant(plant, at, CLAUDE_PLANTS)
    path = _check_common(turns, errors, dest, name)
    rng = Rand(seed)
    sid = session_id or Rand(f"{seed}/id").uuid4()
    clock = Clock(Rand(f"{seed}/ts"), _START_MS)
    with path.open("wb") as out:
        lines = _Lines(out, plant, at or 0, Rand(f"{seed}/plant"))
        w = _Claude(lines, rng, clock, sid)
        session = _ClaudeSession(w, rng, path.parent, name)
        for i, task in enumerate(_order(rng, turns)):
            session.turn(
                task,
                todo=i == 0 or rng.chance(0.3),
                explore=i < subagents,
                reproduce=i < errors if errors is not None else rng.chance(0.4),
                miss=errors is None and rng.chance(0.1),
            )
    facts: dict[str, Any] = {
        "format": "claude-code",
        "path": str(path),
        "name": name,
        "session_id": sid,
        "lines": lines.lines,
        "bytes": lines.bytes,
        **w.facts.as_dict(),
        "subagents": session.subagents,
        "model": CLAUDE_MODEL,
        "version": CLAUDE_VERSION,
    }
    return _planted(facts, plant, at, lines)


def _planted(
    facts: dict[str, Any], plant: str | None, at: int | None, lines: _Lines
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


# -- Codex -------------------------------------------------------------------------------


class _Codex:
    """Writes a Codex rollout's records and counts what they hold."""

    def __init__(self, lines: _Lines, rng: Rand, clock: Clock, session_id: str) -> None:
        self.lines = lines
        self.rng = rng
        self.clock = clock
        self.session_id = session_id
        self.calls: dict[str, dict[str, str]] = {}
        self.usage: dict[str, int] = {}
        self.turns = 0
        self.todos: list[dict[str, str]] = []
        self.in_flight = 0
        self.phase = "new"
        self.total = dict.fromkeys(
            ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens"), 0
        )
        self.context = rng.int_in(9_000, 14_000)
        self.turn_id = ""

    def _to(self, phase: str) -> None:
        self.phase = "tools_running" if self.in_flight else phase

    def put(self, kind: str, payload: dict[str, Any], top: str = "", low: int = 5) -> bool:
        """One ``{timestamp, type, payload}`` line; ``top``: the record's type
        (``response_item`` for a response item, ``event_msg`` for an event)."""
        top = top or ("event_msg" if kind in _CODEX_EVENTS else "response_item")
        rec = {"timestamp": self.clock.tick(low, max(low, 600)), "type": top, "payload": payload}
        return self.lines.put(rec, kind)

    def message(self, role: str, text: str, phase: str | None = None) -> None:
        part = "output_text" if role == "assistant" else "input_text"
        item: dict[str, Any] = {
            "type": "message",
            "role": role,
            "content": [{"type": part, "text": text}],
        }
        if phase is not None:
            item["phase"] = phase
        if self.put(role, item) and role == "assistant":
            self._to("awaiting_user")

    def event(self, kind: str, **fields: Any) -> bool:
        return self.put(kind, {"type": kind, **fields})

    def tokens(self) -> None:
        """A ``token_count`` event after a model response."""
        rng = self.rng
        out = rng.int_in(40, 900)
        reasoning = rng.int_in(0, out // 2)
        cached = max(0, self.context - rng.int_in(200, 3_000))
        last = {
            "input_tokens": self.context,
            "cached_input_tokens": cached,
            "output_tokens": out,
            "reasoning_output_tokens": reasoning,
        }
        total = {k: self.total[k] + v for k, v in last.items()}
        self.context += out
        usage = {**total, "total_tokens": total["input_tokens"] + total["output_tokens"]}
        info = {
            "total_token_usage": usage,
            "last_token_usage": {**last, "total_tokens": last["input_tokens"] + out},
            "model_context_window": _WINDOW,
        }
        limits = {
            "primary": {"used_percent": float(rng.int_in(1, 40)), "window_minutes": 300},
            "secondary": {"used_percent": float(rng.int_in(1, 20)), "window_minutes": 10_080},
        }
        self.total = total  # as written; the facts (usage) as counted
        if self.event("token_count", info=info, rate_limits=limits):
            self.usage = usage

    def request(self, kind: str, item: dict[str, Any], tool: str) -> None:
        if self.put(kind, item, low=300):
            self.calls[item["call_id"]] = {"tool": tool, "status": "requested"}
            self.in_flight += 1
            if tool == "update_plan":
                self.todos = orjson.loads(item["arguments"])["plan"]
            self._to("tools_running")

    def answer(self, kind: str, call_id: str, output: str, ok: bool) -> None:
        self.context += len(output) // 4
        if self.put(kind, {"type": kind, "call_id": call_id, "output": output}, low=50):
            self.calls[call_id]["status"] = "ok" if ok else "error"
            self.in_flight -= 1
            self._to("awaiting_model")


_CODEX_EVENTS = frozenset(
    {
        "task_started",
        "task_complete",
        "user_message",
        "agent_message",
        "agent_reasoning",
        "token_count",
        "exec_command_end",
        "patch_apply_end",
    }
)


class _CodexSession:
    """The turns of a coding agent, as Codex records them."""

    def __init__(self, w: _Codex, rng: Rand) -> None:
        self.w = w
        self.rng = rng

    def _call_id(self) -> str:
        return "call_" + self.rng.b62(24)

    def start(self) -> None:
        w = self.w
        meta = {
            "id": w.session_id,
            "timestamp": w.clock.now(),
            "cwd": _CWD,
            "originator": "codex_cli_rs",
            "cli_version": CODEX_VERSION,
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {
                "text": "You are a coding agent. Work in the user's repository, keep changes "
                "small, run the tests before you say you are done."
            },
            "git": {"commit_hash": self.rng.hexs(40), "branch": _BRANCH},
        }
        w.put("session_meta", meta, top="session_meta")

    def turn(self, task: _Task, *, first: bool, reproduce: bool) -> None:
        w, rng = self.w, self.rng
        w.turn_id = rng.uuid7(w.clock.ms)
        started = w.clock.ms // 1000
        if w.event(
            "task_started",
            turn_id=w.turn_id,
            started_at=started,
            model_context_window=_WINDOW,
            collaboration_mode_kind="default",
        ):
            w._to("awaiting_model")
        if first:
            w.message(
                "developer",
                "<permissions instructions>\nsandbox_mode is workspace-write: files in the "
                "workspace may be edited; network access is off.\n</permissions instructions>",
            )
            w.message(
                "user",
                f"<environment_context>\n  <cwd>{_CWD}</cwd>\n  <shell>bash</shell>\n"
                "</environment_context>",
            )
        context = {
            "turn_id": w.turn_id,
            "cwd": _CWD,
            "current_date": w.clock.now()[:10],
            "timezone": "UTC",
            "approval_policy": "on-request",
            "sandbox_policy": {"type": "workspace-write", "network_access": False},
            "model": CODEX_MODEL,
            "effort": "medium",
            "summary": "auto",
        }
        w.put("turn_context", context, top="turn_context")
        w.message("user", task.prompt)
        if w.event("user_message", message=task.prompt, images=[], local_images=[]):
            w.turns += 1
            w._to("awaiting_model")
        if first:
            w.event("token_count", info=None, rate_limits=None)
        source = _source(task, rng)
        self._reason(f"**Locating `{task.pattern}`**")
        w.message("assistant", f"Looking for `{task.pattern}` first.", phase="commentary")
        w.event("agent_message", message=f"Looking for `{task.pattern}` first.")
        at = _line_of(source, task.body.split("\n", 1)[0])
        hits = f"{task.path}:{at}:{task.body.split(chr(10), 1)[0]}"
        self._exec(f'rg -n "{task.pattern}" src tests', hits, 0, "search")
        self._exec(f"sed -n '1,200p' {task.path}", source, 0, "read")
        if reproduce:
            self._exec("python -m pytest -q", _pytest(rng, task.failing), 1, "unknown")
        self._plan(task, 1)
        self._patch(task)
        self._exec("python -m pytest -q", _pytest(rng, None), 0, "unknown")
        self._plan(task, len(task.plan))
        self._reason("**Summarizing the change**")
        w.event("agent_message", message=task.reply)
        w.message("assistant", task.reply, phase="final_answer")
        w.tokens()
        if w.event("task_complete", turn_id=w.turn_id, last_agent_message=task.reply):
            w._to("awaiting_user")

    def _reason(self, summary: str) -> None:
        item = {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": summary}],
            "content": None,
            "encrypted_content": "gAAAAB" + self.rng.blob(120),
        }
        self.w.put("reasoning", item, low=800)

    def _exec(self, cmd: str, out: str, code: int, parsed: str) -> None:
        """An ``exec_command`` call, its end event and its output."""
        w, rng = self.w, self.rng
        cid = self._call_id()
        args = {"cmd": cmd, "workdir": _CWD, "yield_time_ms": 1000, "max_output_tokens": 6000}
        item = {
            "type": "function_call",
            "name": "exec_command",
            "arguments": orjson.dumps(args).decode(),
            "call_id": cid,
        }
        w.request("function_call", item, "exec_command")
        w.tokens()
        secs = rng.uniform(0.05, 6.0)
        w.event(
            "exec_command_end",
            call_id=cid,
            process_id=str(rng.int_in(1_000, 99_999)),
            turn_id=w.turn_id,
            command=["/bin/bash", "-lc", cmd],
            cwd=_CWD,
            parsed_cmd=[{"type": parsed, "cmd": cmd}],
            source="unified_exec_startup",
            stdout="",
            stderr="",
            aggregated_output=out,
            exit_code=code,
            duration={"secs": int(secs), "nanos": int(secs % 1 * 1e9)},
            formatted_output="",
            status="completed",
        )
        said = (
            f"Chunk ID: {rng.hexs(6)}\nWall time: {secs:.4f} seconds\n"
            f"Process exited with code {code}\nOriginal token count: {len(out) // 4}\n"
            f"Output:\n{out}"
        )
        w.answer("function_call_output", cid, said, code == 0)

    def _plan(self, task: _Task, done: int) -> None:
        plan = [
            {
                "step": step,
                "status": "completed" if i < done else "in_progress" if i == done else "pending",
            }
            for i, (step, _) in enumerate(task.plan)
        ]
        cid = self._call_id()
        args = orjson.dumps({"plan": plan}).decode()
        item = {"type": "function_call", "name": "update_plan", "arguments": args, "call_id": cid}
        self.w.request("function_call", item, "update_plan")
        self.w.tokens()
        self.w.answer("function_call_output", cid, "Plan updated", True)

    def _patch(self, task: _Task) -> None:
        """A ``custom_tool_call`` of apply_patch: the fix and the new test."""
        w = self.w
        cid = self._call_id()
        removed = "".join(f"-{x}\n" for x in task.old.split("\n") if x or not task.new)
        added = "".join(f"+{x}\n" for x in task.new.split("\n")) if task.new else ""
        new_test = "".join(f"+{x}\n" for x in task.test_body.rstrip("\n").split("\n"))
        patch = (
            f"*** Begin Patch\n*** Update File: {task.path}\n@@\n{removed}{added}"
            f"*** Add File: {task.test}\n{new_test}*** End Patch\n"
        )
        item = {
            "type": "custom_tool_call",
            "status": "completed",
            "call_id": cid,
            "name": "apply_patch",
            "input": patch,
        }
        w.request("custom_tool_call", item, "apply_patch")
        w.tokens()
        done = f"Success. Updated the following files:\nM {task.path}\nA {task.test}\n"
        w.event(
            "patch_apply_end",
            call_id=cid,
            turn_id=w.turn_id,
            stdout=done,
            stderr="",
            success=True,
        )
        secs = round(self.rng.uniform(0.05, 0.4), 1)
        output = {"output": done, "metadata": {"exit_code": 0, "duration_seconds": secs}}
        w.answer("custom_tool_call_output", cid, orjson.dumps(output).decode(), True)


def write_codex_rollout(
    dest: Path,
    turns: int = 2,
    *,
    seed: int = 0,
    name: str | None = None,
    errors: int | None = None,
    plant: str | None = None,
    at: int | None = None,
) -> dict[str, Any]:
    """Write a Codex rollout of ``turns`` prompts to ``dest/<name>.jsonl``
    (``name``: ``rollout-<time>-<session id>``, as Codex names its files).

    Each turn: ``exec_command`` calls (search, read, the tests), an
    ``update_plan`` call, an ``apply_patch`` custom tool call, the reply.
    ``errors``: how many turns (the first ones) run the failing test first
    (an output saying ``Process exited with code 1``: status error); None:
    about 40% of them. ``plant``/``at``: see the module.

    Returns facts: format, path, name, session_id, lines, bytes, turns,
    calls (call_id -> ``{tool, status}``), usage (the last ``token_count``'s
    ``total_token_usage``), todos (the last plan), model, version, phase; with
    a plant, ``error`` and the facts of the valid prefix.
    """
    _check_plant(plant, at, CODEX_PLANTS)
    rng = Rand(seed)
    sid = Rand(f"{seed}/id").uuid7(_START_MS)
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(_START_MS // 1000))
    name = name or f"rollout-{stamp}-{sid}"
    path = _check_common(turns, errors, dest, name)
    with path.open("wb") as out:
        lines = _Lines(out, plant, at or 0, Rand(f"{seed}/plant"))
        w = _Codex(lines, rng, Clock(Rand(f"{seed}/ts"), _START_MS), sid)
        session = _CodexSession(w, rng)
        session.start()
        for i, task in enumerate(_order(rng, turns)):
            reproduce = i < errors if errors is not None else rng.chance(0.4)
            session.turn(task, first=i == 0, reproduce=reproduce)
    facts: dict[str, Any] = {
        "format": "codex",
        "path": str(path),
        "name": name,
        "session_id": sid,
        "lines": lines.lines,
        "bytes": lines.bytes,
        "calls": w.calls,
        "usage": w.usage,
        "turns": w.turns,
        "todos": w.todos,
        "phase": w.phase,
        "model": CODEX_MODEL,
        "version": CODEX_VERSION,
    }
    return _planted(facts, plant, at, lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m replay_tui.synth.sessions DEST --turns N``: write a
    session, print its facts."""
    parser = argparse.ArgumentParser(
        prog="python -m replay_tui.synth.sessions",
        description="Write a deterministic Claude Code transcript (or Codex rollout) into the "
        "folder DEST, optionally with one planted error. Prints facts as JSON.",
    )
    parser.add_argument("dest", type=Path, help="folder to write the session file into")
    parser.add_argument("--format", choices=("claude-code", "codex"), default="claude-code")
    parser.add_argument("--turns", type=int, default=3, metavar="N", help="prompts (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="same seed, same bytes (default 0)")
    parser.add_argument("--name", help="file name without .jsonl (default: as the tool names it)")
    parser.add_argument(
        "--errors",
        type=int,
        metavar="N",
        help="turns (the first ones) with an error result (default: about 40%% of them)",
    )
    parser.add_argument(
        "--subagents",
        type=int,
        default=0,
        metavar="N",
        help="claude-code: turns (the first ones) with a Task call and its sub-agent's transcript",
    )
    parser.add_argument(
        "--plant",
        choices=sorted(CLAUDE_PLANTS | CODEX_PLANTS),
        metavar="CODE",
        help="plant one error: " + ", ".join(sorted(CLAUDE_PLANTS | CODEX_PLANTS)),
    )
    parser.add_argument("--at", type=int, metavar="LINE", help="where to plant it (at or after)")
    args = parser.parse_args(argv)
    try:
        if args.format == "codex":
            if args.subagents:
                parser.error("--subagents is for claude-code")
            facts = write_codex_rollout(
                args.dest,
                args.turns,
                seed=args.seed,
                name=args.name,
                errors=args.errors,
                plant=args.plant,
                at=args.at,
            )
        else:
            facts = write_claude_code_session(
                args.dest,
                args.turns,
                seed=args.seed,
                name=args.name,
                errors=args.errors,
                subagents=args.subagents,
                plant=args.plant,
                at=args.at,
            )
    except (ValueError, FileExistsError) as exc:
        parser.error(str(exc))
    sys.stdout.write(orjson.dumps(facts).decode() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
