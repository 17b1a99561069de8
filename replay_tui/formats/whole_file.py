"""Reading a source that is one JSON document (a Temporal history, a
trace export) whole, once: a regular file, within a reader's limit, and
every failure as one line."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from replay_tui.core.errors import CannotRun

#: A document read whole: a reader's limit, far above real ones.
MAX_DOCUMENT_BYTES = 2 << 30


def open_document(path: Path, limit: int = MAX_DOCUMENT_BYTES) -> tuple[int, int]:
    """A descriptor of ``path`` open for reading, and its size; the caller
    closes it. :class:`CannotRun` if it is not a regular file, is over
    ``limit``, or cannot be opened (never blocks on a FIFO)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise CannotRun(f"{path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CannotRun(f"{path}: not a regular file")
        if st.st_size > limit:
            raise CannotRun(f"{path}: over {limit >> 30} GiB, more than this reader takes")
    except OSError as exc:
        os.close(fd)
        raise CannotRun(f"{path}: {exc.strerror or exc}") from None
    except CannotRun:
        os.close(fd)
        raise
    return fd, st.st_size


def read_whole(path: Path, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """``path``'s bytes; :class:`CannotRun` as :func:`open_document` says,
    or if it cannot be read."""
    fd, _ = open_document(path, limit)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 24):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise CannotRun(f"{path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
