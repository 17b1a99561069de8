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
import sys
from pathlib import Path

import orjson

from replay_tui.synth.claude_code import CLAUDE_PLANTS, USAGE_FIELDS, write_claude_code_session
from replay_tui.synth.codex import CODEX_PLANTS, write_codex_rollout

__all__ = [
    "CLAUDE_PLANTS",
    "CODEX_PLANTS",
    "USAGE_FIELDS",
    "main",
    "write_claude_code_session",
    "write_codex_rollout",
]


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
