"""Ledgers converted from another file as they are scanned: a Temporal
history or an OTel export (:class:`ConvertedLedger`), a compressed ledger
(:class:`GzipLedger`). Each writes envelope lines into an unlinked temporary
file that is indexed and read like ``events.jsonl`` (:mod:`.indexed`)."""

from __future__ import annotations

import gzip
import os
import tempfile
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from replay_tui.formats.ledger.indexed import Ledger

if TYPE_CHECKING:
    from replay_tui.formats.sessions import SessionLines


class ConvertedLedger(Ledger):
    """A ledger converted from another format (a Temporal history).

    ``lines`` yields chunks of envelope lines; they are appended to an
    unlinked temporary file as the ledger is scanned, and indexed and read
    exactly like ``events.jsonl``. So the first events are on screen while
    the rest are still being converted, and once converted, memory holds only
    the offsets. The source was read once and is complete: nothing to follow
    or re-check. Errors point at the source's event number; ``sha256`` is
    the source file's digest.
    """

    def __init__(
        self,
        source: Path,
        lines: Iterator[bytes],
        source_sha256: str,
        *,
        total: int | None = None,
        cache_size: int = 4096,
        mapping: SessionLines | None = None,
    ) -> None:
        self._lines: Iterator[bytes] | None = lines
        self._source_sha256 = source_sha256
        self._total = total  # events the source holds, for progress
        self._written = 0
        self._converted = 0
        self._convert_lock = threading.Lock()
        with tempfile.TemporaryFile(prefix="replay-tui-converted-") as tmp:
            self._given_fd = os.dup(tmp.fileno())  # lives on, unlinked, while open
        super().__init__(source, cache_size=cache_size, mapping=mapping)

    def _open(self) -> bool:
        if self._fd < 0 and self._given_fd >= 0:
            self._fd, self._given_fd = self._given_fd, -1
            st = os.fstat(self._fd)
            self._inode = (st.st_dev, st.st_ino)
        return self._fd >= 0

    def _convert_more(self) -> bool:
        """Append the next chunk of converted lines; False when all are done."""
        with self._convert_lock:
            if self._lines is None:
                return False
            chunk = next(self._lines, None)
            if chunk is None:
                self._lines = None
                return False
            self._write(chunk)
            return True

    def _write(self, chunk: bytes) -> None:
        """Append converted lines (under the convert lock)."""
        os.pwrite(self._fd, chunk, self._written)
        self._written += len(chunk)
        self._converted += chunk.count(b"\n")

    @property
    def converting(self) -> bool:
        return self._lines is not None

    def scan_chunks(self) -> Iterator[tuple[int, list[bytes]]]:
        yield from super().scan_chunks()  # what was converted but not yet scanned
        while self._convert_more():
            yield from super().scan_chunks()

    def file_size(self) -> int:
        """The converted file's size once done; until then an estimate from
        the share of events converted (for progress)."""
        if self._lines is None or not self._converted or not self._total:
            return self._written
        return max(self._written, self._written * self._total // self._converted)

    def tail_size(self) -> int:
        """Bytes written past the last scanned line (never the estimate)."""
        return max(0, self._written - self.indexed_end)

    def check_unchanged(self) -> None:
        return None

    def verify_prefix(self) -> None:
        return None

    def prefix_changed(self) -> bool:
        return False  # read once, complete: never followed

    def sha256(self) -> str:
        return self._source_sha256

    def artifact(self, line: int) -> str:
        return f"{self.path.name}: event {line}"

    def close(self) -> None:
        with self._convert_lock:
            self._lines = None
        if self._given_fd >= 0:
            os.close(self._given_fd)
            self._given_fd = -1
        super().close()


GZIP_MAGIC = b"\x1f\x8b"


class GzipLedger(ConvertedLedger):
    """A compressed ledger (``events.jsonl.gz``, what support is often sent),
    decompressed once, as it is scanned, into an unlinked temporary file that
    is indexed and read like ``events.jsonl``. Errors name the ``.gz`` file and
    its line; ``sha256`` is that of the decompressed ledger, which is what the
    events are."""

    compressed = "gzip"

    def __init__(self, source: Path, *, cache_size: int = 4096) -> None:
        super().__init__(source, _gunzip(source), "", cache_size=cache_size)

    def sha256(self) -> str:
        return Ledger.sha256(self)

    def artifact(self, line: int) -> str:
        return Ledger.artifact(self, line)


def _gunzip(path: Path) -> Iterator[bytes]:
    """The decompressed bytes of ``path`` in 1 MiB pieces; a damaged file
    is a one-line :class:`~replay_tui.core.errors.CannotRun`, not a traceback."""
    from replay_tui.core.errors import CannotRun

    try:
        with gzip.open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                yield chunk
    except (OSError, EOFError, zlib.error) as exc:
        raise CannotRun(f"{path.name}: not a readable gzip file ({exc})") from None
