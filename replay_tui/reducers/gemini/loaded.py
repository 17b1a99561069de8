"""What Gemini CLI's loader holds after each line: its messages, metadata
and token totals, changed a line at a time.

These are the steps of ``loadConversationRecord`` (``@google/gemini-cli-core``),
one per kind of line (:mod:`replay_tui.formats.gemini.records`): its ``Map``
of messages is the ``messages`` list with an index of ids beside it (kept in
the rules' memo: see :meth:`~replay_tui.reducers.base.Context.memo`), so that
a message written again replaces its copy where it first appeared, as
``Map.set`` does, in time that does not grow with the conversation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from replay_tui.formats.gemini.records import META_FIELDS, TOKEN_FIELDS
from replay_tui.reducers.base import Context, State


def zero_tokens() -> dict[str, Any]:
    """``{input, output, cached, thoughts, tool, total}`` all 0, and ``by_model``."""
    got: dict[str, Any] = dict.fromkeys(TOKEN_FIELDS, 0)
    got["by_model"] = {}
    return got


def _truthy(value: Any) -> bool:
    """JavaScript's truth of a JSON value (an empty object or list is true).
    Values of the state may be frozen or drafts: any mapping or sequence."""
    if isinstance(value, Mapping) or (isinstance(value, Sequence) and not isinstance(value, str)):
        return True
    return bool(value)


def model_key(model: Any) -> str:
    """The key ``byModel[m.model ?? '']`` makes in JavaScript."""
    if model is None:
        return ""
    if model is True or model is False:
        return "true" if model else "false"
    if type(model) is float and model.is_integer():
        return str(int(model))
    if isinstance(model, Mapping):
        return "[object Object]"
    if isinstance(model, Sequence) and not isinstance(model, str):
        return ",".join("" if v is None else model_key(v) for v in model)
    return str(model)


def _number(value: Any) -> bool:
    return (type(value) is int or type(value) is float) and value == value


def add_tokens(totals: dict[str, Any], rec: Any, sign: int = 1) -> None:
    """Add (``sign`` -1: take away) a message's ``tokens`` to ``totals``
    and to its model's, as Gemini CLI's totals count them: a message whose
    ``tokens`` is set (in JavaScript's sense) counts, each figure that is a
    number adds, anything else adds nothing."""
    tokens = rec.get("tokens") if isinstance(rec, Mapping) else None
    if not _truthy(tokens):
        return
    by_model = totals["by_model"]
    key = model_key(rec.get("model"))
    mine = by_model.get(key)
    if mine is None:
        mine = by_model[key] = dict.fromkeys(TOKEN_FIELDS, 0)
    if not isinstance(tokens, Mapping):
        return
    for field in TOKEN_FIELDS:
        value = tokens.get(field)
        if _number(value) and value:
            totals[field] += sign * value
            mine[field] += sign * value


def totals_of(messages: Any) -> dict[str, Any]:
    """The token totals of ``messages`` counted afresh."""
    totals = zero_tokens()
    for rec in messages:
        add_tokens(totals, rec)
    return totals


def same_tokens(a: Any, b: Any) -> bool:
    """Two messages count the same (tokens and model)."""
    ta = a.get("tokens") if isinstance(a, Mapping) else None
    tb = b.get("tokens") if isinstance(b, Mapping) else None
    return ta == tb and (not _truthy(ta) or model_key(a.get("model")) == model_key(b.get("model")))


def ids_of(state: State, ctx: Context) -> dict[str, int]:
    """Where each loaded message is in ``messages``, by id (built once per
    state object, kept up to date by the steps below)."""
    memo = ctx.memo(state)
    index: dict[str, int] | None = memo.get("ids")
    if index is None:
        index = {}
        for at, rec in enumerate(state["messages"]):
            index[rec["id"]] = at
        memo["ids"] = index
    return index


def set_message(state: State, ctx: Context, rec: dict[str, Any], *, spend: bool) -> None:
    """``messagesMap.set(rec.id, rec)``: replaced where it is, or added at
    the end; the totals follow. With ``spend``, what the copy adds to the
    message's tokens is spent too (a response written, not a snapshot's
    copy of one)."""
    index = ids_of(state, ctx)
    messages = state["messages"]
    at = index.get(rec["id"])
    if at is None:
        index[rec["id"]] = len(messages)
        messages.append(rec)
        add_tokens(state["tokens"], rec)
        if spend:
            add_tokens(state["spent"], rec)
        return
    old = messages[at]
    if same_tokens(old, rec):
        _replace(messages, at, old, rec)
        return
    if spend:
        _spend_more(state["spent"], old, rec)
    if _truthy(old.get("tokens")) and model_key(old.get("model")) == model_key(rec.get("model")):
        add_tokens(state["tokens"], old, -1)
        _replace(messages, at, old, rec)
        add_tokens(state["tokens"], rec)
        return
    _replace(messages, at, old, rec)
    state["tokens"] = totals_of(messages)  # a model's entry may go: counted afresh


def _figure(tokens: Any, field: str) -> Any:
    value = tokens.get(field) if isinstance(tokens, Mapping) else None
    return value if _number(value) else 0


def _spend_more(spent: dict[str, Any], old: Any, rec: dict[str, Any]) -> None:
    """A response written again: what its tokens grew by is spent too (a
    copy with fewer tokens, or none, as a resume's snapshot rebuilds them,
    takes nothing back; a copy of another model's is a response of its own)."""
    if not _truthy(old.get("tokens")) or model_key(old.get("model")) != model_key(rec.get("model")):
        add_tokens(spent, rec)
        return
    new, was = rec.get("tokens"), old.get("tokens")
    mine = spent["by_model"].setdefault(model_key(rec.get("model")), dict.fromkeys(TOKEN_FIELDS, 0))
    for field in TOKEN_FIELDS:
        grew = _figure(new, field) - _figure(was, field)
        if grew > 0:
            spent[field] += grew
            mine[field] += grew


def _replace(messages: Any, at: int, old: Any, rec: dict[str, Any]) -> None:
    """Message ``at`` becomes ``rec``. A plain list takes it in place; a
    draft of a frozen state (the app's) gets its item changed key by key,
    as a change inside the item: replacing an item would copy the list,
    thousands of messages for each line written."""
    if type(messages) is list:
        messages[at] = rec
        return
    was = getattr(old, "base", old)  # the frozen item, compared without drafting it
    for key in [k for k in was if k not in rec]:
        del old[key]
    for key, value in rec.items():
        if key not in was or was[key] != value:
            old[key] = value


def append_message(state: State, rec: Any) -> None:
    """The older form's next message: added whatever it is (its list is
    loaded as it is written, ids repeated or missing)."""
    state["messages"].append(rec)
    add_tokens(state["tokens"], rec)
    add_tokens(state["spent"], rec)


def rewind(state: State, ctx: Context, target: str) -> int | None:
    """``{"$rewindTo": target}``: that message and every later one dropped;
    every message when it is not loaded. Returns where it was (None: not
    loaded)."""
    index = ids_of(state, ctx)
    at = index.get(target)
    messages = state["messages"]
    if at is None:
        if len(messages):
            state["messages"] = []
            state["tokens"] = zero_tokens()
        ctx.memo(state)["ids"] = {}
        return None
    if at < len(messages):
        kept = list(messages[:at])
        state["messages"] = kept
        state["tokens"] = totals_of(kept)
        ctx.memo(state)["ids"] = {rec["id"]: i for i, rec in enumerate(kept)}
    return at


def snapshot(state: State, ctx: Context, listed: list[Any], *, clear: bool = True) -> None:
    """A ``messages`` list (a ``$set``'s: the conversation replaced; a
    metadata line's: added to it): each record with a string ``id`` set in
    turn, the first copy of an id fixing its place, the last its value."""
    kept: list[dict[str, Any]] = [] if clear else list(state["messages"])
    index: dict[str, int] = {} if clear else dict(ids_of(state, ctx))
    for rec in listed:
        if type(rec) is not dict or type(rec.get("id")) is not str:
            continue
        at = index.get(rec["id"])
        if at is None:
            index[rec["id"]] = len(kept)
            kept.append(rec)
        else:
            kept[at] = rec
    state["messages"] = kept
    state["tokens"] = totals_of(kept)
    ctx.memo(state)["ids"] = index


def merge_meta(state: State, fields: Any) -> list[str]:
    """``metadata = {...metadata, ...fields}`` for the fields the loader
    returns; the names of those that changed."""
    changed: list[str] = []
    if type(fields) is not dict:
        return changed
    for key in META_FIELDS:
        if key in fields and (key not in state["meta"] or state["meta"][key] != fields[key]):
            state["meta"][key] = fields[key]
            changed.append(key)
    return changed


def loaded(state: State) -> bool:
    """Whether Gemini CLI's loader returns a session for this prefix: its
    metadata holds a ``sessionId`` and a ``projectHash`` (the older form:
    a ``sessionId``)."""
    meta = state["meta"]
    if state["form"] == "json":
        return "sessionId" in meta
    return _truthy(meta.get("sessionId")) and _truthy(meta.get("projectHash"))
