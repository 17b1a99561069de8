"""`replay-tui usage`: token counts equal to the built-in rules', and an
audit of what was left out (streamed lines of one message, repeated
token_count events) and what was added (sub-agents' transcripts)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.cli import main
from replay_tui.engine.open import open_replay
from replay_tui.questions.usage import (
    CLAUDE_FIELDS,
    CODEX_FIELDS,
    SessionUsage,
    group_sessions,
    read_file,
    session_usage,
)
from tests.conftest import AGENT_SESSIONS, ROOT, SAMPLES, AgentHomes

SAMPLE_SESSIONS = SAMPLES / "agent-sessions"
ALL_FILES = sorted([*AGENT_SESSIONS.rglob("*.jsonl"), *SAMPLE_SESSIONS.rglob("*.jsonl")])
ROLLOUT = next(AGENT_SESSIONS.glob("codex/*.jsonl"))
SUBAGENTS = AGENT_SESSIONS / "claude-code" / "codemie--incremental-subagents"
SUBAGENTS_ID = "e9fb405b-169f-40eb-9396-7e75076f045d"
SESSION = "11111111-2222-3333-4444-555555555555"
MODEL = "claude-sonnet-4-5-20250929"


def rules_usage(path: Path) -> tuple[dict[str, int], int | None]:
    """The rules' final ``usage``, and the line strict replay stopped at (if it did)."""
    replay, _ = open_replay(str(path))
    replay.verify()
    stop = replay.error.line if replay.error is not None else None
    return dict(replay.final_state()["usage"]), stop


@pytest.mark.parametrize("path", ALL_FILES, ids=[str(p.relative_to(ROOT)) for p in ALL_FILES])
def test_the_counts_are_the_rules(path: Path) -> None:
    expected, stop = rules_usage(path)
    got = session_usage(path, subagents=False, stop_line=stop)
    fields = CODEX_FIELDS if got.source == "codex" else CLAUDE_FIELDS
    assert set(expected) <= set(fields)
    assert got.file.tokens == {f: expected.get(f, 0) for f in fields}
    assert got.tokens == got.file.tokens  # no sub-agents read


def test_every_fixture_and_sample_is_read() -> None:
    assert len(ALL_FILES) == 19
    assert {read_file(p).source for p in ALL_FILES} == {"claude-code", "codex"}


# -- Claude Code: a message over several lines ------------------------------------


def _usage(inp: int, out: int, create: int = 0, read: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "output_tokens": out,
        "cache_creation_input_tokens": create,
        "cache_read_input_tokens": read,
        "service_tier": "standard",
    }


def claude_transcript(
    dest: Path,
    messages: list[tuple[str | None, dict[str, Any]]],
    *,
    request_ids: bool = True,
    model: str = MODEL,
) -> Path:
    """A prompt, then one ``assistant`` line per (message id, usage)."""
    records: list[dict[str, Any]] = [
        {
            "parentUuid": None,
            "isSidechain": False,
            "sessionId": SESSION,
            "type": "user",
            "message": {"role": "user", "content": "hello"},
            "uuid": "u0",
            "timestamp": "2026-02-03T10:00:00.000Z",
        }
    ]
    for i, (mid, usage) in enumerate(messages, 1):
        message: dict[str, Any] = {
            "model": model,
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": f"part {i}"}],
            "usage": usage,
        }
        if mid is not None:
            message["id"] = mid
        rec: dict[str, Any] = {
            "parentUuid": f"u{i - 1}",
            "isSidechain": False,
            "sessionId": SESSION,
            "type": "assistant",
            "message": message,
            "uuid": f"u{i}",
            "timestamp": f"2026-02-03T10:00:{i:02d}.000Z",
        }
        if request_ids and mid is not None:
            rec["requestId"] = f"req_{mid}"
        records.append(rec)
    dest.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return dest


def test_a_message_split_over_lines_counts_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = claude_transcript(
        tmp_path / "s.jsonl",
        [
            ("msg_1", _usage(3, 3, 1000, 0)),
            ("msg_1", _usage(3, 50, 1000, 0)),
            ("msg_1", _usage(3, 120, 1000, 0)),
            ("msg_2", _usage(5, 7, 0, 1000)),
        ],
    )
    usage = session_usage(path)
    expected = {
        "input_tokens": 8,
        "output_tokens": 127,
        "cache_creation_input_tokens": 1000,
        "cache_read_input_tokens": 1000,
    }
    assert usage.tokens == expected == rules_usage(path)[0]
    audit = usage.total()
    assert (audit.counted, audit.lines) == (2, 4)
    assert (audit.streamed_lines, audit.streamed_messages, audit.no_request_id) == (2, 1, 0)
    assert audit.per_line_adds == [6, 53, 2000, 0]  # what a per-line sum adds
    assert audit.first_line_misses == [0, 117, 0, 0]  # what keeping the first line misses
    assert main(["usage", str(path)]) == 0
    out = capsys.readouterr().out
    assert "2 streamed lines of 1 message left out" in out
    assert "6 input, 53 output and 2,000 cache creation tokens a per-line sum would add" in out
    assert "would miss 117 output tokens" in out


def test_a_line_without_a_message_id_counts_by_itself(tmp_path: Path) -> None:
    path = claude_transcript(tmp_path / "s.jsonl", [(None, _usage(1, 2)), (None, _usage(1, 2))])
    usage = session_usage(path)
    assert usage.tokens["output_tokens"] == 4 == rules_usage(path)[0]["output_tokens"]
    assert usage.total().streamed_lines == 0


def test_a_bedrock_message_without_request_id_is_grouped_by_message_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = claude_transcript(
        tmp_path / "bedrock.jsonl",
        [("msg_bdrk_01", _usage(3, 3, 27356)), ("msg_bdrk_01", _usage(3, 1662, 27356))],
        request_ids=False,
    )
    usage = session_usage(path)
    assert usage.tokens == rules_usage(path)[0]
    assert usage.tokens["output_tokens"] == 1662
    assert usage.tokens["cache_creation_input_tokens"] == 27356
    audit = usage.total()
    assert (audit.streamed_lines, audit.streamed_messages, audit.no_request_id) == (1, 1, 1)
    assert main(["usage", str(path)]) == 0
    assert "1 of these messages has no requestId" in capsys.readouterr().out


def test_the_real_transcripts_audit() -> None:
    """What the fixtures, written by Claude Code, hold: 1.0.98 writes
    requestId, the Bedrock sessions (2.x, ``msg_bdrk_`` ids) none."""
    claude = AGENT_SESSIONS / "claude-code"
    viewer = read_file(claude / "viewer--fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl").total()
    assert (viewer.counted, viewer.lines, viewer.streamed_lines) == (170, 262, 92)
    assert (viewer.streamed_messages, viewer.no_request_id, viewer.sidechain_messages) == (
        88,
        0,
        161,
    )
    bedrock = read_file(claude / "codemie--session-624a4a58.jsonl").total()
    assert (bedrock.counted, bedrock.streamed_lines, bedrock.streamed_messages) == (55, 77, 54)
    assert bedrock.no_request_id == 54


# -- Codex: a token_count recorded twice -------------------------------------------------


def test_a_repeated_token_count_counts_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ROLLOUT.read_bytes().splitlines(keepends=True)
    at = next(i for i, raw in enumerate(lines) if b'"type":"token_count","info":{' in raw)
    repeated = orjson.loads(lines[at])["payload"]["info"]["last_token_usage"]
    copy = tmp_path / ROLLOUT.name
    copy.write_bytes(b"".join([*lines[: at + 1], lines[at], *lines[at + 1 :]]))
    original = session_usage(ROLLOUT)
    usage = session_usage(copy)
    assert usage.tokens == original.tokens
    assert usage.tokens == {f: rules_usage(copy)[0][f] for f in CODEX_FIELDS}
    audit = usage.total()
    assert (audit.repeated, audit.counted) == (1, original.total().counted)
    assert audit.per_line_adds == [repeated[f] for f in CODEX_FIELDS]
    assert audit.per_event_sum == original.total().per_event_sum
    assert main(["usage", str(copy)]) == 0
    out = capsys.readouterr().out
    assert "1 token_count event repeating the one before" in out
    assert f"{repeated['total_tokens']:,} total tokens" in out


def test_the_real_rollout_repeats_nothing_and_adds_up() -> None:
    audit = read_file(ROLLOUT).total()
    assert (audit.counted, audit.repeated, audit.no_usage) == (66, 0, 0)
    assert audit.per_event_sum == audit.tokens  # every event's last_token_usage, added
    sample = read_file(SAMPLE_SESSIONS / "codex-rollout.jsonl").total()
    assert (sample.counted, sample.no_usage) == (15, 1)  # the first has info: null


# -- sub-agents ---------------------------------------------------------------------------


def test_sub_agent_transcripts_count_with_their_session() -> None:
    main_file = SUBAGENTS / "turn-2.jsonl"
    agent = SUBAGENTS / "turn-2" / "subagents" / "agent-a485154.jsonl"
    usage = session_usage(main_file)
    assert [u.path for u in usage.subagents] == [agent]
    own, agents = rules_usage(main_file)[0], rules_usage(agent)[0]
    assert usage.file.tokens == own
    assert usage.subagents[0].tokens == agents
    assert usage.tokens == {f: own[f] + agents[f] for f in CLAUDE_FIELDS}
    assert usage.total().subagent_tokens == [agents[f] for f in CLAUDE_FIELDS]


def test_a_sub_agent_beside_its_session_is_found_by_its_session_id(tmp_path: Path) -> None:
    """Claude Code 1.x: ``agent-*.jsonl`` beside the session, told by its
    records' sessionId (another session's agent is not taken)."""
    main_file = tmp_path / f"{SUBAGENTS_ID}.jsonl"
    shutil.copyfile(SUBAGENTS / "turn-2.jsonl", main_file)
    shutil.copyfile(
        SUBAGENTS / "turn-2" / "subagents" / "agent-a485154.jsonl", tmp_path / "agent-a485154.jsonl"
    )
    other = tmp_path / "agent-other.jsonl"
    other.write_bytes(b'{"type":"user","sessionId":"not-this-one","isSidechain":true}\n')
    usage = session_usage(main_file)
    assert [u.path for u in usage.subagents] == [tmp_path / "agent-a485154.jsonl"]


def test_the_stores_count_each_sub_agent_once(
    agent_homes: AgentHomes, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stores as ``replay-tui sessions`` finds them; the sub-agent is
    both in ``<session>/subagents/`` (2.x) and beside it (1.x): read once."""
    assert main(["usage", "--json"]) == 0
    body = orjson.loads(capsys.readouterr().out)
    sources = {s["source"]: s for s in body["sources"]}
    assert sources["claude-code"]["total"]["sessions"] == 5
    assert sources["codex"]["total"]["sessions"] == 1
    group = next(g for g in sources["claude-code"]["groups"] if g["session_id"] == SUBAGENTS_ID)
    assert [
        Path(s["path"]).relative_to(agent_homes.projects).parts[-2:] for s in group["subagents"]
    ] == [("subagents", "agent-a485154.jsonl")]
    expected = {f: 0 for f in CLAUDE_FIELDS}
    for path, fixture in agent_homes.sessions:
        if fixture.parent.name != "codex":
            for f, n in rules_usage(path)[0].items():
                expected[f] += n
    agent = rules_usage(agent_homes.subagents[0])[0]
    assert sources["claude-code"]["total"]["tokens"] == {
        f: expected[f] + agent[f] for f in CLAUDE_FIELDS
    }
    assert sources["codex"]["total"]["tokens"] == {
        f: rules_usage(ROLLOUT)[0][f] for f in CODEX_FIELDS
    }


def test_no_stores_is_no_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["usage"]) == 0
    assert capsys.readouterr().out.startswith("no sessions: looked in ")


# -- grouping, JSON, errors -------------------------------------------------------------


def _sessions() -> list[SessionUsage]:
    seen: dict[str, str] = {}
    return [session_usage(p, seen=seen) for p in sorted(SAMPLE_SESSIONS.glob("*.jsonl"))]


@pytest.mark.parametrize("by", ["day", "model"])
def test_by_day_and_by_model_group_the_same_tokens(
    by: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["usage", str(AGENT_SESSIONS), str(SAMPLE_SESSIONS), "--json", "--by", by]) == 0
    body = orjson.loads(capsys.readouterr().out)
    assert main(["usage", str(AGENT_SESSIONS), str(SAMPLE_SESSIONS), "--json"]) == 0
    per_session = {s["source"]: s for s in orjson.loads(capsys.readouterr().out)["sources"]}
    assert body["by"] == by
    for source in body["sources"]:
        keys = [g["key"] for g in source["groups"]]
        assert keys == sorted(keys)
        summed = {f: sum(g["tokens"][f] for g in source["groups"]) for f in source["fields"]}
        assert (
            summed == source["total"]["tokens"] == per_session[source["source"]]["total"]["tokens"]
        )
    claude = next(s for s in body["sources"] if s["source"] == "claude-code")
    if by == "day":
        assert "2025-09-03" in [g["key"] for g in claude["groups"]]
    else:
        assert [g["key"] for g in claude["groups"]] == [
            "claude-sonnet-4-20250514",
            "claude-sonnet-4-5-20250929",
        ]


def test_groups_in_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["usage", str(SAMPLE_SESSIONS), "--by", "day"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Claude Code, by day"
    assert lines[1].split() == [
        "DAY",
        "INPUT",
        "OUTPUT",
        "CACHE",
        "CREATE",
        "CACHE",
        "READ",
        "TOTAL",
        "COST",
    ]
    assert lines[2].split()[0] == "2026-11-02"
    assert lines[3].startswith("total (5 sessions)")
    assert lines[2].split()[1:] == lines[3].split()[3:]  # one day: the total
    assert "Codex, by day" in lines
    groups = group_sessions(_sessions(), "model")
    assert [g.key for g in groups["codex"]] == ["gpt-5-codex"]


def test_the_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    path = SAMPLE_SESSIONS / "claude-code-subagent.jsonl"
    assert main(["usage", str(path), "--json"]) == 0
    body = orjson.loads(capsys.readouterr().out)
    (source,) = body["sources"]
    (group,) = source["groups"]
    assert source["fields"] == list(CLAUDE_FIELDS)
    assert group["own_tokens"] == rules_usage(path)[0]
    assert group["tokens"] == source["total"]["tokens"]
    assert group["audit"]["streamed"]["lines"] == 6
    assert len(group["subagents"]) == 1


def test_the_table_has_thousands_separators_and_a_total_row(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["usage", str(ROLLOUT)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split()[1:] == [
        "6,055,836",
        "4,929,536",
        "9,118",
        "1,759",
        "6,064,954",
        "$8.37",
    ]
    assert lines[3].split()[:3] == ["total", "(1", "session)"]
    assert len(lines[2]) == len(lines[3])  # right-aligned


@pytest.mark.parametrize(
    ("arg", "said"),
    [
        ("no-such-file.jsonl", "no such file or folder"),
        ("README.md", "not a Claude Code session, Codex rollout or OpenTelemetry trace"),
        ("docs", "holds no Claude Code session or Codex rollout"),
    ],
)
def test_a_bad_path_is_exit_2_with_one_line(
    arg: str, said: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["usage", arg]) == 2
    got = capsys.readouterr()
    assert got.out == ""
    assert got.err.count("\n") == 1 and said in got.err


def test_text_from_files_is_inert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = claude_transcript(
        tmp_path / "s.jsonl", [("m1", _usage(1, 1))], model="evil\x1b]0;owned\x07\u202e"
    )
    assert main(["usage", str(path), "--by", "model"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "evil\\e]0;owned\\x07\\u202e" in out


def test_a_line_that_is_not_json_is_left_out_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = claude_transcript(tmp_path / "s.jsonl", [("m1", _usage(1, 5))])
    path.write_bytes(path.read_bytes() + b"{not json\n")
    assert session_usage(path).tokens["output_tokens"] == 5
    assert main(["usage", str(path)]) == 0
    assert "1 line not a JSON object: left out" in capsys.readouterr().out
