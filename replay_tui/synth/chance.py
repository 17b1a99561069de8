"""The one random source and the one clock every sample generator uses:
seeded, so a sample is the same bytes on every machine and every run."""

from __future__ import annotations

import base64
import random
import time
from collections.abc import Sequence
from typing import TypeVar

_T = TypeVar("_T")
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_D2 = [f"{i:02d}" for i in range(100)]  # table lookups: format specs are slow
_MS = [f".{i:03d}Z" for i in range(1000)]


class Rand(random.Random):
    """Seeded randomness with ``int_in``/``pick`` built on ``random()``: several
    times faster than ``randint``/``choice``, which matters at a million events."""

    def int_in(self, low: int, high: int) -> int:
        """A whole number in ``low..high`` (both included)."""
        return low + int(self.random() * (high - low + 1))

    def pick(self, items: Sequence[_T]) -> _T:
        return items[int(self.random() * len(items))]

    def chance(self, p: float) -> bool:
        return self.random() < p

    def b62(self, n: int) -> str:
        return "".join(_B62[int(self.random() * 62)] for _ in range(n))

    def hexs(self, n: int) -> str:
        return f"{self.getrandbits(4 * n):0{n}x}"

    def uuid4(self) -> str:
        h = self.hexs(32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"

    def uuid7(self, ms: int) -> str:
        h = f"{ms:012x}" + self.hexs(20)
        return f"{h[:8]}-{h[8:12]}-7{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"

    def blob(self, n: int) -> str:
        return base64.b64encode(self.randbytes(n)).decode()


class Clock:
    """RFC 3339 UTC times with milliseconds from ``start_ms``, moving forward
    only, by seeded steps."""

    def __init__(self, rng: Rand, start_ms: int) -> None:
        self.rng = rng
        self.ms = start_ms
        self._sec = self._day = -1
        self._date = self._prefix = ""

    def next(self) -> str:
        """The time now, then a step of 5..900 ms (a ledger's pace)."""
        now = self.now()
        self.ms += self.rng.int_in(5, 900)
        return now

    def tick(self, low: int = 5, high: int = 900) -> str:
        """A step of ``low..high`` ms, then the time."""
        self.ms += self.rng.int_in(low, high)
        return self.now()

    def now(self) -> str:
        sec, milli = divmod(self.ms, 1000)
        if sec != self._sec:
            self._sec = sec
            day, rest = divmod(sec, 86_400)
            if day != self._day:
                self._day = day
                self._date = time.strftime("%Y-%m-%dT", time.gmtime(sec))
            hour, rest = divmod(rest, 3600)
            self._prefix = f"{self._date}{_D2[hour]}:{_D2[rest // 60]}:{_D2[rest % 60]}"
        return self._prefix + _MS[milli]
