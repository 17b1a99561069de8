"""Channels: which are LangGraph's own, and the reducers a channel may have.

Reducers are code in the user's graph, not stored. What a channel's history
shows is enough to tell the usual ones apart, so each is tried on each
superstep: the previous value and the superstep's writes folded through it
must give the checkpoint's value. The candidates that explain every
superstep so far are kept; the first of them (in :data:`REDUCERS` order) is
the one named.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

MISSING: Any = object()
_INTERNAL_PREFIXES = ("branch:", "join:", "start:", "__pregel_")
_ROLES = {
    "user": "human",
    "assistant": "ai",
    "system": "system",
    "tool": "tool",
    "human": "human",
    "ai": "ai",
}
REMOVE_ALL = "__remove_all__"
#: Marks a folded message written with no id: LangGraph gave it one, which the value holds.
NEW_ID = "__new_id__"
#: The marks a fold puts on messages, never part of a value shown.
MARKS = ("__loose__", NEW_ID)


def is_internal(channel: str, nodes: frozenset[str] = frozenset()) -> bool:
    """LangGraph's own channels, never in ``values``: ``__start__``, the
    triggers ``branch:to:*``, ``join:*``, ``start:*``, ``__pregel_*``, and in
    format 1 the trigger named after each node (``nodes``)."""
    if channel == "__root__":
        return False
    return (
        channel.startswith(_INTERNAL_PREFIXES)
        or (channel.startswith("__") and channel.endswith("__"))
        or channel in nodes
    )


class Unexplained(Exception):
    """A reducer cannot take these writes (a type it refuses)."""


def _canon(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


def message_of(value: Any) -> dict[str, Any]:
    """A written message as add_messages coerces it: a message's fields, a
    string (a human message), a ``(role, content)`` pair, an OpenAI-style dict.
    One coerced from a shorthand is marked ``loose``: LangGraph filled in an
    id and defaults, so only its type and content can be compared."""
    if isinstance(value, dict) and isinstance(value.get("type"), str) and "content" in value:
        return value
    if isinstance(value, str):
        return {"type": "human", "content": value, "__loose__": True}
    if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str):
        return {"type": _ROLES.get(value[0], value[0]), "content": value[1], "__loose__": True}
    if isinstance(value, dict) and isinstance(value.get("role"), str):
        out = {"type": _ROLES.get(value["role"], value["role"]), "content": value.get("content")}
        if isinstance(value.get("id"), str):
            out["id"] = value["id"]
        out["__loose__"] = True
        return out
    raise Unexplained("not a message")


def add_messages(left: Any, writes: list[Any]) -> Any:
    """LangGraph's ``add_messages``: append, a message with a known id
    replaces it, a ``RemoveMessage`` removes by id (``__remove_all__``: all)."""
    olds = [] if left is MISSING or left is None else _as_list(left)
    if not any(isinstance(m, dict) and "type" in m for w in [olds, *writes] for m in _as_list(w)):
        raise Unexplained("no message in it")
    merged = [message_of(m) for m in olds]
    for write in writes:
        right = [message_of(m) for m in _as_list(write)]
        for i, m in enumerate(right):
            if m.get("type") == "remove" and m.get("id") == REMOVE_ALL:
                merged, right = [], right[i + 1 :]
                break
        index = {m.get("id"): i for i, m in enumerate(merged) if m.get("id") is not None}
        removed: set[int] = set()
        for m in right:
            key = m.get("id")
            if key is None and not m.get("__loose__"):
                # add_messages gives it a uuid4, in place; the write is stored by another
                # thread, before or after that: any id the value has is its own
                m = {**m, NEW_ID: True}
            if key is not None and key in index:
                if m.get("type") == "remove":
                    removed.add(index[key])
                else:
                    merged[index[key]] = m
            elif m.get("type") == "remove":
                raise Unexplained(f"removes message {key!r}, which is not there")
            else:
                if key is not None:
                    index[key] = len(merged)
                merged.append(m)
        merged = [m for i, m in enumerate(merged) if i not in removed]
    return merged


def _last_value(left: Any, writes: list[Any]) -> Any:
    return writes[-1]


def _addable(a: Any, b: Any) -> bool:
    """``a + b`` is what ``operator.add`` does to a channel: lists, strings, numbers."""
    if isinstance(a, (list, str)):
        return type(a) is type(b)
    return type(a) in (int, float) and type(b) in (int, float)


def _add(left: Any, writes: list[Any]) -> Any:
    acc = left
    for w in writes:
        if acc is MISSING or acc is None:
            acc = w
        elif _addable(acc, w):
            acc = acc + w
        else:
            raise Unexplained("operands that do not add")
    return acc


def _union(left: Any, writes: list[Any]) -> Any:
    out = {_canon(v): v for v in ([] if left is MISSING or left is None else _as_list(left))}
    for w in writes:
        if not isinstance(w, list):
            raise Unexplained("not a set")
        out.update((_canon(v), v) for v in w)
    return {"__set__": sorted(out)}


def _merge(left: Any, writes: list[Any]) -> Any:
    acc = {} if left is MISSING or left is None else left
    for w in writes:
        if not isinstance(acc, dict) or not isinstance(w, dict):
            raise Unexplained("not a dict")
        acc = {**acc, **w}
    return acc


def _per_key(name: str) -> Callable[[Any, list[Any]], Any]:
    """A dict whose keys each fold by reducer ``name`` (a custom reducer as
    common as ``{k: max(a.get(k), b[k])}``)."""

    def fold(left: Any, writes: list[Any]) -> Any:
        acc = {} if left is MISSING or left is None else left
        if not isinstance(acc, dict) or not writes:
            raise Unexplained("not a dict")
        acc = dict(acc)
        for w in writes:
            if not isinstance(w, dict):
                raise Unexplained("not a dict")
            for key, value in w.items():
                acc[key] = REDUCERS[name](acc.get(key, MISSING), [value])
        return acc

    return fold


def _extremum(pick: Callable[..., Any]) -> Callable[[Any, list[Any]], Any]:
    def fold(left: Any, writes: list[Any]) -> Any:
        items = ([] if left is MISSING or left is None else [left]) + writes
        if not items or not all(type(v) in (int, float) for v in items):
            raise Unexplained("not numbers")
        return pick(items)

    return fold


#: The reducers tried, in the order the first that fits is named.
REDUCERS: dict[str, Callable[[Any, list[Any]], Any]] = {
    "add_messages": add_messages,
    "last value": _last_value,
    "operator.add": _add,
    "set union": _union,
    "dict merge": _merge,
    "max": _extremum(max),
    "min": _extremum(min),
}
REDUCERS.update(
    {f"dict merge, {name} per key": _per_key(name) for name in ("operator.add", "max", "min")}
)


def same(expected: Any, actual: Any) -> bool:
    """``expected`` (a fold) is ``actual`` (the checkpoint's value): messages
    coerced from a shorthand compare by type and content; a set as a set."""
    return first_difference(expected, actual) is None


def first_difference(expected: Any, actual: Any, path: str = "") -> str | None:
    """The first path where ``actual`` is not ``expected`` (None: the same)."""
    if isinstance(expected, dict) and "__set__" in expected and len(expected) == 1:
        if (
            not isinstance(actual, list)
            or sorted({_canon(v) for v in actual}) != expected["__set__"]
        ):
            return path or "(the whole value)"
        return None
    if isinstance(expected, dict) and expected.get("__loose__"):
        if not isinstance(actual, dict):
            return path or "(the whole value)"
        for key in ("type", "content", "id"):
            if key in expected and first_difference(expected[key], actual.get(key)) is not None:
                return f"{path}.{key}"
        return None
    if isinstance(expected, dict) and expected.get(NEW_ID):
        if not isinstance(actual, dict) or not isinstance(actual.get("id"), str):
            return f"{path}.id"
        expected = {k: v for k, v in expected.items() if k not in (NEW_ID, "id")}
        actual = {k: v for k, v in actual.items() if k != "id"}
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in list(expected) + [k for k in actual if k not in expected]:
            if key not in expected or key not in actual:
                return f"{path}.{key}"
            found = first_difference(expected[key], actual[key], f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            found = first_difference(e, a, f"{path}[{i}]")
            if found is not None:
                return found
        if len(expected) != len(actual):
            return f"{path}[{min(len(expected), len(actual))}]"
        return None
    if type(expected) is not type(actual) and not (
        type(expected) in (int, float) and type(actual) in (int, float)
    ):
        return path or "(the whole value)"
    return None if expected == actual else (path or "(the whole value)")


def explains(name: str, before: Any, writes: list[Any], after: Any) -> bool:
    """Reducer ``name`` folds ``writes`` onto ``before`` into ``after``; for
    writes of parallel tasks whose order the store does not keep, in any
    order (a list compared as a multiset)."""
    try:
        expected = REDUCERS[name](before, writes)
    except (Unexplained, TypeError, ValueError, RecursionError):
        return False
    if same(expected, after):
        return True
    if (
        name == "operator.add"
        and len(writes) > 1
        and isinstance(after, list)
        and isinstance(expected, list)
    ):
        return sorted(map(_canon, expected)) == sorted(map(_canon, after))
    return False


def unmarked(value: Any) -> Any:
    """A folded value as shown: its messages without the marks the fold put on them."""
    if isinstance(value, list):
        return [
            {k: v for k, v in m.items() if k not in MARKS} if isinstance(m, dict) else m
            for m in value
        ]
    return value
