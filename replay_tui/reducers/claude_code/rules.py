"""The ``claude_code`` rules: a Claude Code session's state after each record.

A Claude Code transcript (``~/.claude/projects/<project>/<session>.jsonl``)
is read in place as the ledger (:mod:`replay_tui.formats.sessions`): one
record a line, the line number its seq, the record itself its payload, and a
kind named from it: ``user`` (a prompt, a command, a meta message),
``tool_result``, ``assistant`` (text), ``thinking``, ``tool_use``,
``compact_boundary``, ``system``, and the record types these rules read
nothing from (``summary``, ``progress``, ``file-history-snapshot``,
``queue-operation``, and any type a newer version adds), shown as they are.

State (what is open, and totals: the history itself is the timeline, so
the state does not grow with every call and message):

- ``calls``: the calls in flight, and those answered that the model has
  not read yet: tool_use id -> ``{tool, status, input, seq, at}``;
  ``status`` is ``requested`` until its ``tool_result`` is recorded, then
  ``ok``, or ``error`` when the result says ``is_error: true`` (with the
  start of its text as ``error``), with ``result_seq`` and ``duration_s``
  (from the two records' timestamps); ``input`` sums the input up (``ls
  -la`` for Bash, the path for Read, ...). An answered call leaves at the
  next line of an API message (the model has its result);
- ``tools``: per tool, ``calls`` requested and ``errors`` among their results;
- ``usage``: ``input_tokens``, ``output_tokens``, ``cache_creation_input_tokens``
  and ``cache_read_input_tokens`` summed over API messages, each message
  (``message.id``) counted once with the usage of its last line so far (one
  message is often split over several ``assistant`` lines, whose usage
  grows); ``message``: the latest message's id and usage so far (a message
  that resumes after lines of others brings its usage before with it, from
  the line checks: see :mod:`replay_tui.formats.session_checks`);
- ``model`` (the last message's, ``<synthetic>`` left out), ``version`` (of
  Claude Code, the last record's), ``session`` (id, cwd, git branch, agent id,
  whether every record so far is a sub-agent's: ``sidechain``);
- ``turns``: prompts of the user (see :func:`is_prompt`);
- ``todos``: the list as the last TodoWrite call left it (its input);
- ``compactions``: each ``compact_boundary`` (trigger, tokens before);
- ``chain``: ``records`` (of the main conversation), ``breaks`` (``seq``,
  the ``parent`` named, ``drops``: records before it; ``mended_at`` where a
  parent written later appeared), ``breaks_total``, and ``resume``: from
  the last message, the line the walk back stops at (``from``), why
  (``stops``: ``start``, ``compaction``, ``break``), ``loads``, ``drops``
  and ``compacted``;
- ``agents``: sub-agent calls (``Task``/``Agent``): description, type,
  status and the agent's id once its result says it;
- ``phase`` (the summary): ``new``, ``awaiting_model`` (a prompt, or every
  call answered), ``tools_running`` (a call in flight), ``awaiting_user``
  (the model replied with nothing in flight).

Strict where the format has invariants: a ``tool_result`` for a call never
requested, or a second result for one call, or a tool_use id requested twice,
is ``illegal_transition``. (A ``uuid`` used twice, and a call requested or
answered twice after it left ``calls``, are checked for every record before
the rules run.) A ``parentUuid`` naming no earlier record is a
finding, not a stop (Claude Code writes it and goes on): ``chain`` counts
the records, keeps the breaks and says what ``claude --resume`` from the
last message would load (see :mod:`replay_tui.formats.chain`), and
:meth:`ClaudeCodeRules.notes` says it in words. Tolerant where it is only
new: fields and record types these rules do not read change nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replay_tui.formats.chain import NOT_RECORD
from replay_tui.formats.claude_records import MESSAGE_KINDS, USAGE_FIELDS, blocks, message_usage
from replay_tui.reducers import pricing
from replay_tui.reducers.base import CallFacts, Context, State, StateView
from replay_tui.reducers.claude_code.reading import (
    AGENT_ID,
    AGENT_TOOLS,
    KINDS,
    TODO_TOOLS,
    duration,
    ids,
    input_summary,
    is_prompt,
    text_of,
)
from replay_tui.reducers.sessions.resume import note_chain, resume_notes, session_in_file
from replay_tui.reducers.sessions.rules import (
    SessionRules,
    illegal,
    in_words,
    label,
    one_line,
    record_words,
)

if TYPE_CHECKING:
    from replay_tui.envelope import Event


def _compaction_summary(state: State, event: Event) -> None:
    """The summary the model continued from after the last compaction (``o``
    reads it whole): where it is and how long."""
    compactions = state["compactions"]
    if not compactions or compactions[-1]["summary_seq"] is not None:
        return
    msg = event.payload.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    compactions[-1]["summary_seq"] = event.seq
    compactions[-1]["summary_chars"] = len(text_of(content))


def message_cost(
    state: State,
    event: Event,
    msg: dict[str, Any],
    new: tuple[int, int, int, int],
    before: tuple[int, int, int, int],
    was: float | None,
) -> float | None:
    """Price a message's usage so far and charge ``state["cost"]`` what it
    adds to ``was`` (its price at its last line; for a message resuming
    after others, its usage before, priced now): see
    :mod:`replay_tui.reducers.pricing`. Its price (None: unpriced)."""
    model = msg.get("model")
    model = model if isinstance(model, str) and not model.startswith("<") else state["model"]
    at = event.ts_s
    if was is None and any(before):
        was_micros = pricing.price(model, "anthropic", cache_tokens(before, None), at)
    else:
        was_micros = None if was is None else round(was * 1_000_000)
    usage = msg.get("usage")
    split = usage.get("cache_creation") if isinstance(usage, dict) else None
    tokens = cache_tokens(new, split)
    micros = pricing.set_message(
        state["cost"], model, "anthropic", tokens, at, was_micros, state["turns"]
    )
    return None if micros is None else pricing.usd(micros)


def cache_tokens(counts: tuple[int, int, int, int], split: Any) -> pricing.Tokens:
    """A message's (input, output, cache write, cache read) as priced: its
    cache writes for an hour apart (``cache_creation``'s
    ``ephemeral_1h_input_tokens``), at their own rate."""
    hour = split.get("ephemeral_1h_input_tokens") if isinstance(split, dict) else None
    hour = hour if type(hour) is int and 0 <= hour <= counts[2] else 0
    return pricing.Tokens(
        input=counts[0],
        output=counts[1],
        cache_read=counts[3],
        cache_write=counts[2] - hour,
        cache_write_1h=hour,
    )


class ClaudeCodeRules(SessionRules):
    name = "claude_code"
    version = "2.0.0"
    kinds = KINDS
    #: The kinds whose call_facts can say how a call ended (the forward
    #: pass asks only them whether a call failed).
    call_end_kinds = frozenset({"tool_result"})
    #: The source these rules are for: never chosen for an events.jsonl by its first kind.
    source_format = "claude-code"
    awaited = "tool_result"
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
                "git_branch": None,
                "agent_id": None,
                "sidechain": None,
                "lineage": [],
            },
            "turns": 0,
            "in_flight": 0,
            "calls": {},
            "tools": {},
            "usage": dict.fromkeys(USAGE_FIELDS, 0),
            "cost": pricing.cost_state(),
            "message": None,
            "todos": [],
            "compactions": [],
            "agents": {},
            "chain": {"records": 0, "breaks": [], "breaks_total": 0, "resume": None},
        }

    # -- rules ------------------------------------------------------------
    def apply(self, state: State, event: Event, ctx: Context) -> State:
        rec = event.payload
        kind = event.kind
        self._session(state, rec, event.seq)
        if getattr(event, "chain_why", NOT_RECORD) != NOT_RECORD:
            note_chain(state["chain"], event)
        if kind == "user" and rec.get("isCompactSummary") is True:
            _compaction_summary(state, event)
        elif kind == "user":
            if is_prompt(rec, state["session"]["sidechain"] is True):
                state["turns"] += 1
                self._phase(state, "awaiting_model")
        elif kind == "tool_result":
            self._results(state, event)
        elif kind in MESSAGE_KINDS:
            self._message(state, event)
        elif kind == "compact_boundary":
            meta = rec.get("compactMetadata")
            meta = meta if isinstance(meta, dict) else {}
            state["compactions"].append(
                {
                    "seq": event.seq,
                    "trigger": meta.get("trigger"),
                    "pre_tokens": meta.get("preTokens"),
                    "logical_parent": rec.get("logicalParentUuid"),
                    "summary_seq": None,
                    "summary_chars": None,
                    "post_tokens": None,
                }
            )
        return state

    @staticmethod
    def _session(state: State, rec: dict[str, Any], seq: int) -> None:
        """Who wrote the record: Claude Code's version, the session, its cwd."""
        version = rec.get("version")
        if isinstance(version, str) and state["version"] != version:
            state["version"] = version
        fields = (
            ("id", "sessionId"),
            ("cwd", "cwd"),
            ("git_branch", "gitBranch"),
            ("agent_id", "agentId"),
        )
        session = None
        for key, field in fields:
            value = rec.get(field)
            if isinstance(value, str):
                session = session if session is not None else state["session"]
                if session[key] != value and (key != "id" or session[key] is None):
                    session[key] = value
        sid = rec.get("sessionId")
        if isinstance(sid, str):
            lineage = state["session"]["lineage"]
            if not lineage or lineage[-1]["id"] != sid:  # a resume writes on under a new id
                lineage.append({"id": sid, "from": seq})
        side = rec.get("isSidechain")
        if side is True or side is False:
            session = session if session is not None else state["session"]
            now = session["sidechain"]
            if (side and now is None) or (not side and now is not False):
                session["sidechain"] = side

    def _message(self, state: State, event: Event) -> None:
        """An API message's line: its model and usage, and any tool calls."""
        rec = event.payload
        msg = rec.get("message")
        if not isinstance(msg, dict):
            return
        model = msg.get("model")
        if isinstance(model, str) and not model.startswith("<") and state["model"] != model:
            state["model"] = model
        calls = state["calls"]
        if len(calls) > state["in_flight"]:  # the model has read these results
            for cid in [c for c, call in calls.items() if call["status"] != "requested"]:
                del calls[cid]
        found = message_usage(rec)
        if found is not None:
            mid, new = found
            compactions = state["compactions"]
            if compactions and compactions[-1]["post_tokens"] is None:
                # the context the model continued from: the first message's prompt
                compactions[-1]["post_tokens"] = new[0] + new[2] + new[3]
            now = state["message"]
            if mid is not None and now is not None and now["id"] == mid:
                before = tuple(now["usage"][f] for f in USAGE_FIELDS)
            else:  # a new message, or one resuming after others (the checks say its usage)
                earlier = getattr(event, "earlier_usage", None) if mid is not None else None
                before = earlier if earlier is not None else (0, 0, 0, 0)
            same = mid is not None and now is not None and now["id"] == mid
            usd = now.get("usd") if same and now is not None else None
            if before != new:
                totals = state["usage"]
                for f, n, o in zip(USAGE_FIELDS, new, before, strict=True):
                    if n != o:
                        totals[f] += n - o
                usd = message_cost(state, event, msg, new, before, usd if same else None)
            if mid is not None and (now is None or now["id"] != mid or before != new):
                state["message"] = {
                    "id": mid,
                    "usage": dict(zip(USAGE_FIELDS, new, strict=True)),
                    "usd": usd,
                }
        if event.kind == "tool_use":
            self._requests(state, event)
        elif event.kind == "assistant":
            self._phase(state, "awaiting_user")
        else:
            self._phase(state, "awaiting_model")

    def _requests(self, state: State, event: Event) -> None:
        calls = state["calls"]
        sidechain = event.payload.get("isSidechain") is True
        for block in blocks(event.payload):
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            cid = block.get("id")
            if not isinstance(cid, str):
                raise illegal("tool_use without an id")
            if cid in calls:
                raise illegal(f"tool_use {cid} was already requested at seq {calls[cid]['seq']}")
            tool = block.get("name")
            tool = tool if isinstance(tool, str) else "?"
            args = block.get("input")
            call: dict[str, Any] = {
                "tool": tool,
                "status": "requested",
                "input": input_summary(tool, args),
                "seq": event.seq,
                "at": event.ts,
            }
            if sidechain:
                call["sidechain"] = True
            calls[cid] = call
            tools = state["tools"]
            counts = tools.get(tool)
            if counts is None:
                tools[tool] = {"calls": 1, "errors": 0}
            else:
                counts["calls"] += 1
            state["in_flight"] += 1
            if isinstance(args, dict):
                if tool in TODO_TOOLS and isinstance(args.get("todos"), list):
                    state["todos"] = args["todos"]
                if tool in AGENT_TOOLS:
                    state["agents"][cid] = {
                        "description": args.get("description"),
                        "subagent_type": args.get("subagent_type"),
                        "status": "requested",
                        "agent_id": None,
                        "seq": event.seq,
                        "result_seq": None,
                    }
        self._phase(state, "tools_running")

    def _results(self, state: State, event: Event) -> None:
        calls = state["calls"]
        rec = event.payload
        for block in blocks(rec):
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            cid = block.get("tool_use_id")
            if not isinstance(cid, str):
                raise illegal("tool_result without a tool_use_id")
            call = calls.get(cid)
            if call is None:
                raise illegal(f"tool_result for {cid}, which was never requested")
            if call["status"] != "requested":
                raise illegal(
                    f"a second tool_result for {cid}: its result was recorded at seq "
                    f"{call['result_seq']}"
                )
            status = "error" if block.get("is_error") is True else "ok"
            call["status"] = status
            call["result_seq"] = event.seq
            call["duration_s"] = duration(call, event)
            if status == "error":
                call["error"] = one_line(text_of(block.get("content")), 200)
                state["tools"][call["tool"]]["errors"] += 1
            state["in_flight"] -= 1
            agent = state["agents"].get(cid)
            if agent is not None:
                self._agent_done(agent, status, block, rec, event.seq)
        self._phase(state, "awaiting_model")

    @staticmethod
    def _agent_done(
        agent: dict[str, Any], status: str, block: dict[str, Any], rec: dict[str, Any], seq: int
    ) -> None:
        agent["status"] = status
        agent["result_seq"] = seq
        result = rec.get("toolUseResult")
        agent_id = result.get("agentId") if isinstance(result, dict) else None
        if not isinstance(agent_id, str):
            found = AGENT_ID.search(text_of(block.get("content")))
            agent_id = found.group(1) if found else None
        if agent_id is not None:
            agent["agent_id"] = agent_id
        if isinstance(result, dict):
            for key, field in (
                ("total_tokens", "totalTokens"),
                ("tool_uses", "totalToolUseCount"),
                ("duration_ms", "totalDurationMs"),
            ):
                if type(result.get(field)) is int:
                    agent[key] = result[field]

    # -- prose ------------------------------------------------------------
    def _explain(self, before: StateView, event: Event, after: StateView) -> str:
        kind = event.kind
        cid = event.call_id
        if kind == "tool_use":
            calls = [f"{label(after['calls'][c])} ({c})" for c in ids(event, "tool_use", "id")]
            return f"tool_use: {', '.join(calls)} requested; {after['in_flight']} in flight"
        if kind == "tool_result":
            said = []
            for c in ids(event, "tool_result", "tool_use_id"):
                call = after["calls"][c]
                said.append(
                    f"tool_result {call['status']} {in_words(call['duration_s'])}: "
                    f"{label(call)} ({c}, requested at seq {call['seq']})"
                )
            return "; ".join(said) or "tool_result"
        if kind == "user":
            if after["turns"] != before["turns"]:
                return f"user: turn {after['turns']}"
            return "user: not a prompt (a meta message, a compaction's summary, a command's output)"
        if kind in MESSAGE_KINDS:
            msg = event.payload.get("message")
            mid = msg.get("id") if isinstance(msg, dict) else None
            grown = [
                f"{f} {before['usage'][f]:,} -> {after['usage'][f]:,}"
                for f in USAGE_FIELDS
                if before["usage"][f] != after["usage"][f]
            ]
            usage = (
                f"usage of message {mid} (its last line counts): {', '.join(grown)}"
                if grown
                else "usage unchanged"
            )
            return f"{kind}: {usage}{pricing.cost_words(before['cost'], after['cost'])}"
        if kind == "compact_boundary":
            last = after["compactions"][-1]
            return (
                f"compact_boundary: the conversation was compacted ({last['trigger']}, "
                f"{last['pre_tokens']} tokens before); a new chain of records starts"
            )
        return f"{kind}: shown as recorded; these rules read nothing from it" + (
            f" (call {cid})" if cid else ""
        )

    @staticmethod
    def _first_block(event: Event, kind: str) -> dict[str, Any] | None:
        for block in blocks(event.payload):
            if isinstance(block, dict) and block.get("type") == kind:
                return block
        return None

    def where(self, state: StateView) -> str | None:
        """In a file that holds several sessions: which one this prefix is in."""
        return session_in_file(state)

    def notes(self, state: StateView) -> list[str]:
        """What ``claude --resume`` of the last message would load, when the
        chain it walks back stops short of the session's start."""
        return resume_notes(state)

    def call_of(self, event: Event) -> str | None:
        """A call is a tool_use and the tool_result that answers it."""
        if event.kind == "tool_use":
            block = self._first_block(event, "tool_use")
            key = block.get("id") if block is not None else None
        elif event.kind == "tool_result":
            block = self._first_block(event, "tool_result")
            key = block.get("tool_use_id") if block is not None else None
        else:
            return None
        return key if isinstance(key, str) else None

    def call_facts(self, event: Event) -> CallFacts | None:
        if event.kind == "tool_use":
            block = self._first_block(event, "tool_use")
            if block is None:
                return None
            tool = str(block.get("name"))
            return CallFacts(tool=tool, arg=input_summary(tool, block.get("input")) or None)
        if event.kind == "tool_result":
            block = self._first_block(event, "tool_result")
            if block is not None:
                return CallFacts(status="error" if block.get("is_error") is True else "ok")
        return None

    def row_summary(self, event: Event) -> str | None:
        """The record in a line, as Claude Code's own view shows it: the
        prompt, ``Bash ls -la``, ``ok · No files found``, the reply."""
        rec = event.payload
        kind = event.kind
        if kind == "tool_use":
            return "; ".join(
                " ".join(
                    x
                    for x in (str(b.get("name")), input_summary(str(b.get("name")), b.get("input")))
                    if x
                )
                for b in blocks(rec)
                if isinstance(b, dict) and b.get("type") == "tool_use"
            )
        if kind == "tool_result":
            return "; ".join(
                f"{'error' if b.get('is_error') is True else 'ok'} · "
                f"{one_line(text_of(b.get('content')), 200)}"
                for b in blocks(rec)
                if isinstance(b, dict) and b.get("type") == "tool_result"
            )
        if kind in ("user", "assistant", "thinking"):
            msg = rec.get("message")
            content = msg.get("content") if isinstance(msg, dict) else None
            if kind == "thinking":
                text = " ".join(
                    str(b.get("thinking", ""))
                    for b in (content if isinstance(content, list) else [])
                    if isinstance(b, dict)
                )
            else:
                text = text_of(content)
            tag = "(meta) " if rec.get("isMeta") is True else ""
            if rec.get("isCompactSummary") is True:
                tag = "(compaction summary) "
            return tag + one_line(text, 200)
        if kind == "compact_boundary":
            meta = rec.get("compactMetadata")
            meta = meta if isinstance(meta, dict) else {}
            return f"compacted ({meta.get('trigger')}, {meta.get('preTokens')} tokens before)"
        if kind == "system":
            content = rec.get("content")
            if isinstance(content, str) and content:
                return one_line(f"{rec.get('subtype')}: {content}")
            return record_words(rec, f"{rec.get('subtype')}")
        if kind == "summary":
            return one_line(str(rec.get("summary")), 200)
        if kind == "queue-operation":
            content = rec.get("content")
            return one_line(f"{rec.get('operation')} {content if isinstance(content, str) else ''}")
        if kind == "progress":
            data = rec.get("data")
            if isinstance(data, dict):
                return one_line(" ".join(str(data[k]) for k in ("type", "hookEvent") if k in data))
        if kind not in KINDS:  # a record type newer than these rules: its own fields
            return record_words(rec, "")
        return None

    def recorded_call(self, state: State, event: Event) -> tuple[str, dict[str, Any]] | None:
        """The call ``event`` requests or answers and what ``state`` knows of
        it (``result_seq``: the line of its recorded result): how the engine
        finds a call's receipt, the result as recorded in the transcript."""
        cid = event.call_id
        if cid is None or event.kind not in ("tool_use", "tool_result"):
            return None
        call = state["calls"].get(cid)
        return (cid, call) if call is not None else None


REDUCER = ClaudeCodeRules()
