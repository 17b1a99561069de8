"""Bookmarks and notes on a run's events, kept for the person, not the run.

A support engineer marks where a run went wrong (``b``), writes a line about
it (``a``), and finds it again tomorrow. Nothing is ever written under the
run folder (a customer's run may be read-only, and is evidence): bookmarks
live in the user's state directory, ``$XDG_STATE_HOME/replay-tui/bookmarks/``
(default ``~/.local/state/replay-tui/``), one file per ledger, named after
the ledger's path.

Each file also records how many bytes the ledger had and their sha256. A
ledger only grows (append-only), so when its first that-many bytes still
hash the same, the bookmarks are of this history; when they do not (the file
was rewritten, or replaced by another run at the same path), they are kept
but shown as from an earlier version of the ledger.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from replay_tui.core import strict_json
from replay_tui.core.state_dir import state_dir

_CHUNK = 1 << 20


def prefix_sha256(path: Path, size: int) -> str | None:
    """sha256 of the first ``size`` bytes of ``path``; None if it has fewer."""
    hasher = hashlib.sha256()
    done = 0
    try:
        with open(path, "rb") as fh:
            while done < size:
                chunk = fh.read(min(_CHUNK, size - done))
                if not chunk:
                    return None
                hasher.update(chunk)
                done += len(chunk)
    except OSError:
        return None
    return hasher.hexdigest()


def _file_for(ledger: Path, root: Path) -> Path:
    key = hashlib.sha256(str(ledger).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return root / "bookmarks" / f"{key}.json"


def _marks(raw: Any) -> dict[int, str]:
    """``{"12": "note"}`` as ``{12: "note"}``, whatever else the file holds."""
    out: dict[int, str] = {}
    if isinstance(raw, dict):
        for key, note in raw.items():
            if isinstance(key, str) and key.isdigit() and isinstance(note, str):
                out[int(key)] = note
    return out


@dataclass
class Bookmarks:
    """The bookmarks of one ledger: ``marks`` (seq → note, "" for none) of
    the ledger as it is, and ``earlier`` ones made on an earlier version of
    it (its bytes changed since), kept and shown as such."""

    ledger: Path
    file: Path
    marks: dict[int, str] = field(default_factory=dict)
    earlier: dict[int, str] = field(default_factory=dict)
    #: Why the earlier ones are earlier (for the person), if there are any.
    why_earlier: str = ""
    #: A problem reading the file (shown, never fatal): bookmarks then start empty.
    problem: str = ""
    #: The ledger's (size, mtime_ns, sha256) as last hashed: a save while the
    #: ledger is as it was (a bookmark toggled, then another) hashes nothing.
    _hashed: tuple[int, int, str] | None = field(default=None, repr=False, compare=False)
    #: Saves may run at once (the app saves off its UI thread at each
    #: bookmark): each takes the marks numbered, and a file is put in place
    #: only if no later one was (one finishing last must not put back fewer).
    _saving: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _taken: int = field(default=0, repr=False, compare=False)
    _placed: int = field(default=0, repr=False, compare=False)

    @classmethod
    def load(cls, ledger: Path, root: Path | None = None) -> Bookmarks:
        """The bookmarks kept for ``ledger`` (none yet: empty). Reads the
        ledger's recorded prefix to tell whether it is still that history."""
        ledger = ledger.resolve()
        file = _file_for(ledger, root if root is not None else state_dir())
        found = cls(ledger, file)
        try:
            data = strict_json.loads_written(file.read_bytes())
        except FileNotFoundError:
            return found
        except (OSError, orjson.JSONDecodeError) as exc:
            found.problem = f"bookmarks file {file} unreadable: {exc}"
            return found
        if not isinstance(data, dict):
            found.problem = f"bookmarks file {file} is not an object"
            return found
        found.earlier = _marks(data.get("earlier"))
        size = data.get("bytes")
        digest = data.get("sha256")
        marks = _marks(data.get("marks"))
        same = isinstance(size, int) and found._digest(size) == digest
        if same:
            found.marks = marks
        else:
            found.earlier.update(marks)
        if found.earlier:
            found.why_earlier = (
                "made on an earlier version of this ledger (its bytes changed since): "
                "the seqs may not be the same events"
            )
        return found

    def toggle(self, seq: int) -> bool:
        """Bookmark ``seq``, or remove its bookmark (and note); True if now marked."""
        if seq in self.marks:
            del self.marks[seq]
            return False
        self.marks[seq] = ""
        return True

    def annotate(self, seq: int, note: str) -> None:
        """Attach a one-line note to ``seq`` (bookmarking it)."""
        self.marks[seq] = " ".join(note.split())

    def forget_earlier(self) -> None:
        self.earlier.clear()
        self.why_earlier = ""

    def ordered(self) -> list[tuple[int, str]]:
        return sorted(self.marks.items())

    def _digest(self, size: int) -> str | None:
        """sha256 of the ledger's first ``size`` bytes, hashed again only if
        the ledger changed (size or mtime) since it last was."""
        try:
            st = os.stat(self.ledger)
        except OSError:
            return None
        known = self._hashed
        if known is not None and known[:2] == (st.st_size, st.st_mtime_ns) and size == st.st_size:
            return known[2]
        digest = prefix_sha256(self.ledger, size)
        if digest is not None and size == st.st_size:
            self._hashed = (st.st_size, st.st_mtime_ns, digest)
        return digest

    def save(self) -> None:
        """Write atomically (temp file and rename) in the state directory;
        raises OSError (the app says so; the run folder is never touched)."""
        size = os.stat(self.ledger).st_size
        digest = self._digest(size)
        with self._saving:
            self._taken += 1
            taken = self._taken
            data = {
                "ledger": str(self.ledger),
                "bytes": size,
                "sha256": digest,
                "marks": {str(k): v for k, v in sorted(self.marks.items())},
                "earlier": {str(k): v for k, v in sorted(self.earlier.items())},
            }
        self.file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".bookmarks.", suffix=".tmp", dir=self.file.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(strict_json.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
                fh.flush()
                os.fsync(fh.fileno())
            with self._saving:
                if taken < self._placed:  # a later save's marks are in place
                    os.unlink(tmp)
                    return
                os.replace(tmp, self.file)
                self._placed = taken
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
