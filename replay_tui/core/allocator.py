"""Memory that an index frees as it grows goes back to the system.

The forward pass keeps its indexes as ``array`` buffers that grow by
reallocation (line offsets, the chain, checksums) and hash tables that are
rebuilt twice as large (the ids a session has seen). glibc serves a large
block from ``mmap`` only above a threshold that it raises each time such a
block is freed (up to 32 MiB); after the first tables are rebuilt, the
next buffers come from the heap, whose holes are never given back. On a
2 GB session that left ``check`` at 336 MB of resident memory where its
indexes hold 170 MB (the same check with the threshold fixed: 250 MB).

:func:`keep_big_blocks_mapped` fixes the threshold at 1 MiB, which also
stops it moving: index-sized blocks are mapped, and freeing or growing them
returns or remaps pages, while smaller blocks keep reusing the heap. At
glibc's own 128 KiB the same 2 GB check peaked at 250 MB but a 100 MB
events.jsonl checked 1.48x slower (every checkpoint and read buffer
mapped anew); at 8 MiB it peaked at 315 MB; at 1 MiB 247 MiB, the
events.jsonl 1.00-1.30x (two pairs). Elsewhere (macOS, musl) it does
nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import platform
from collections.abc import Iterator
from contextlib import contextmanager

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
THRESHOLD = 1 << 20  # index-sized blocks: mapped; smaller ones reuse the heap


def keep_big_blocks_mapped() -> bool:
    """Fix glibc's mmap threshold (see the module); whether it was set."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, THRESHOLD))
    except (OSError, AttributeError):
        return False


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector paused while objects that hold no cycles (JSON
    values, events) are made many at once: the collections they set off
    would only scan them again (a 40 MB state read back: 0.98 s, paused
    0.27 s; a chunk's events: 14% of ``check``)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
