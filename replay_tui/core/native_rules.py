"""The built-in ``agent_run`` rules' native twin (``native/src/rules/``).

It holds an ``agent_run`` state and applies lines as the native line core
proves them regular (:meth:`.line_core.NativeCore.prove_apply`), until one
the Python rules must judge: it never finds a run bad, it only finds it
good faster, by the same rules. The state is given back as the JSON the
Python rules' state would write.
"""

from __future__ import annotations

import contextlib
import ctypes
from typing import Any

#: The most a JSON int the native rules take can be (64 bits, signed).
_I64 = 1 << 63
#: What :meth:`NativeRules.state` gives: the state, all but its calls, its
#: calls, its calls by id a group to a line.
WHOLE, HEAD, CALLS, SORTED_CALLS = 0, 1, 2, 3


class RulesLibrary:
    """The native rules' functions of the loaded library."""

    def __init__(self, lib: Any, prove_args: list[Any]) -> None:
        new = lib.rtar_new
        new.restype = ctypes.c_void_p
        new.argtypes = [
            ctypes.c_char_p,  # state JSON
            ctypes.c_size_t,  # its length
            ctypes.c_int32,  # max_attempts: 0 none, 1 an int
            ctypes.c_int64,
            ctypes.c_int32,  # max_tool_calls: 0 none, 1 an int
            ctypes.c_int64,
            ctypes.c_int32,  # max_cost: 0 none, 1 an int, 2 a float
            ctypes.c_int64,
            ctypes.c_double,
            ctypes.c_int32,  # track: what changes is noted (changes())
        ]
        self.new = new
        free = lib.rtar_free
        free.restype = None
        free.argtypes = [ctypes.c_void_p]
        self.free = free
        state = lib.rtar_state
        state.restype = ctypes.c_void_p
        state.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.c_size_t]
        self.state = state
        prove_apply = lib.rtar_prove_apply
        prove_apply.restype = ctypes.c_int64
        prove_apply.argtypes = [
            ctypes.c_void_p,  # rules
            *prove_args,  # rtlc_prove's
            ctypes.c_int,  # receipts_fd (-1: none read natively)
            ctypes.c_uint64,  # a receipt's most bytes
            ctypes.c_void_p,  # ids (room for len - start bytes)
            ctypes.c_void_p,  # id_pins (i64 * 2 * max_lines)
            ctypes.c_void_p,  # noted (i64 * 2)
            ctypes.c_void_p,  # line_calls (i32 * max_lines, or null: not asked for)
            ctypes.c_int64,  # keep_at: the seq after which a state is kept
            ctypes.c_int64,  # keep_every: and every so many after (0: none)
        ]
        self.prove_apply = prove_apply
        for name in ("rtar_changes", "rtar_kept"):
            fn = getattr(lib, name)
            fn.restype = ctypes.c_void_p
            fn.argtypes = [ctypes.c_void_p]
        self.changes = lib.rtar_changes
        self.kept = lib.rtar_kept
        apply_line = lib.rtar_apply_line
        apply_line.restype = ctypes.c_int32
        apply_line.argtypes = [
            ctypes.c_void_p,  # rules
            ctypes.c_char_p,  # line
            ctypes.c_size_t,  # its length
            ctypes.c_int64,  # seq
            ctypes.c_size_t,  # max_depth
            ctypes.c_int,  # receipts_fd (-1: none read natively)
            ctypes.c_uint64,  # a receipt's most bytes
        ]
        self.apply_line = apply_line
        self.files_data = lib.rtlc_files_data
        self.files_len = lib.rtlc_files_len
        self.free_files = lib.rtlc_free_files


def _limit(value: Any, floats: bool) -> tuple[int, int, float] | None:
    """A budget limit as (kind, int, float); None if the native rules cannot hold it."""
    if value is None:
        return 0, 0, 0.0
    if type(value) is int and -_I64 <= value < _I64:
        return 1, value, 0.0
    if floats and type(value) is float:
        return 2, 0, value
    return None


class NativeRules:
    """An ``agent_run`` state held natively, and the rules that move it."""

    def __init__(self, library: RulesLibrary, handle: int, track: bool = False) -> None:
        self._lib = library
        self._handle: int | None = handle
        #: What changes is noted; the calls that finished or were denied
        #: are then let go once their changes are taken (no whole state).
        self.tracks = track

    @classmethod
    def take(
        cls,
        library: RulesLibrary,
        state: bytes,
        max_attempts: Any,
        max_tool_calls: Any,
        max_cost: Any,
        *,
        track: bool = False,
    ) -> NativeRules | None:
        """The rules from ``state`` (``orjson.dumps`` of the Python rules'
        state) and the budget's limits; None where the state is not of the
        shape the ``agent_run`` rules make, or a limit is past 64 bits.
        With ``track``, what changes is noted for :meth:`changes` (and
        :meth:`kept`), and a call that ended is let go once its changes
        are taken: the taker holds the whole state."""
        limits = (_limit(max_attempts, False), _limit(max_tool_calls, False))
        cost = _limit(max_cost, True)
        if limits[0] is None or limits[1] is None or cost is None:
            return None
        (ak, a, _), (tk, t, _) = limits[0], limits[1]
        handle = library.new(state, len(state), ak, a, tk, t, *cost, track)
        return cls(library, handle, track) if handle else None

    @property
    def handle(self) -> int:
        """The native state (for :meth:`.line_core.NativeCore.prove_apply`)."""
        assert self._handle is not None
        return self._handle

    def apply_line(
        self, line: bytes, seq: int, max_depth: int, receipts_fd: int, max_size: int
    ) -> bool:
        """Apply one line the Python checks judged a valid event (one the
        line core does not prove: a ``parent_seq``, say); False where it is
        the Python rules' (the state as before)."""
        assert self._handle is not None
        took = self._lib.apply_line(
            self._handle, line, len(line), seq, max_depth, receipts_fd, max_size
        )
        return bool(took)

    def state(self, part: int = WHOLE, group: int = 0) -> bytes:
        """The state as JSON, in the Python rules' key order: all of it
        (:data:`WHOLE`), all but its calls (:data:`HEAD`: ``"calls": {}``),
        the calls alone (:data:`CALLS`), or the calls in the order of their
        ids, ``group`` to a line (:data:`SORTED_CALLS`). Not where it tracks changes."""
        if self.tracks:
            raise RuntimeError("the calls that ended are let go: the taker holds the state")
        return self._taken(lambda handle: self._lib.state(handle, part, group))

    def changes(self) -> tuple[bytes, bytes]:
        """What changed since this was last asked (or the state was taken,
        or kept: :meth:`kept`), then forgotten: the state's members but its
        calls, as JSON (the ``task`` and ``model`` only where a run started
        since, the ``checks`` only those added since), and the calls
        changed since, one JSON object in the order of the state's calls,
        each call there before only with what its steps change (``status``,
        ``ok``, ``cost``, ``receipt``, ``reason``). Where the rules track it."""
        head, _, calls = self._taken(self._lib.changes).partition(b"\n")
        return head, calls

    def kept(self) -> list[tuple[int, bytes, bytes]]:
        """The states to keep that the lines applied since this was last
        asked reached (see :meth:`.line_core.NativeCore.prove_apply`), in
        order: each one's seq and what changed up to it, as :meth:`changes`
        gives it."""
        parts = self._taken(self._lib.kept).split(b"\n")
        return [(int(parts[i]), parts[i + 1], parts[i + 2]) for i in range(0, len(parts) - 1, 3)]

    def _taken(self, fn: Any) -> bytes:
        assert self._handle is not None
        lib = self._lib
        got = fn(self._handle)
        try:
            return ctypes.string_at(lib.files_data(got), lib.files_len(got))
        finally:
            lib.free_files(got)

    def close(self) -> None:
        if self._handle is not None:
            self._lib.free(self._handle)
            self._handle = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # (at exit the library may be gone first)
            self.close()
