"""The members of an ``.eval`` log (a zip), read one at a time.

Inspect AI writes ``.eval`` logs as zip archives whose members are stored,
deflated, or (since 0.3.1xx) compressed with zstd (zip method 93). Python's
``zipfile`` reads the first two; a zstd member is read from its local header
and decompressed with ``zstandard`` (imported only when such a member is met:
Python 3.11 to 3.13 have no zstd of their own). Only the central directory is
read on open; a member's bytes are read when asked for, so a 100 MB log is
never held whole.
"""

from __future__ import annotations

import struct
import threading
import zipfile
import zlib
from pathlib import Path
from typing import Any

from replay_tui.core.errors import CannotRun

#: The zip method number zstd members carry (APPNOTE 4.4.5).
ZSTD = 93
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")
_LOCAL_MAGIC = 0x04034B50
#: A member larger than this, decompressed, is refused: far above real samples.
MAX_MEMBER_BYTES = 2 << 30


def is_zip(path: Path) -> bool:
    """Whether ``path`` starts like a zip archive."""
    try:
        with path.open("rb") as fh:
            return fh.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def _zstd_decompress(data: bytes, size: int, name: str) -> bytes:
    try:
        import zstandard  # only for zstd members: most Pythons here have no zstd
    except ImportError:  # pragma: no cover - a dependency, installed with us
        raise CannotRun(
            f"{name}: a zstd-compressed member, and the zstandard package is not installed"
        ) from None
    try:
        out = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    except zstandard.ZstdError as exc:
        raise CannotRun(f"{name}: its zstd data is damaged ({exc})") from None
    if size and len(out) != size:
        raise CannotRun(f"{name}: {len(out)} bytes decompressed where the zip says {size}")
    return out


class Archive:
    """An ``.eval`` zip, its member list read on open (one line if damaged)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise CannotRun(f"{path}: not a readable Inspect log: a damaged zip ({exc})") from None
        self._infos = {info.filename: info for info in self._zip.infolist()}

    def names(self) -> list[str]:
        """The members, in the archive's order."""
        return list(self._infos)

    def has(self, name: str) -> bool:
        return name in self._infos

    def size(self, name: str) -> int:
        """The member's size decompressed (as its entry says)."""
        return self._infos[name].file_size

    def read(self, name: str) -> bytes:
        """One member's bytes; :class:`CannotRun` naming it if it is
        missing or cannot be read."""
        info = self._infos.get(name)
        where = f"{self.path}: member {name}"
        if info is None:
            raise CannotRun(f"{where} is missing")
        if info.file_size > MAX_MEMBER_BYTES:
            raise CannotRun(f"{where} is over {MAX_MEMBER_BYTES >> 30} GiB")
        with self._lock:
            try:
                if info.compress_type != ZSTD:
                    return self._zip.read(name)
                raw = self._raw(info)
            except (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error) as exc:
                raise CannotRun(f"{where} cannot be read: {exc}") from None
            except NotImplementedError as exc:
                raise CannotRun(f"{where}: {exc}") from None
        return _zstd_decompress(raw, info.file_size, where)

    def _raw(self, info: zipfile.ZipInfo) -> bytes:
        """A member's compressed bytes, found from its local header."""
        fp: Any = self._zip.fp
        if fp is None:
            raise ValueError("the archive is closed")
        fp.seek(info.header_offset)
        head = fp.read(_LOCAL_HEADER.size)
        if len(head) < _LOCAL_HEADER.size or _LOCAL_HEADER.unpack(head)[0] != _LOCAL_MAGIC:
            raise zipfile.BadZipFile("no local header where the directory says")
        fields = _LOCAL_HEADER.unpack(head)
        fp.seek(info.header_offset + _LOCAL_HEADER.size + fields[9] + fields[10])
        raw: bytes = fp.read(info.compress_size)
        if len(raw) < info.compress_size:
            raise zipfile.BadZipFile("the member is cut short")
        return raw

    def close(self) -> None:
        self._zip.close()
