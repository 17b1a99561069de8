"""The change one event made: a list of (path, old, new).

Paths are tuples of keys and list indexes, so they are unambiguous whatever
characters keys hold; :func:`path_str` renders them for people.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replay_tui.core import strict_json
from replay_tui.state.paths import MISSING as MISSING
from replay_tui.state.paths import Path as Path
from replay_tui.state.paths import format_path
from replay_tui.state.persistent import (
    SCALAR_TYPES,
    BigDict,
    BigList,
    FrozenDict,
    json_default,
    plain_for_diff,
)


@dataclass(slots=True, unsafe_hash=True)
class Change:
    """One leaf of what an event changed; a value, never changed once made
    (not ``frozen=True``: its ``__init__`` then sets each field through
    ``object.__setattr__``, 2.3x the cost, and the forward pass makes one or
    more an event)."""

    path: Path
    old: Any
    new: Any

    @property
    def op(self) -> str:
        if self.old is MISSING:
            return "added"
        if self.new is MISSING:
            return "removed"
        return "changed"

    def to_json(self) -> dict[str, Any]:
        """``{"path", "op", "old", "new"}``, the path as it is typed
        (``calls.call-003.status``): the one syntax every command prints
        and reads."""
        out: dict[str, Any] = {"path": format_path(self.path), "op": self.op}
        if self.old is not MISSING:
            out["old"] = self.old
        if self.new is not MISSING:
            out["new"] = self.new
        return out


_NESTED = (dict, list)


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == True`` in Python, but not in JSON, and so
    ``{"a": false} == {"a": 0}``: containers Python finds equal are equal
    in JSON only if they write the same (one C-level pass; a different key
    order then only costs a walk that finds nothing)."""
    if type(a) is not type(b) or a != b:
        return False
    if type(a) is float:  # 0.0 == -0.0, but JSON writes them apart
        return math.copysign(1.0, a) == math.copysign(1.0, b)
    return not isinstance(a, _NESTED) or _written(a) == _written(b)


def _written(value: Any) -> bytes:
    return strict_json.dumps(value, default=json_default)


def diff(old: Any, new: Any, path: Path = ()) -> list[Change]:
    """Changes from ``old`` to ``new``, deepest paths, in key order.

    Equal subtrees are skipped with one C-level comparison, so the cost
    follows what changed more than the size of the state.
    """
    if old is new or _same(old, new):
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[Change] = []
        get = new.get
        for key, was in old.items():
            now = get(key, MISSING)
            if now is MISSING and key not in new:
                out.append(Change((*path, key), was, MISSING))
            elif was is now or (
                was == now
                and type(was) is type(now)
                and (not isinstance(was, _NESTED) or _written(was) == _written(now))
                and (type(was) is not float or _same(was, now))
            ):
                continue  # inline: this loop runs once per key of a big state
            else:
                out.extend(diff(was, now, (*path, key)))
        if len(new) != len(old) or out:
            out.extend(Change((*path, k), MISSING, v) for k, v in new.items() if k not in old)
        return out
    if isinstance(old, list) and isinstance(new, list):
        out = []
        common = min(len(old), len(new))
        for i in range(common):
            out.extend(diff(old[i], new[i], (*path, i)))
        out.extend(Change((*path, i), old[i], MISSING) for i in range(common, len(old)))
        out.extend(Change((*path, i), MISSING, new[i]) for i in range(common, len(new)))
        return out
    return [Change(path, old, new)]


def diff_frozen(old: Any, new: Any, path: Path) -> list[Change]:
    """``diff`` of two frozen values (or MISSING), scalars compared inline:
    what a draft wrote, against what it replaced."""
    if old is new:
        return _NO_CHANGES
    if type(new) in SCALAR_TYPES and (old is MISSING or type(old) in SCALAR_TYPES):
        if old is MISSING or scalar_changed(old, new):
            return [Change(path, old, new)]
        return _NO_CHANGES
    return diff(plain_for_diff(old), plain_for_diff(new), path)


_NO_CHANGES: list[Change] = []


def scalar_changed(old: Any, new: Any) -> bool:
    """Whether a patch tells one scalar from the other: as JSON writes them,
    by type (``1``, ``1.0``, ``true``), value, and a zero's sign."""
    return (
        type(old) is not type(new)
        or old != new
        or (type(new) is float and str(old) != str(new))  # 0.0 and -0.0 write apart
    )


def path_str(path: Path) -> str:
    """``calls.call-001.status``, ``checks[0].passed``; odd keys are quoted:
    the path as ``when`` and ``history`` read it (:func:`~replay_tui.state.paths.format_path`),
    ``(state)`` for the whole state."""
    return format_path(path) if path else "(state)"


def differs_along(kept: Any, made: Any, changes: list[list[Change]]) -> Path | None:
    """Where ``made`` (a state the rules made again, ``changes`` on the way,
    each event's list) differs from ``kept`` (the state they made the first
    time), looked for where it can differ at the cost of what changed: every
    path ``changes`` touched, and each container on the way there whose
    other members are not the very objects kept (two states that share a
    subtree are equal there without a look). None: no difference found.

    A member of a big dict that only the first pass changed, where the sizes
    agree, is not looked at: that would cost the whole dict each time."""
    touched: dict[Any, Any] = {}
    for event in changes:
        for change in event:
            node = touched
            for key in change.path:
                node = node.setdefault(key, {})
    return _differs_at(kept, made, touched, ())


def _differs_at(kept: Any, made: Any, touched: dict[Any, Any], path: Path) -> Path | None:
    if kept is made:
        return None
    if not touched:  # not changed on the way: the whole value
        return None if _same(plain_for_diff(kept), plain_for_diff(made)) else path
    if isinstance(kept, Mapping) and isinstance(made, Mapping):
        if len(kept) != len(made):
            return path
        small = not isinstance(kept, BigDict)
        keys = list(kept) if small else [k for k in touched if isinstance(k, str)]
        for key in keys:
            a, b = kept.get(key, MISSING), made.get(key, MISSING)
            if a is b:
                continue
            if a is MISSING or b is MISSING:
                return (*path, key)
            found = _differs_at(a, b, touched.get(key, {}), (*path, key))
            if found is not None:
                return found
        return None
    if isinstance(kept, Sequence) and isinstance(made, Sequence) and not isinstance(kept, str):
        if len(kept) != len(made) or isinstance(made, str):
            return path
        indexes = (
            range(len(kept))
            if not isinstance(kept, BigList)
            else sorted(i for i in touched if isinstance(i, int) and i < len(kept))
        )
        for i in indexes:
            found = _differs_at(kept[i], made[i], touched.get(i, {}), (*path, i))
            if found is not None:
                return found
        return None
    return None if _same(kept, made) and type(kept) is type(made) else path


def in_diff_order(
    patches: list[Change], found: dict[str, list[Change]], base: FrozenDict | BigDict
) -> None:
    """Patches in the order :func:`diff` gives: the base's
    keys in its order, then the keys added (a big dict's few changed keys in
    the order they were written)."""
    if len(found) > 1 and type(base) is FrozenDict:
        for k in base:
            if k in found:
                patches.extend(found.pop(k))
    for changed in found.values():
        patches.extend(changed)
