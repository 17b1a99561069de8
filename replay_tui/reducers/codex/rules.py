"""The ``codex`` rules: a Codex CLI session's state after each rollout record.

A Codex rollout (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) is read in
place as the ledger (:mod:`replay_tui.formats.sessions`): every line is
``{timestamp, type, payload}``; its kind is the item's type for
``response_item`` and ``event_msg`` records (``function_call``,
``function_call_output``, ``custom_tool_call``, ``reasoning``,
``token_count``, ``exec_command_end``, ...; a ``message`` is named by its
role: ``user``, ``assistant``, ``developer``), else the record's type
(``session_meta``, ``turn_context``, ``compacted``). The first rollouts,
which wrote items bare, read the same way.

State:

- ``calls``: call_id -> ``{tool, status, input, seq, at, result_seq,
  duration_s}`` for ``function_call``, ``custom_tool_call``,
  ``local_shell_call`` and ``tool_search_call``; ``status`` is ``requested``
  until its ``*_output`` is recorded, then ``ok``, or ``error`` when the
  output says so (``success: false``, a nonzero ``exit_code`` in its
  metadata, or ``Process exited with code N``, N not 0); ``exit_code`` from
  ``exec_command_end`` when Codex reports the process's end;
- ``usage``: the latest ``token_count`` event's ``info.total_token_usage``,
  as recorded; ``last_usage`` its ``last_token_usage``;
- ``model`` (from ``turn_context``), ``version`` (``session_meta``'s
  ``cli_version``), ``session`` (id, cwd, originator, model provider, and
  the rollout it was forked from, ``forked_from_id``, or the thread that
  spawned it, ``parent_thread_id``, wherever ``session_meta`` holds them);
- ``turns``: the user's prompts (``event_msg`` ``user_message``; in the first
  rollouts, user messages that are not Codex's own context);
- ``todos``: the plan as the last ``update_plan`` call left it;
- ``compactions``: each ``compacted`` record; ``agents``: ``spawn_agent`` calls
  (and, once the output names it, the child thread's ``agent_id`` and ``nickname``);
- ``phase`` (the summary): ``new``, ``awaiting_model``, ``tools_running``,
  ``awaiting_user``.

Strict where the format has invariants: an output for a call never requested,
a second output for one call, or a call_id requested twice, is
``illegal_transition``. Tolerant where it is only new: other items and
fields change nothing.
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING, Any

import orjson

from replay_tui.core import strict_json
from replay_tui.formats.envelope import ts_seconds
from replay_tui.reducers import pricing
from replay_tui.reducers.base import CallFacts, Context, State, StateView
from replay_tui.reducers.sessions.rules import SessionRules, illegal, in_words, label, one_line

if TYPE_CHECKING:
    from replay_tui.envelope import Event

REQUESTS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "tool_search_call"})
RESULTS = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "local_shell_call_output",
        "tool_search_output",
    }
)
KINDS = frozenset(
    {
        *REQUESTS,
        *RESULTS,
        "session_meta",
        "turn_context",
        "compacted",
        "state",
        "user",
        "assistant",
        "developer",
        "system",
        "message",
        "reasoning",
        "web_search_call",
        "task_started",
        "task_complete",
        "turn_aborted",
        "user_message",
        "agent_message",
        "agent_reasoning",
        "token_count",
        "exec_command_begin",
        "exec_command_end",
        "patch_apply_begin",
        "patch_apply_end",
        "web_search_begin",
        "web_search_end",
        "mcp_tool_call_begin",
        "mcp_tool_call_end",
        "context_compacted",
    }
)
#: The argument that says what a call does, by tool.
_INPUT_KEYS = {
    "exec_command": "cmd",
    "shell": "command",
    "container.exec": "command",
    "write_stdin": "session_id",
    "view_image": "path",
    "spawn_agent": "message",
}
#: Kinds these rules read something from (the others are shown, changing nothing).
_READ = (
    REQUESTS
    | RESULTS
    | {
        "token_count",
        "user_message",
        "user",
        "assistant",
        "agent_message",
        "task_complete",
        "task_started",
        "exec_command_end",
        "session_meta",
        "turn_context",
        "compacted",
    }
)
AGENT_TOOLS = frozenset({"spawn_agent"})
TODO_TOOLS = frozenset({"update_plan"})
_EXITED = re.compile(r"Process exited with code (-?\d+)")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)
#: Text Codex puts in user messages itself (the first rollouts had no user_message events).
_CONTEXT_TAGS = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions")


def item_of(rec: dict[str, Any]) -> dict[str, Any]:
    """The item a record holds: its payload, or the record itself (bare)."""
    payload = rec.get("payload")
    return payload if isinstance(payload, dict) else rec


def _arguments(item: dict[str, Any]) -> Any:
    """A call's arguments: ``function_call``'s JSON text parsed (as it was
    recorded if it is not JSON), ``custom_tool_call``'s input, a shell's action."""
    args = item.get("arguments")
    if isinstance(args, str):
        try:
            return strict_json.loads_written(args.encode())
        except orjson.JSONDecodeError:
            return args
    if "input" in item:
        return item["input"]
    return item.get("action")


def _tool(item: dict[str, Any]) -> str:
    name = item.get("name")
    if isinstance(name, str):
        return name
    return "shell" if item.get("type") == "local_shell_call" else str(item.get("type"))


def input_summary(tool: str, args: Any) -> str:
    """What a call does, in a few words: the command, the files patched, ..."""
    if isinstance(args, str):
        if tool == "apply_patch":
            files = _PATCH_FILE.findall(args)
            if files:
                return one_line(", ".join(files))
        return one_line(args)
    if not isinstance(args, dict):
        return ""
    if tool in TODO_TOOLS and isinstance(args.get("plan"), list):
        return f"{len(args['plan'])} steps"
    key = _INPUT_KEYS.get(tool)
    value = args.get(key) if key else None
    if isinstance(value, list):
        value = " ".join(str(v) for v in value)
    elif isinstance(value, int) and not isinstance(value, bool):
        value = f"{key} {value}"
    if not isinstance(value, str):
        value = next((v for v in args.values() if isinstance(v, str)), None)
    return one_line(value) if value else ""


def _output_status(item: dict[str, Any]) -> tuple[str, int | None]:
    """``ok`` or ``error`` by what an output says, and its exit code if any."""
    output = item.get("output")
    if isinstance(output, str) and output.startswith("{"):
        with contextlib.suppress(orjson.JSONDecodeError):
            output = strict_json.loads_written(output.encode())
    code: Any = None
    if isinstance(output, dict):
        if output.get("success") is False:
            return "error", None
        meta = output.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        output = output.get("output", output.get("content"))
    if code is None and isinstance(output, str):
        found = _EXITED.search(output[:4096])
        code = int(found.group(1)) if found else None
    if type(code) is int:
        return ("error" if code != 0 else "ok"), code
    return "ok", None


def _spawned(item: dict[str, Any]) -> tuple[str, str | None] | None:
    """A ``spawn_agent`` output's child thread: ``{"agent_id": <thread id>,
    "nickname": ...}`` (the id of the thread, whose rollout is its own file)."""
    output = item.get("output")
    if isinstance(output, str) and output.startswith("{"):
        with contextlib.suppress(orjson.JSONDecodeError):
            output = strict_json.loads_written(output.encode())
    if not isinstance(output, dict) or not isinstance(output.get("agent_id"), str):
        return None
    nickname = output.get("nickname")
    return output["agent_id"], nickname if isinstance(nickname, str) else None


def _text_of(item: dict[str, Any]) -> str:
    """A message's text (its ``input_text``/``output_text`` parts), or an
    event's ``message``."""
    content = item.get("content")
    if isinstance(content, list):
        return "\n".join(
            str(part["text"])
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    message = item.get("message")
    return message if isinstance(message, str) else ""


def _find(value: Any, key: str, depth: int = 4) -> Any:
    """``key``'s value wherever it is in ``value`` (a few levels down: where
    a fork's or a sub-agent thread's origin sits has moved between versions)."""
    if not isinstance(value, dict) or depth < 0:
        return None
    if key in value:
        return value[key]
    for inner in value.values():
        found = _find(inner, key, depth - 1)
        if found is not None:
            return found
    return None


def _count(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if type(value) is int and value >= 0 else 0


def call_tokens(was: dict[str, Any], now: dict[str, Any], last: dict[str, Any]) -> pricing.Tokens:
    """What the calls since the last ``token_count`` spent: the growth of
    the session's totals (a count repeated spends nothing), or the last
    call's own usage where the totals went down (a new count). Codex's
    ``input_tokens`` include the cached ones and ``output_tokens`` the
    reasoning, as OpenAI counts them."""
    keys = ("input_tokens", "cached_input_tokens", "output_tokens")
    grown = [_count(now, k) - _count(was, k) for k in keys]
    if min(grown) < 0:
        grown = [_count(last, k) for k in keys]
    inp, cached, out = grown
    cached = min(cached, inp)
    return pricing.Tokens(input=inp - cached, cache_read=cached, output=out)


class CodexRules(SessionRules):
    name = "codex"
    version = "1.0.0"
    kinds = KINDS
    #: The source these rules are for: never chosen for an events.jsonl by its first kind.
    source_format = "codex"
    awaited = "output"
    #: The state has a ``cost`` (see :mod:`replay_tui.reducers.pricing`): reports name the prices.
    priced = True

    def initial_state(self) -> State:
        return {
            "phase": "new",
            "model": None,
            "version": None,
            "session": {
                "id": None,
                "cwd": None,
                "originator": None,
                "provider": None,
                "forked_from": None,
                "parent_thread": None,
            },
            "turns": 0,
            "in_flight": 0,
            "calls": {},
            "usage": {},
            "last_usage": {},
            "cost": pricing.cost_state(),
            "todos": [],
            "compactions": [],
            "agents": {},
        }

    # -- rules ------------------------------------------------------------
    def apply(self, state: State, event: Event, ctx: Context) -> State:
        kind = event.kind
        item = item_of(event.payload)
        if kind in REQUESTS:
            self._request(state, event, item)
        elif kind in RESULTS:
            self._result(state, event, item)
        elif kind == "token_count":
            info = item.get("info")
            if isinstance(info, dict):
                was = state["usage"]
                for key, field in (
                    ("usage", "total_token_usage"),
                    ("last_usage", "last_token_usage"),
                ):
                    value = info.get(field)
                    if isinstance(value, dict) and state[key] != value:
                        state[key] = value
                if state["usage"] is not was:
                    spent = call_tokens(was, state["usage"], state["last_usage"])
                    provider = state["session"]["provider"]
                    pricing.add_call(
                        state["cost"], state["model"], provider, spent, event.ts_s, state["turns"]
                    )
        elif kind == "user_message":
            state["turns"] += 1
            self._phase(state, "awaiting_model")
        elif kind == "user":
            bare = "payload" not in event.payload
            if bare and not _text_of(item).lstrip().startswith(_CONTEXT_TAGS):
                state["turns"] += 1  # the first rollouts: no user_message events
                self._phase(state, "awaiting_model")
        elif kind in ("assistant", "agent_message", "task_complete"):
            self._phase(state, "awaiting_user")
        elif kind == "task_started":
            self._phase(state, "awaiting_model")
        elif kind == "exec_command_end":
            cid = item.get("call_id")
            call = state["calls"].get(cid) if isinstance(cid, str) else None
            code = item.get("exit_code")
            if call is not None and type(code) is int and call.get("exit_code") != code:
                call["exit_code"] = code
        elif kind == "session_meta":
            self._meta(state, item)
        elif kind == "turn_context":
            model = item.get("model")
            if isinstance(model, str) and state["model"] != model:
                state["model"] = model
        elif kind == "compacted":
            state["compactions"].append({"seq": event.seq})
        return state

    @staticmethod
    def _meta(state: State, item: dict[str, Any]) -> None:
        version = item.get("cli_version")
        if isinstance(version, str):
            state["version"] = version
        session = state["session"]
        for key, field in (
            ("id", "id"),
            ("cwd", "cwd"),
            ("originator", "originator"),
            ("provider", "model_provider"),
        ):
            value = item.get(field)
            if isinstance(value, str) and session[key] != value:
                session[key] = value
        for key, field in (
            ("forked_from", "forked_from_id"),
            ("parent_thread", "parent_thread_id"),
        ):
            value = _find(item, field)
            if isinstance(value, str) and session[key] != value:
                session[key] = value

    def _request(self, state: State, event: Event, item: dict[str, Any]) -> None:
        cid = item.get("call_id")
        if not isinstance(cid, str):
            raise illegal(f"{event.kind} without a call_id")
        calls = state["calls"]
        if cid in calls:
            raise illegal(f"call {cid} was already requested at seq {calls[cid]['seq']}")
        tool = _tool(item)
        args = _arguments(item)
        calls[cid] = {
            "tool": tool,
            "status": "requested",
            "input": input_summary(tool, args),
            "seq": event.seq,
            "at": event.ts,
            "result_seq": None,
            "duration_s": None,
        }
        state["in_flight"] += 1
        if isinstance(args, dict):
            if tool in TODO_TOOLS and isinstance(args.get("plan"), list):
                state["todos"] = list(args["plan"])
            if tool in AGENT_TOOLS:
                state["agents"][cid] = {
                    "description": input_summary(tool, args),
                    "agent_type": args.get("agent_type"),
                    "status": "requested",
                    "seq": event.seq,
                    "result_seq": None,
                }
        self._phase(state, "tools_running")

    def _result(self, state: State, event: Event, item: dict[str, Any]) -> None:
        cid = item.get("call_id")
        if not isinstance(cid, str):
            raise illegal(f"{event.kind} without a call_id")
        call = state["calls"].get(cid)
        if call is None:
            raise illegal(f"{event.kind} for {cid}, which was never requested")
        if call["status"] != "requested":
            raise illegal(
                f"a second output for {cid}: its output was recorded at seq {call['result_seq']}"
            )
        status, code = _output_status(item)
        call["status"] = status
        call["result_seq"] = event.seq
        start = ts_seconds(call["at"]) if isinstance(call["at"], str) else None
        if start is not None and event.ts_s is not None:
            call["duration_s"] = round(event.ts_s - start, 3)
        if code is not None:
            call["exit_code"] = code
        state["in_flight"] -= 1
        agent = state["agents"].get(cid)
        if agent is not None:
            agent["status"] = status
            agent["result_seq"] = event.seq
            spawned = _spawned(item)
            if spawned is not None:  # the child thread: its own rollout (t opens it)
                agent["agent_id"], agent["nickname"] = spawned
        self._phase(state, "awaiting_model")

    # -- prose ------------------------------------------------------------
    def _explain(self, before: StateView, event: Event, after: StateView) -> str:
        kind = event.kind
        cid = event.call_id
        if kind in REQUESTS and cid in after["calls"]:
            call = after["calls"][cid]
            return f"{kind}: {label(call)} requested ({cid}); {after['in_flight']} in flight"
        if kind in RESULTS and cid in after["calls"]:
            call = after["calls"][cid]
            return (
                f"{kind} {call['status']} {in_words(call['duration_s'])}: {label(call)} "
                f"({cid}, requested at seq {call['seq']})"
            )
        if kind == "token_count":
            usage = after["usage"]
            total = usage.get("total_tokens")
            return (
                f"token_count: usage is now {total:,} tokens in all"
                f"{pricing.cost_words(before['cost'], after['cost'])}"
                if type(total) is int
                else kind
            )
        if after["turns"] != before["turns"]:
            return f"{kind}: turn {after['turns']}"
        if kind == "compacted":
            return "compacted: the history was replaced by its compaction"
        if kind == "exec_command_end" and cid in after["calls"]:
            code = after["calls"][cid].get("exit_code")
            return f"exec_command_end: the command of {cid} exited with {code}"
        if kind in ("assistant", "agent_message", "task_complete"):
            return f"{kind}: the model replied" if kind != "task_complete" else "task_complete"
        if kind == "session_meta":
            return f"session_meta: Codex {after['version']}, session {after['session']['id']}"
        if kind == "turn_context":
            return f"turn_context: model {after['model']}"
        if kind not in _READ:
            return f"{kind}: shown as recorded; these rules read nothing from it"
        return kind

    def call_of(self, event: Event) -> str | None:
        """A call is the records naming its call_id: the request, the
        command's begin and end, the output."""
        cid = item_of(event.payload).get("call_id")
        return cid if isinstance(cid, str) else None

    def call_facts(self, event: Event) -> CallFacts | None:
        item = item_of(event.payload)
        if event.kind in REQUESTS:
            tool = _tool(item)
            return CallFacts(tool=tool, arg=input_summary(tool, _arguments(item)) or None)
        if event.kind in RESULTS:
            return CallFacts(status=_output_status(item)[0])
        return None

    def row_summary(self, event: Event) -> str | None:
        """The record in a line: ``exec_command ls -la``, ``ok · <output>``,
        the prompt, the reply, the token total."""
        kind = event.kind
        item = item_of(event.payload)
        if kind in REQUESTS:
            tool = _tool(item)
            return f"{tool} {input_summary(tool, _arguments(item))}".strip()
        if kind in RESULTS:
            status, _ = _output_status(item)
            output = item.get("output")
            text = output if isinstance(output, str) else orjson.dumps(output).decode()
            return f"{status} · {one_line(text, 200)}"
        if kind in ("user", "assistant", "developer", "system", "message"):
            return one_line(_text_of(item), 200)
        if kind in ("user_message", "agent_message", "agent_reasoning"):
            return one_line(_text_of(item), 200)
        if kind == "reasoning":
            summary = item.get("summary")
            parts = summary if isinstance(summary, list) else []
            return one_line(" ".join(str(p.get("text", "")) for p in parts if isinstance(p, dict)))
        if kind == "token_count":
            info = item.get("info")
            usage = info.get("total_token_usage") if isinstance(info, dict) else None
            if isinstance(usage, dict):
                return " ".join(f"{k} {v}" for k, v in usage.items())
            return None
        if kind == "exec_command_end":
            return f"exit {item.get('exit_code')}"
        if kind == "web_search_call":
            action = item.get("action")
            query = action.get("query") if isinstance(action, dict) else None
            return one_line(str(query)) if query else None
        if kind == "session_meta":
            return " ".join(str(item[k]) for k in ("originator", "cli_version") if k in item)
        if kind == "turn_context":
            return " ".join(str(item[k]) for k in ("model", "cwd") if k in item)
        return None

    def recorded_call(self, state: State, event: Event) -> tuple[str, dict[str, Any]] | None:
        """The call ``event`` requests or answers and what ``state`` knows
        of it (``result_seq``: the line of its recorded output)."""
        cid = event.call_id
        if cid is None or (event.kind not in REQUESTS and event.kind not in RESULTS):
            return None
        call = state["calls"].get(cid)
        return (cid, call) if call is not None else None


REDUCER = CodexRules()
