"""Recorded results of external calls: ``<run>/receipts/<call_id>.json``.

Replay never calls a tool again; it reads what the tool returned. A receipt
path is only ever built from a call_id that passed :func:`call_id_problem`,
and files are opened relative to the receipts folder with ``O_NOFOLLOW``, so
nothing outside ``<run>/receipts/`` is ever read (spec section 3).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay_tui.core import strict_json
from replay_tui.core.errors import RuleViolation

CALL_ID_PATTERN = re.compile(r"[A-Za-z0-9._:-]{1,128}\Z")
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # never hang on a FIFO planted as a receipt
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
MAX_RECEIPT_BYTES = 64 << 20
_CACHE_RECEIPT_LIMIT = 1 << 20


def call_id_problem(value: Any) -> str | None:
    """Why ``value`` is not a valid call_id, or None if it is."""
    if not isinstance(value, str):
        return f"call_id must be a string, got {type(value).__name__}"
    if not CALL_ID_PATTERN.match(value):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"call_id {shown!r} is not 1-128 characters of [A-Za-z0-9._:-]"
    if value.startswith("."):
        return f"call_id {value!r} starts with '.'"
    return None


@dataclass(frozen=True, slots=True)
class Receipt:
    """One receipt as read from disk: its bytes' digest and its JSON."""

    call_id: str
    name: str  # "receipts/<call_id>.json", relative to the run
    size: int
    sha256: str
    data: dict[str, Any] | None  # None when the bytes are not a JSON object
    raw: bytes
    problem: str | None = None  # why data is None


@dataclass(frozen=True, slots=True)
class ReceiptProblem:
    """Why a receipt could not be used; ``code`` is a spec error code."""

    code: str
    message: str
    name: str
    absent: bool = False  # the file does not exist (yet): worth waiting for when live


class ReceiptPending(Exception):
    """A receipt that may still be written (raised only when asked to wait)."""

    def __init__(self, call_id: str) -> None:
        super().__init__(f"{ReceiptStore.name_of(call_id)} is not written yet")
        self.call_id = call_id


#: While following, a receipt changed this recently may still be being written.
FRESH_SECONDS = 2.0


class ReceiptStore:
    """Reads receipts safely and checks the spec's receipt rules."""

    def __init__(self, run_dir: Path, *, cache_size: int = 256, enabled: bool = True) -> None:
        self.run_dir = run_dir
        #: False for a source with no receipts (a Temporal history): nothing is read.
        self.enabled = enabled
        self._cache: OrderedDict[str, Receipt | ReceiptProblem] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()  # the app reads while a worker validates
        self._dir_fd: int | None = None
        self._old_fds: list[int] = []
        #: Receipt bytes read ahead of their events (:meth:`read_ahead`).
        self._ahead: dict[str, bytes] = {}

    @staticmethod
    def name_of(call_id: str) -> str:
        return f"receipts/{call_id}.json"

    def _open_dir(self) -> int:
        """fd of ``<run>/receipts`` itself, refusing a symlink or a file there.

        Opened once and kept (125,000 receipts need not open the folder
        125,000 times); :meth:`forget` drops it, as the folder may be new.
        """
        fd = self._dir_fd
        if fd is not None:  # one read of an attribute: no lock per receipt
            return fd
        with self._lock:
            if self._dir_fd is None:
                self._dir_fd = os.open(
                    self.run_dir / "receipts", os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
                )
            return self._dir_fd

    def close(self) -> None:
        with self._lock:
            fds = [*self._old_fds, *([self._dir_fd] if self._dir_fd is not None else [])]
            self._old_fds, self._dir_fd = [], None
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def read_ahead(
        self,
        call_ids: list[str],
        read_files: Callable[[int, list[str], int], list[bytes | None] | None],
    ) -> None:
        """Read the receipts of ``call_ids`` (valid call ids) at once with
        ``read_files`` (the native line core's: the files of a folder, never
        through a symlink, None for one it cannot read so), for :meth:`read`
        to take (a file it cannot read so is read then, and says why)."""
        if not self.enabled:
            return
        try:
            dir_fd = self._open_dir()
        except OSError:
            return  # each read says why
        got = read_files(dir_fd, [f"{cid}.json" for cid in call_ids], MAX_RECEIPT_BYTES)
        if got is None:
            return
        with self._lock:
            for cid, raw in zip(call_ids, got, strict=True):
                if raw is not None:
                    self._ahead[cid] = raw

    def folder_fd(self) -> int:
        """The receipts folder open, for a native reader (-1 where it cannot
        be opened: each read then says why)."""
        if not self.enabled:
            return -1
        try:
            return self._open_dir()
        except OSError:
            return -1

    def drop_ahead(self) -> None:
        """Forget what was read ahead and not taken (rules that read no receipt)."""
        with self._lock:
            self._ahead.clear()

    def read(self, call_id: str) -> Receipt | ReceiptProblem:
        """The receipt's bytes for ``call_id``, or why they cannot be read (cached)."""
        with self._lock:
            hit = self._cache.get(call_id)
            if hit is not None:
                self._cache.move_to_end(call_id)
                return hit
            raw = self._ahead.pop(call_id, None)
        result = self._read(call_id) if raw is None else self._receipt_of(call_id, raw)
        if isinstance(result, ReceiptProblem) and result.absent:
            return result  # not cached: it may be written any moment
        if isinstance(result, Receipt) and result.size > _CACHE_RECEIPT_LIMIT:
            return result  # big receipts are read again when needed: memory stays bounded
        with self._lock:
            self._cache[call_id] = result
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return result

    def forget(self, call_id: str) -> None:
        """Drop a cached answer (a pending receipt may have arrived)."""
        with self._lock:
            self._cache.pop(call_id, None)
            self._ahead.pop(call_id, None)
            if self._dir_fd is not None:  # receipts/ may have been (re)created
                self._old_fds.append(self._dir_fd)  # closed at close(): a reader may use it
                self._dir_fd = None

    def _read(self, call_id: str) -> Receipt | ReceiptProblem:
        name = self.name_of(call_id)
        if not self.enabled:
            return ReceiptProblem("missing_receipt", "this history has no receipts", name, True)
        problem = call_id_problem(call_id)
        if problem:
            return ReceiptProblem("bad_call_id", problem, name)

        def missing(why: str) -> ReceiptProblem:
            return ReceiptProblem("missing_receipt", f"receipt {name} {why}", name)

        try:
            dir_fd = self._open_dir()
        except FileNotFoundError:
            return ReceiptProblem(
                "missing_receipt",
                f"receipt {name} does not exist: there is no receipts/ folder",
                name,
                absent=True,
            )
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                return missing("was not read: receipts/ is a symlink or not a folder")
            return missing(f"could not be read: {exc.strerror}")
        try:
            fd = os.open(
                f"{call_id}.json",
                os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                dir_fd=dir_fd,
            )
        except FileNotFoundError:
            return ReceiptProblem(
                "missing_receipt", f"receipt {name} does not exist", name, absent=True
            )
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return missing("was not read: it is a symlink")
            return missing(f"could not be read: {exc.strerror}")
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return missing("was not read: it is not a regular file")
            if st.st_size > MAX_RECEIPT_BYTES:
                return missing(f"was not read: {st.st_size} bytes is over the 64 MiB limit")
            # the size it has, and one byte more: a short read of a regular file
            # is its end (a 1 MiB buffer a read cost an mmap: 15% of check)
            raw = os.read(fd, st.st_size + 1)
            if len(raw) > st.st_size:  # it grew meanwhile: read on to its end
                chunks = [raw]
                while chunk := os.read(fd, 1 << 16):
                    chunks.append(chunk)
                raw = b"".join(chunks)
        except OSError as exc:
            return missing(f"could not be read: {exc.strerror}")
        finally:
            os.close(fd)
        return self._receipt_of(call_id, raw)

    def _receipt_of(self, call_id: str, raw: bytes) -> Receipt:
        """The receipt whose file holds ``raw``."""
        name = self.name_of(call_id)
        digest = hashlib.sha256(raw).hexdigest()
        try:
            data = strict_json.loads(raw)
        except ValueError as exc:
            return Receipt(call_id, name, len(raw), digest, None, raw, f"not valid JSON: {exc}")
        if not isinstance(data, dict):
            return Receipt(call_id, name, len(raw), digest, None, raw, "not a JSON object")
        return Receipt(call_id, name, len(raw), digest, data, raw)

    def require(self, call_id: str, pinned_sha256: Any = None, *, live: bool = False) -> Receipt:
        """The receipt a ``tool_finished`` needs, or raise the rule it breaks.

        Order: exists and readable, pin matches (``receipt_tampered``: a
        changed file is tampered whatever it now holds), JSON object, its
        ``call_id`` matches the file name.
        """
        got = self.read(call_id)
        if live and ((isinstance(got, ReceiptProblem) and got.absent) or self._fresh(call_id)):
            try:
                self._check(call_id, got, pinned_sha256)
            except RuleViolation:
                # still being written, as far as anyone can tell: wait for it
                self.forget(call_id)
                raise ReceiptPending(call_id) from None
        return self._check(call_id, got, pinned_sha256)

    def _fresh(self, call_id: str) -> bool:
        try:
            st = os.lstat(self.run_dir / "receipts" / f"{call_id}.json")
        except OSError:
            return False
        return time.time() - st.st_mtime < FRESH_SECONDS

    def _check(self, call_id: str, got: Receipt | ReceiptProblem, pinned_sha256: Any) -> Receipt:
        if isinstance(got, ReceiptProblem):
            raise RuleViolation(got.code, got.message, got.name)
        if pinned_sha256 is not None:
            if not isinstance(pinned_sha256, str):
                raise RuleViolation(
                    "receipt_tampered", "receipt_sha256 must be a hex string", got.name
                )
            if pinned_sha256.lower() != got.sha256:
                raise RuleViolation(
                    "receipt_tampered",
                    f"{got.name} has sha256 {got.sha256[:16]}..., "
                    f"the event pinned {pinned_sha256[:16]}...",
                    got.name,
                )
        if got.data is None:
            raise RuleViolation("bad_json", f"receipt {got.name} is {got.problem}", got.name)
        inner = got.data.get("call_id")
        if inner != call_id:
            raise RuleViolation(
                "receipt_name_mismatch",
                f"{got.name} says call_id {inner!r}, its file name says {call_id!r}",
                got.name,
            )
        return got

    def stems(self) -> list[str]:
        """call_ids of the ``*.json`` files in receipts/ (sorted; [] if none)."""
        return sorted(name[:-5] for name in self._json_files())

    def count(self) -> int:
        """The report's ``receipts``: how many ``*.json`` files receipts/ holds."""
        return len(self._json_files())

    def _json_files(self) -> list[str]:
        """The names of the ``*.json`` files in receipts/ ([] if none)."""
        if not self.enabled:
            return []
        folder = self.run_dir / "receipts"
        if folder.is_symlink():
            return []  # a receipts/ that points elsewhere is never read, nor counted
        try:
            with os.scandir(folder) as it:
                return [e.name for e in it if e.name.endswith(".json") and not e.is_dir()]
        except OSError:
            return []
