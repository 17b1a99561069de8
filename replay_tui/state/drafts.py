"""Drafts: the dicts and lists rules change, over a frozen state.

A draft (Immer-style) reads through to its frozen base and records what the
rules write; :meth:`DictDraft.commit` builds the frozen value it now holds,
copying only the touched path, together with the patches, which equal
``diff(before, after)``.

A :class:`Journal` keeps one draft across many events (the app's forward pass:
the events between two of the state store's checkpoints). After each event it
gives that event's patches from what was written, each write with the value it
replaced, and freezes once, when asked (at the checkpoint). Nodes under a
journal know their parent, so a write marks the path above it, and the end of
an event walks only what that event touched. Lists are the exception: a list
touched by an event is committed then, as a one-event draft (its items can
move, so their paths are not stable across events).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, MutableMapping, MutableSequence
from typing import Any

from replay_tui.state.diff import MISSING, Change, Path, diff, diff_frozen, in_diff_order
from replay_tui.state.persistent import (
    BIG,
    DELETED,
    SCALAR_TYPES,
    SMALL,
    BigDict,
    BigList,
    Draft,
    FrozenDict,
    FrozenList,
    dict_rebuilt,
    dict_rebuilt_big,
    freeze,
    frozen_list,
    thawed_small,
)

#: The value a key had when an event began, when that cannot be told from the
#: journal (a part changed by the event was then replaced by it): the event's
#: patches are then found by comparing whole states.
_TANGLED: Any = object()


class _Top:
    """The parent of a journal's root (called as a kid calls its parent's
    weak reference)."""

    __slots__ = ()

    def __call__(self) -> _Top:
        return self

    def _kid_touched(self, key: Any, kid: Any) -> None:
        return None


_TOP = _Top()


class DictDraft(Draft, MutableMapping[str, Any]):
    """A dict the rules may change, over a frozen base; :meth:`commit` gives
    the next frozen value and the patches."""

    __slots__ = (
        "__weakref__",
        "_base",
        "_ek",
        "_ev",
        "_key",
        "_kids",
        "_loose",
        "_me",
        "_moved",
        "_up",
        "_writes",
    )

    def __init__(self, base: FrozenDict | BigDict, up: Any = None, key: Any = None) -> None:
        self._base = base
        self._writes: dict[str, Any] = {}  # key -> value or DELETED, in write order
        self._kids: dict[str, DictDraft | ListDraft] = {}
        self._moved: set[str] | None = None  # base keys deleted then set again
        #: In a journal: a weak reference to the parent node (a kid refers
        #: to its parent and the parent to its kids: weakly, or the cycles
        #: would wait for the cyclic collector, which the forward pass pauses
        #: and whose kept generations the state store freezes), and this
        #: node's key in it.
        self._up = up
        self._key = key
        self._me: weakref.ref[DictDraft] | None = None
        #: In a journal, during an event: what each key written had before it
        #: (None: nothing under this node was touched), and the kids touched.
        self._ev: dict[str, Any] | None = None
        self._ek: dict[str, DictDraft | ListDraft] | None = None
        #: Recording nothing (see :class:`Journal`): a small dict read from a
        #: small one is given plain, thawed whole, and frozen again at commit.
        self._loose = False

    @property
    def base(self) -> FrozenDict | BigDict:
        return self._base

    def __getitem__(self, key: str) -> Any:
        writes = self._writes
        if writes and key in writes:
            value = writes[key]
            if value is DELETED:
                raise KeyError(key)
            if type(value) in _CONTAINERS:  # frozen when an earlier event ended
                kid = writes[key] = _draft_of(value, self._mine(), key)
                return kid
            return value
        found = self._kids.get(key)
        if found is not None:
            return found
        value = self._base[key]
        if type(value) in _CONTAINERS:
            if self._loose:
                # a plain dict's reads and writes are C; a draft's, Python calls
                if type(value) is FrozenDict and type(self._base) is FrozenDict:
                    plain = thawed_small(value) if len(value) <= SMALL else None
                    if plain is not None:
                        writes[key] = plain
                        return plain
                kid = self._kids[key] = _draft_of(value)
                if type(kid) is DictDraft:
                    kid._loose = True
                return kid
            kid = self._kids[key] = _draft_of(value, self._mine(), key)
            return kid
        return value

    def _mine(self) -> weakref.ref[DictDraft] | None:
        """The parent a kid is made with: this node, in a journal."""
        if self._up is None:
            return None
        me = self._me
        if me is None:
            me = self._me = weakref.ref(self)
        return me

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        writes = self._writes
        if writes and key in writes:
            return writes[key] is not DELETED
        return key in self._base

    def __setitem__(self, key: str, value: Any) -> None:
        if isinstance(value, Draft) and (
            self._kids.get(key) is value or self._writes.get(key) is value
        ):
            return  # what the key holds already, as a plain dict's assignment of it
        if self._up is not None:
            ev = self._ev
            if ev is None or key not in ev:
                self._note(key)
        writes = self._writes
        if writes.get(key, None) is DELETED:
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
        if self._up is not None:
            ev = self._ev
            if ev is None or key not in ev:
                self._note(key)
        writes = self._writes
        writes.pop(key, None)
        writes[key] = DELETED  # last in write order, as a plain dict re-adds it
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
            if k in writes and (writes[k] is DELETED or k in moved):
                continue
            yield k
        base = self._base
        # (a copy: a small dict read meanwhile is put in the writes, plain)
        for k, v in list(writes.items()):
            if v is not DELETED and (k not in base or k in moved):
                yield k

    def __len__(self) -> int:
        if not self._writes:
            return len(self._base)
        return sum(1 for _ in self)

    def popitem(self) -> tuple[str, Any]:
        """The last key and its value, removed (as ``dict.popitem``; the
        mapping mixin's takes the first)."""
        key = None
        for key in self:  # noqa: B007 - the last one is wanted
            pass
        if key is None:
            raise KeyError("popitem(): dictionary is empty")
        value = self[key]
        del self[key]
        return key, value

    def __repr__(self) -> str:
        return f"DictDraft({dict(self.items())!r})"

    # -- the journal --------------------------------------------------------
    def _note(self, key: str) -> None:
        """``key`` is about to be written for the first time in this event:
        keep what it holds, and mark the path above as touched."""
        ev = self._ev
        if ev is None:
            ev = self._ev = {}
            parent = self._up()
            if parent is not None:  # else its tree is gone, and it with it
                parent._kid_touched(self._key, self)
        ev[key] = self._before(key)

    def _before(self, key: str) -> Any:
        """What ``key`` holds now, frozen (MISSING: nothing)."""
        writes = self._writes
        if key in writes:
            value = writes[key]
            if value is DELETED:
                return MISSING
        else:
            value = self._kids.get(key)
            if value is None:
                return self._base.get(key, MISSING)
        t = type(value)
        if t is DictDraft:
            return _TANGLED if value._ev is not None else value.commit(None)
        if t is ListDraft:
            return value._base  # its value when the event began: lists go on per event
        return value

    def _kid_touched(self, key: Any, kid: DictDraft | ListDraft) -> None:
        if self._kids.get(key) is not kid and self._writes.get(key) is not kid:
            # a draft replaced earlier and still held by the rules: what is
            # written to it is lost, as it is in a plain dict no longer held
            return
        ek = self._ek
        if ek is None:
            ek = self._ek = {}
        ek[key] = kid
        if self._ev is None:
            self._ev = {}
            parent = self._up()
            if parent is not None:
                parent._kid_touched(self._key, self)

    def _forget(self) -> None:
        """Drop what the event in progress touched under this node (it was
        replaced, and the replacement is compared whole)."""
        ek = self._ek
        self._ev = self._ek = None
        if ek:
            for kid in ek.values():
                kid._forget()

    def _end_event(self, patches: list[Change], path: Path) -> bool:
        """Append what the event changed under this node to ``patches``; the
        values it wrote are frozen. False if the event tangled what it
        changed (see :data:`_TANGLED`): its patches are then not complete."""
        ev = self._ev or _NOTHING
        ek = self._ek
        self._ev = self._ek = None
        whole = True
        found: dict[str, list[Change]] | None = None
        if ek:
            for k, kid in ek.items():
                if k in ev:  # replaced: compared whole below
                    kid._forget()
                    continue
                under: list[Change] = []
                if not kid._end_event(under, (*path, k)):
                    whole = False
                if under:
                    if found is None:
                        found = {}
                    found[k] = under
        if ev:
            writes = self._writes
            for k, old in ev.items():
                v = writes[k]
                if v is DELETED:
                    new: Any = MISSING
                elif type(v) in SCALAR_TYPES:
                    new = v
                else:
                    new = writes[k] = freeze(v)
                if old is _TANGLED:
                    whole = False
                    continue
                changed = diff_frozen(old, new, (*path, k))
                if changed:
                    if found is None:
                        found = {}
                    found[k] = changed
        if found:
            if len(found) == 1:
                patches.extend(next(iter(found.values())))
            else:
                in_diff_order(patches, found, self._base)
        return whole

    # -- committing ---------------------------------------------------------
    def commit(self, patches: list[Change] | None, path: Path = ()) -> FrozenDict | BigDict:
        """The frozen value this draft now holds (the base itself if nothing
        changed); appends what changed under ``path`` to ``patches``."""
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
            return base
        frozen_writes: dict[str, Any] = {}
        for k, v in writes.items():
            old = base.get(k, MISSING)
            if v is DELETED:
                if old is MISSING:
                    continue
                frozen_writes[k] = DELETED
                new: Any = MISSING
            else:
                new = frozen_writes[k] = v if type(v) in SCALAR_TYPES else freeze(v)
            if patches is None or old is new:
                continue
            changed = diff_frozen(old, new, (*path, k))
            if changed:
                if found is None:
                    found = {}
                found[k] = changed
        if found:
            assert patches is not None
            if len(found) == 1:
                patches.extend(next(iter(found.values())))
            else:
                in_diff_order(patches, found, base)
        moved = self._moved or _NONE
        kids = new_kids or _NOTHING
        if isinstance(base, BigDict):
            return dict_rebuilt_big(base, kids, frozen_writes, moved)
        return dict_rebuilt(base, kids, frozen_writes, moved)


_NONE: frozenset[str] = frozenset()
_NOTHING: dict[str, Any] = {}


class ListDraft(Draft, MutableSequence[Any]):
    """A list the rules may change, over a frozen base.

    Appends and changes inside items are recorded as such (a long list costs
    what was added or touched); any other change works on a copy. In a
    journal, a list an event touched is committed when the event ends and
    goes on from that value (:meth:`_end_event`).
    """

    __slots__ = ("_base", "_hot", "_items", "_key", "_kids", "_orig", "_tail", "_up")

    def __init__(self, base: FrozenList | BigList, up: Any = None, key: Any = None) -> None:
        self._base = base
        self._orig = base  # what the parent holds, while _base moves on per event
        self._kids: dict[int, DictDraft | ListDraft] = {}  # base items being changed
        self._tail: list[Any] = []  # appended
        self._items: list[Any] | None = None  # a working copy, after other changes
        self._up = up
        self._key = key
        self._hot = False  # in a journal: touched by the event in progress

    @property
    def base(self) -> FrozenList | BigList:
        """The value this draft was made over."""
        return self._orig

    def _touch(self) -> None:
        if not self._hot:
            self._hot = True
            parent = self._up()
            if parent is not None:
                parent._kid_touched(self._key, self)

    def _work(self) -> list[Any]:
        if self._up is not None:
            self._touch()
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
        value = self._item(index)
        if self._up is not None and isinstance(value, Draft):
            self._touch()  # what the rules do to an item is committed with the list
        return value

    def _item(self, index: int) -> Any:
        if self._items is not None:
            value = self._items[index]
            kid = _draft_of(value)
            if kid is not None:
                self._items[index] = kid
                return kid
            return value
        size = len(self._base)
        n = size + len(self._tail)  # len(self), without a call of it
        i = index + n if index < 0 else index
        if not 0 <= i < n:
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
        if self._up is not None:
            self._touch()
        if self._items is not None:
            self._items.append(value)
        else:
            self._tail.append(value)

    def __repr__(self) -> str:
        return f"ListDraft({list(self)!r})"

    def _forget(self) -> None:
        self._hot = False

    def _end_event(self, patches: list[Change], path: Path) -> bool:
        """Commit what the event did to this list; go on from that value."""
        self._hot = False
        self._base = self.commit(patches, path)
        self._kids = {}
        self._tail = []
        self._items = None
        return True

    def commit(self, patches: list[Change] | None, path: Path = ()) -> FrozenList | BigList:
        base = self._base
        if self._items is not None:
            return self._commit_copy(patches, path)
        changed = {}
        for i, kid in sorted(self._kids.items()):
            value = kid.commit(patches, (*path, i))
            if value is not kid.base:
                changed[i] = value
        tail = [freeze(v) for v in self._tail]
        if patches is not None:
            size = len(base)
            patches.extend(Change((*path, size + i), MISSING, v) for i, v in enumerate(tail))
        if not changed and not tail:
            return base
        if type(base) is BigList and len(base) + len(tail) > BIG:
            vec = base._vec
            for i, value in changed.items():
                vec = vec.set(i, value)
            return BigList(vec.extend(tail))
        items = list(base)
        for i, value in changed.items():
            items[i] = value
        items.extend(tail)
        return frozen_list(items)

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
        return frozen_list(new)


def _draft_of(value: Any, up: Any = None, key: Any = None) -> Any:
    """A draft over ``value`` if it is a frozen container (else None); in a
    journal, ``up`` is the weak reference to the parent holding it at ``key``."""
    t = type(value)
    if t is FrozenDict or t is BigDict:
        return DictDraft(value, up, key)
    if t is FrozenList or t is BigList:
        return ListDraft(value, up, key)
    return None


_CONTAINERS = frozenset((FrozenDict, BigDict, FrozenList, BigList))


class Journal:
    """One draft across many events: :attr:`root` is the state the rules
    change; :meth:`end_event` gives each event's patches, :meth:`freeze` the
    frozen state (once, when it is to be kept).

    Not ``recording``, the draft tells nothing of what each event wrote
    (:meth:`end_event` gives no patches): it reads and writes as a plain
    dict does, and costs little more, until it is frozen; a small dict in a
    small one is then given as a plain copy (``persistent.thawed_small``),
    frozen again at the next freeze."""

    __slots__ = ("base", "recording", "root")

    def __init__(self, state: FrozenDict | BigDict, *, recording: bool = True) -> None:
        self.base = state
        self.recording = recording
        self.root = self._root_over(state)

    def _root_over(self, state: FrozenDict | BigDict) -> DictDraft:
        if self.recording:
            return DictDraft(state, _TOP, None)
        root = DictDraft(state)
        root._loose = True
        return root

    def end_event(self, patches: list[Change]) -> bool:
        """Append what the event just applied changed to ``patches`` (in the
        order ``diff`` gives). False if they cannot be told from what was
        written (see :data:`_TANGLED`): compare the states around it."""
        root = self.root
        if root._ev is None:
            return True
        return root._end_event(patches, ())

    def freeze(self) -> FrozenDict | BigDict:
        """The state now, frozen; the journal goes on over it."""
        state = self.root.commit(None)
        self.base = state
        self.root = self._root_over(state)
        return state
