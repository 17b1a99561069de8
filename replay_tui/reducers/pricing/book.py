"""Where a call's price comes from: the user's price file, then genai-prices.

A price file (``--prices FILE``) is TOML or JSON (by its suffix: ``.toml``,
else JSON), a list of rates tried in order, the first that matches a
call's model (a glob, ``*`` and ``?``, case-insensitive) and provider (if
the rate names one) pricing it; models it does not name are priced by
genai-prices. In US dollars per million tokens::

    [[price]]
    model = "claude-sonnet-4*"   # glob over the model's name
    provider = "anthropic"       # optional
    input = 3                    # tokens neither read from nor written to a cache
    output = 15                  # reasoning included
    cache_read = 0.30            # optional: else the input rate
    cache_write = 3.75           # optional: else the input rate (5-minute writes)
    cache_write_1h = 6           # optional: else the cache_write rate

The JSON form is ``{"price": [{...}, ...]}``. A fault in the file is a
:class:`CannotRun` (exit 2) naming the file and the fault in one line.
"""

from __future__ import annotations

import fnmatch
import hashlib
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import orjson

from replay_tui.core.errors import CannotRun

#: The database of prices (a package: its data ships in it).
DATABASE = "genai-prices"
_RATE_KEYS = ("input", "output", "cache_read", "cache_write", "cache_write_1h")
_KEYS = frozenset({"model", "provider", *_RATE_KEYS})
_MILLION = Decimal(1_000_000)
#: A call with no time is priced at the latest prices the database knows.
_LATEST = datetime(9999, 12, 31, tzinfo=UTC)


@dataclass(frozen=True)
class Tokens:
    """One call's tokens, each counted in one field only."""

    input: int = 0  # neither read from a cache nor written to one
    output: int = 0  # reasoning included
    cache_read: int = 0
    cache_write: int = 0  # written for 5 minutes (the default)
    cache_write_1h: int = 0

    def any(self) -> bool:
        return bool(
            self.input or self.output or self.cache_read or self.cache_write or self.cache_write_1h
        )


@dataclass(frozen=True)
class Rate:
    """A rate of the user's file, in USD per million tokens."""

    model: str
    provider: str | None
    input: Decimal
    output: Decimal
    cache_read: Decimal
    cache_write: Decimal
    cache_write_1h: Decimal

    def matches(self, model: str, provider: str | None) -> bool:
        if self.provider is not None and (provider or "").lower() != self.provider.lower():
            return False
        return fnmatch.fnmatchcase(model.lower(), self.model.lower())

    def cost(self, t: Tokens) -> Decimal:
        return (
            t.input * self.input
            + t.output * self.output
            + t.cache_read * self.cache_read
            + t.cache_write * self.cache_write
            + t.cache_write_1h * self.cache_write_1h
        ) / _MILLION


#: The rates :func:`_linear` knows; with any other (a fee per request, per
#: character), the database's own calculation prices the call.
_TOKEN_RATES = ("input", "output", "cache_read", "cache_write", "cache_write_1h")
#: Rates of what a call's tokens as we count them never hold (searches, audio,
#: images, video, documents, reasoning or citations priced apart): with those
#: counts at nought the database's calculation adds nothing for them either.
_COUNT_ONLY = frozenset(
    {
        "web_searches_kcount",
        "storage_searches_kcount",
        "input_audio_mtok",
        "cache_audio_read_mtok",
        "output_audio_mtok",
        "audio_hours",
        "input_audio_hours",
        "input_image_mtok",
        "cache_image_read_mtok",
        "output_image_mtok",
        "input_video_mtok",
        "output_video_mtok",
        "input_document_kpages",
        "input_annotated_document_kpages",
        "output_reasoning_mtok",
        "output_citation_mtok",
    }
)
_KNOWN_RATES = frozenset({f"{k}_mtok" for k in _TOKEN_RATES} | _COUNT_ONLY)


def _linear(rates: Any, t: Tokens) -> Decimal | None:
    """genai-prices' calculation for the rates of text tokens, done here
    (theirs, general over every unit, takes about a millisecond a call):
    each token counted once, at the narrowest rate it has (a cache read at
    the input rate where there is no cache-read rate), a tiered rate at the
    tier the prompt's whole input reaches (tiers are cliffs). None where
    the rates hold anything else (tests/reducers/test_pricing.py checks it
    equals theirs)."""
    found = {k: v for k, v in vars(rates).items() if v is not None and not k.startswith("_")}
    if not found.keys() <= _KNOWN_RATES:
        return None
    writes = t.cache_write + t.cache_write_1h
    whole_input = t.input + t.cache_read + writes
    inp = found.get("input_mtok")
    read = found.get("cache_read_mtok")
    write = found.get("cache_write_mtok")
    hour = found.get("cache_write_1h_mtok")
    counts: list[tuple[Any, int]] = [(found.get("output_mtok"), t.output)]
    left = whole_input
    if read is not None:
        counts.append((read, t.cache_read))
        left -= t.cache_read
    if hour is not None:
        counts.append((hour, t.cache_write_1h))
        left -= t.cache_write_1h
    if write is not None:
        counts.append((write, writes - (t.cache_write_1h if hour is not None else 0)))
        left -= writes - (t.cache_write_1h if hour is not None else 0)
    counts.append((inp, left))
    total = Decimal(0)
    for rate, n in counts:
        if rate is None or n == 0:
            continue
        tiers = getattr(rate, "tiers", None)
        if tiers is not None:
            base = rate.base
            for tier in reversed(tiers):
                if whole_input > tier.start:
                    base = tier.price
                    break
            rate = base
        total += rate * n
    return total / _MILLION


def database_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DATABASE)
    except PackageNotFoundError:  # pragma: no cover - a dependency
        return "not installed"


@dataclass
class PriceBook:
    """The user's rates (if any), then genai-prices' bundled data."""

    rates: tuple[Rate, ...] = ()
    #: The user's file: its name and sha256 (what the state depends on).
    file: dict[str, str] | None = None
    _found: dict[tuple[str, str | None], Any] = field(default_factory=dict, repr=False)

    def identity(self) -> dict[str, Any]:
        """What prices the state was computed with: the database and its
        version, and the user's file by its sha256."""
        return {"database": f"{DATABASE} {database_version()}", "file": self.file}

    def where(self, model: str, provider: str | None) -> str | None:
        """What prices ``model``: ``file: claude-*`` or the database's
        ``anthropic/claude-sonnet-4-5``; None if nothing does."""
        for rate in self.rates:
            if rate.matches(model, provider):
                return f"file: {rate.model}"
        found = self._lookup(model, provider)
        return None if found is None else f"{found[0].id}/{found[1].id}"

    def cost(
        self, model: str | None, provider: str | None, tokens: Tokens, at: float | None
    ) -> Decimal | None:
        """The exact cost of one call in USD, or None with no price for ``model``."""
        if model is None:
            return None
        for rate in self.rates:
            if rate.matches(model, provider):
                return rate.cost(tokens)
        found = self._lookup(model, provider)
        if found is None:
            return None
        when = _LATEST if at is None else datetime.fromtimestamp(at, UTC)
        provider_info, model_info = found
        rates = model_info.get_prices(when)
        quick = _linear(rates, tokens)
        if quick is not None:
            return quick
        from genai_prices import Usage

        writes = tokens.cache_write + tokens.cache_write_1h
        usage = Usage(
            input_tokens=tokens.input + tokens.cache_read + writes,
            output_tokens=tokens.output,
            cache_read_tokens=tokens.cache_read,
            cache_write_tokens=writes,
            cache_write_1h_tokens=tokens.cache_write_1h,
        )
        price = model_info.calc_price(usage, provider_info, genai_request_timestamp=when)
        return Decimal(price.total_price)

    def _lookup(self, model: str, provider: str | None) -> Any:
        key = (model, provider)
        if key in self._found:
            return self._found[key]
        from genai_prices import data_snapshot

        snapshot = data_snapshot.get_snapshot()
        found: Any
        try:
            found = snapshot.find_provider_model(model, None, provider, None)
        except LookupError:
            found = None
            if provider is not None:  # a provider the database names otherwise
                try:
                    found = snapshot.find_provider_model(model, None, None, None)
                except LookupError:
                    found = None
        self._found[key] = found
        return found


_ACTIVE: PriceBook | None = None


def active() -> PriceBook:
    """The prices in force in this process (genai-prices unless a file was given)."""
    global _ACTIVE
    if _ACTIVE is None:
        _ACTIVE = PriceBook()
    return _ACTIVE


def use(book: PriceBook | None) -> None:
    """Price with ``book`` from now on (None: genai-prices alone)."""
    global _ACTIVE
    _ACTIVE = book


def _number(value: Any, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{where} must be a number of USD per million tokens, not {value!r}")
    try:
        number = Decimal(repr(value) if isinstance(value, float) else str(value).strip())
    except InvalidOperation:
        raise ValueError(
            f"{where} must be a number of USD per million tokens, not {value!r}"
        ) from None
    if not number.is_finite() or number < 0:
        raise ValueError(f"{where} must be a finite number >= 0, not {value!r}")
    return number


def _rate(entry: Any, n: int) -> Rate:
    if not isinstance(entry, dict):
        raise ValueError(f"price {n} is not a table of model and rates")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise ValueError(
            f"price {n} has an unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})"
        )
    model = entry.get("model")
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f'price {n} names no model (a glob such as "claude-sonnet-4*")')
    provider = entry.get("provider")
    if provider is not None and not isinstance(provider, str):
        raise ValueError(f"price {n} ({model}): provider must be a string")
    for key in ("input", "output"):
        if key not in entry:
            raise ValueError(f"price {n} ({model}) has no {key!r} rate")
    got = {k: _number(entry[k], f"price {n} ({model}): {k!r}") for k in _RATE_KEYS if k in entry}
    cache_write = got.get("cache_write", got["input"])
    return Rate(
        model=model.strip(),
        provider=provider,
        input=got["input"],
        output=got["output"],
        cache_read=got.get("cache_read", got["input"]),
        cache_write=cache_write,
        cache_write_1h=got.get("cache_write_1h", cache_write),
    )


def load_price_file(path: Path) -> PriceBook:
    """The user's price file as a :class:`PriceBook`; :class:`CannotRun`
    (exit 2) naming the fault in one line."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CannotRun(f"--prices {path}: no such file") from None
    except IsADirectoryError:
        raise CannotRun(f"--prices {path}: a folder, not a price file") from None
    except OSError as exc:
        raise CannotRun(f"--prices {path}: cannot read it ({exc.strerror})") from None
    try:
        if path.suffix.lower() == ".toml":
            doc: Any = tomllib.loads(data.decode("utf-8"))
        else:
            doc = orjson.loads(data)
    except UnicodeDecodeError:
        raise CannotRun(f"--prices {path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise CannotRun(f"--prices {path}: not TOML ({exc})") from None
    except orjson.JSONDecodeError as exc:
        raise CannotRun(
            f"--prices {path}: not JSON ({exc}); a .toml file is read as TOML"
        ) from None
    try:
        if not isinstance(doc, dict) or not isinstance(doc.get("price"), list):
            raise ValueError('no list of prices: write [[price]] tables (JSON: {"price": [...]})')
        rates = tuple(_rate(entry, n) for n, entry in enumerate(doc["price"], 1))
    except ValueError as exc:
        raise CannotRun(f"--prices {path}: {exc}") from None
    digest = hashlib.sha256(data).hexdigest()
    return PriceBook(rates=rates, file={"name": path.name, "sha256": digest})
