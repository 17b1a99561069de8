"""The ``langgraph`` rules: a LangGraph thread's state after each event.

The events (:mod:`replay_tui.formats.langgraph.thread`) are a thread's
checkpoints, each after the writes that produced it. The state mirrors
LangGraph's own ``StateSnapshot``:

- ``values``: the visible channels, what ``graph.get_state(config).values``
  returns (LangGraph's own channels are in ``channels``, for the inspector);
- ``next``: the nodes the checkpoint will run; ``step``; ``source``
  (``input``, ``loop``, ``update``, ``fork``); ``checkpoint_id``;
- ``tasks``: the tasks that ran from the latest checkpoint and made no
  checkpoint, with their error or interrupts; ``interrupts``: what each
  interrupt asked for;
- ``writes``: the writes of the superstep under way;
- ``reducers``: per channel, the reducer inferred from the thread's own
  history and over how many supersteps (``add_messages, inferred from 14
  steps``); ``edits`` (checkpoints made by ``update_state``, a fork or new
  input, with the channels they changed), ``gaps`` (steps never recorded,
  under ``durability="exit"``), ``forks`` (branches that leave the run);
- ``usage``: tokens of the model calls (``usage_metadata``) written;
- ``status`` (the summary): ``new``, ``running``, ``done``, ``interrupted``,
  ``failed``, ``paused`` (nodes still to run, nothing pending).

The proof: a checkpoint made by the loop must be its parent's values with
the superstep's writes folded through each channel's reducer. A channel
that changed with no write, or writes that the channel's reducer (as
inferred so far) cannot turn into its value, are a ``divergence`` naming the
channel and the first differing path. A channel's first writes that no
known reducer explains are a warning (a custom reducer): that channel is
then only checked for changes with no write. Edits are never divergences.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replay_tui.core.errors import RuleViolation
from replay_tui.formats.langgraph.triggers import next_nodes, node_channels
from replay_tui.reducers.base import CallFacts, Context, State, StateView
from replay_tui.reducers.langgraph import calls
from replay_tui.reducers.langgraph.calls import one_line as _one_line
from replay_tui.reducers.langgraph.channels import (
    MISSING,
    REDUCERS,
    Unexplained,
    explains,
    first_difference,
    is_internal,
    unmarked,
)
from replay_tui.reducers.langgraph.graph import GraphChannels, compare_channels, prove_by_graph
from replay_tui.state.persistent import thaw

if TYPE_CHECKING:
    from replay_tui.formats.envelope import Event

KINDS = frozenset({"write", "checkpoint"})
_SETS = frozenset({"builtins.set", "builtins.frozenset"})
_EDITS = frozenset({"input", "update", "fork"})


def _messages(value: Any) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [value]
    return [m for m in items if isinstance(m, dict) and isinstance(m.get("type"), str)]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in content
        ).strip()
    return "" if content is None else str(content)


class LangGraphRules:
    name = "langgraph"
    version = "1.0.0"
    kinds = KINDS
    source_format = "langgraph"

    def __init__(self, graph: GraphChannels | None = None) -> None:
        #: ``--graph``: the channels' reducers from the user's graph, not inferred.
        self.graph = graph

    def initial_state(self) -> State:
        state = self._initial()
        if self.graph is not None:  # the channels held, and the mismatches warned of
            state.update({"graph_seen": [], "graph_said": []})
        return state

    def _initial(self) -> State:
        return {
            "status": "new",
            "thread": None,
            "checkpoint_id": None,
            "source": None,
            "step": None,
            "values": {},
            "next": [],
            "tasks": [],
            "interrupts": [],
            "writes": [],
            "channels": {},
            "reducers": {},
            "inference": {},
            "edits": [],
            "gaps": [],
            "forks": [],
            #: The branches from the latest checkpoint (forks once one is taken).
            "parted": None,
            "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
            "checkpoints": 0,
            "proved": 0,
            #: The latest checkpoint could not be read (pickle): its values are unknown.
            "unknown": False,
            #: DeltaChannels (absent from a checkpoint between snapshots): per
            #: channel, each reducer still possible and the value it rebuilds.
            "delta": {},
            #: Format 1's node names (their trigger channels are LangGraph's own).
            "nodes": [],
            #: Channels a pending write changed, with the checkpoint's own value
            #: ([held, value]): the next checkpoint is proved from that.
            "undo": {},
        }

    def summary(self, state: StateView) -> str:
        return str(state["status"])

    # -- rules ------------------------------------------------------------
    def apply(self, state: State, event: Event, ctx: Context) -> State:
        p = event.payload
        state["thread"] = event.run_id
        for warning in p.get("warnings") or []:
            ctx.warn(str(warning))
        if event.kind == "write":
            return self._write(state, p)
        return self._checkpoint(state, p, ctx)

    def _write(self, state: State, p: dict[str, Any]) -> State:
        channel = p.get("channel")
        write = {k: p.get(k) for k in ("task", "task_id", "channel", "value")}
        if p.get("overwrite"):
            write["overwrite"] = True
        if p.get("class") in _SETS:
            write["set"] = True
        state["writes"].append(write)
        if channel == "messages" or isinstance(p.get("value"), (list, dict)):
            for m in _messages(p.get("value")):
                usage = m.get("usage_metadata")
                if m.get("type") == "ai" and isinstance(usage, dict) and not p.get("pending"):
                    for key in state["usage"]:
                        if type(usage.get(key)) is int:
                            state["usage"][key] += usage[key]
        if p.get("pending"):
            self._pending(state, p)
        return state

    def _pending(self, state: State, p: dict[str, Any]) -> None:
        """A write of a task that made no checkpoint: its error, its interrupts."""
        task_id, channel = p.get("task_id"), p.get("channel")
        tasks = state["tasks"]
        task = next((t for t in tasks if t["id"] == task_id), None)
        if task is None:
            task = {"id": task_id, "name": p.get("task"), "error": None, "interrupts": []}
            tasks.append(task)
        name = p.get("task")
        if channel in ("__error__", "__interrupt__") and isinstance(name, str):
            if name not in state["next"]:  # it did not finish: it runs again
                state["next"].append(name)
        elif channel == p.get("value") and state["nodes"]:
            pass  # format 1: the node's own trigger channel
        elif isinstance(channel, str) and not is_internal(channel, frozenset(state["nodes"])):
            self._apply_pending(state, channel, p.get("value"), bool(p.get("overwrite")))
            if name in state["next"] and task["error"] is None and not task["interrupts"]:
                state["next"].remove(name)  # done: get_state applies its writes
        if channel == "__error__":
            task["error"] = p.get("value")
            state["status"] = "failed"
        elif channel == "__interrupt__":
            value = p.get("value")
            for found in value if isinstance(value, list) else [value]:
                asked = found.get("value") if isinstance(found, dict) else found
                task["interrupts"].append(asked)
                state["interrupts"].append(
                    {
                        "task": p.get("task"),
                        "value": asked,
                        "id": found.get("id") if isinstance(found, dict) else None,
                    }
                )
            if state["status"] != "failed":
                state["status"] = "interrupted"

    def _apply_pending(self, state: State, channel: str, value: Any, overwrite: bool) -> None:
        """A finished task's write beside a failed or interrupted one: applied
        to ``values`` as ``get_state`` does, by the channel's reducer so far."""
        known = _plain(state["inference"]).get(channel)
        name = known.get("name") if isinstance(known, dict) else None
        values = _plain(state["values"])
        state["values"] = values
        before = values.get(channel, MISSING)
        undo = _plain(state["undo"])
        if channel not in undo:  # the checkpoint's own value, for the next proof
            undo[channel] = [channel in values, values.get(channel)]
            state["undo"] = undo
        candidates = known.get("candidates") if isinstance(known, dict) else []
        if isinstance(value, list) and "operator.add" in (candidates or []):
            name = "operator.add"  # ambiguous so far: a list channel usually appends
        if overwrite or name not in REDUCERS or name == "set union":
            if name == "set union" and isinstance(before, list) and isinstance(value, list):
                values[channel] = before + [v for v in value if v not in before]
            else:
                values[channel] = value
            return
        try:
            values[channel] = REDUCERS[name](before, [value])
        except (Unexplained, TypeError, ValueError, RecursionError):
            values[channel] = value

    def _checkpoint(self, state: State, p: dict[str, Any], ctx: Context) -> State:
        # what the proof reads and writes, as plain JSON (the app hands the
        # rules a draft of a frozen state): copied back once done
        work = {
            key: _plain(state[key])
            for key in ("values", "writes", "inference", "delta", "reducers", "parted")
        }
        for channel, (held, value) in _plain(state["undo"]).items():
            if held:
                work["values"][channel] = value
            else:
                work["values"].pop(channel, None)
        state["undo"] = {}
        self._checkpoint_in(state, work, p, ctx)
        for key in ("inference", "delta", "reducers"):
            state[key] = work[key]
        return state

    def _checkpoint_in(self, state: State, work: State, p: dict[str, Any], ctx: Context) -> None:
        nodes = node_channels(p)
        got = p.get("values")
        raw: dict[str, Any] = got if isinstance(got, dict) else {}
        values = {k: v for k, v in raw.items() if not is_internal(k, nodes)}
        source, step = p.get("source"), p.get("step")
        first = state["checkpoints"] == 0
        given = p.get("metadata")
        meta: dict[str, Any] = given if isinstance(given, dict) else {}
        counters = meta.get("counters_since_delta_snapshot")
        deltas = set(work["delta"]) | (set(counters) if isinstance(counters, dict) else set())
        if source in _EDITS:  # a DeltaChannel left out of an edit keeps its value
            for channel in deltas & set(work["values"]):
                values.setdefault(channel, work["values"][channel])
        unknown = bool(p.get("unreadable")) or state["unknown"]
        if unknown and not first:
            pass  # the decoder's warning says why this step is not proved
        elif source in _EDITS or first:
            if not first:
                changed = sorted(
                    k
                    for k in set(values) | set(work["values"])
                    if first_difference(work["values"].get(k, MISSING), values.get(k, MISSING))
                    is not None
                )
                state["edits"].append({"step": step, "source": source, "changed": changed})
        elif type(step) is int and type(state["step"]) is int and step != state["step"] + 1:
            state["gaps"].append({"from_step": state["step"], "to_step": step})
            ctx.warn(
                f"steps {state['step'] + 1} to {step - 1} were never recorded "
                f'(durability="exit" keeps only the last checkpoint): not proved'
            )
        else:
            self._prove(work, values, nodes, deltas, ctx)
            state["proved"] += 1
        state["checkpoints"] += 1
        state["unknown"] = bool(p.get("unreadable"))
        state["channels"] = {k: v for k, v in raw.items() if is_internal(k, nodes)}
        state["nodes"] = sorted(nodes)
        state["checkpoint_id"] = p.get("checkpoint_id")
        state["source"], state["step"] = source, step
        state["next"] = next_nodes(p)
        state["values"] = values
        state["writes"], state["tasks"], state["interrupts"] = [], [], []
        state["status"] = "running" if state["next"] else "done"
        parted = work["parted"]
        if parted is not None:  # the branches from the checkpoint before, but this one
            state["forks"] += [b for b in parted if b.get("first") != p.get("checkpoint_id")]
        state["parted"] = [
            {**b, "from": p.get("checkpoint_id"), "step": step} for b in p.get("branches") or []
        ] or None
        if self.graph is not None:
            seen = (
                set(state["graph_seen"])
                | set(values)
                | {c for w in work["writes"] if isinstance(c := w.get("channel"), str)}
            )
            seen = {c for c in seen if not is_internal(c, nodes)}
            state["graph_seen"] = sorted(seen)
            said = [str(c) for c in state["graph_said"]]
            done = not state["next"]
            state["graph_said"] = compare_channels(self.graph, seen, said, done, ctx.warn)

    def _prove(
        self,
        state: State,
        values: dict[str, Any],
        nodes: frozenset[str],
        deltas: set[str],
        ctx: Context,
    ) -> None:
        """The superstep's writes, folded through each channel's reducer,
        give the checkpoint's values (see the module)."""
        before_all = state["values"]
        written: dict[str, list[dict[str, Any]]] = {}
        for w in state["writes"]:
            channel = w.get("channel")
            if isinstance(channel, str) and not is_internal(channel, nodes):
                written.setdefault(channel, []).append(w)
        for channel in sorted(set(before_all) | set(values) | set(written)):
            before = before_all.get(channel, MISSING)
            after = values.get(channel, MISSING)
            writes = written.get(channel)
            if channel in deltas:
                self._delta(state, channel, before, writes or [], values)
                continue
            if not writes:
                where = first_difference(before, after)
                if where is not None:
                    raise RuleViolation(
                        "divergence",
                        f"channel {channel!r} changed with no write (first difference at "
                        f"{channel}{'' if where.startswith('(') else where})",
                    )
                continue
            self._explain(state, channel, before, writes, after, ctx)

    def _delta(
        self,
        state: State,
        channel: str,
        before: Any,
        writes: list[dict[str, Any]],
        values: dict[str, Any],
    ) -> None:
        """A DeltaChannel: its value is rebuilt from the writes by each
        reducer still possible; a snapshot (the value stored) keeps those that
        rebuilt it. The value shown is the first one's."""
        rebuilt = state["delta"].get(channel) or {
            name: before for name in REDUCERS if name != "set union"
        }
        folded = {}
        for name, value in rebuilt.items():
            try:
                folded[name] = (
                    REDUCERS[name](value, [w["value"] for w in writes]) if writes else value
                )
            except (Unexplained, TypeError, ValueError, RecursionError):
                continue
        if channel in values:  # a snapshot
            after = values[channel]
            folded = {n: v for n, v in folded.items() if first_difference(v, after) is None}
            if not folded:
                raise RuleViolation(
                    "divergence",
                    f"DeltaChannel {channel!r}: its snapshot is not what its writes rebuild",
                )
            folded = dict.fromkeys(folded, after)
        if not folded:
            raise RuleViolation(
                "divergence", f"DeltaChannel {channel!r}: no known reducer takes its writes"
            )
        state["delta"][channel] = folded
        name = next(iter(folded))
        values[channel] = unmarked(folded[name])
        said = f"{name}, a DeltaChannel rebuilt from its writes"
        state["reducers"][channel] = (
            said if len(folded) == 1 else f"{said} (or {len(folded) - 1} other)"
        )

    def _explain(
        self,
        state: State,
        channel: str,
        before: Any,
        writes: list[dict[str, Any]],
        after: Any,
        ctx: Context,
    ) -> None:
        if any(_opaque(v) for v in (before, after, *(w.get("value") for w in writes))):
            return  # a value stored with pickle (or damaged): the decoder warned
        inference = state["inference"]
        known = inference.get(channel)
        if known is not None and known["candidates"] == []:
            return  # a custom reducer: only changes with no write are checked
        last = max((i for i, w in enumerate(writes) if w.get("overwrite")), default=None)
        if last is not None:  # an Overwrite skips the reducer
            before, writes = MISSING, writes[last:]
            values = [writes[0]["value"]] + [w["value"] for w in writes[1:]]
        else:
            values = [w["value"] for w in writes]
        if self.graph is not None and channel in self.graph.reducers:
            reducer = self.graph.reducers[channel]
            prove_by_graph(state, channel, reducer, before, values, writes, after, ctx.warn)
            return
        tried = known["candidates"] if known is not None else list(REDUCERS)
        fits = [name for name in tried if explains(name, before, values, after)]
        if after is MISSING:
            fits = []
        if not fits:
            if known is None:
                inference[channel] = {"candidates": [], "steps": 1, "sets": False}
                state["reducers"][channel] = "custom (no known reducer explains its writes)"
                ctx.warn(
                    f"channel {channel!r}: no known reducer explains its writes "
                    "(a custom reducer?): from here only a change with no write is checked"
                )
                return
            expected = _fold_for_message(tried[0], before, values)
            where = first_difference(expected, after) if expected is not MISSING else None
            tasks = ", ".join(sorted({str(w.get("task")) for w in writes}))
            raise RuleViolation(
                "divergence",
                f"channel {channel!r}: the writes of {tasks} do not explain its value by "
                f"{known['name']} (inferred from {known['steps']} steps)"
                + (
                    f"; first difference at {channel}{where}"
                    if where and not where.startswith("(")
                    else ""
                ),
            )
        sets = any(w.get("set") for w in writes) or bool(known and known.get("sets"))
        steps = (known["steps"] if known else 0) + 1
        name = "set union" if sets and "set union" in fits else fits[0]
        inference[channel] = {"candidates": fits, "steps": steps, "sets": sets, "name": name}
        # add_messages on lists of messages with ids also appends: not "or operator.add"
        others = [] if name == "add_messages" else [f for f in fits if f != name][:2]
        alike = f" (or {' or '.join(others)})" if others else ""
        said = f"{name}{alike}, inferred from {steps} step{'s' if steps != 1 else ''}"
        state["reducers"][channel] = said

    # -- words ------------------------------------------------------------
    def still_open(self, state: StateView) -> list[str]:
        out = [
            f"task {t['name']} failed: {_one_line(str(t['error']), 120)}"
            for t in state["tasks"]
            if t["error"] is not None
        ]
        out += [
            f"interrupt in {i['task']}: asks {_one_line(str(i['value']), 120)}"
            for i in state["interrupts"]
        ]
        if state["status"] in ("running", "paused") and state["next"]:
            out.append("next: " + ", ".join(state["next"]))
        return out

    def notes(self, state: StateView) -> list[str]:
        out = [f"{channel}: {said}" for channel, said in sorted(state["reducers"].items())]
        out += [
            f"fork from step {f['step']}: {f['checkpoints']} checkpoint(s), tip {f['tip']}"
            for f in state["forks"]
        ]
        return out

    def call_of(self, event: Event) -> str | None:
        """A call is a model's tool call and the ToolMessage that answers it."""
        return calls.call_of(event)

    def call_facts(self, event: Event) -> CallFacts | None:
        return calls.call_facts(event)

    def record_for(self, state: State, event: Event) -> tuple[str, Any] | None:
        """Beside a call: its arguments and its result, error, or pending."""
        return calls.record_for(state, event)

    def row_summary(self, event: Event) -> str | None:
        p = event.payload
        if event.kind == "checkpoint":
            return f"step {p.get('step')} ({p.get('source')}) {p.get('checkpoint_id')}"
        channel, task = p.get("channel"), p.get("task")
        said = [f"{task} → {channel}"]
        msgs = _messages(p.get("value"))
        for m in msgs:
            calls = m.get("tool_calls") or []
            bits = [f"{m.get('type')}: {_one_line(_text(m.get('content')), 120)}"]
            bits += [
                f"{c.get('name')}({_one_line(str(c.get('args')), 60)})"
                for c in calls
                if isinstance(c, dict)
            ]
            said.append(" ".join(b for b in bits if b))
        if not msgs and p.get("value") is not None:
            said.append(_one_line(str(p.get("value")), 120))
        return " · ".join(said)

    def explain(self, before: StateView, event: Event, after: StateView) -> str | None:
        p = event.payload
        if event.kind == "write":
            pending = " (no checkpoint followed: pending)" if p.get("pending") else ""
            return f"node {p.get('task')!r} wrote {p.get('channel')!r}{pending}"
        source = p.get("source")
        if source == "loop" and after["proved"] > before["proved"]:
            return (
                f"step {p.get('step')}: the writes folded through each channel's "
                "reducer give this checkpoint"
            )
        if source in _EDITS:
            changed = after["edits"][-1]["changed"] if after["edits"] else []
            return f"an edit ({source}): " + (", ".join(changed) if changed else "no value changed")
        return f"step {p.get('step')} ({source})"


def _plain(value: Any) -> Any:
    """``value`` as plain dicts and lists: the app's drafts and frozen
    values thawed (a plain value, as ``check`` gives, as it is)."""
    return value if type(value) in (dict, list) or value is None else thaw(value)


def _opaque(value: Any) -> bool:
    """A value the decoder could not read: a pickle, a damaged value."""
    return isinstance(value, dict) and (
        ("pickle" in value and len(value) == 1) or "undecodable" in value
    )


def _fold_for_message(name: str, before: Any, values: list[Any]) -> Any:
    try:
        return REDUCERS[name](before, values)
    except Exception:
        return MISSING


REDUCER = LangGraphRules()
