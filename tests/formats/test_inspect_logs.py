"""Inspect AI logs: every fixture sample found by content, replayed by its
events' JSON Patches, verified, and its final state what inspect-ai's own
``read_eval_log`` records of it (the truth files beside the logs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.engine.open import open_replay
from replay_tui.formats.inspect import InspectLog, looks_like_log
from replay_tui.formats.run import INSPECT, locate_run
from tests.conftest import TESTS

LOGS = TESTS / "fixtures" / "inspect-logs"
TRUTHS = sorted(LOGS.glob("*/*.truth.json"))


def _log_of(truth: Path) -> Path:
    return truth.with_name(truth.name.removesuffix(".truth.json"))


def _samples() -> list[tuple[Path, dict[str, Any]]]:
    found = []
    for truth in TRUTHS:
        for sample in orjson.loads(truth.read_bytes())["samples"]:
            found.append((_log_of(truth), sample))
    return found


SAMPLES = _samples()


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(
        p.get("text") or ""
        for p in content or []
        if isinstance(p, dict) and p.get("type") == "text"
    )


def summary(state: dict[str, Any]) -> dict[str, Any]:
    """The state in the truth's terms: each message's role, text, tool calls."""
    messages = []
    for m in state.get("messages") or []:
        entry: dict[str, Any] = {"role": m.get("role"), "text": _text(m.get("content"))}
        if m.get("tool_calls"):
            entry["tool_calls"] = [
                {"function": c.get("function"), "arguments": c.get("arguments")}
                for c in m["tool_calls"]
            ]
        if m.get("tool_call_id"):
            entry["tool_call_id"] = m["tool_call_id"]
        messages.append(entry)
    output = state.get("output") or {}
    text = output.get("completion") or ""
    if not text and output.get("choices"):  # as inspect-ai's ModelOutput.completion
        text = _text((output["choices"][0].get("message") or {}).get("content"))
    return {
        "messages": messages,
        "output_text": text,
        "store": state.get("store") or {},
    }


def test_there_are_fixtures_of_every_kind() -> None:
    """Logs of both forms, zstd and older members, an error, several epochs, a sub-task."""
    names = {t.name for t in TRUTHS}
    assert {
        "failing.eval.truth.json",
        "helper.eval.truth.json",
        "notebook.json.truth.json",
    } <= names
    assert len(SAMPLES) >= 30
    assert any(s["error"] for _, s in SAMPLES)
    assert any(s["epoch"] == 2 for _, s in SAMPLES)


@pytest.mark.parametrize("truth", TRUTHS, ids=lambda p: p.name)
def test_every_log_is_found_by_content(truth: Path, tmp_path: Path) -> None:
    log = _log_of(truth)
    assert looks_like_log(log)
    assert locate_run(log).format == INSPECT
    renamed = tmp_path / "log.data"  # the name says nothing: the content does
    renamed.write_bytes(log.read_bytes())
    assert locate_run(renamed).format == INSPECT
    keys = {f"{s['id']}:{s['epoch']}" for s in orjson.loads(truth.read_bytes())["samples"]}
    listed = InspectLog(log)
    try:
        assert {ref.key for ref in listed.samples} == keys
    finally:
        listed.close()


@pytest.mark.parametrize(
    ("log", "sample"), SAMPLES, ids=[f"{p.name}#{s['id']}:{s['epoch']}" for p, s in SAMPLES]
)
def test_every_sample_verifies_to_its_record(log: Path, sample: dict[str, Any]) -> None:
    """Replayed from sample_init by its patches, the sample ends as inspect-ai
    records it; where the patches cannot reach the record (an error mid-solver),
    a warning says what the record adds; and a middle checkpoint's state is the
    patches' state there."""
    run = f"{log}#{sample['id']}:{sample['epoch']}"
    replay, _ = open_replay(run, history=True)
    try:
        replay.verify()
        assert replay.error is None, replay.error
        assert replay.rules.reducer.name == "inspect_ai"
        assert summary(replay.final_state()) == sample["final"]
        warned = " ".join(w.message for w in replay.warnings)
        if sample.get("patches_reach_record") is False or sample["error"]:
            assert "the record adds" in warned
        for point in sample.get("checkpoints") or []:
            at = {k: point[k] for k in ("messages", "output_text", "store")}
            assert summary(replay.state_at(point["at"])) == at
    finally:
        replay.close()
