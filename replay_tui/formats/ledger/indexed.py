"""The ledger file: an index of line offsets, lines read on demand.

Following Textualize/toolong's ``log_file.py``: we keep only the byte offset
where each line starts (8 bytes per event in an ``array``), read a line with
``os.pread`` when it is needed and keep a bounded LRU of parsed events. Memory
does not grow with the size of the lines, only with their count.

The ledger reads forward only: :meth:`Ledger.scan` yields the complete lines
appended since the last scan (a half-written last line waits for its newline),
so a growing file is never reread.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import threading
import zlib
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replay_tui.core import strict_json
from replay_tui.formats.envelope import Event, LineError, event_of, parse_line

if TYPE_CHECKING:
    from replay_tui.formats.sessions import SessionLines

UTF8_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 22  # 4 MiB reads: few syscalls, bounded memory
#: Lines read again together (a seek's span) in one system call, up to this many bytes.
_BULK_BYTES = 4 << 20
_PLUS_ONE = (1).__add__
_CACHE_LINE_LIMIT = 64 << 10  # the LRU keeps parsed lines up to 64 KiB: bounded by bytes too
#: A session's records are large (kilobytes, not an event's hundred bytes): the
#: LRU of a mapped ledger also keeps at most this many bytes of lines in all.
_CACHE_BYTES_MAPPED = 16 << 20
#: A line this long (a session's tool result of many MB) costs tens of ms to
#: parse, holding the interpreter lock: the forward pass keeps its own parse
#: of it, and so does the first reading of it, in a cache of its own.
BIG_LINE = 1 << 20
_BIG_CACHE_BYTES = 32 << 20  # two 12 MB results; at least the newest is kept


def sniff_encoding(head: bytes) -> str | None:
    """Name the encoding of a ledger that is not UTF-8, from its first bytes.

    UTF-16 is what PowerShell's ``>`` writes; people need to be told so.
    """
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    if head.startswith(b"\xff\xfe"):
        return "UTF-16 LE"
    if head.startswith(b"\xfe\xff"):
        return "UTF-16 BE"
    if len(head) >= 4 and head[1] == 0 and head[3] == 0 and head[0] != 0:
        return "UTF-16 LE"
    if len(head) >= 4 and head[0] == 0 and head[2] == 0 and head[1] != 0:
        return "UTF-16 BE"
    return None


def _first_difference(a: bytes, b: bytes) -> int:
    """The first index where ``a`` and ``b`` differ (or the shorter length)."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


class LedgerRewritten(Exception):
    """The file no longer extends what was read: it shrank or was replaced."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(f"ledger rewritten at byte {offset}: {reason}")
        self.offset = offset
        self.reason = reason


class Ledger:
    """Read-only, append-aware view of ``events.jsonl``.

    ``len(ledger)`` is the number of complete (newline-terminated) lines seen
    by the scans so far. Line numbers given to users are 1-based.
    """

    #: How the file on disk is compressed (``gzip``), if it is.
    compressed: str | None = None

    def __init__(
        self,
        path: Path,
        *,
        cache_size: int = 4096,
        may_be_missing: bool = False,
        mapping: SessionLines | None = None,
    ) -> None:
        self.path = path
        #: How a line of another tool's records becomes an event (a Claude
        #: Code or Codex session: see :mod:`replay_tui.formats.sessions`);
        #: None for envelope lines.
        self.mapping = mapping
        #: ``parse(raw, line, offset)``: a line as an event, or why it is not one.
        self.parse = mapping.parse if mapping is not None else parse_line
        #: For a mapped ledger: ``validated(index, raw)`` says the line is the
        #: very one strict replay accepted (its checksum), so showing it again
        #: needs no careful JSON checks (a session's 12 MB result line is parsed,
        #: not checked again each time it is shown). Set by the replay.
        self.validated: Callable[[int, bytes], bool] | None = None
        self._fd = -1
        self._inode: tuple[int, int] | None = None
        #: Not None when the file is not UTF-8 (e.g. "UTF-16 LE").
        self.foreign_encoding: str | None = None
        self.has_bom = False
        self._sniffed = False
        # _ends[i] is the offset just past line i's newline; _ends[-1] of an
        # empty index is where the first line starts.
        self._ends = array("Q", [0])
        # sha256 of exactly the bytes [0, indexed_end): extended as lines are
        # indexed, so events_sha256 costs nothing more and a rewrite of what
        # was read can be proven.
        self._prefix_hash = hashlib.sha256()
        self._hashed_end = 0  # _prefix_hash covers bytes [0, _hashed_end)
        # the two change together; a verifier in another thread reads both
        self._hash_lock = threading.Lock()
        self._cache: OrderedDict[int, Event | LineError] = OrderedDict()
        self._cache_size = cache_size
        #: Sizes of the cached lines and their sum (a mapped ledger only).
        self._cached_sizes: dict[int, int] | None = {} if mapping is not None else None
        self._cached_bytes = 0
        self._cache_lock = threading.Lock()  # the app reads while a worker scans
        #: Lines of BIG_LINE bytes or more, parsed: index -> (bytes, parse).
        self._big: OrderedDict[int, tuple[int, Event]] = OrderedDict()
        self._big_bytes = 0
        self._head = b""  # first bytes read, to notice a rewrite
        self._guard = b""  # last bytes of the last complete line, likewise
        if not self._open() and not may_be_missing:
            raise FileNotFoundError(f"{path}: no such file")

    def _open(self) -> bool:
        """Open the file if it exists now (it may be created later when following)."""
        if self._fd >= 0:
            return True
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            return False
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise IsADirectoryError(f"{self.path} is not a regular file")
        self._fd = fd
        self._inode = (st.st_dev, st.st_ino)
        return True

    @property
    def exists(self) -> bool:
        return self._fd >= 0

    def _sniff(self) -> bool:
        """Look at the first bytes once there are enough of them (BOM, UTF-16)."""
        if self._sniffed:
            return True
        head = os.pread(self._fd, 4, 0)
        if len(head) < 4 and b"\n" not in head and UTF8_BOM.startswith(head):
            return False  # too little written yet to tell
        self._sniffed = True
        self.foreign_encoding = sniff_encoding(head)
        if head.startswith(UTF8_BOM):
            self.has_bom = True
            self._ends[0] = len(UTF8_BOM)
            with self._hash_lock:
                self._prefix_hash.update(UTF8_BOM)
                self._hashed_end = len(UTF8_BOM)
        return True

    # -- size and lines -------------------------------------------------
    def __len__(self) -> int:
        return len(self._ends) - 1

    @property
    def indexed_end(self) -> int:
        """Byte offset just past the last complete line."""
        return self._ends[-1]

    def file_size(self) -> int:
        return os.fstat(self._fd).st_size if self._fd >= 0 else 0

    def tail_size(self) -> int:
        """Bytes after the last newline: a line still being written, or cut."""
        return max(0, self.file_size() - self.indexed_end)

    def tail(self) -> bytes:
        if self._fd < 0:
            return b""
        return os.pread(self._fd, self.tail_size(), self.indexed_end)

    def line_span(self, index: int) -> tuple[int, int]:
        """(start, end) of line ``index`` (0-based), end excluding the newline."""
        end = self._ends[index + 1] - 1
        return self._ends[index], end

    def line_offsets(self, index: int, count: int) -> array[int]:
        """Where lines ``index`` .. ``index + count - 1`` start."""
        return self._ends[index : index + count]

    def raw_line(self, index: int) -> bytes:
        """The bytes of line ``index`` without its ``\\n`` (or ``\\r\\n``)."""
        start, end = self.line_span(index)
        data = os.pread(self._fd, end - start, start)
        return data[:-1] if data.endswith(b"\r") else data

    def raw_lines(self, index: int, count: int) -> list[bytes]:
        """The bytes of lines ``index`` .. ``index + count - 1``, as
        :meth:`raw_line` gives each, read at once (one system call, where
        they are at most :data:`_BULK_BYTES` together)."""
        if count <= 0:
            return []
        start, end = self._ends[index], self._ends[index + count] - 1
        if end - start > _BULK_BYTES:
            return [self.raw_line(i) for i in range(index, index + count)]
        data = os.pread(self._fd, end - start, start)
        lines = data.split(b"\n")
        if len(lines) != count:  # the file changed under the index: each line as it is now
            return [self.raw_line(i) for i in range(index, index + count)]
        if b"\r" in data:
            lines = [raw[:-1] if raw.endswith(b"\r") else raw for raw in lines]
        return lines

    def event(self, index: int) -> Event | LineError:
        """Parsed line ``index``; cached in a bounded LRU. Treat as read-only."""
        with self._cache_lock:
            hit = self._cache.get(index)
            if hit is not None:
                self._cache.move_to_end(index)
                return hit
            big = self._big.get(index)
            if big is not None:
                self._big.move_to_end(index)
                return big[1]
        raw = self.raw_line(index)
        if self.validated is not None and self.mapping is not None and self.validated(index, raw):
            parsed: Event | LineError = self.mapping.reread(raw, index + 1, self._ends[index])
        else:
            parsed = self.parse(raw, index + 1, self._ends[index])
        if len(raw) >= BIG_LINE and isinstance(parsed, Event):
            self.keep_big(index, len(raw), parsed)
        if len(raw) <= _CACHE_LINE_LIMIT:  # longer ones only in the cache of big lines
            with self._cache_lock:
                self._cache[index] = parsed
                sizes = self._cached_sizes
                if sizes is not None:
                    self._cached_bytes += len(raw) - sizes.get(index, 0)
                    sizes[index] = len(raw)
                    while self._cached_bytes > _CACHE_BYTES_MAPPED and len(self._cache) > 1:
                        old, _ = self._cache.popitem(last=False)
                        self._cached_bytes -= sizes.pop(old, 0)
                if len(self._cache) > self._cache_size:
                    old, _ = self._cache.popitem(last=False)
                    if sizes is not None:
                        self._cached_bytes -= sizes.pop(old, 0)
        return parsed

    def artifact(self, line: int) -> str:
        """Where line ``line`` (1-based) is, as error reports name it: the
        ledger's own file name (a customer's ``prod-7731.jsonl`` is not
        ``events.jsonl``)."""
        return f"{self.path.name}:{line}"

    def keep_big(self, index: int, size: int, parsed: Event) -> None:
        """Keep the parse of line ``index`` (``size`` bytes, BIG_LINE or more),
        never handed to rules as it is (:meth:`kept_big` gives a copy)."""
        with self._cache_lock:
            old = self._big.pop(index, None)
            if old is not None:
                self._big_bytes -= old[0]
            self._big[index] = (size, parsed)
            self._big_bytes += size
            while self._big_bytes > _BIG_CACHE_BYTES and len(self._big) > 1:
                _, (gone, _) = self._big.popitem(last=False)
                self._big_bytes -= gone

    def kept_big(self, index: int) -> Event | None:
        """A copy of line ``index``'s kept parse, for code that may change it."""
        with self._cache_lock:
            big = self._big.get(index)
        return big[1].detached() if big is not None else None

    def valid_again(self, index: int, raws: list[bytes], crcs: array[int]) -> list[Event] | None:
        """The events of lines ``index``.. (``raws``, as :meth:`raw_lines`
        read them), judged valid before with these crc32s (``crcs``, one a
        line from line 0), made at once: their crc32s compared in C, one
        scan of them all for an integer past 64 bits, orjson mapped over
        them. None if one is not as it was judged, or its parse is kept
        big: each line then, alone, says which."""
        count = len(raws)
        if (
            index + count > len(crcs)
            or array("I", map(zlib.crc32, raws)) != crcs[index : index + count]
        ):
            return None
        with self._cache_lock:
            if any(index <= kept < index + count for kept in self._big):
                return None
        objs = strict_json.loads_written_many(raws)
        lines = range(index + 1, index + count + 1)
        return list(map(event_of, objs, lines, self._ends[index : index + count]))

    def fresh_event(self, index: int) -> Event | LineError:
        """A newly parsed copy, safe to hand to code that might mutate it."""
        return self.parse(self.raw_line(index), index + 1, self._ends[index])

    # -- growing --------------------------------------------------------
    def check_unchanged(self) -> None:
        """Raise :class:`LedgerRewritten` if the history already read changed.

        Cheap checks for every append: a new inode at the path, a file shorter
        than what was read, different first bytes, different last bytes of
        the last complete line. :meth:`verify_prefix` is the full proof.
        """
        if self._fd < 0:
            return
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            raise LedgerRewritten(0, "the file was removed") from None
        if (st.st_dev, st.st_ino) != self._inode:
            self._adopt_replacement()
            return
        if st.st_size < self.indexed_end:
            raise LedgerRewritten(st.st_size, "the file shrank")
        if self._head:
            now = os.pread(self._fd, len(self._head), 0)
            if now != self._head:
                raise LedgerRewritten(
                    _first_difference(self._head, now), "bytes already read changed"
                )
        if self._guard:
            at = self.indexed_end - len(self._guard)
            now = os.pread(self._fd, len(self._guard), at)
            if now != self._guard:
                where = at + _first_difference(self._guard, now)
                raise LedgerRewritten(where, "bytes already read changed")

    def _adopt_replacement(self) -> None:
        """A new file at the path (log shippers and rsync write a temporary
        file and rename it over the ledger): if it begins with exactly the
        bytes already read, it is the same history grown, and reading goes on
        in it; else :class:`LedgerRewritten` names the first byte that differs
        (the old file is still readable through the descriptor held)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise LedgerRewritten(0, "the file was removed") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise LedgerRewritten(0, "the file was replaced by something not a regular file")
            pos, end = 0, self.indexed_end
            while pos < end:
                want = min(_CHUNK, end - pos)
                old = os.pread(self._fd, want, pos)
                new = os.pread(fd, want, pos)
                if old != new:
                    raise LedgerRewritten(
                        pos + _first_difference(old, new),
                        "the file was replaced by another history",
                    )
                if not old:
                    break
                pos += len(old)
        except BaseException:
            os.close(fd)
            raise
        os.close(self._fd)
        self._fd = fd
        self._inode = (st.st_dev, st.st_ino)

    def verify_prefix(self) -> None:
        """Rehash every byte already read; raise :class:`LedgerRewritten` if any changed.

        O(size of the file): for when the file was modified without growing.
        """
        self.check_unchanged()
        if self.prefix_changed():
            # where: the caller may know the lines' checksums (Replay.locate_rewrite)
            raise LedgerRewritten(0, "bytes already read changed")

    def _read_so_far(self) -> tuple[int, Any]:
        """(end, sha256 of bytes [0, end)) of what was read, taken together."""
        with self._hash_lock:
            return self._hashed_end, self._prefix_hash.copy()

    def prefix_changed(self) -> bool:
        """True if any byte already read differs now (or is gone).

        Rehashes what was read: O(bytes read), about a second for hundreds
        of MB, so callers run it in a worker. Safe beside a scan in another
        thread: it checks the prefix as read when it starts.
        """
        if self._fd < 0:
            return False
        end, recorded = self._read_so_far()
        hasher = hashlib.sha256()
        pos = 0
        while pos < end:
            chunk = os.pread(self._fd, min(_CHUNK, end - pos), pos)
            if not chunk:
                return True  # shorter than what was read
            hasher.update(chunk)
            pos += len(chunk)
        return bool(hasher.digest() != recorded.digest())

    def scan(self) -> Iterator[tuple[int, bytes]]:
        """Yield ``(index, raw_line)`` for each complete line not yet scanned
        (:meth:`scan_chunks`, a line at a time)."""
        for first, lines in self.scan_chunks():
            yield from enumerate(lines, first)

    def scan_chunks(self) -> Iterator[tuple[int, list[bytes]]]:
        """Yield ``(first_index, raw_lines)`` for the complete lines not yet
        scanned, a read (4 MiB) at a time, each chunk indexed before it is
        given: the forward pass checks a chunk in a few calls.

        Reads from the end of the last complete line, so each byte is read
        once and a half-written last line is left for the next scan.
        """
        if not self._open() or not self._sniff():
            return
        pos = self.indexed_end
        pieces: list[bytes] = []
        ends = self._ends
        try:
            while True:
                chunk = os.pread(self._fd, _CHUNK, pos)
                if not chunk:
                    break
                pos += len(chunk)
                if b"\n" not in chunk:
                    pieces.append(chunk)
                    continue
                if pieces:
                    pieces.append(chunk)
                    chunk = b"".join(pieces)
                    pieces = []
                lines = chunk.split(b"\n")
                carry = lines.pop()
                if carry:
                    pieces.append(carry)
                first = len(ends) - 1
                # each line's end, in C: the last end plus each length and its newline
                offsets = accumulate(map(_PLUS_ONE, map(len, lines)), initial=ends[-1])
                next(offsets)
                ends.extend(offsets)
                if b"\r" in chunk:
                    lines = [raw[:-1] if raw.endswith(b"\r") else raw for raw in lines]
                with self._hash_lock:
                    self._prefix_hash.update(memoryview(chunk)[: len(chunk) - len(carry)])
                    self._hashed_end = ends[-1]
                yield first, lines
        finally:
            # a consumer that stopped early leaves lines indexed but not hashed
            # (nothing to do once the ledger is closed: a replay closed while
            # its pass was held, the scan let go of later)
            if self._fd >= 0:
                with contextlib.suppress(OSError):  # closed meanwhile
                    self._hash_through(ends[-1])
                    self._remember_edges()

    def _hash_through(self, end: int) -> None:
        while self._hashed_end < end:
            at = self._hashed_end
            chunk = os.pread(self._fd, min(_CHUNK, end - at), at)
            if not chunk:
                break
            with self._hash_lock:
                self._prefix_hash.update(chunk)
                self._hashed_end = at + len(chunk)

    def _remember_edges(self) -> None:
        end = self.indexed_end
        if end and len(self._head) < 64:
            self._head = os.pread(self._fd, min(64, end), 0)
        if end:
            n = min(64, end)
            self._guard = os.pread(self._fd, n, end - n)

    def stop_growing(self) -> None:
        """From now on the file is judged complete (a converted ledger of a
        growing source reads the source's unterminated last line then)."""

    def accept_tail(self) -> None:
        """Index an unterminated last line as a line (the file is complete).

        Only for a finished ledger: its end is recorded one past the file's
        end, as if the missing newline were there.
        """
        size = self.file_size()
        if size > self.indexed_end:
            self._hash_through(size)
            self._ends.append(size + 1)

    def sha256(self) -> str:
        """sha256 of the whole file as it is now (the read prefix plus the rest)."""
        pos, hasher = self._read_so_far()
        while self._fd >= 0:
            chunk = os.pread(self._fd, _CHUNK, pos)
            if not chunk:
                break
            hasher.update(chunk)
            pos += len(chunk)
        return str(hasher.hexdigest())

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
