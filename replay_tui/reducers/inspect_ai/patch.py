"""JSON Patch (RFC 6902), as Inspect AI writes its ``state`` and ``store``
events' ``changes``: applied in place, a patch that cannot apply raising
:class:`PatchFailed` that says which operation and why."""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping, MutableSequence, Sequence
from typing import Any


def plain(value: Any) -> Any:
    """``value`` as plain dicts and lists (a state's drafts and frozen
    containers copied out), for comparing and keeping."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [plain(v) for v in value]
    return value


def obj(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


class PatchFailed(ValueError):
    """An operation that does not apply to the document."""


def _tokens(pointer: Any) -> list[str]:
    if not isinstance(pointer, str):
        raise PatchFailed(f"path {pointer!r} is not a JSON pointer")
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchFailed(f"path {pointer!r} does not start with /")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _index(seq: Sequence[Any], token: str, pointer: str, *, adding: bool = False) -> int:
    if adding and token == "-":
        return len(seq)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchFailed(f"{pointer}: {token!r} is not a list index")
    i = int(token)
    if i > len(seq) or (i == len(seq) and not adding):
        raise PatchFailed(f"{pointer}: index {i} is past the list's end ({len(seq)} items)")
    return i


def _get(doc: Any, tokens: list[str], pointer: str) -> Any:
    for token in tokens:
        if isinstance(doc, MutableSequence):
            doc = doc[_index(doc, token, pointer)]
        elif isinstance(doc, MutableMapping):
            if token not in doc:
                raise PatchFailed(f"{pointer}: no {token!r} there")
            doc = doc[token]
        else:
            raise PatchFailed(f"{pointer}: {token!r} is inside a {type(doc).__name__}")
    return doc


def _remove(doc: Any, tokens: list[str], pointer: str) -> Any:
    parent = _get(doc, tokens[:-1], pointer)
    last = tokens[-1]
    if isinstance(parent, MutableSequence):
        return parent.pop(_index(parent, last, pointer))
    if isinstance(parent, MutableMapping):
        if last not in parent:
            raise PatchFailed(f"{pointer}: nothing to remove there")
        return parent.pop(last)
    raise PatchFailed(f"{pointer}: the parent is a {type(parent).__name__}")


def _add(doc: Any, tokens: list[str], value: Any, pointer: str, *, replace: bool) -> Any:
    if not tokens:
        return value
    parent = _get(doc, tokens[:-1], pointer)
    last = tokens[-1]
    if isinstance(parent, MutableSequence):
        if replace:
            parent[_index(parent, last, pointer)] = value
        else:
            parent.insert(_index(parent, last, pointer, adding=True), value)
    elif isinstance(parent, MutableMapping):
        if replace and last not in parent:
            raise PatchFailed(f"{pointer}: nothing to replace there")
        parent[last] = value
    else:
        raise PatchFailed(f"{pointer}: the parent is a {type(parent).__name__}")
    return doc


def apply_patch(doc: Any, operations: Any) -> Any:
    """``doc`` with ``operations`` applied (in place where it can be; the
    result is returned: a patch of the root replaces it)."""
    if not isinstance(operations, list):
        raise PatchFailed("the changes are not a list of operations")
    for n, op in enumerate(operations, 1):
        if not isinstance(op, dict):
            raise PatchFailed(f"operation {n} is not an object")
        name = op.get("op")
        pointer = op.get("path")
        tokens = _tokens(pointer)
        where = f"operation {n} ({name} {pointer})"
        try:
            if name in ("add", "replace"):
                if "value" not in op:
                    raise PatchFailed("no value")
                doc = _add(
                    doc, tokens, copy.deepcopy(op["value"]), str(pointer), replace=name == "replace"
                )
            elif name == "remove":
                if not tokens:
                    raise PatchFailed("cannot remove the whole document")
                _remove(doc, tokens, str(pointer))
            elif name in ("move", "copy"):
                source = _tokens(op.get("from"))
                value = plain(_get(doc, source, str(op.get("from"))))
                if name == "move":
                    if tokens[: len(source)] == source and tokens != source:
                        raise PatchFailed("cannot move a value into itself")
                    _remove(doc, source, str(op.get("from")))
                doc = _add(doc, tokens, value, str(pointer), replace=False)
            elif name == "test":
                if plain(_get(doc, tokens, str(pointer))) != op.get("value"):
                    raise PatchFailed("the value there is not the one tested")
            else:
                raise PatchFailed(f"unknown operation {name!r}")
        except PatchFailed as exc:
            raise PatchFailed(f"{where}: {exc}") from None
    return doc
