"""What each call cost, as state: the claude_code, codex and otel_genai rules
price the tokens they count (replay_tui/reducers/pricing/) from genai-prices'
bundled data, as at each call's time, or from the user's --prices file; a
model with no price is named, never counted as free; nothing is fetched."""

from __future__ import annotations

import socket
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay_tui.engine.open import open_replay
from replay_tui.reducers import pricing
from tests.conftest import AGENT_SESSIONS

SONNET = "claude-sonnet-4-5-20250929"
SESSION = "11111111-2222-3333-4444-555555555555"


def _record(n: int, kind: str, ts: str, **fields: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "type": kind,
        "uuid": f"u{n}",
        "parentUuid": f"u{n - 1}" if n > 1 else None,
        "sessionId": SESSION,
        "timestamp": ts,
        "isSidechain": False,
    }
    rec.update(fields)
    return rec


def _prompt(n: int, ts: str, text: str) -> dict[str, Any]:
    return _record(n, "user", ts, message={"role": "user", "content": text})


def _reply(n: int, ts: str, mid: str, model: str, usage: dict[str, Any]) -> dict[str, Any]:
    return _record(
        n,
        "assistant",
        ts,
        requestId=f"req_{mid}",
        message={
            "id": mid,
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": "ok"}],
            "usage": usage,
        },
    )


def _usage(inp: int, out: int, write: int = 0, read: int = 0, hour: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "output_tokens": out,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": write - hour,
            "ephemeral_1h_input_tokens": hour,
        },
    }


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def _session(tmp_path: Path, model_b: str = SONNET) -> Path:
    """Two turns: a message streamed over two lines (its usage grows), then
    one of ``model_b``."""
    return _write(
        tmp_path / f"{SESSION}.jsonl",
        [
            _prompt(1, "2026-01-10T10:00:00Z", "hello"),
            _reply(2, "2026-01-10T10:00:01Z", "msg_a", SONNET, _usage(3, 10, 2000, 5000, 500)),
            _reply(3, "2026-01-10T10:00:02Z", "msg_a", SONNET, _usage(3, 250, 2000, 5000, 500)),
            _prompt(4, "2026-01-10T10:01:00Z", "again"),
            _reply(5, "2026-01-10T10:01:05Z", "msg_b", model_b, _usage(7, 90, 0, 7000)),
        ],
    )


def _states(path: Path, prices: pricing.PriceBook | None = None) -> list[dict[str, Any]]:
    pricing.use(prices)
    try:
        replay, _ = open_replay(str(path))
        replay.verify()
        assert replay.error is None
        return [orjson.loads(orjson.dumps(replay.state_at(n))) for n in range(replay.valid + 1)]
    finally:
        pricing.use(None)


def _rates(model: str, when: datetime) -> dict[str, Decimal]:
    """The model's rates (USD per million tokens) in genai-prices' data, at ``when``."""
    from genai_prices import data_snapshot

    _, info = data_snapshot.get_snapshot().find_provider_model(model, None, "anthropic", None)
    price = info.get_prices(when)
    keys = ("input", "output", "cache_read", "cache_write", "cache_write_1h")
    # a tiered rate's base: these calls' prompts are far under its first tier (200k tokens)
    return {
        k: getattr(getattr(price, f"{k}_mtok"), "base", getattr(price, f"{k}_mtok")) for k in keys
    }


def _by_hand(
    rates: dict[str, Decimal], inp: int, out: int, write5: int, hour: int, read: int
) -> int:
    exact = (
        inp * rates["input"]
        + out * rates["output"]
        + write5 * rates["cache_write"]
        + hour * rates["cache_write_1h"]
        + read * rates["cache_read"]
    ) / Decimal(1_000_000)
    return int((exact * 1_000_000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def test_the_cost_at_each_prefix_is_the_hand_computation_from_the_price_table(
    tmp_path: Path,
) -> None:
    rates = _rates(SONNET, datetime(2026, 1, 10, tzinfo=UTC))
    assert all(isinstance(r, Decimal) for r in rates.values())
    first_line = _by_hand(rates, 3, 10, 1500, 500, 5000)
    message_a = _by_hand(rates, 3, 250, 1500, 500, 5000)
    message_b = _by_hand(rates, 7, 90, 0, 0, 7000)
    states = _states(_session(tmp_path))
    totals = [round(s["cost"]["total"] * 1_000_000) for s in states]
    # the streamed message counts once, with the usage of its last line
    assert totals == [0, 0, first_line, message_a, message_a, message_a + message_b]
    end = states[-1]["cost"]
    assert end["turns"] == [
        {"turn": 1, "usd": message_a / 1e6},
        {"turn": 2, "usd": message_b / 1e6},
    ]
    assert end["by_model"] == {
        SONNET: {"usd": (message_a + message_b) / 1e6, "priced_as": "anthropic/claude-sonnet-4-5"}
    }
    assert end["unpriced"] == [] and end["partial"] is False


def test_a_model_with_no_price_is_named_and_never_counted_as_free(tmp_path: Path) -> None:
    states = _states(_session(tmp_path, model_b="acme-brain-9"))
    end = states[-1]["cost"]
    assert end["unpriced"] == ["acme-brain-9"]
    assert end["partial"] is True
    assert set(end["by_model"]) == {SONNET}
    assert end["total"] == states[3]["cost"]["total"]  # what was priced, no more
    replay, _ = open_replay(str(tmp_path / f"{SESSION}.jsonl"))
    replay.verify()
    assert "no price for `acme-brain-9`" in replay.step(5).explanation


def test_the_users_price_file_comes_first(tmp_path: Path) -> None:
    rates = {k: Decimal(v) for k, v in {"input": "1", "output": "2", "cache_read": "0.5"}.items()}
    file = tmp_path / "prices.toml"
    file.write_text(
        '[[price]]\nmodel = "claude-sonnet-4-5*"\ninput = 1\noutput = 2\ncache_read = 0.5\n'
    )
    book = pricing.load_price_file(file)
    rates |= {"cache_write": rates["input"], "cache_write_1h": rates["input"]}
    want = _by_hand(rates, 3, 250, 1500, 500, 5000) + _by_hand(rates, 7, 90, 0, 0, 7000)
    end = _states(_session(tmp_path), book)[-1]["cost"]
    assert round(end["total"] * 1_000_000) == want
    assert end["by_model"][SONNET]["priced_as"] == "file: claude-sonnet-4-5*"


def _no_network(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    tried: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        tried.append(args)
        raise OSError("the network is blocked in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    return tried


def test_pricing_never_touches_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    tried = _no_network(monkeypatch)
    book = pricing.PriceBook()
    tokens = pricing.Tokens(input=1000, output=1000, cache_read=1000, cache_write=1000)
    for model in (SONNET, "gpt-5", "gpt-4o-mini", "gemini-2.5-pro", "acme-brain-9"):
        book.cost(model, None, tokens, datetime(2026, 1, 1, tzinfo=UTC).timestamp())
        book.cost(model, None, tokens, None)
    for path in sorted(AGENT_SESSIONS.glob("*/*.jsonl"))[:3]:
        replay, _ = open_replay(str(path))
        replay.verify()
    from genai_prices import data_snapshot

    assert data_snapshot.get_snapshot().from_auto_update is False
    assert tried == []


MODELS = [SONNET, "claude-haiku-4-5-20251001", "claude-opus-4-1-20250805", "acme-brain-9"]


@st.composite
def _sessions(draw: st.DrawFn) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    n = 0
    for turn in range(draw(st.integers(1, 4))):
        n += 1
        records.append(_prompt(n, f"2026-01-10T10:{turn:02d}:00Z", f"turn {turn}"))
        for m in range(draw(st.integers(0, 3))):
            model = draw(st.sampled_from(MODELS))
            counts = draw(st.lists(st.integers(0, 50_000), min_size=4, max_size=4))
            hour = draw(st.integers(0, counts[2]))
            for line in range(draw(st.integers(1, 3))):  # streamed: the usage grows
                n += 1
                usage = _usage(counts[0], counts[1] + line, counts[2], counts[3], hour)
                ts = f"2026-01-10T10:{turn:02d}:{m * 3 + line + 1:02d}Z"
                records.append(_reply(n, ts, f"msg_{turn}_{m}", model, usage))
    return records


@given(records=_sessions())
@settings(max_examples=25, deadline=None)
def test_the_total_is_the_sum_per_model_and_per_turn_and_unpriced_means_partial(
    tmp_path_factory: pytest.TempPathFactory, records: list[dict[str, Any]]
) -> None:
    path = _write(tmp_path_factory.mktemp("s") / f"{SESSION}.jsonl", records)
    for state in _states(path):
        cost = state["cost"]
        total = round(cost["total"] * 1_000_000)
        assert total == sum(round(m["usd"] * 1_000_000) for m in cost["by_model"].values())
        assert total == sum(round(t["usd"] * 1_000_000) for t in cost["turns"])
        assert cost["partial"] == bool(cost["unpriced"])
        assert set(cost["unpriced"]) <= {"acme-brain-9"}


def _database_models() -> list[tuple[Any, Any]]:
    from genai_prices.data import providers

    return [(p, m) for p in providers for m in p.models]


@given(
    model=st.sampled_from(_database_models()),
    counts=st.lists(st.integers(0, 400_000), min_size=5, max_size=5),
    day=st.dates(min_value=datetime(2024, 1, 1).date(), max_value=datetime(2027, 1, 1).date()),
)
@settings(max_examples=300, deadline=None)
def test_our_arithmetic_of_token_rates_is_the_databases(
    model: tuple[Any, Any], counts: list[int], day: Any
) -> None:
    """The quick calculation of text tokens' rates equals genai-prices' own,
    tiers and dated prices included, for every model of the database it
    takes (the others are priced by genai-prices itself)."""
    from genai_prices import Usage

    from replay_tui.reducers.pricing.book import _linear

    provider, info = model
    when = datetime(day.year, day.month, day.day, tzinfo=UTC)
    tokens = pricing.Tokens(*counts)
    quick = _linear(info.get_prices(when), tokens)
    if quick is None:
        return
    writes = tokens.cache_write + tokens.cache_write_1h
    usage = Usage(
        input_tokens=tokens.input + tokens.cache_read + writes,
        output_tokens=tokens.output,
        cache_read_tokens=tokens.cache_read,
        cache_write_tokens=writes,
        cache_write_1h_tokens=tokens.cache_write_1h,
    )
    assert quick == info.calc_price(usage, provider, genai_request_timestamp=when).total_price


@pytest.mark.parametrize(
    ("usd", "said"),
    [
        (0, "$0.0000"),
        (0.000034, "$0.000034"),
        (0.0000999, "$0.00010"),
        (0.01234, "$0.0123"),
        (1234.5, "$1,234.50"),
    ],
)
def test_a_call_that_cost_little_never_reads_as_free(usd: float, said: str) -> None:
    """Dollars as people read them: cents over a dollar, four decimals under
    it, and two significant digits under a hundredth of a cent (a trace of
    small calls said $0.0000, as if free)."""
    assert pricing.money(usd) == said
