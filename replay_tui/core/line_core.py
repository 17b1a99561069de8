"""The line core: which path proves chunks of ledger lines regular.

Two paths give the same answers (``tests/engine/test_line_core.py`` proves
it on generated and damaged ledgers):

- **native**: a small library in Rust (``native/`` in the source tree, no
  dependency) that reads a chunk's bytes once and proves the longest run of
  regular lines, with no Python object made. It is called through ctypes,
  which lets go of the interpreter's lock for the call.
- **python**: :func:`replay_tui.formats.chunks.regular_events`, a few calls
  that each walk the chunk in C. Always there.

The native library is optional and found by itself: ``REPLAY_TUI_LINE_CORE``
names its file, or it is looked for beside this package (an install that
built it) and in the source tree's ``native/target/release/`` (after
``cargo build --release --manifest-path native/Cargo.toml``). Without it,
or with ``REPLAY_TUI_LINE_CORE=python``, the Python path is taken.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from array import array
from pathlib import Path

from replay_tui.core.native_rules import NativeRules, RulesLibrary

_ENV = "REPLAY_TUI_LINE_CORE"
_INTERFACE = 7
_FILE = {"darwin": "libreplay_tui_line_core.dylib", "win32": "replay_tui_line_core.dll"}.get(
    sys.platform, "libreplay_tui_line_core.so"
)
_PACKAGE = Path(__file__).resolve().parent.parent
#: How to build it, said where the Python path is taken.
BUILD_HINT = "cargo build --release --manifest-path native/Cargo.toml"
#: Why the lines after a proof are not proven (``Proof.why``): the native
#: rules leave the next line to the Python rules (see :meth:`NativeCore.prove_apply`).
RULES = 14


class Proof:
    """What the native core proved of lines from a byte offset."""

    __slots__ = ("backs", "end", "lines", "pins", "seconds", "times", "why")

    def __init__(
        self,
        lines: int,
        end: int,
        times: bool,
        backs: list[int],
        why: int,
        pins: list[int],
        seconds: array[float] | None = None,
    ) -> None:
        #: How many lines, from the offset, are regular.
        self.lines = lines
        #: The byte offset where they end (the next line's start).
        self.end = end
        #: Each has a ``ts`` (else none has).
        self.times = times
        #: Indexes (from the first) whose ``ts`` text is earlier than the line before's.
        self.backs = backs
        #: Why the line after them is not proven (a code, for tests).
        self.why = why
        #: The lines that pin a receipt, each as its index (from the first)
        #: and where its call id is in the bytes: index, start, end, ...
        self.pins = pins
        #: Each line's ``ts`` in seconds, as ``ts_seconds`` reads it (where
        #: asked for and the lines have one; else None).
        self.seconds = seconds

    @classmethod
    def of(
        cls,
        proven: int,
        out: array[int],
        backs: array[int],
        pins: array[int],
        seconds: array[float] | None = None,
    ) -> Proof:
        """The proof the core wrote: ``out``'s six slots, and the arrays
        (``seconds``: where asked for; kept where the lines had a ``ts``)."""
        return cls(
            proven,
            out[1],
            out[2] == 1,
            backs[: out[3]].tolist(),
            out[4],
            pins[: 3 * out[5]].tolist(),
            seconds[:proven] if seconds is not None and out[2] == 1 and proven else None,
        )


class NativeCore:
    """The native library, loaded."""

    name = "native"

    def __init__(self, path: Path) -> None:
        lib = ctypes.CDLL(str(path))  # CDLL: the interpreter's lock is let go for each call
        if lib.rtlc_version() != _INTERFACE:
            raise OSError(
                f"{path} is interface {lib.rtlc_version()}, not {_INTERFACE}: "
                f"a build of other sources; build it again ({BUILD_HINT})"
            )
        prove = lib.rtlc_prove
        prove.restype = ctypes.c_int64
        prove.argtypes = [
            ctypes.c_char_p,  # buf
            ctypes.c_size_t,  # len
            ctypes.c_size_t,  # start
            ctypes.c_int64,  # first_seq
            ctypes.c_char_p,  # run_id
            ctypes.c_ssize_t,  # run_id_len (< 0: not known)
            ctypes.c_char_p,  # kinds, each followed by \n
            ctypes.c_size_t,  # kinds_len
            ctypes.c_size_t,  # max_depth
            ctypes.c_size_t,  # max_lines
            ctypes.c_size_t,  # max_len (0: none)
            ctypes.c_void_p,  # backs (u32 * max_lines)
            ctypes.c_void_p,  # pins (i64 * 3 * max_lines)
            ctypes.c_void_p,  # out (i64 * 6)
            ctypes.c_void_p,  # seconds (f64 * max_lines, or null: not asked for)
        ]
        self._prove = prove
        read = lib.rtlc_read_files
        read.restype = ctypes.c_void_p
        read.argtypes = [
            ctypes.c_int,  # dir_fd
            ctypes.c_char_p,  # names, each followed by \n
            ctypes.c_size_t,  # names_len
            ctypes.c_uint64,  # max_size
            ctypes.c_void_p,  # meta (i64 * 2 a name)
        ]
        self._read = read
        for name, restype in (
            ("rtlc_files_data", ctypes.c_void_p),
            ("rtlc_files_len", ctypes.c_size_t),
        ):
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = [ctypes.c_void_p]
        self._files_data = lib.rtlc_files_data
        self._files_len = lib.rtlc_files_len
        self._free = lib.rtlc_free_files
        self._free.restype = None
        self._free.argtypes = [ctypes.c_void_p]
        #: The built-in ``agent_run`` rules, native (:mod:`replay_tui.core.native_rules`).
        self.rules = RulesLibrary(lib, list(prove.argtypes))
        self.path = path
        self._kinds: dict[frozenset[str], bytes] = {}
        self._scratch = threading.local()

    def prove(
        self,
        buf: bytes,
        start: int,
        *,
        first_seq: int,
        run_id: str | None,
        kinds: frozenset[str],
        max_depth: int,
        max_lines: int,
        max_len: int = 0,
        seconds: bool = False,
    ) -> Proof:
        """The regular lines of ``buf`` (lines each ending in ``\\n``) from
        byte ``start`` (``seconds``: with each one's ``ts`` in seconds): see
        ``native/src/lib.rs``."""
        backs, pins, out, times = self._room(max_lines)
        asked = self._asked(buf, start, first_seq, run_id, kinds, max_depth, max_lines, max_len)
        proven = self._prove(
            *asked,
            backs.buffer_info()[0],
            pins.buffer_info()[0],
            out.buffer_info()[0],
            times.buffer_info()[0] if seconds else None,
        )
        return Proof.of(int(proven), out, backs, pins, times if seconds else None)

    def prove_apply(
        self,
        rules: NativeRules,
        buf: bytes,
        start: int,
        *,
        first_seq: int,
        run_id: str | None,
        kinds: frozenset[str],
        max_depth: int,
        max_lines: int,
        max_len: int,
        receipts_fd: int,
        max_size: int,
        seconds: bool = False,
        calls: bool = False,
        keep_at: int = 0,
        keep_every: int = 0,
    ) -> tuple[Proof, list[str], list[int], array[int] | None]:
        """:meth:`prove`, each line applied by the native ``rules`` as it is
        proven: a line they leave to the Python rules ends the lines proven
        (:data:`RULES`). Receipts are read from the folder open as
        ``receipts_fd`` (-1: none, each ``tool_finished`` is theirs), at most
        ``max_size`` bytes. Returns the proof (with each line's ``ts`` in
        seconds where ``seconds``), the call ids the lines name (in the
        order first named) and, for those a line pins a receipt with, each
        one's place in that list and the index of the last such line
        (place, index, ...); and where ``calls``, each line's call as the
        rules' ``call_of`` says: -1 none, n its call id's place in that
        list, or -2 - n where the line ends call n in failure. Where
        ``keep_every`` is over 0, the rules note what changed up to seq
        ``keep_at`` and each ``keep_every`` lines after it
        (:meth:`.NativeRules.kept`)."""
        backs, pins, out, times = self._room(max_lines)
        ids, id_pins, noted, line_calls = self._noted_room(len(buf) - start, max_lines)
        proven = self.rules.prove_apply(
            rules.handle,
            *self._asked(buf, start, first_seq, run_id, kinds, max_depth, max_lines, max_len),
            backs.buffer_info()[0],
            pins.buffer_info()[0],
            out.buffer_info()[0],
            times.buffer_info()[0] if seconds else None,
            receipts_fd,
            max_size,
            ids.buffer_info()[0],
            id_pins.buffer_info()[0],
            noted.buffer_info()[0],
            line_calls.buffer_info()[0] if calls else None,
            keep_at,
            keep_every,
        )
        proven = int(proven)
        proof = Proof.of(proven, out, backs, pins, times if seconds else None)
        names = ids[: noted[0]].tobytes().decode().split("\n")[:-1]
        said = line_calls[:proven] if calls else None
        return proof, names, id_pins[: 2 * noted[1]].tolist(), said

    def _noted_room(
        self, size: int, lines: int
    ) -> tuple[array[int], array[int], array[int], array[int]]:
        """This thread's arrays for the call ids :meth:`prove_apply` notes
        (``size`` bytes, ``lines`` lines): kept and grown, since the lines
        the core does not prove ask again after each (one the size of the
        chunk each time was quadratic in them)."""
        room: tuple[array[int], array[int], array[int], array[int]] | None = getattr(
            self._scratch, "noted", None
        )
        if room is None or len(room[0]) < size or len(room[3]) < lines:
            most = max(lines, 1, len(room[3]) if room else 0)
            room = (
                array("B", bytes(max(size, 1, len(room[0]) if room else 0))),
                array("q", bytes(16 * most)),
                array("q", bytes(16)),
                array("i", bytes(4 * most)),
            )
            self._scratch.noted = room
        return room

    def _asked(
        self,
        buf: bytes,
        start: int,
        first_seq: int,
        run_id: str | None,
        kinds: frozenset[str],
        max_depth: int,
        max_lines: int,
        max_len: int,
    ) -> tuple[object, ...]:
        """The first arguments of ``rtlc_prove`` (and ``rtar_prove_apply``
        after its rules): what lines to prove, before where to write."""
        blob = self._kinds.get(kinds)
        if blob is None:
            blob = self._kinds[kinds] = b"".join(k.encode() + b"\n" for k in sorted(kinds))
        run = run_id.encode() if run_id is not None else b""
        run_len = len(run) if run_id is not None else -1
        lines = (blob, len(blob), max_depth, max_lines, max_len)
        return (buf, len(buf), start, first_seq, run, run_len, *lines)

    def _room(self, lines: int) -> tuple[array[int], array[int], array[int], array[float]]:
        """This thread's arrays for what :meth:`prove` writes, room for
        ``lines`` lines: kept, since a chunk with many lines the core does
        not prove asks once after each (a new chunk-sized pair each time
        was quadratic in them)."""
        room: tuple[array[int], array[int], array[int], array[float]] | None = getattr(
            self._scratch, "room", None
        )
        if room is None or len(room[0]) < lines:
            size = max(lines, 1)
            room = (
                array("I", bytes(4 * size)),
                array("q", bytes(24 * size)),
                array("q", bytes(48)),
                array("d", bytes(8 * size)),
            )
            self._scratch.room = room
        return room

    def read_files(self, dir_fd: int, names: list[str], max_size: int) -> list[bytes | None] | None:
        """The bytes of each regular file ``names`` in the folder open as
        ``dir_fd`` (never through a symlink, at most ``max_size`` bytes), or
        None for one that cannot be read so (its reader then says why); None
        where files cannot be read natively here."""
        if not names:
            return []
        blob = "".join(name + "\n" for name in names).encode()
        meta = array("q", bytes(16 * len(names)))
        files = self._read(dir_fd, blob, len(blob), max_size, meta.buffer_info()[0])
        if not files:
            return None
        try:
            data = ctypes.string_at(self._files_data(files), self._files_len(files))
        finally:
            self._free(files)
        return [
            data[at : at + size] if size >= 0 else None
            for size, at in zip(meta[::2], meta[1::2], strict=True)
        ]


def _find() -> tuple[NativeCore | None, str | None]:
    """The native core if there is one to take, and why a named one is not taken."""
    wanted = os.environ.get(_ENV, "")
    if wanted == "python":
        return None, None
    if wanted and wanted != "native":
        places = [Path(wanted)]
    else:
        places = [
            place / _FILE
            for place in (_PACKAGE / "core", _PACKAGE.parent / "native" / "target" / "release")
        ]
    problem = None
    for path in places:
        if path.is_file():
            try:
                return NativeCore(path), None
            except (OSError, AttributeError) as exc:  # another platform's build, or an old one
                problem = f"{path} does not load: {exc}"
    if wanted:
        return None, problem or f"{_ENV}={wanted}: no line core library there ({BUILD_HINT})"
    return None, problem  # one that was built but does not load is said too


#: The native core, or None: the Python path.
NATIVE, PROBLEM = _find()


def describe() -> str:
    """Which path proves lines, for ``--version`` and ``check --json``."""
    if NATIVE is not None:
        return f"native ({NATIVE.path})"
    if PROBLEM is not None:
        return f"python ({PROBLEM})"
    return "python"
