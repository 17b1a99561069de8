"""The sessions the project writes itself (``replay_tui.synth.sessions``).

The same seed gives the same bytes; the committed samples of
``sample_runs/agent-sessions/`` are what the generator writes; every
generated session verifies (or fails where its plant says) with the calls,
usage, turns and todos the generator says it wrote, and those are counted
again here from the file, with plain json; a sub-agent's transcript is found
next to its session.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest

from replay_tui.engine.open import open_replay
from replay_tui.engine.replay import Replay
from replay_tui.formats.sessions import (
    CLAUDE_CODE,
    CODEX,
    session_format_of,
    subagent_transcript,
)
from replay_tui.synth.sessions import (
    USAGE_FIELDS,
    main,
    write_claude_code_session,
    write_codex_rollout,
)
from tests.conftest import ROOT, SAMPLES

SESSIONS = SAMPLES / "agent-sessions"
EXPECTED: dict[str, dict[str, Any]] = json.loads((SAMPLES / "expected.json").read_text())


def _make_samples() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_samples", SAMPLES / "make_samples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def checked(path: Path | str) -> Replay:
    replay, _ = open_replay(str(path))
    return replay.verify()


# -- counted again, from the file, with plain json -------------------------------------


def claude_counts(recs: list[dict[str, Any]]) -> dict[str, Any]:
    """Calls, usage (each message.id once: its last line's), turns, todos and
    agents of a transcript's records."""
    calls: dict[str, dict[str, str]] = {}
    last: dict[str, dict[str, int]] = {}
    agents: dict[str, str | None] = {}
    todos: list[Any] = []
    turns = 0
    for r in recs:
        msg = r.get("message") or {}
        content = msg.get("content")
        if r.get("type") == "assistant":
            last[msg["id"]] = msg["usage"]
            for b in content:
                if b["type"] == "tool_use":
                    calls[b["id"]] = {"tool": b["name"], "status": "requested"}
                    if b["name"] == "TodoWrite":
                        todos = b["input"]["todos"]
                    if b["name"] == "Task":
                        agents[b["id"]] = None
        elif r.get("type") == "user" and isinstance(content, str):
            turns += 1
        elif r.get("type") == "user":
            for b in content:
                calls[b["tool_use_id"]]["status"] = "error" if b.get("is_error") else "ok"
                if b["tool_use_id"] in agents:
                    agents[b["tool_use_id"]] = r["toolUseResult"]["agentId"]
    usage = {f: sum(u[f] for u in last.values()) for f in USAGE_FIELDS}
    return {"calls": calls, "usage": usage, "turns": turns, "todos": todos, "agents": agents}


def codex_counts(recs: list[dict[str, Any]]) -> dict[str, Any]:
    calls: dict[str, dict[str, str]] = {}
    usage: dict[str, int] = {}
    todos: list[Any] = []
    turns = 0
    for r in recs:
        p = r["payload"]
        t = p.get("type")
        if t in ("function_call", "custom_tool_call"):
            calls[p["call_id"]] = {"tool": p["name"], "status": "requested"}
            if p["name"] == "update_plan":
                todos = json.loads(p["arguments"])["plan"]
        elif t in ("function_call_output", "custom_tool_call_output"):
            failed = (
                "Process exited with code 0" not in p["output"] and "Process exited" in p["output"]
            )
            calls[p["call_id"]]["status"] = "error" if failed else "ok"
        elif t == "token_count" and p["info"] is not None:
            usage = p["info"]["total_token_usage"]
        elif t == "user_message":
            turns += 1
    return {"calls": calls, "usage": usage, "turns": turns, "todos": todos}


def assert_as_written(facts: dict[str, Any], path: Path | None = None) -> Replay:
    """``path`` (default: the facts' own) replays as the facts say: the
    verdict, and calls, usage, turns and todos of the valid prefix; a clean
    file's records, counted here, say the same."""
    path = path or Path(facts["path"])
    replay = checked(path)
    fmt = facts["format"]
    assert session_format_of(path) == (CLAUDE_CODE if fmt == "claude-code" else CODEX)
    assert replay.rules.reducer.name == ("claude_code" if fmt == "claude-code" else "codex")
    want_error = facts.get("error")
    found = [(w.code, w.line) for w in replay.warnings]
    assert found == [(w["code"], w["line"]) for w in facts.get("warnings", [])]
    if want_error is None:
        assert replay.error is None, replay.error
        assert replay.valid == facts["lines"] == len(path.read_bytes().splitlines())
    else:
        assert replay.error is not None
        got = {k: getattr(replay.error, k) for k in ("code", "seq", "line", "kind")}
        assert got == want_error
        assert replay.valid == want_error["line"] - 1
    assert path.stat().st_size == facts["bytes"]
    state = replay.final_state()  # of the valid prefix
    calls = {cid: {"tool": c["tool"], "status": c["status"]} for cid, c in state["calls"].items()}
    if fmt == "claude-code":  # the calls in flight, and counts per tool
        in_flight = {c: v for c, v in facts["calls"].items() if v["status"] == "requested"}
        assert calls == in_flight
        tools: dict[str, dict[str, int]] = {}
        for call in facts["calls"].values():
            counts = tools.setdefault(call["tool"], {"calls": 0, "errors": 0})
            counts["calls"] += 1
            counts["errors"] += call["status"] == "error"
        assert state["tools"] == tools
    else:
        assert calls == facts["calls"]
    assert state["usage"] == facts["usage"]
    assert state["turns"] == facts["turns"]
    assert state["todos"] == facts["todos"]
    if want_error is None:
        assert state["phase"] == facts["phase"]
        assert state["in_flight"] == 0
    if fmt == "claude-code":
        assert {c: a["agent_id"] for c, a in state["agents"].items()} == facts["agents"]
        assert state["session"].get("agent_id") == facts.get("agent_id")
    assert state["session"]["id"] == facts["session_id"]
    if want_error is None:
        assert state["version"] == facts["version"] and state["model"] == facts["model"]
    if want_error is None:  # counted again from the records themselves
        recs = records(path)
        counts = claude_counts(recs) if fmt == "claude-code" else codex_counts(recs)
        assert {k: facts[k] for k in counts} == counts
    return replay


# -- determinism ----------------------------------------------------------------------


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*.jsonl")}


def test_the_same_seed_writes_the_same_bytes(tmp_path: Path) -> None:
    for run in ("a", "b"):
        write_claude_code_session(tmp_path / run, 4, seed=11, subagents=2)
        write_codex_rollout(tmp_path / run, 3, seed=11)
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert len(a) == 4 and a == b  # two sessions, two sub-agents' transcripts
    write_claude_code_session(tmp_path / "c", 4, seed=12, subagents=2)
    write_codex_rollout(tmp_path / "c", 3, seed=12)
    c = _tree(tmp_path / "c")
    assert len(c) == 4 and not set(a.values()) & set(c.values())


def test_the_committed_samples_are_what_the_generator_writes(tmp_path: Path) -> None:
    make = _make_samples()
    written = make.write_sessions(tmp_path)
    assert _tree(tmp_path) == _tree(SESSIONS)
    expected = make.session_expected(written, tmp_path)
    sessions = {n: w for n, w in EXPECTED.items() if n.startswith("agent-sessions/")}
    assert expected == sessions


# -- every sample, as written ---------------------------------------------------------


def _sample_facts(tmp_path: Path) -> list[dict[str, Any]]:
    return list(_make_samples().write_sessions(tmp_path))


def test_every_sample_replays_as_the_generator_says(tmp_path: Path) -> None:
    written = _sample_facts(tmp_path)
    assert len(written) == 7
    for facts in written:
        committed = SESSIONS / Path(facts["path"]).relative_to(tmp_path)
        assert_as_written(facts, committed)


def test_what_the_samples_show(tmp_path: Path) -> None:
    """Each sample holds what its README says it shows."""
    facts = {Path(f["path"]).name: f for f in _sample_facts(tmp_path)}
    short = facts["claude-code-short.jsonl"]
    kinds = {r["type"] for r in records(SESSIONS / "claude-code-short.jsonl")}
    assert {"file-history-snapshot", "progress", "system", "user", "assistant"} <= kinds
    assert short["turns"] == 2 and all(c["status"] == "ok" for c in short["calls"].values())
    assert {c["tool"] for c in short["calls"].values()} >= {"TodoWrite", "Read", "Edit", "Bash"}
    # one API message over several lines: the same message.id, usage growing
    lines: dict[str, list[int]] = {}
    for r in records(SESSIONS / "claude-code-short.jsonl"):
        if r["type"] == "assistant":
            lines.setdefault(r["message"]["id"], []).append(r["message"]["usage"]["output_tokens"])
    split = [outs for outs in lines.values() if len(outs) > 1]
    assert split and all(outs == sorted(outs) and outs[0] < outs[-1] for outs in split)
    assert short["messages"] == len(lines)

    error = facts["claude-code-error.jsonl"]
    assert [c["tool"] for c in error["calls"].values() if c["status"] == "error"] == ["Bash"]
    blocks = [
        b
        for r in records(SESSIONS / "claude-code-error.jsonl")
        if r["type"] == "user" and isinstance(r["message"]["content"], list)
        for b in r["message"]["content"]
    ]
    assert [b["is_error"] for b in blocks].count(True) == 1

    sub = facts["claude-code-subagent.jsonl"]
    ((call, agent_id),) = sub["agents"].items()
    assert sub["calls"][call] == {"tool": "Task", "status": "ok"}
    transcript = facts[f"agent-{agent_id}.jsonl"]
    assert transcript["agent_id"] == agent_id and transcript["turns"] == 1
    side = records(SESSIONS / "claude-code-subagent" / "subagents" / f"agent-{agent_id}.jsonl")
    assert all(r["isSidechain"] is True and r["agentId"] == agent_id for r in side)
    assert side[0]["parentUuid"] is None

    damaged = facts["claude-code-damaged.jsonl"]
    want = {"code": "illegal_transition", "seq": 15, "line": 15, "kind": "tool_result"}
    assert damaged["error"] == want
    assert damaged["warnings"] == [{"code": "broken_chain", "line": 15}]
    broken = facts["claude-code-broken-chain.jsonl"]
    assert "error" not in broken and broken["warnings"] == [{"code": "broken_chain", "line": 30}]

    codex = facts["codex-rollout.jsonl"]
    assert codex["turns"] == 2
    tools = [c["tool"] for c in codex["calls"].values()]
    assert {"exec_command", "update_plan", "apply_patch"} <= set(tools)
    assert [c["status"] for c in codex["calls"].values()].count("error") == 1


def test_the_sub_agents_transcript_is_found_next_to_its_session() -> None:
    session = SESSIONS / "claude-code-subagent.jsonl"
    (agent,) = checked(session).final_state()["agents"].values()
    found = subagent_transcript(session, agent["agent_id"])
    assert (
        found
        == SESSIONS / "claude-code-subagent" / "subagents" / f"agent-{agent['agent_id']}.jsonl"
    )
    state = checked(found).final_state()
    assert state["session"]["agent_id"] == agent["agent_id"]
    assert state["session"]["sidechain"] is True
    assert agent["tool_uses"] == sum(t["calls"] for t in state["tools"].values())


def test_the_damaged_sample_is_the_clean_one_less_a_line(tmp_path: Path) -> None:
    options = dict(_make_samples().SESSION_SAMPLES["claude-code-damaged"][1])
    del options["plant"], options["at"]
    clean = write_claude_code_session(tmp_path, name="clean", **options)
    assert_as_written(clean)
    before = Path(clean["path"]).read_bytes().splitlines(keepends=True)
    after = (SESSIONS / "claude-code-damaged.jsonl").read_bytes().splitlines(keepends=True)
    assert after == before[:14] + before[15:]
    assert json.loads(before[14])["message"]["content"][0]["name"] == "Edit"


# -- generated sessions of any size ---------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_generated_sessions_replay_as_written(tmp_path: Path, seed: int) -> None:
    facts = write_claude_code_session(tmp_path, 6, seed=seed, subagents=2)
    assert_as_written(facts)
    assert len(facts["subagents"]) == 2
    for agent_id, sub in facts["subagents"].items():
        assert subagent_transcript(Path(facts["path"]), agent_id) == Path(sub["path"])
        assert_as_written(sub)
    assert_as_written(write_codex_rollout(tmp_path, 5, seed=seed))


@pytest.mark.parametrize(
    ("plant", "at"),
    [("lost_line", 1), ("lost_line", 40), ("illegal_transition", 12), ("seq_duplicate", 1)],
)
def test_a_planted_error_fails_where_the_facts_say(tmp_path: Path, plant: str, at: int) -> None:
    facts = write_claude_code_session(tmp_path, 3, seed=5, plant=plant, at=at)
    code = "illegal_transition" if plant == "lost_line" else plant
    assert facts["error"]["code"] == code and facts["error"]["line"] >= at
    assert facts["phase"] is None
    assert_as_written(facts)
    clean = write_claude_code_session(tmp_path, 3, seed=5, name="clean")
    planted = Path(facts["path"]).read_bytes().splitlines()
    lines = Path(clean["path"]).read_bytes().splitlines()
    n = facts["error"]["line"]
    if plant == "seq_duplicate":  # one line written twice
        assert planted == [*lines[: n - 1], lines[n - 2], *lines[n - 1 :]]
    elif plant == "lost_line":  # one line lost
        assert planted == lines[: n - 1] + lines[n:]
    else:  # one line changed
        assert planted[: n - 1] == lines[: n - 1] and planted[n:] == lines[n:]
        assert planted[n - 1] != lines[n - 1]


@pytest.mark.parametrize("at", [1, 25])
def test_a_planted_broken_chain_is_a_finding_with_its_cost(tmp_path: Path, at: int) -> None:
    """A prompt whose parentUuid names a record never written (as Claude Code
    writes after a resume): verified, one broken_chain warning at its line,
    the state the clean session's, and the chain says what --resume drops."""
    facts = write_claude_code_session(tmp_path, 3, seed=5, plant="broken_chain", at=at)
    clean = write_claude_code_session(tmp_path, 3, seed=5, name="clean")
    ((warning,),) = [facts["warnings"]]
    line = warning["line"]
    assert "error" not in facts and line >= at
    replay = assert_as_written(facts)
    planted = Path(facts["path"]).read_bytes().splitlines()
    lines = Path(clean["path"]).read_bytes().splitlines()
    assert planted[: line - 1] == lines[: line - 1] and planted[line:] == lines[line:]
    chain = replay.final_state()["chain"]
    main = [r for r in records(Path(facts["path"])) if "uuid" in r and not r["isSidechain"]]
    before = sum(1 for r in records(Path(facts["path"]))[: line - 1] if r in main)
    assert chain["breaks"] == [
        {"seq": line, "parent": orjson.loads(planted[line - 1])["parentUuid"], "drops": before}
    ]
    resume = chain["resume"]
    assert (resume["from"], resume["stops"], resume["drops"]) == (line, "break", before)
    leaf = max(i for i, r in enumerate(main) if r["type"] in ("user", "assistant"))
    assert resume["loads"] == leaf + 1 - before  # one chain from the break to the last message
    assert any("drop out of the conversation" in n for n in replay.notes())


def test_a_codex_output_for_a_call_never_requested(tmp_path: Path) -> None:
    facts = write_codex_rollout(tmp_path, 2, seed=3, plant="illegal_transition", at=30)
    assert facts["error"]["kind"] in ("function_call_output", "custom_tool_call_output")
    assert_as_written(facts)


def test_a_big_session_has_fresh_ids_throughout(tmp_path: Path) -> None:
    facts = write_claude_code_session(tmp_path, 120, seed=2)
    replay = assert_as_written(facts)
    recs = records(Path(facts["path"]))
    uuids = [r["uuid"] for r in recs if "uuid" in r]
    assert len(uuids) == len(set(uuids)) > 2_000
    assert len(facts["calls"]) > 500 and facts["turns"] == 120
    statuses = {c["status"] for c in facts["calls"].values()}
    assert statuses == {"ok", "error"}  # errors left to chance: some
    assert replay.valid == len(recs)


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="turns"):
        write_claude_code_session(tmp_path, 0)
    with pytest.raises(ValueError, match="cannot plant"):
        write_codex_rollout(tmp_path, 1, plant="bad_parent", at=1)
    with pytest.raises(ValueError, match="needs at"):
        write_claude_code_session(tmp_path, 1, plant="lost_line")
    with pytest.raises(ValueError, match="no place"):
        write_claude_code_session(tmp_path, 1, name="late", plant="lost_line", at=10_000)
    write_claude_code_session(tmp_path, 1, name="once")
    with pytest.raises(FileExistsError):
        write_claude_code_session(tmp_path, 1, name="once")


def test_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), "--turns", "2", "--seed", "4", "--subagents", "1"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert_as_written(facts)
    assert main([str(tmp_path), "--format", "codex", "--turns", "1", "--name", "r"]) == 0
    assert_as_written(json.loads(capsys.readouterr().out))
    with pytest.raises(SystemExit) as exit_:
        main([str(tmp_path), "--format", "codex", "--subagents", "1"])
    assert exit_.value.code == 2
    out = subprocess.run(
        [sys.executable, "-m", "replay_tui.synth.sessions", str(tmp_path / "cli")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["format"] == "claude-code"
