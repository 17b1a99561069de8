"""An Inspect AI eval log: its samples, listed, and one read at a time.

Two forms, both detected by content, whatever the file's name:

- ``.eval``: a zip of ``header.json`` (or, while the eval runs,
  ``_journal/start.json``), ``summaries.json`` / ``_journal/summaries/N.json``
  and ``samples/{id}_epoch_{n}.json``, one member per sample (see
  :mod:`.archive`). Only the member list is read on open; a sample's member
  is read when that sample is asked for.
- ``.json``: one document ``{"version": 2, "status": ..., "eval": {...},
  ..., "samples": [...]}``, read whole (older logs keep a sample's events in
  ``transcript.events``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay_tui.core import strict_json
from replay_tui.core.errors import CannotRun
from replay_tui.formats.inspect.archive import Archive, is_zip
from replay_tui.formats.langgraph.sqlite import SQLITE_MAGIC
from replay_tui.formats.sniff import NO_RECORD, NOT_JSON, describe
from replay_tui.formats.whole_file import read_whole

FORMAT = "inspect"
_JSON_LOG = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')
_SAMPLE_MEMBER = re.compile(r"\Asamples/(?P<id>.+)_epoch_(?P<epoch>\d+)\.json\Z")
_HEADS = ("header.json", "_journal/start.json")


def looks_like_log(path: Path) -> bool:
    """Whether ``path`` holds an Inspect log: a zip with ``header.json``,
    ``_journal/start.json`` or ``samples/`` members, or a JSON document that
    starts ``{"version": N, "status":`` and has an ``"eval"`` near its top."""
    if is_zip(path):
        try:
            import zipfile

            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
        except (OSError, ValueError, EOFError, zipfile.BadZipFile):
            return False
        return any(n in _HEADS or n.startswith("samples/") for n in names)
    try:
        with path.open("rb") as fh:
            head = fh.read(65536)
    except OSError:
        return False
    return _JSON_LOG.match(head) is not None and b'"eval"' in head


@dataclass(frozen=True, slots=True)
class SampleRef:
    """Where one sample is: its member (``.eval``) or its index (``.json``)."""

    id: str | int
    epoch: int
    member: str | None = None
    index: int | None = None

    @property
    def key(self) -> str:
        """``ID:EPOCH``, as ``--sample`` takes it."""
        return f"{self.id}:{self.epoch}"


def _sample_id(text: str) -> str | int:
    """A member's id as Inspect writes it: digits are an int id."""
    return int(text) if text.isascii() and text.isdigit() and len(text) < 19 else text


def _order(ref: SampleRef) -> tuple[int, int, str, int]:
    """Samples by id (numbers as numbers), then epoch, as Inspect lists them."""
    if isinstance(ref.id, int):
        return (0, ref.id, "", ref.epoch)
    return (1, 0, str(ref.id), ref.epoch)


def split_selector(selector: str) -> tuple[str, int | None]:
    """``ID[:EPOCH]`` as (ID, EPOCH or None): an epoch as the samples list
    names it, ASCII digits with a sign if negative (``str.isdigit`` takes
    ``²``, which ``int`` refuses)."""
    head, colon, tail = selector.rpartition(":")
    if colon and head and _EPOCH.fullmatch(tail):
        return head, int(tail)
    return selector, None


_EPOCH = re.compile(r"-?[0-9]+")


#: What a log is, said when a file is none.
_LOG_IS = "an Inspect log is a .eval zip or a .json document"


def _loads(data: bytes, what: str) -> Any:
    """JSON as Inspect's reader takes it (the last of a repeated key),
    integers past 64 bits read exactly."""
    try:
        return strict_json.loads_written(data)
    except ValueError as exc:
        raise CannotRun(f"{what}: not valid JSON ({exc})") from None


class InspectLog:
    """One log, opened: ``samples`` listed, each read by :meth:`sample`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._archive: Archive | None = None
        self._doc: dict[str, Any] | None = None
        self.samples: list[SampleRef] = []
        if is_zip(path):
            self.kind = "eval"
            self._archive = Archive(path)
            for name in self._archive.names():
                m = _SAMPLE_MEMBER.match(name)
                if m:
                    ref = SampleRef(_sample_id(m["id"]), int(m["epoch"]), member=name)
                    self.samples.append(ref)
            if not self.samples and not any(self._archive.has(h) for h in _HEADS):
                raise CannotRun(f"{path}: a zip, but no Inspect log: no header.json and no samples")
        else:
            self.kind = "json"
            doc = self._document(path)
            if not isinstance(doc, dict) or "eval" not in doc:
                raise CannotRun(f'{path}: not an Inspect log (no "eval" in it)')
            self._doc = doc
            listed = doc.get("samples")
            for index, smp in enumerate(listed if isinstance(listed, list) else []):
                if isinstance(smp, dict):
                    epoch = smp.get("epoch", 1)
                    ref = SampleRef(
                        smp.get("id", index + 1),
                        epoch if type(epoch) is int else 1,
                        index=index,
                    )
                    self.samples.append(ref)

        self.samples.sort(key=_order)

    @staticmethod
    def _document(path: Path) -> Any:
        """The log document as JSON; a file that is no JSON says what it is
        (looked at only then: a log is read once)."""
        data = read_whole(path)
        try:
            return strict_json.loads_written(data)
        except ValueError:
            pass
        if data.startswith(SQLITE_MAGIC):
            raise CannotRun(
                f"{path}: not an Inspect log: it is a SQLite database ({_LOG_IS}; a "
                "LangGraph checkpointer's SQLite file opens with --format langgraph)"
            )
        looks = describe(path)
        if looks is not None and looks[1] in (NOT_JSON, NO_RECORD):
            raise CannotRun(f"{path}: not an Inspect log: {looks[0]} ({_LOG_IS})")
        return _loads(data, f"{path}: not a readable Inspect log")

    # -- what the log says of itself ---------------------------------------
    def header(self) -> dict[str, Any]:
        """``header.json`` (or the journal's start while running), or the
        JSON log without its samples."""
        if self._doc is not None:
            return {k: v for k, v in self._doc.items() if k != "samples"}
        assert self._archive is not None
        for name in _HEADS:
            if self._archive.has(name):
                head = _loads(self._archive.read(name), f"{self.path}: member {name}")
                return head if isinstance(head, dict) else {}
        return {}

    def summaries(self) -> dict[str, dict[str, Any]]:
        """What the log says of each sample without its events, by ``ID:EPOCH``
        (``summaries.json``, the journal's summaries, or the samples themselves)."""
        found: dict[str, dict[str, Any]] = {}
        if self._doc is not None:
            for ref in self.samples:
                smp = self._doc["samples"][ref.index or 0]
                found[ref.key] = {k: v for k, v in smp.items() if k not in ("events", "messages")}
            return found
        assert self._archive is not None
        names = ["summaries.json"] if self._archive.has("summaries.json") else []
        if not names:
            names = [n for n in self._archive.names() if n.startswith("_journal/summaries/")]
        for name in names:
            got = _loads(self._archive.read(name), f"{self.path}: member {name}")
            for item in got if isinstance(got, list) else []:
                if isinstance(item, dict) and "id" in item:
                    found[f"{item['id']}:{item.get('epoch', 1)}"] = item
        return found

    # -- samples ------------------------------------------------------------
    def find(self, selector: str) -> SampleRef:
        """The sample ``ID[:EPOCH]`` names (epoch 1 when none is given);
        :class:`CannotRun` listing the log's samples if there is none."""
        sid, epoch = split_selector(selector)
        for want_id, want_epoch in ((sid, epoch or 1), (selector, 1)):
            for ref in self.samples:
                if str(ref.id) == want_id and ref.epoch == want_epoch:
                    return ref
        raise CannotRun(f"{self.path}: no sample {selector!r}; {self.listing()}")

    def listing(self, limit: int = 12) -> str:
        """The samples it holds, for a message."""
        if not self.samples:
            return "it holds no sample"
        keys = [ref.key for ref in self.samples[:limit]]
        more = f", ... ({len(self.samples)} in all)" if len(self.samples) > limit else ""
        return f"its samples (ID:EPOCH): {', '.join(keys)}{more}"

    def raw_sample(self, ref: SampleRef) -> bytes | None:
        """The sample's member bytes (``.eval``), None for a JSON log."""
        if self._archive is None or ref.member is None:
            return None
        return self._archive.read(ref.member)

    def sample(self, ref: SampleRef, raw: bytes | None = None) -> dict[str, Any]:
        """The sample as Inspect wrote it; :class:`CannotRun` if it does not parse."""
        if self._doc is not None:
            smp = self._doc["samples"][ref.index or 0]
            assert isinstance(smp, dict)
            return smp
        data = raw if raw is not None else self.raw_sample(ref)
        assert data is not None
        got = _loads(data, f"{self.path}: sample {ref.key} (member {ref.member})")
        if not isinstance(got, dict):
            raise CannotRun(f"{self.path}: sample {ref.key} (member {ref.member}) is not an object")
        return got

    def close(self) -> None:
        if self._archive is not None:
            self._archive.close()
        self._doc = None
