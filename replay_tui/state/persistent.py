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

Rules change a state through a draft (:mod:`.drafts`); freezing one builds
the next frozen state, copying only the touched path. Unchanged subtrees stay
the same objects, so comparing two states costs what differs between them.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any, NoReturn

import immutables

from replay_tui.state.paths import Path

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
        return cls().extend(keys)

    def __len__(self) -> int:
        return self._size

    def append(self, key: Any) -> PVector:
        size, shift = self._size, self._shift
        if size == _WIDTH << shift:  # full: grow a level
            return PVector((self._root, _path(shift, key)), shift + _BITS, size + 1)
        return PVector(_push(self._root, shift, size, key), shift, size + 1)

    def extend(self, keys: Iterable[Any]) -> PVector:
        """:meth:`append` of each of ``keys`` in turn, the same trie, built a
        leaf at a time (each append copied its leaf and path: a keep that
        adds a few hundred calls to a million-event state's call table
        rebuilt a leaf per call)."""
        items = keys if isinstance(keys, list | tuple) else list(keys)
        root, shift, size = self._root, self._shift, self._size
        at, n = 0, len(items)
        while at < n:
            if size == _WIDTH << shift:  # full: grow a level
                root, shift = (root,), shift + _BITS
            leaf = tuple(items[at : at + _WIDTH - (size & _MASK)])  # the tail leaf's room
            root = _push_leaf(root, shift, size, leaf)
            size += len(leaf)
            at += len(leaf)
        return PVector(root, shift, size)

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


def _push_leaf(
    node: tuple[Any, ...], shift: int, index: int, keys: tuple[Any, ...]
) -> tuple[Any, ...]:
    """``keys`` put at ``index``.. (all in the leaf of ``index``)."""
    if shift == 0:
        return (*node, *keys)
    sub = (index >> shift) & _MASK
    if sub < len(node):
        return (*node[:sub], _push_leaf(node[sub], shift - _BITS, index, keys))
    for _ in range(_BITS, shift, _BITS):  # a new path down to the new leaf
        keys = (keys,)
    return (*node, keys)


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


class Draft:
    """A value the rules change over a frozen base (see :mod:`.drafts`):
    :meth:`commit` gives the frozen value it now holds."""

    __slots__ = ()

    def commit(self, patches: list[Any] | None, path: Path = ()) -> Any:
        raise NotImplementedError


# -- freezing and thawing ----------------------------------------------------
FROZEN = (FrozenDict, FrozenList, BigDict, BigList)
_SCALARS = (str, int, float, bool, type(None))


def freeze(value: Any) -> Any:
    """The frozen twin of a JSON value (drafts committed, plain containers copied).

    Raises ``TypeError`` for anything that is not JSON (a set, an object, a
    non-string key), as writing the state as JSON would.
    """
    t = type(value)
    if t in SCALAR_TYPES or t in _FROZEN_TYPES:
        return value
    if t is dict or (isinstance(value, dict) and t is not FrozenDict):
        return _freeze_dict(value)
    if t is list or t is tuple or (isinstance(value, list) and t is not FrozenList):
        return frozen_list([freeze(v) for v in value])
    if isinstance(value, Draft):
        return value.commit(None)
    if isinstance(value, Mapping):
        return _freeze_dict(value)
    raise TypeError(f"Type is not JSON serializable: {t.__name__}")


SCALAR_TYPES = frozenset(_SCALARS)
_FROZEN_TYPES = frozenset(FROZEN)


def frozen_list(items: list[Any]) -> FrozenList | BigList:
    return BigList.of(items) if len(items) > BIG else FrozenList(items)


#: Short strings put in a state are interned: a long run repeats the same
#: tool names and arguments in every call (tens of MB at a million events).
INTERN_CHARS = 40


def _freeze_dict(value: Mapping[Any, Any]) -> FrozenDict | BigDict:
    out = {}
    for k, v in value.items():
        if type(k) is not str:
            raise TypeError("Dict key must be str")
        if type(v) is str:
            out[k] = sys.intern(v) if len(v) <= INTERN_CHARS else v
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
    if isinstance(value, Draft):
        return thaw(value.commit(None))
    return value


#: A frozen dict of at most this many keys and items in all (its dicts'
#: and lists' included) is thawed whole when a draft that records nothing
#: reads it: copied each time, never shared with the state before.
SMALL = 32


def thawed_small(value: FrozenDict, room: list[int] | None = None) -> dict[str, Any] | None:
    """A plain copy of ``value`` if it is small all the way down (at most
    :data:`SMALL` keys and items in all, lists of scalars only), else None."""
    if room is None:
        room = [SMALL]
    room[0] -= len(value)
    if room[0] < 0:
        return None
    out: dict[str, Any] = {}
    for k, v in value.items():
        t = type(v)
        if t is FrozenDict:
            v = thawed_small(v, room)
            if v is None:
                return None
        elif t is FrozenList:
            room[0] -= len(v)
            if room[0] < 0 or not set(map(type, v)) <= SCALAR_TYPES:
                return None
            v = list(v)
        elif t is BigDict or t is BigList:
            return None
        out[k] = v
    return out


def json_default(value: Any) -> Any:
    """``orjson`` ``default=``: a BigDict is written as the dict it is."""
    if isinstance(value, BigDict):
        return dict(value.items())
    if isinstance(value, BigList):
        return list(value)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def plain_for_diff(value: Any) -> Any:
    """``diff`` walks dicts and lists; big ones are shown to it as such."""
    t = type(value)
    if t is BigDict:
        return dict(value.items())
    return list(value) if t is BigList else value


def list_extended(base: FrozenList | BigList, tail: list[Any]) -> FrozenList | BigList:
    """``base`` with the frozen values ``tail`` after it: a long list's
    path copied, not the list."""
    if type(base) is BigList:
        return BigList(base._vec.extend(tail))
    return frozen_list([*base, *tail])


# -- the next frozen dict ------------------------------------------------------
#: In a draft's writes: the key was removed.
DELETED: Any = object()


def dict_rebuilt(
    base: FrozenDict, kids: dict[str, Any], writes: dict[str, Any], moved: Collection[str]
) -> FrozenDict | BigDict:
    """The next frozen dict: ``base`` with ``kids`` (new frozen values of
    existing keys) and ``writes`` (frozen values or :data:`DELETED`, in write
    order; ``moved``: base keys deleted then set again, which go last)."""
    out = FrozenDict(base)  # filled below through dict's own methods: it is new
    dict.update(out, kids)
    for k, v in writes.items():
        if v is DELETED:
            dict.pop(out, k, None)
        else:
            if k in moved:
                dict.pop(out, k, None)
            dict.__setitem__(out, k, v)
    return BigDict.of(out) if len(out) > BIG else out


def dict_rebuilt_big(
    base: BigDict, kids: dict[str, Any], writes: dict[str, Any], moved: Collection[str]
) -> BigDict:
    """:func:`dict_rebuilt` for a big dict: a few trie nodes copied."""
    order = base._order
    if not writes and len(kids) == 1:  # the common case: one child changed
        ((k, v),) = kids.items()
        return BigDict(base._map.set(k, v), order)
    removed = False
    added: list[str] = []  # to the order, in one extend
    with base._map.mutate() as m:
        for k, v in kids.items():
            m[k] = v
        for k, v in writes.items():
            if v is DELETED:
                if k in m:
                    del m[k]
                    removed = True
                continue
            if k not in m:
                added.append(k)
            elif k in moved:
                removed = True  # re-order below
                added.append(k)
            m[k] = v
        mapping = m.finish()
    if added:
        order = order.extend(added)
    if removed:
        order = _order_rebuilt(order, mapping)
    return BigDict(mapping, order)


def _order_rebuilt(order: PVector, mapping: immutables.Map[str, Any]) -> PVector:
    """Insertion order after deletions: each live key once, at its last place
    (O(n), and deleting from a big dict is rare)."""
    last: dict[str, None] = {}
    for k in order:
        if k in mapping:
            last.pop(k, None)
            last[k] = None
    return PVector.of(last)
