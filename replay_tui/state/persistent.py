"""States that share structure: the state after prefix n+1 reuses every part
of the state after n that the event did not touch.

Frozen values are JSON made immutable:

- :class:`FrozenDict` and :class:`FrozenList` are ``dict`` / ``list``
  subclasses whose mutators raise, so reading them costs what reading a plain
  dict costs, ``orjson`` encodes them and equal-content checks stay in C;
- a dict past :data:`BIG` keys becomes a :class:`BigDict`: a hash-array-mapped
  trie (``immutables.Map``, the C HAMT behind ``contextvars``) for lookups and
  a persistent vector of keys for insertion order, so adding one call to a
  run's 125,000 copies a few small nodes, not the whole dict.

Rules change a state through a draft (:class:`DictDraft`, Immer-style): the
draft reads through to the frozen base, records writes, and
:meth:`DictDraft.commit` builds the next frozen state (copying only the
touched path) together with the patches, which equal ``diff(before, after)``.
Unchanged subtrees stay the same objects, so comparing two states costs what
differs between them.
"""

from __future__ import annotations

import sys
from collections.abc import (
    Collection,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    MutableSequence,
    Sequence,
)
from typing import Any, NoReturn

import immutables

from replay_tui.state.diff import MISSING, Change, Path, diff

#: A dict with more keys than this is stored as a :class:`BigDict`.
BIG = 48
_BITS = 5
_WIDTH = 1 << _BITS
_MASK = _WIDTH - 1


def _frozen(*_: Any, **__: Any) -> NoReturn:
    raise TypeError("a state kept in history is frozen: rules change it through their draft")


class FrozenDict(dict):  # type: ignore[type-arg]
    """A small dict that is never changed after it is built."""

    __slots__ = ()
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _frozen
    __ior__ = _frozen

    def __hash__(self) -> int:  # type: ignore[override]
        return id(self)


class FrozenList(list):  # type: ignore[type-arg]
    """A list that is never changed after it is built."""

    __slots__ = ()
    __setitem__ = __delitem__ = append = extend = insert = pop = remove = _frozen
    clear = sort = reverse = __iadd__ = __imul__ = _frozen

    def __hash__(self) -> int:  # type: ignore[override]
        return id(self)


class PVector:
    """A persistent vector (a 32-way trie of tuples): append, set and index
    in O(log32 n), each version sharing all but one path with the last. It
    holds a big dict's keys in order and a big list's items."""

    __slots__ = ("_root", "_shift", "_size")

    def __init__(self, root: tuple[Any, ...] = (), shift: int = 0, size: int = 0) -> None:
        self._root = root
        self._shift = shift
        self._size = size

    @classmethod
    def of(cls, keys: Iterable[Any]) -> PVector:
        order = cls()
        for k in keys:
            order = order.append(k)
        return order

    def __len__(self) -> int:
        return self._size

    def append(self, key: Any) -> PVector:
        size, shift = self._size, self._shift
        if size == _WIDTH << shift:  # full: grow a level
            return PVector((self._root, _path(shift, key)), shift + _BITS, size + 1)
        return PVector(_push(self._root, shift, size, key), shift, size + 1)

    def set(self, index: int, key: Any) -> PVector:
        """A copy with item ``index`` replaced (one path copied)."""
        if not 0 <= index < self._size:
            raise IndexError(index)
        return PVector(_assoc(self._root, self._shift, index, key), self._shift, self._size)

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            index += self._size
        if not 0 <= index < self._size:
            raise IndexError(index)
        node = self._root
        for s in range(self._shift, 0, -_BITS):
            node = node[(index >> s) & _MASK]
        return node[index & _MASK]

    def __iter__(self) -> Iterator[Any]:
        return _leaves(self._root, self._shift)


def _path(shift: int, key: Any) -> tuple[Any, ...]:
    node: tuple[Any, ...] = (key,)
    for _ in range(0, shift, _BITS):
        node = (node,)
    return node


def _push(node: tuple[Any, ...], shift: int, index: int, key: Any) -> tuple[Any, ...]:
    if shift == 0:
        return (*node, key)
    sub = (index >> shift) & _MASK
    if sub < len(node):
        return (*node[:sub], _push(node[sub], shift - _BITS, index, key))
    return (*node, _path(shift - _BITS, key))


def _assoc(node: tuple[Any, ...], shift: int, index: int, key: Any) -> tuple[Any, ...]:
    sub = (index >> shift) & _MASK
    child = key if shift == 0 else _assoc(node[sub], shift - _BITS, index, key)
    return (*node[:sub], child, *node[sub + 1 :])


def _leaves(node: tuple[Any, ...], shift: int) -> Iterator[Any]:
    if shift == 0:
        yield from node
    else:
        for child in node:
            yield from _leaves(child, shift - _BITS)


def _ne(self: Any, other: object) -> bool:
    eq = self.__eq__(other)
    return eq if eq is NotImplemented else not eq


class BigDict(Mapping[str, Any]):
    """A large dict that is never changed: HAMT lookups, insertion order kept."""

    __slots__ = ("_map", "_order")

    def __init__(self, mapping: immutables.Map[str, Any], order: PVector) -> None:
        self._map = mapping
        self._order = order

    @classmethod
    def of(cls, items: Mapping[str, Any]) -> BigDict:
        return cls(immutables.Map(items), PVector.of(items))

    def __getitem__(self, key: str) -> Any:
        return self._map[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._map.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._map

    def __len__(self) -> int:
        return len(self._map)

    def __iter__(self) -> Iterator[str]:
        if len(self._order) == len(self._map):
            return iter(self._order)
        return (k for k in self._order if k in self._map)  # pragma: no cover - see _rebuilt

    def key_at(self, index: int) -> str:
        """The key at ``index`` in insertion order (for drawing one line of many)."""
        return self._order[index]  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if isinstance(other, BigDict):
            return self._map == other._map and list(self) == list(other)
        if isinstance(other, dict):
            return len(other) == len(self) and all(
                k in other and _json_eq(other[k], v) for k, v in self.items()
            )
        return NotImplemented

    __ne__ = _ne
    __hash__ = object.__hash__  # identity: frozen, but compared by content

    def __repr__(self) -> str:
        return f"BigDict({len(self)} keys)"


class BigList(Sequence[Any]):
    """A long list that is never changed (a persistent vector): appending one
    check to thousands copies one path, not the list."""

    __slots__ = ("_vec",)

    def __init__(self, vec: PVector) -> None:
        self._vec = vec

    @classmethod
    def of(cls, items: Iterable[Any]) -> BigList:
        return cls(PVector.of(items))

    def __len__(self) -> int:
        return len(self._vec)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._vec[i] for i in range(*index.indices(len(self)))]
        return self._vec[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._vec)

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if isinstance(other, BigList | list):
            return len(other) == len(self) and all(
                _json_eq(a, b) for a, b in zip(self, other, strict=True)
            )
        return NotImplemented

    __ne__ = _ne
    __hash__ = object.__hash__  # identity: frozen, but compared by content

    def __repr__(self) -> str:
        return f"BigList({len(self)} items)"


def _json_eq(a: Any, b: Any) -> bool:
    return a == b and (type(a) is type(b) or isinstance(a, (dict, list, Mapping)))


# -- freezing and thawing ----------------------------------------------------
FROZEN = (FrozenDict, FrozenList, BigDict, BigList)
_SCALARS = (str, int, float, bool, type(None))


def freeze(value: Any) -> Any:
    """The frozen twin of a JSON value (drafts committed, plain containers copied).

    Raises ``TypeError`` for anything that is not JSON (a set, an object, a
    non-string key), as writing the state as JSON would.
    """
    t = type(value)
    if t in _SCALAR_TYPES or t in _FROZEN_TYPES:
        return value
    if t is dict or (isinstance(value, dict) and t is not FrozenDict):
        return _freeze_dict(value)
    if t is list or t is tuple or (isinstance(value, list) and t is not FrozenList):
        return _frozen_list([freeze(v) for v in value])
    if isinstance(value, DictDraft):
        return value.commit(None)
    if isinstance(value, ListDraft):
        return value.commit(None)
    if isinstance(value, Mapping):
        return _freeze_dict(value)
    raise TypeError(f"Type is not JSON serializable: {t.__name__}")


_SCALAR_TYPES = frozenset(_SCALARS)
_FROZEN_TYPES = frozenset(FROZEN)


def _frozen_list(items: list[Any]) -> FrozenList | BigList:
    return BigList.of(items) if len(items) > BIG else FrozenList(items)


#: Short strings put in a state are interned: a long run repeats the same
#: tool names and arguments in every call (tens of MB at a million events).
_INTERN_CHARS = 40


def _freeze_dict(value: Mapping[Any, Any]) -> FrozenDict | BigDict:
    out = {}
    for k, v in value.items():
        if type(k) is not str:
            raise TypeError("Dict key must be str")
        if type(v) is str:
            out[k] = sys.intern(v) if len(v) <= _INTERN_CHARS else v
        else:
            out[k] = freeze(v)
    return BigDict.of(out) if len(out) > BIG else FrozenDict(out)


def is_frozen(value: Any) -> bool:
    return type(value) in _FROZEN_TYPES


def thaw(value: Any) -> Any:
    """A plain, mutable copy of a frozen (or plain) JSON value."""
    if isinstance(value, (dict, Mapping)):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list | BigList):
        return [thaw(v) for v in value]
    if isinstance(value, DictDraft | ListDraft):
        return thaw(value.commit(None))
    return value


def json_default(value: Any) -> Any:
    """``orjson`` ``default=``: a BigDict is written as the dict it is."""
    if isinstance(value, BigDict):
        return dict(value.items())
    if isinstance(value, BigList):
        return list(value)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def _plain_for_diff(value: Any) -> Any:
    """``diff`` walks dicts and lists; big ones are shown to it as such."""
    t = type(value)
    if t is BigDict:
        return dict(value.items())
    return list(value) if t is BigList else value


# -- drafts ------------------------------------------------------------------
_DELETED: Any = object()


class DictDraft(MutableMapping[str, Any]):
    """A dict the rules may change, over a frozen base; :meth:`commit` gives
    the next frozen value and the patches."""

    __slots__ = ("_base", "_done", "_kids", "_moved", "_writes")

    def __init__(self, base: FrozenDict | BigDict) -> None:
        self._base = base
        self._writes: dict[str, Any] = {}  # key -> value or _DELETED, in write order
        self._kids: dict[str, DictDraft | ListDraft] = {}
        self._moved: set[str] | None = None  # base keys deleted then set again
        self._done: Any = None

    @property
    def base(self) -> FrozenDict | BigDict:
        return self._base

    def __getitem__(self, key: str) -> Any:
        writes = self._writes
        if writes and key in writes:
            value = writes[key]
            if value is _DELETED:
                raise KeyError(key)
            return value
        kid = self._kids.get(key)
        if kid is not None:
            return kid
        value = self._base[key]
        t = type(value)
        if t is FrozenDict or t is BigDict:
            kid = self._kids[key] = DictDraft(value)
            return kid
        if t is FrozenList or t is BigList:
            kid = self._kids[key] = ListDraft(value)
            return kid
        return value

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        writes = self._writes
        if writes and key in writes:
            return writes[key] is not _DELETED
        return key in self._base

    def __setitem__(self, key: str, value: Any) -> None:
        writes = self._writes
        if writes.get(key, None) is _DELETED:
            del writes[key]  # a plain dict puts a key deleted and set again last
            if key in self._base:
                if self._moved is None:
                    self._moved = set()
                self._moved.add(key)
        writes[key] = value
        self._kids.pop(key, None)

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        writes = self._writes
        writes.pop(key, None)
        writes[key] = _DELETED  # last in write order, as a plain dict re-adds it
        self._kids.pop(key, None)
        if self._moved is not None:
            self._moved.discard(key)

    def __iter__(self) -> Iterator[str]:
        writes = self._writes
        if not writes:
            yield from self._base
            return
        moved = self._moved or ()
        for k in self._base:
            if k in writes and (writes[k] is _DELETED or k in moved):
                continue
            yield k
        base = self._base
        for k, v in writes.items():
            if v is not _DELETED and (k not in base or k in moved):
                yield k

    def __len__(self) -> int:
        if not self._writes:
            return len(self._base)
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"DictDraft({dict(self.items())!r})"

    # -- committing ---------------------------------------------------------
    def commit(self, patches: list[Change] | None, path: Path = ()) -> FrozenDict | BigDict:
        """The frozen value this draft now holds (the base itself if nothing
        changed); appends what changed under ``path`` to ``patches``."""
        if self._done is not None:
            return self._done  # type: ignore[no-any-return]
        base = self._base
        found: dict[str, list[Change]] | None = None
        new_kids: dict[str, Any] | None = None
        under: list[Change] | None = None
        for k, kid in self._kids.items():
            if patches is not None:
                under = []
            value = kid.commit(under, (*path, k))
            if value is not kid.base:
                if new_kids is None:
                    new_kids = {}
                new_kids[k] = value
                if under:
                    if found is None:
                        found = {}
                    found[k] = under
        writes = self._writes
        if not writes and new_kids is None:
            self._done = base
            return base
        frozen_writes: dict[str, Any] = {}
        for k, v in writes.items():
            old = base.get(k, MISSING)
            if v is _DELETED:
                if old is MISSING:
                    continue
                frozen_writes[k] = _DELETED
                new: Any = MISSING
            else:
                new = frozen_writes[k] = v if type(v) in _SCALAR_TYPES else freeze(v)
            if patches is None or old is new:
                continue
            to = type(new)
            if to in _SCALAR_TYPES and (old is MISSING or type(old) in _SCALAR_TYPES):
                if (
                    old is MISSING
                    or to is not type(old)
                    or old != new
                    or (to is float and str(old) != str(new))  # 0.0 and -0.0 write apart
                ):  # diff, inlined
                    if found is None:
                        found = {}
                    found[k] = [Change((*path, k), old, new)]
                continue
            changed = diff(_plain_for_diff(old), _plain_for_diff(new), (*path, k))
            if changed:
                if found is None:
                    found = {}
                found[k] = changed
        if found:
            assert patches is not None
            if len(found) == 1:
                patches.extend(next(iter(found.values())))
            else:
                _in_diff_order(patches, found, base)
        moved = self._moved or _NONE
        kids = new_kids or _NOTHING
        if isinstance(base, BigDict):
            result: FrozenDict | BigDict = _commit_big(base, kids, frozen_writes, moved)
        else:
            result = _commit_small(base, kids, frozen_writes, moved)
        self._done = result
        return result


def _in_diff_order(
    patches: list[Change], found: dict[str, list[Change]], base: FrozenDict | BigDict
) -> None:
    """Patches in the order :func:`~replay_tui.state.diff.diff` gives: the base's
    keys in its order, then the keys added (a big dict's few changed keys in
    the order they were written)."""
    if len(found) > 1 and type(base) is FrozenDict:
        for k in base:
            if k in found:
                patches.extend(found.pop(k))
    for changed in found.values():
        patches.extend(changed)


_NONE: frozenset[str] = frozenset()
_NOTHING: dict[str, Any] = {}


def _commit_small(
    base: FrozenDict, kids: dict[str, Any], writes: dict[str, Any], moved: Collection[str]
) -> FrozenDict | BigDict:
    out = FrozenDict(base)  # filled below through dict's own methods: it is new
    dict.update(out, kids)
    for k, v in writes.items():
        if v is _DELETED:
            dict.pop(out, k, None)
        else:
            if k in moved:
                dict.pop(out, k, None)
            dict.__setitem__(out, k, v)
    return BigDict.of(out) if len(out) > BIG else out


def _commit_big(
    base: BigDict, kids: dict[str, Any], writes: dict[str, Any], moved: Collection[str]
) -> BigDict:
    order = base._order
    if not writes and len(kids) == 1:  # the common case: one child changed
        ((k, v),) = kids.items()
        return BigDict(base._map.set(k, v), order)
    removed = False
    with base._map.mutate() as m:
        for k, v in kids.items():
            m[k] = v
        for k, v in writes.items():
            if v is _DELETED:
                if k in m:
                    del m[k]
                    removed = True
                continue
            if k not in m:
                order = order.append(k)
            elif k in moved:
                removed = True  # re-order below
                order = order.append(k)
            m[k] = v
        mapping = m.finish()
    if removed:
        order = _rebuilt(order, mapping)
    return BigDict(mapping, order)


def _rebuilt(order: PVector, mapping: immutables.Map[str, Any]) -> PVector:
    """Insertion order after deletions: each live key once, at its last place
    (O(n), and deleting from a big dict is rare)."""
    last: dict[str, None] = {}
    for k in order:
        if k in mapping:
            last.pop(k, None)
            last[k] = None
    return PVector.of(last)


class ListDraft(MutableSequence[Any]):
    """A list the rules may change, over a frozen base.

    Appends and changes inside items are recorded as such (a long list costs
    what was added or touched); any other change works on a copy.
    """

    __slots__ = ("_base", "_done", "_items", "_kids", "_tail")

    def __init__(self, base: FrozenList | BigList) -> None:
        self._base = base
        self._kids: dict[int, DictDraft | ListDraft] = {}  # base items being changed
        self._tail: list[Any] = []  # appended
        self._items: list[Any] | None = None  # a working copy, after other changes
        self._done: Any = None

    @property
    def base(self) -> FrozenList | BigList:
        return self._base

    def _work(self) -> list[Any]:
        if self._items is None:
            items = list(self._base)
            for i, kid in self._kids.items():
                items[i] = kid
            items.extend(self._tail)
            self._items = items
            self._kids = {}
            self._tail = []
        return self._items

    def __len__(self) -> int:
        if self._items is not None:
            return len(self._items)
        return len(self._base) + len(self._tail)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if self._items is not None:
            value = self._items[index]
            kid = _draft_of(value)
            if kid is not None:
                self._items[index] = kid
                return kid
            return value
        size = len(self._base)
        i = index + len(self) if index < 0 else index
        if not 0 <= i < len(self):
            raise IndexError("list index out of range")
        if i >= size:
            value = self._tail[i - size]
            kid = _draft_of(value)
            if kid is not None:
                self._tail[i - size] = kid
                return kid
            return value
        found = self._kids.get(i)
        if found is not None:
            return found
        value = self._base[i]
        kid = _draft_of(value)
        if kid is not None:
            self._kids[i] = kid
            return kid
        return value

    def __setitem__(self, index: Any, value: Any) -> None:
        self._work()[index] = value

    def __delitem__(self, index: Any) -> None:
        del self._work()[index]

    def insert(self, index: int, value: Any) -> None:
        self._work().insert(index, value)

    def append(self, value: Any) -> None:
        if self._items is not None:
            self._items.append(value)
        else:
            self._tail.append(value)

    def __repr__(self) -> str:
        return f"ListDraft({list(self)!r})"

    def commit(self, patches: list[Change] | None, path: Path = ()) -> FrozenList | BigList:
        if self._done is not None:
            return self._done  # type: ignore[no-any-return]
        base = self._base
        if self._items is not None:
            result = self._commit_copy(patches, path)
        else:
            changed = {}
            for i, kid in sorted(self._kids.items()):
                value = kid.commit(patches, (*path, i))
                if value is not kid.base:
                    changed[i] = value
            tail = [freeze(v) for v in self._tail]
            if not changed and not tail:
                result = base
            elif type(base) is BigList and len(base) + len(tail) > BIG:
                vec = base._vec
                for i, value in changed.items():
                    vec = vec.set(i, value)
                for value in tail:
                    vec = vec.append(value)
                result = BigList(vec)
            else:
                items = list(base)
                for i, value in changed.items():
                    items[i] = value
                items.extend(tail)
                result = _frozen_list(items)
            if patches is not None:
                size = len(base)
                patches.extend(Change((*path, size + i), MISSING, v) for i, v in enumerate(tail))
        self._done = result
        return result

    def _commit_copy(self, patches: list[Change] | None, path: Path) -> FrozenList | BigList:
        base = self._base
        assert self._items is not None
        new = [freeze(v) for v in self._items]
        if len(new) == len(base) and all(a is b for a, b in zip(new, base, strict=True)):
            return base
        if patches is not None:  # what diff(base, new) gives, skipping same items
            common = min(len(base), len(new))
            for i in range(common):
                if new[i] is not base[i]:
                    patches.extend(diff(base[i], new[i], (*path, i)))
            patches.extend(Change((*path, i), base[i], MISSING) for i in range(common, len(base)))
            patches.extend(Change((*path, i), MISSING, new[i]) for i in range(common, len(new)))
        return _frozen_list(new)


def _draft_of(value: Any) -> DictDraft | ListDraft | None:
    t = type(value)
    if t is FrozenDict or t is BigDict:
        return DictDraft(value)
    if t is FrozenList or t is BigList:
        return ListDraft(value)
    return None


# -- applying recorded patches ----------------------------------------------
def apply_changes(state: Any, changes: Iterable[Change]) -> Any:
    """The frozen state after ``changes``, recorded patches, are applied in order.

    Patches are leaf-level; along a list's tail they name rising indexes: an
    item is appended at the list's length and removed by cutting the list
    there. One draft takes them all, so each touched node is copied once.
    """
    root = DictDraft(state)
    for c in changes:
        new = c.new
        node: Any = root
        for key in c.path[:-1]:
            node = node[key]
        last = c.path[-1]
        if isinstance(node, ListDraft | list):
            assert isinstance(last, int)
            if new is MISSING:
                del node[last:]
            elif last >= len(node):
                node.append(new)
            else:
                node[last] = new
        elif new is MISSING:
            if last in node:
                del node[last]
        else:
            node[last] = new
    return root.commit(None)
