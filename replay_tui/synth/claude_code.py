"""A synthetic Claude Code transcript (see :mod:`replay_tui.synth.sessions`):
records on a ``parentUuid`` chain, assistant messages split one block a
line with growing usage, tool calls and results, sub-agent transcripts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from replay_tui.synth.agent_work import (
    BRANCH,
    CWD,
    START_MS,
    THOUGHTS,
    Lines,
    Task,
    check_common,
    check_plant,
    line_of,
    numbered,
    order,
    planted,
    pytest_output,
    source_of,
)
from replay_tui.synth.chance import Clock, Rand

#: Errors the writer can plant.
CLAUDE_PLANTS = frozenset({"broken_chain", "lost_line", "illegal_transition", "seq_duplicate"})
#: The token counts the claude_code rules sum over messages.
USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
CLAUDE_VERSION = "2.1.12"
CLAUDE_MODEL = "claude-sonnet-4-5-20250929"


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
        lines: Lines,
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
            "cwd": CWD,
            "sessionId": self.session_id,
            "version": CLAUDE_VERSION,
            "gitBranch": BRANCH,
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
    return f"{CWD}/{path}"


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

    def _think(self, i: int, task: Task) -> dict[str, Any]:
        words = THOUGHTS[i].format(prompt=task.prompt, pattern=task.pattern, path=task.path)
        return {"type": "thinking", "thinking": words, "signature": self.rng.blob(96)}

    def turn(self, task: Task, *, todo: bool, explore: bool, reproduce: bool, miss: bool) -> None:
        """One prompt and the work it takes: plan, search, read (two files in
        one message), maybe run the failing test first, maybe miss an edit,
        edit, add a test, run the suite, reply."""
        w, rng = self.w, self.rng
        start = w.clock.ms
        self.prompt_id = rng.uuid4()
        w.snapshot(self.prompt_id, {}, update=False)
        w.prompt(task.prompt, self.prompt_id)
        source = source_of(task, rng)
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
            w.result(cid, uuid, numbered(text), _read_result(path, text), took=(10, 120))
        if reproduce:
            out = pytest_output(rng, task.failing)
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
        self._bash("", pytest_output(rng, None), 0)
        if todo:
            self._todos(task, len(task.plan), [self._think(3, task)])
        w.message([_text(task.reply)])
        w.turn_took(w.clock.ms - start + rng.int_in(50, 400))

    def _todos(self, task: Task, done: int, before: Sequence[dict[str, Any]]) -> None:
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

    def _edit(self, task: Task, source: str, before: list[dict[str, Any]]) -> None:
        w = self.w
        args = {"file_path": _abs(task.path), "old_string": task.old, "new_string": task.new}
        cid, uuid = self._call("Edit", args, before)
        at = line_of(source, task.old)
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
        said += numbered(snippet, max(1, at - 2))
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

    def _explore(self, task: Task, source: str, before: Sequence[dict[str, Any]]) -> None:
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
        at = line_of(source, first)
        report = task.found.format(line=at)
        with path.open("wb") as out:
            lines = Lines(out, None, 0, rng)
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
            sub.result(sid, suuid, numbered(source), _read_result(task.path, source))
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
    check_plant(plant, at, CLAUDE_PLANTS)
    path = check_common(turns, errors, dest, name)
    rng = Rand(seed)
    sid = session_id or Rand(f"{seed}/id").uuid4()
    clock = Clock(Rand(f"{seed}/ts"), START_MS)
    with path.open("wb") as out:
        lines = Lines(out, plant, at or 0, Rand(f"{seed}/plant"))
        w = _Claude(lines, rng, clock, sid)
        session = _ClaudeSession(w, rng, path.parent, name)
        for i, task in enumerate(order(rng, turns)):
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
    return planted(facts, plant, at, lines)
