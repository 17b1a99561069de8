"""Numbers as big as the file holds: an integer past 64 bits in a ledger, a
trace or a session is read and shown exactly, or, where the format caps it
(OTLP's times are fixed64 nanoseconds), refused at its place with a finding
that names the field; never an internal error, never an empty timeline."""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from replay_tui.ui.launch import make_app
from tests.conftest import ROOT, TESTS
from tests.helpers.cli import run_cli
from tests.helpers.screen import pane_text, screen_text, settle
from tests.helpers.waiting import until

BIG, NEG = 2**70, -(2**70)
BIG_TEXT = str(BIG)  # 1180591620717411303424
TRACES = TESTS / "fixtures" / "otel-traces"
MCP = TRACES / "hand" / "mcp_tool_call.json"
SESSION = TESTS / "fixtures" / "agent-sessions" / "claude-code" / "codemie--session-624a4a58.jsonl"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# -- a ledger ---------------------------------------------------------------------
def _ledger_with_wide_numbers(tmp_path: Path) -> Path:
    run = tmp_path / "wide-run"
    shutil.copytree(ROOT / "sample_runs" / "demo-001", run)
    events = run / "events.jsonl"
    lines = events.read_text().splitlines()
    for i, line in enumerate(lines):
        event = json.loads(line)
        if event["kind"] == "model_proposed":  # the first: its args are kept in the state
            event["payload"]["args"]["n"] = BIG
            event["payload"]["args"]["m"] = NEG
            event["payload"]["tokens"] = BIG
            lines[i] = _compact(event)
            break
    events.write_text("\n".join(lines) + "\n")
    return run


def test_a_ledger_with_integers_past_64_bits_verifies_and_its_state_shows_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _ledger_with_wide_numbers(tmp_path)
    code, out, err = run_cli(capsys, "check", str(run))
    assert code == 0 and "verified" in out, (out, err)
    code, out, err = run_cli(capsys, "state", str(run), "--at", "3")
    assert code == 0, err
    state = json.loads(out)  # the standard reader: ints exact
    assert state["calls"]["call-001"]["args"] == {
        "path": "tests/test_parser.py",
        "n": BIG,
        "m": NEG,
    }
    assert state["spent"]["tokens"] == BIG and f'"tokens":{BIG}' in out
    code, out, err = run_cli(capsys, "check", str(run), "--json")
    assert code == 0 and json.loads(out)["error"] is None, err


def test_a_receipt_with_an_integer_past_64_bits_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import hashlib

    run = tmp_path / "wide-receipt"
    shutil.copytree(ROOT / "sample_runs" / "demo-001", run)
    receipt = run / "receipts" / "call-001.json"
    old = hashlib.sha256(receipt.read_bytes()).hexdigest()
    data = json.loads(receipt.read_text())
    data["rows_read"] = BIG
    raw = (json.dumps(data, indent=2) + "\n").encode()
    receipt.write_bytes(raw)
    events = run / "events.jsonl"  # the event pins the receipt's new digest
    events.write_text(events.read_text().replace(old, hashlib.sha256(raw).hexdigest()))
    code, out, err = run_cli(capsys, "check", str(run))
    assert code == 0 and "verified: 14 events, 1 receipt" in out, (out, err)


# -- a trace ----------------------------------------------------------------------
def _trace(tmp_path: Path, name: str, edit: Any) -> Path:
    doc = json.loads(MCP.read_text())
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    edit(spans[1])  # "chat gpt-4o": not the root, so the finding has a prefix before it
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc, indent=1))
    return path


def _end(value: Any) -> Any:
    def edit(span: dict[str, Any]) -> None:
        span["endTimeUnixNano"] = value

    return edit


def _start(value: Any) -> Any:
    def edit(span: dict[str, Any]) -> None:
        span["startTimeUnixNano"] = value

    return edit


def _tokens(value: Any) -> Any:
    def edit(span: dict[str, Any]) -> None:
        key = {"key": "gen_ai.usage.input_tokens", "value": {"intValue": value}}
        span["attributes"] = [a for a in span["attributes"] if a["key"] != key["key"]] + [key]

    return edit


@pytest.mark.parametrize(
    ("name", "edit", "field"),
    [
        ("end-string", _end(str(2**64)), "endTimeUnixNano 18446744073709551616"),
        ("end-number", _end(BIG), f"endTimeUnixNano {BIG_TEXT}"),
        ("start-string", _start(str(BIG)), f"startTimeUnixNano {BIG_TEXT}"),
        ("start-negative", _start(str(NEG)), f"startTimeUnixNano -{BIG_TEXT}"),
    ],
)
def test_a_span_time_past_fixed64_is_a_finding_at_that_span(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, edit: Any, field: str
) -> None:
    trace = _trace(tmp_path, name, edit)
    code, out, err = run_cli(capsys, "check", str(trace), "--json")
    assert "internal error" not in err
    assert code == 1, (out, err)
    error = json.loads(out)["error"]
    assert error["code"] == "bad_envelope"
    assert field in error["message"] and "span 00f067aa0ba902b2" in error["message"]
    assert "not a time OTLP can hold" in error["message"]
    line = error["line"]  # a converted trace's line is its event's seq
    assert line >= 1 and error["artifact"] == f"{name}.json: event {line}"
    code, out, err = run_cli(capsys, "state", str(trace), "--at", str(line - 1))
    assert code == 0 and "internal error" not in err  # the prefix before it is a state


@pytest.mark.parametrize("given", [BIG, BIG_TEXT], ids=["number", "string"])
def test_an_int_value_past_64_bits_is_kept_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: Any
) -> None:
    trace = _trace(tmp_path, "tokens", _tokens(given))
    code, out, err = run_cli(capsys, "check", str(trace))
    assert code == 0 and "verified" in out, (out, err)
    code, out, err = run_cli(capsys, "state", str(trace), "--at", "10")
    assert code == 0, err
    code, small, err = run_cli(
        capsys, "state", str(_trace(tmp_path, "small", _tokens(0))), "--at", "10"
    )
    assert code == 0, err
    # the trace's input tokens, the span's 2**70 among them, to the last digit
    rest = int(re.search(r'"tokens":\{[^}]*"input":(\d+)', small).group(1))  # type: ignore[union-attr]
    assert f'"input":{BIG + rest},' in out


# -- a Claude Code session ----------------------------------------------------------
def _session_with_wide_usage(tmp_path: Path) -> tuple[Path, str]:
    """Every line of one API message given BIG output tokens (streamed lines
    repeat the usage; the message's last line is the one counted)."""
    lines = SESSION.read_text().splitlines()
    target = None
    for i, line in enumerate(lines):
        rec = json.loads(line)
        message = rec.get("message")
        if not isinstance(message, dict) or "usage" not in message:
            continue
        target = target or message["id"]
        if message["id"] == target:
            message["usage"]["output_tokens"] = BIG
            lines[i] = _compact(rec)
    assert target is not None
    path = tmp_path / "wide-session.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path, target


def test_a_session_with_a_usage_past_64_bits_shows_and_sums_it_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    session, _ = _session_with_wide_usage(tmp_path)
    code, out, err = run_cli(capsys, "check", str(session))
    assert code == 0 and "verified" in out, (out, err)
    code, plain, err = run_cli(capsys, "usage", str(session), "--json")
    assert code == 0, err
    code, before, err = run_cli(capsys, "usage", str(SESSION), "--json")
    assert code == 0, err
    total = json.loads(plain)["sources"][0]["groups"][0]["tokens"]["output_tokens"]
    old = json.loads(before)["sources"][0]["groups"][0]["tokens"]["output_tokens"]
    assert type(total) is int and BIG < total < BIG + old  # BIG in place of one message's
    code, out, err = run_cli(capsys, "usage", str(session))
    assert code == 0 and f"{total:,}" in out, out  # the table's digits, every one


# -- in the app ---------------------------------------------------------------------
async def test_the_app_shows_a_refused_span_time_and_the_prefix_before_it(tmp_path: Path) -> None:
    trace = _trace(tmp_path, "end-string", _end(str(BIG)))
    app = make_app(trace)
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: not app.main.validating)
        await settle(app, pilot)
        assert app.main.timeline.row_count > 0
        await until(pilot, lambda: f"endTimeUnixNano {BIG_TEXT}" in screen_text(app))
        assert "bad_envelope" in screen_text(app)


async def test_the_app_shows_an_int_value_past_64_bits_exactly(tmp_path: Path) -> None:
    trace = _trace(tmp_path, "tokens", _tokens(BIG))
    app = make_app(trace, at=2)  # the span's start: its attributes in the event shown
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: not app.main.validating)
        await settle(app, pilot)
        assert app.main.timeline.row_count == 10 and "✓ verified" in screen_text(app)
        shown = f'"gen_ai.usage.input_tokens": {BIG_TEXT}'
        await until(pilot, lambda: shown in pane_text(app, "state"))


# -- a small fuzz -------------------------------------------------------------------
_INTEGER = re.compile(r'(?<=[:\[,\s])"?-?\d+"?(?=[,\]}\s])')


def _fuzzed(text: str, rng: random.Random) -> str:
    """``text`` with up to 4 of its integers (bare or quoted, as OTLP/JSON
    writes int64) made huge: past 64 bits, past a double, or negative."""
    found = list(_INTEGER.finditer(text))
    picked = sorted(rng.sample(found, min(4, len(found))), key=lambda m: m.start(), reverse=True)
    for m in picked:
        digits = rng.choice([str(2**64), str(BIG), "9" * 30, "1" + "0" * 330, str(NEG)])
        quoted = m.group(0).startswith('"')
        new = f'"{digits}"' if quoted else digits
        text = text[: m.start()] + new + text[m.end() :]
    return text


TRACE_FILES = sorted(p for p in TRACES.rglob("*.json") if not p.name.endswith(".truth.json"))


@pytest.mark.parametrize("seed", range(24))
def test_huge_integers_anywhere_in_a_trace_never_make_an_internal_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int
) -> None:
    rng = random.Random(seed)
    source = rng.choice(TRACE_FILES)
    trace = tmp_path / source.name
    trace.write_text(_fuzzed(source.read_text(), rng))
    code, out, err = run_cli(capsys, "check", str(trace), "--json")
    assert "internal error" not in err and code in (0, 1), (source, err)
    events = json.loads(out)["events"]
    code, out, err = run_cli(capsys, "state", str(trace), "--at", str(events))
    assert "internal error" not in err and code == 0, (source, err)


# -- past a float: charts and rows --------------------------------------------------
def test_a_chart_of_integers_past_a_float_keeps_their_digits_and_never_raises() -> None:
    from replay_tui.views.chart import Series, band_key, summarise

    series = Series(0)
    series.extend([(1, 10**400), (2, 5), (3, -(10**400)), (4, BIG)])
    summary = summarise(series)
    assert summary.last == BIG and summary.lo == 0 and summary.hi == float(BIG)
    assert band_key(10**400) != band_key(10**400 + 1)  # each its own band


async def test_a_calls_row_shows_an_argument_past_64_bits(tmp_path: Path) -> None:
    doc = json.loads(MCP.read_text())
    for sp in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for attr in sp["attributes"]:
            if attr["key"] == "gen_ai.tool.call.arguments":  # structured, not a JSON string
                n = {"key": "n", "value": {"intValue": BIG_TEXT}}
                attr["value"] = {"kvlistValue": {"values": [n]}}
    trace = tmp_path / "args.json"
    trace.write_text(json.dumps(doc))
    app = make_app(trace, at=4)
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: not app.main.validating)
        await settle(app, pilot)
        await until(pilot, lambda: f"tools/call get-weather {BIG_TEXT}" in screen_text(app))


CODEX = (
    TESTS
    / "fixtures"
    / "agent-sessions"
    / "codex"
    / "codemie--rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
)


def test_a_codex_calls_arguments_past_64_bits_are_kept_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex writes a call's arguments as JSON text inside the line: the
    rules read that text exactly too, not rounded to a float."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    lines = CODEX.read_text().splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        payload = rec.get("payload")
        if isinstance(payload, dict) and payload.get("type") == "function_call":
            payload["name"] = "write_stdin"  # whose input is named by its session_id
            payload["arguments"] = json.dumps({"session_id": BIG, "chars": ""})
            lines[i] = _compact(rec)
            seq, call_id = i + 1, payload["call_id"]
            break
    rollout = tmp_path / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    rollout.write_text("\n".join(lines) + "\n")
    code, out, err = run_cli(capsys, "state", f"{rollout}@{seq}")
    assert code == 0, err
    call = json.loads(out)["calls"][call_id]
    assert call["tool"] == "write_stdin" and call["input"] == f"session_id {BIG_TEXT}"
