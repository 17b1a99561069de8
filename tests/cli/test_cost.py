"""What the calls cost, on the command line: `when 'cost.total > X'` (cost is
state), `--prices FILE` (a user's prices first, a bad file one line and exit
2), `check --json` naming the prices, `usage` with a COST column and cost in
its JSON, equal to the rules' state, and `report` saying the cost."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import pytest

from replay_tui.engine.open import open_replay
from replay_tui.reducers import pricing
from tests.conftest import AGENT_SESSIONS
from tests.helpers.cli import run_cli

ROLLOUT = next(AGENT_SESSIONS.glob("codex/*.jsonl"))
CLAUDE = sorted(AGENT_SESSIONS.glob("claude-code/*.jsonl"))


def _final_cost(path: Path) -> dict[str, object]:
    replay, _ = open_replay(str(path))
    replay.verify()
    return orjson.loads(orjson.dumps(replay.final_state()["cost"]))  # type: ignore[no-any-return]


def test_when_finds_the_seq_the_cost_passes_a_dollar(capsys: pytest.CaptureFixture[str]) -> None:
    replay, _ = open_replay(str(ROLLOUT))
    replay.verify()
    first = next(n for n in range(replay.valid + 1) if replay.state_at(n)["cost"]["total"] > 1.0)
    code, out, _ = run_cli(capsys, "when", str(ROLLOUT), "cost.total > 1.0")
    assert code == 0
    seq, kind, change = out.split(maxsplit=2)
    assert (int(seq), kind) == (first, "token_count")
    assert change.startswith("cost.total: ")


def test_the_users_prices_change_the_cost_and_the_report_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "mine.json"
    file.write_bytes(
        b'{"price": [{"model": "gpt-5*", "provider": "openai", "input": 1, "output": 1}]}'
    )
    code, out, _ = run_cli(capsys, "check", str(ROLLOUT), "--json", "--prices", str(file))
    assert code == 0
    assert orjson.loads(out)["prices"]["file"] == {
        "name": "mine.json",
        "sha256": hashlib.sha256(file.read_bytes()).hexdigest(),
    }
    code, out, _ = run_cli(capsys, "usage", str(ROLLOUT), "--json", "--prices", str(file))
    tokens = orjson.loads(out)["sources"][0]["total"]["tokens"]
    # cached input at the input rate (the file names none), 1 USD per million everything
    want = (tokens["input_tokens"] + tokens["output_tokens"]) / 1e6
    assert orjson.loads(out)["sources"][0]["total"]["cost"]["usd"] == pytest.approx(want, abs=1e-5)
    code, out, _ = run_cli(capsys, "check", str(ROLLOUT), "--json")
    assert orjson.loads(out)["prices"] == {
        "database": pricing.active().identity()["database"],
        "file": None,
    }


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("gone.toml", None, "no such file"),
        ("p.toml", "[[price]\nmodel=", "not TOML"),
        ("p.json", "{", "not JSON"),
        ("p.toml", 'price = "x"', "no list of prices"),
        (
            "p.toml",
            '[[price]]\nmodel = "a*"\ninput = 1\noutput = 1\nfast = 2',
            "unknown key 'fast'",
        ),
        ("p.toml", "[[price]]\ninput = 1\noutput = 1", "price 1 names no model"),
        ("p.toml", '[[price]]\nmodel = "a*"\ninput = 1', "price 1 (a*) has no 'output' rate"),
        (
            "p.toml",
            '[[price]]\nmodel = "a*"\ninput = -1\noutput = 1',
            "'input' must be a finite number >= 0",
        ),
        (
            "p.toml",
            '[[price]]\nmodel = "a*"\ninput = "cheap"\noutput = 1',
            "'input' must be a number",
        ),
    ],
)
def test_a_bad_price_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str | None, said: str
) -> None:
    file = tmp_path / name
    if text is not None:
        file.write_text(text)
    for command in (["check", str(ROLLOUT)], ["usage", str(ROLLOUT)], ["state", f"{ROLLOUT}@3"]):
        code, out, err = run_cli(capsys, *command, "--prices", str(file))
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and err.startswith(f"replay-tui: --prices {file}: ")
        assert said in err


def test_usage_json_carries_the_cost_the_rules_keep(capsys: pytest.CaptureFixture[str]) -> None:
    for path in [*CLAUDE, ROLLOUT]:
        code, out, _ = run_cli(capsys, "usage", str(path), "--json")
        assert code == 0
        body = orjson.loads(out)
        (source,) = body["sources"]
        (group,) = source["groups"]
        state = _final_cost(path)
        assert group["cost"] == {"usd": state["total"], "partial": False, "unpriced": []}
        assert source["total"]["cost"]["usd"] == state["total"] > 0
        assert body["prices"]["database"].startswith("genai-prices ")


def test_usage_names_a_model_with_no_price(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = CLAUDE[0].read_text().replace("claude-sonnet-4-5-20250929", "acme-brain-9")
    path = tmp_path / CLAUDE[0].name
    path.write_text(text)
    code, out, _ = run_cli(capsys, "usage", str(path))
    assert code == 0
    total_row = next(line for line in out.splitlines() if line.startswith("total ("))
    assert total_row.endswith("$0.0000+?")
    assert "no price for `acme-brain-9`: its tokens are not in the cost" in out
    code, out, _ = run_cli(capsys, "usage", str(path), "--json")
    cost = orjson.loads(out)["sources"][0]["total"]["cost"]
    assert cost == {"usd": 0.0, "partial": True, "unpriced": ["acme-brain-9"]}


def test_the_report_says_the_cost_and_its_prices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "r.md"
    code, _, _ = run_cli(capsys, "report", str(ROLLOUT), "--at", "100", "--out", str(out_file))
    assert code == 0
    text = out_file.read_text()
    total = pricing.money(_final_cost(ROLLOUT)["total"])  # type: ignore[arg-type]
    assert f"- `cost {total}` after 386 events, at API list prices (`genai-prices " in text
    replay, _ = open_replay(str(ROLLOUT))
    replay.verify()
    at_100 = pricing.money(replay.state_at(100)["cost"]["total"])
    assert f", `cost {at_100}`" in text
