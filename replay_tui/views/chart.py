"""A watched value over seq, binned for a chart: plain data, no terminal.

The value at a path is a step function of seq: what it was before event 1,
then the new value at each seq where it changed. A :class:`Series` keeps
those changes as arrays, appended a batch at a time while a scan runs, with
block minima and maxima beside them (:class:`_MinMax`), so that binning it
into a chart's columns costs O(columns x log changes), whatever the run's
length: a value that changed at each of a million events is drawn as fast as
one that changed twice.

Numbers (int or float, not bool; null and absent are gaps) give, per column,
the first, lowest, highest and last value over the seqs it covers
(:meth:`Series.number_bins`), drawn with Braille dots (:func:`braille_rows`)
or eighth blocks (:func:`spark_row`). Anything else (a phase, a status, true
or false) gives bands: per column the value at its last seq, and whether it
held another in between (:meth:`Series.band_bins`).

The terminal (``ui/widgets/watch_chart.py``) and the report's SVG
(``handover/charts.py``) draw from the same bins.
"""

from __future__ import annotations

import bisect
import math
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from replay_tui.state import canonical
from replay_tui.state.paths import ABSENT
from replay_tui.state.persistent import thaw

NUMBER, BANDS, NONE = "number", "bands", "none"
_INF = math.inf


class _Object:
    """Stands in for an object or list in a band (it is not kept)."""

    def __repr__(self) -> str:
        return "{…}"


OBJECT: Any = _Object()


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_gap(value: Any) -> bool:
    """Absent or null: nothing drawn there (a counter not yet set)."""
    return value is ABSENT or value is None


@dataclass(slots=True)
class Chunk:
    """A batch of changes made ready for a :class:`Series` (built where the
    scan runs, so the UI thread only appends arrays)."""

    seqs: array[int]
    lo: array[float]  # the value, or +inf where it is not a number
    hi: array[float]  # the value, or -inf
    values: list[Any]
    numbers: int = 0
    others: int = 0  # strings, booleans, objects: not a number nor a gap


def as_float(value: Any) -> float:
    """A number as a float; an int past a float's range as an infinity
    (charted as no point, as NaN is; its digits stay in the values)."""
    try:
        return float(value)
    except OverflowError:
        return _INF if value > 0 else -_INF


def chunk_of(pairs: Iterable[tuple[int, Any]]) -> Chunk:
    """``(seq, new value)`` pairs, in seq order, as a :class:`Chunk`."""
    seqs: array[int] = array("q")
    lo: array[float] = array("d")
    hi: array[float] = array("d")
    values: list[Any] = []
    numbers = others = 0
    for seq, value in pairs:
        seqs.append(seq)
        values.append(value)
        kind = type(value)
        if kind is int or kind is float or is_number(value):
            f = as_float(value)
            nan = f != f or math.isinf(f)
            lo.append(_INF if nan else f)
            hi.append(-_INF if nan else f)
            numbers += 1
        else:
            lo.append(_INF)
            hi.append(-_INF)
            if not is_gap(value):
                others += 1
                if kind is not str and kind is not bool:
                    values[-1] = OBJECT  # an object or list: one band (its length is a chart)
    return Chunk(seqs, lo, hi, values, numbers, others)


class _MinMax:
    """Minima and maxima of an append-only array over any index range in
    O(BLOCK x levels): level k+1 holds those of level k's whole blocks."""

    BLOCK = 64

    def __init__(self) -> None:
        self.lo: list[array[float]] = [array("d")]
        self.hi: list[array[float]] = [array("d")]

    def extend(self, lo: array[float], hi: array[float]) -> None:
        b = self.BLOCK
        k = 0
        self.lo[0].extend(lo)
        self.hi[0].extend(hi)
        while len(self.lo[k]) // b > (len(self.lo[k + 1]) if k + 1 < len(self.lo) else 0):
            if k + 1 == len(self.lo):
                self.lo.append(array("d"))
                self.hi.append(array("d"))
            low, high, up_lo, up_hi = self.lo[k], self.hi[k], self.lo[k + 1], self.hi[k + 1]
            for start in range(len(up_lo) * b, len(low) // b * b, b):
                up_lo.append(min(low[start : start + b]))
                up_hi.append(max(high[start : start + b]))
            k += 1

    def query(self, i: int, j: int) -> tuple[float, float]:
        """(min, max) over indexes [i, j): (+inf, -inf) when there are none."""
        b = self.BLOCK
        lo, hi = _INF, -_INF
        k = 0
        while i < j:
            low, high = self.lo[k], self.hi[k]
            head = -(-i // b) * b
            tail = j // b * b
            if k + 1 == len(self.lo) or head >= tail:
                return min(lo, min(low[i:j])), max(hi, max(high[i:j]))
            if i < head:
                lo, hi = min(lo, min(low[i:head])), max(hi, max(high[i:head]))
            if tail < j:
                lo, hi = min(lo, min(low[tail:j])), max(hi, max(high[tail:j]))
            i, j, k = head // b, tail // b, k + 1
        return lo, hi


class NumberBin(NamedTuple):
    """One column of a number chart: the seqs [start, end) it covers."""

    start: int
    end: int
    first: float | None  # None: a gap (absent, null, not a number)
    lo: float | None
    hi: float | None
    last: float | None


class BandBin(NamedTuple):
    start: int
    end: int
    value: Any  # the value at its last seq (ABSENT: absent)
    mixed: bool  # it held another value in between


def _num(value: float) -> float | None:
    return None if math.isinf(value) else value


class Series:
    """The value at a path over seqs 0..end, as a step function."""

    def __init__(self, initial: Any = ABSENT) -> None:
        #: The value before the first change (at seq 0, or where a scan began).
        self.initial = initial
        self.seqs: array[int] = array("q")
        self.values: list[Any] = []
        self.numbers = 0
        self.others = 0
        self._range = _MinMax()
        first = chunk_of([(0, initial)])
        self._initial_lo, self._initial_hi = first.lo[0], first.hi[0]
        self.numbers, self.others = first.numbers, first.others

    def __len__(self) -> int:
        return len(self.seqs)

    def add(self, chunk: Chunk) -> None:
        """Append a batch of later changes (seqs after the last one)."""
        self.seqs.extend(chunk.seqs)
        self.values.extend(chunk.values)
        self._range.extend(chunk.lo, chunk.hi)
        self.numbers += chunk.numbers
        self.others += chunk.others

    def extend(self, pairs: Iterable[tuple[int, Any]]) -> None:
        self.add(chunk_of(pairs))

    @property
    def kind(self) -> str:
        """``number`` (numbers and gaps), ``bands`` (anything else), or
        ``none`` (it never changed: nothing to draw)."""
        if not self.seqs:
            return NONE
        return NUMBER if self.numbers and not self.others else BANDS

    @property
    def last_seq(self) -> int:
        return self.seqs[-1] if self.seqs else 0

    def index_at(self, seq: int) -> int:
        """How many changes happened at or before ``seq``."""
        return bisect.bisect_right(self.seqs, seq)

    def value_at(self, seq: int) -> Any:
        """The value after event ``seq`` (O(log changes))."""
        i = self.index_at(seq)
        return self.values[i - 1] if i else self.initial

    def _lo_hi_at(self, i: int) -> tuple[float, float]:
        """The value after change ``i - 1`` (i = 0: the initial one) as (lo, hi)."""
        if i == 0:
            return self._initial_lo, self._initial_hi
        return self._range.lo[0][i - 1], self._range.hi[0][i - 1]

    def number_bins(self, start: int, end: int, columns: int) -> list[NumberBin]:
        """Per column over seqs [start, end): first, min, max and last."""
        out: list[NumberBin] = []
        starts = column_starts(start, end, columns)
        for c, s0 in enumerate(starts):
            s1 = starts[c + 1] if c + 1 < len(starts) else end
            s1 = max(s1, s0 + 1)
            a = self.index_at(s0)  # changes up to s0 made the value at s0
            b = bisect.bisect_left(self.seqs, s1, a)  # those in (s0, s1)
            first_lo, first_hi = self._lo_hi_at(a)
            lo, hi = self._range.query(a, b)
            lo, hi = min(lo, first_lo), max(hi, first_hi)
            last = self._lo_hi_at(b)[0] if b > a else first_lo
            out.append(NumberBin(s0, s1, _num(first_lo), _num(lo), _num(hi), _num(last)))
        return out

    def band_bins(self, start: int, end: int, columns: int) -> list[BandBin]:
        """Per column over seqs [start, end): the value at its last seq."""
        out: list[BandBin] = []
        starts = column_starts(start, end, columns)
        for c, s0 in enumerate(starts):
            s1 = max(starts[c + 1] if c + 1 < len(starts) else end, s0 + 1)
            a = self.index_at(s0)
            b = bisect.bisect_left(self.seqs, s1, a)
            value = self.values[b - 1] if b else self.initial
            out.append(BandBin(s0, s1, value, b > a))
        return out

    def extent(self) -> tuple[float, float] | None:
        """The lowest and highest number it takes (None: no number)."""
        lo, hi = self._range.query(0, len(self.seqs))
        lo, hi = min(lo, self._initial_lo), max(hi, self._initial_hi)
        return None if math.isinf(lo) else (lo, hi)


def column_starts(start: int, end: int, columns: int) -> list[int]:
    """The first seq of each column spreading seqs [start, end) over
    ``columns`` (fewer seqs than columns: a seq spans several)."""
    total = max(1, end - start)
    columns = max(1, columns)
    return [start + (c * total) // columns for c in range(columns)]


def column_of(starts: Sequence[int], seq: int) -> int:
    """The first column showing ``seq`` (clamped to the chart)."""
    if not starts:
        return 0
    c = bisect.bisect_left(starts, seq)
    if c == len(starts) or starts[c] != seq:
        c -= 1
    return max(0, min(c, len(starts) - 1))


# -- drawing, as characters -------------------------------------------------------

#: Braille dot bits: [column][row from the top].
_DOTS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))
_EIGHTHS = " ▁▂▃▄▅▆▇█"


def _level(value: float, lo: float, hi: float, steps: int) -> int:
    """0 (lowest) .. steps - 1 (highest)."""
    if hi <= lo:
        return steps // 2
    return max(0, min(steps - 1, round((value - lo) / (hi - lo) * (steps - 1))))


def braille_rows(bins: Sequence[NumberBin], height: int, extent: tuple[float, float]) -> list[str]:
    """``height`` rows of Braille, two bins a cell: each bin a vertical run
    of dots from its lowest to its highest value, joined to the last value
    of the bin before it (a step is drawn upright)."""
    lo, hi = extent
    steps = height * 4
    cells = (len(bins) + 1) // 2
    grid = [[0] * cells for _ in range(height)]
    before: float | None = None
    for i, item in enumerate(bins):
        if item.lo is None or item.hi is None:
            before = None
            continue
        low, high = item.lo, item.hi
        if before is not None:  # a step from the column before: drawn upright
            low, high = min(low, before), max(high, before)
        before = item.last
        bottom = _level(low, lo, hi, steps)
        top = _level(high, lo, hi, steps)
        side = _DOTS[i % 2]
        cell = i // 2
        for level in range(bottom, top + 1):
            row_from_top = steps - 1 - level
            grid[row_from_top // 4][cell] |= side[row_from_top % 4]
    return ["".join(chr(0x2800 + bits) if bits else " " for bits in row) for row in grid]


def spark_row(bins: Sequence[NumberBin], extent: tuple[float, float]) -> str:
    """One row of eighth blocks, a bin a cell, up to its highest value."""
    lo, hi = extent
    out = []
    for item in bins:
        if item.hi is None:
            out.append(" ")
        else:
            out.append(_EIGHTHS[1 + _level(item.hi, lo, hi, 8)])
    return "".join(out)


def band_key(value: Any) -> Any:
    """A hashable stand-in for a band's value (equal JSON, equal band)."""
    if value is ABSENT:
        return ABSENT
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return (kind.__name__, value)
    if is_number(value):
        f = as_float(value)
        return ("number", value if math.isinf(f) else f)  # past a float: its own band
    if value is OBJECT:
        return ("object",)
    return ("json", canonical.dumps(thaw(value)))


def band_order(bins: Sequence[BandBin]) -> list[Any]:
    """The band values as they first appear from the left (absent left out):
    a colour each, in this order."""
    seen: dict[Any, Any] = {}
    for item in bins:
        if item.value is not ABSENT:
            seen.setdefault(band_key(item.value), item.value)
    return list(seen.values())


def format_number(value: float) -> str:
    """A y-axis label: short (``3,482``, ``1.25M``, ``0.0021``)."""
    if value != value or math.isinf(value):
        return "?"
    magnitude = abs(value)
    if value == int(value) and magnitude < 100_000:
        return f"{int(value):,}"
    if magnitude >= 1e9:
        return f"{value / 1e9:.3g}G"
    if magnitude >= 1e6:
        return f"{value / 1e6:.3g}M"
    if magnitude >= 1e5:
        return f"{value / 1e3:.4g}k"
    if magnitude >= 1:
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    return f"{value:.3g}"


@dataclass(frozen=True, slots=True)
class Summary:
    """The series in words (the Markdown report): min, max and last, and where."""

    kind: str
    changes: int
    lo: float | None = None
    lo_seq: int = 0
    hi: float | None = None
    hi_seq: int = 0
    last: Any = ABSENT
    #: (seq, value) where it started holding each value, first few (bands).
    spans: tuple[tuple[int, Any], ...] = ()
    more_spans: int = 0


def summarise(series: Series, spans: int = 12) -> Summary:
    """Min, max and last, with the first seq each was reached (O(changes):
    a report's, not a frame's)."""
    kind = series.kind
    last = series.values[-1] if series.values else series.initial
    if kind == NUMBER:
        extent = series.extent()
        assert extent is not None
        lo, hi = extent
        lo_seq = hi_seq = -1
        if is_number(series.initial) and not is_gap(series.initial):
            lo_seq = 0 if as_float(series.initial) == lo else -1
            hi_seq = 0 if as_float(series.initial) == hi else -1
        for seq, value in zip(series.seqs, series.values, strict=True):
            if is_number(value):
                if lo_seq < 0 and as_float(value) == lo:
                    lo_seq = seq
                if hi_seq < 0 and as_float(value) == hi:
                    hi_seq = seq
        return Summary(kind, len(series), lo, lo_seq, hi, hi_seq, last)
    found: list[tuple[int, Any]] = [(0, series.initial)]
    found += list(zip(series.seqs[: spans - 1], series.values[: spans - 1], strict=True))
    return Summary(
        kind,
        len(series),
        last=last,
        spans=tuple(found),
        more_spans=max(0, len(series) - len(found) + 1),
    )
