"""Every sample run gets the verdict sample_runs/expected.json says, via the CLI."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import orjson
import pytest

from replay_tui.core.errors import ERROR_CODES
from tests.conftest import ROOT, SAMPLES

EXPECTED: dict[str, dict[str, Any]] = orjson.loads((SAMPLES / "expected.json").read_bytes())


def test_every_error_code_has_a_broken_sample() -> None:
    codes = {v["error"]["code"] for v in EXPECTED.values() if v["error"]}
    assert codes == set(ERROR_CODES)
    for code in ERROR_CODES:
        assert (SAMPLES / f"broken-{code}").is_dir()


def test_every_sample_folder_is_listed() -> None:
    folders = {p.name for p in SAMPLES.iterdir() if p.is_dir() and not p.name.startswith("_")}
    # temporal/ holds history files, not run folders: tests/formats/test_temporal.py checks each
    assert "temporal" in folders and any((SAMPLES / "temporal").glob("*.json"))
    folders.discard("temporal")
    # agent-sessions/ holds session files: each is listed by its path (below)
    assert "agent-sessions" in folders
    folders.discard("agent-sessions")
    # traces/ holds OpenTelemetry traces: each is listed by its path (below)
    assert "traces" in folders
    folders.discard("traces")
    assert folders == {name for name in EXPECTED if "/" not in name}
    readme = (SAMPLES / "README.md").read_text()
    assert all(f"`{name}`" in readme for name in folders)


def test_every_session_sample_is_listed() -> None:
    """Every session file under agent-sessions/ (sub-agents' transcripts too)
    has its verdict in expected.json and is named in both READMEs."""
    sessions = SAMPLES / "agent-sessions"
    files = {p.relative_to(SAMPLES).as_posix() for p in sessions.rglob("*.jsonl")}
    assert len(files) == 7
    assert files == {name for name in EXPECTED if name.startswith("agent-sessions/")}
    # nothing else there (a sub-agent's transcript is under its session's folder)
    assert {p.name for p in sessions.iterdir()} - {p.split("/")[1] for p in files} == {"README.md"}
    here = (sessions / "README.md").read_text()
    there = (SAMPLES / "README.md").read_text()
    for name in files:
        inside = name.removeprefix("agent-sessions/")
        assert f"`{inside}`" in here, name
        assert inside.rsplit("/", 1)[-1] in there, name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_verdict(name: str) -> None:
    want = EXPECTED[name]
    args = [sys.executable, "-m", "replay_tui", "check", str(SAMPLES / name), "--json"]
    if want["reducer"]:
        args += ["--reducer", want["reducer"]]
    out = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == (0 if want["verdict"] == "verified" else 1), out.stderr
    report = orjson.loads(out.stdout)
    assert report["events"] == want["events"]
    assert report["state"] == want["state"]
    if want["error"] is None:
        assert report["error"] is None
    else:
        got = {k: report["error"][k] for k in ("code", "seq", "line", "kind")}
        assert got == want["error"]


def test_bundled_demo_is_the_sample_demo() -> None:
    bundled = ROOT / "replay_tui" / "demo" / "demo-001"
    files = sorted(
        p.relative_to(SAMPLES / "demo-001")
        for p in (SAMPLES / "demo-001").rglob("*")
        if p.is_file()
    )
    assert files and files == sorted(
        p.relative_to(bundled) for p in bundled.rglob("*") if p.is_file()
    )
    for rel in files:
        assert (bundled / rel).read_bytes() == (SAMPLES / "demo-001" / rel).read_bytes()


def test_the_sample_runs_readme_counts_what_is_in_the_files() -> None:
    """Every number sample_runs/README.md gives for a valid run is what the
    files hold (events, receipts, attempts, denied calls) and what check says."""
    import re
    from collections import Counter

    from replay_tui.engine.replay import verify
    from replay_tui.formats.run import locate_run
    from replay_tui.reducers import rules_for_run

    text = (SAMPLES / "README.md").read_text()
    valid = text.split("## Valid runs", 1)[1].split("##", 1)[0]
    bullets = re.findall(r"^- `([^`]+)`: (.*)$", valid, flags=re.M)
    assert len(bullets) == 4
    for name, said in bullets:
        paths = locate_run(SAMPLES / name)
        replay = verify(paths, rules_for_run(None, paths.events))  # no --reducer needed
        assert replay.error is None, name
        kinds = Counter(
            e["kind"] for e in map(orjson.loads, paths.events.read_bytes().splitlines())
        )
        receipts = len(list((paths.dir / "receipts").glob("*.json")))
        facts = {
            "events": replay.valid,
            "receipts": receipts,
            "receipt": receipts,
            "attempts": kinds["attempt_started"],
            "denied calls": kinds["tool_denied"],
        }
        for number, what in re.findall(
            r"(\d+) (events|receipts|receipt|attempts|denied calls)", said
        ):
            assert int(number) == facts[what], f"{name}: README says {number} {what}"
        word = re.search(r"state `(\w+)`", said)
        assert word is not None and word.group(1) == replay.final_summary()[0], name


def test_every_trace_sample_is_listed_and_is_its_corpus_file() -> None:
    """Every trace under traces/ has its verdict in expected.json, is named
    in both READMEs, and is the test corpus's file byte for byte (with the
    corpus's license beside it), as make_samples.py copies it."""
    traces = SAMPLES / "traces"
    files = {p.relative_to(SAMPLES).as_posix() for p in traces.glob("*.json")}
    assert len(files) == 1
    assert files == {name for name in EXPECTED if name.startswith("traces/")}
    assert {p.name for p in traces.iterdir()} == {
        "README.md",
        "LICENSE",
        *(n.split("/")[1] for n in files),
    }
    corpus = ROOT / "tests" / "fixtures" / "otel-traces"
    assert (traces / "LICENSE").read_bytes() == (corpus / "LICENSE").read_bytes()
    here = (traces / "README.md").read_text()
    there = (SAMPLES / "README.md").read_text()
    guide = (ROOT / "docs" / "samples.md").read_text()
    for name in files:
        inside = name.removeprefix("traces/")
        assert f"`{inside}`" in here and f"`{inside}`" in there and inside in guide, name
        origin = re.search(rf"`{re.escape(inside)}` \| `([^`]+)`", here)
        assert origin is not None, name
        assert (SAMPLES / name).read_bytes() == (corpus / origin.group(1)).read_bytes()
