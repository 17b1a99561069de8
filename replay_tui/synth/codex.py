"""A synthetic Codex rollout (see :mod:`replay_tui.synth.sessions`):
``{timestamp, type, payload}`` lines, function calls and their outputs
sharing a ``call_id``, token counts as Codex reports them."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson

from replay_tui.synth.agent_work import (
    BRANCH,
    CWD,
    START_MS,
    Lines,
    Task,
    check_common,
    check_plant,
    line_of,
    order,
    planted,
    pytest_output,
    source_of,
)
from replay_tui.synth.chance import Clock, Rand

#: Errors the writer can plant.
CODEX_PLANTS = frozenset({"illegal_transition"})
CODEX_VERSION = "0.128.0"
CODEX_MODEL = "gpt-5-codex"
_WINDOW = 272_000


# -- Codex -------------------------------------------------------------------------------


class _Codex:
    """Writes a Codex rollout's records and counts what they hold."""

    def __init__(self, lines: Lines, rng: Rand, clock: Clock, session_id: str) -> None:
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
            "cwd": CWD,
            "originator": "codex_cli_rs",
            "cli_version": CODEX_VERSION,
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {
                "text": "You are a coding agent. Work in the user's repository, keep changes "
                "small, run the tests before you say you are done."
            },
            "git": {"commit_hash": self.rng.hexs(40), "branch": BRANCH},
        }
        w.put("session_meta", meta, top="session_meta")

    def turn(self, task: Task, *, first: bool, reproduce: bool) -> None:
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
                f"<environment_context>\n  <cwd>{CWD}</cwd>\n  <shell>bash</shell>\n"
                "</environment_context>",
            )
        context = {
            "turn_id": w.turn_id,
            "cwd": CWD,
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
        source = source_of(task, rng)
        self._reason(f"**Locating `{task.pattern}`**")
        w.message("assistant", f"Looking for `{task.pattern}` first.", phase="commentary")
        w.event("agent_message", message=f"Looking for `{task.pattern}` first.")
        at = line_of(source, task.body.split("\n", 1)[0])
        hits = f"{task.path}:{at}:{task.body.split(chr(10), 1)[0]}"
        self._exec(f'rg -n "{task.pattern}" src tests', hits, 0, "search")
        self._exec(f"sed -n '1,200p' {task.path}", source, 0, "read")
        if reproduce:
            self._exec("python -m pytest -q", pytest_output(rng, task.failing), 1, "unknown")
        self._plan(task, 1)
        self._patch(task)
        self._exec("python -m pytest -q", pytest_output(rng, None), 0, "unknown")
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
        args = {"cmd": cmd, "workdir": CWD, "yield_time_ms": 1000, "max_output_tokens": 6000}
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
            cwd=CWD,
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

    def _plan(self, task: Task, done: int) -> None:
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

    def _patch(self, task: Task) -> None:
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
    check_plant(plant, at, CODEX_PLANTS)
    rng = Rand(seed)
    sid = Rand(f"{seed}/id").uuid7(START_MS)
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(START_MS // 1000))
    name = name or f"rollout-{stamp}-{sid}"
    path = check_common(turns, errors, dest, name)
    with path.open("wb") as out:
        lines = Lines(out, plant, at or 0, Rand(f"{seed}/plant"))
        w = _Codex(lines, rng, Clock(Rand(f"{seed}/ts"), START_MS), sid)
        session = _CodexSession(w, rng)
        session.start()
        for i, task in enumerate(order(rng, turns)):
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
    return planted(facts, plant, at, lines)
