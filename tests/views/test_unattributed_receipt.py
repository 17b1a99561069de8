"""The inspector at a log the rules could tie to no model call says so:
unattributed, why, and that it is not merged into any turn."""

from __future__ import annotations

from pathlib import Path

import orjson

from replay_tui.engine.replay import Replay
from replay_tui.formats.run import locate_run
from replay_tui.reducers import rules_for_run
from replay_tui.views.span_receipt import span_record
from tests.helpers.otel_attribution import SEC, T0, choice, doc, log_record


def test_the_inspector_at_an_unattributed_log_says_so(tmp_path: Path) -> None:
    stray = log_record(T0 + 3 * SEC, "", choice("Stray words."), "gen_ai.choice")
    path = tmp_path / "trace.json"
    path.write_bytes(orjson.dumps(doc(T0 + 4 * SEC, [stray])))
    paths = locate_run(path)
    replay = Replay(paths, rules_for_run(None, paths.events, paths.format), history=True).verify()
    try:
        [seq] = [u["seq"] for u in replay.final_state()["unattributed"]]
        event = replay.event(seq - 1)
        found = span_record(replay, event, replay.valid)  # type: ignore[arg-type]
        assert found is not None
        title, value = found
        assert title == "log gen_ai.choice · tied to no span · unattributed"
        assert "not merged into any turn" in value["unattributed"]
        # a log tied to its span says nothing of the kind
        tied = next(
            e
            for i in range(replay.valid)
            if (e := replay.event(i)).kind == "log" and e.payload.get("span_id")  # type: ignore[union-attr]
        )
        assert "unattributed" not in orjson.dumps(span_record(replay, tied, replay.valid)).decode()  # type: ignore[arg-type]
    finally:
        replay.close()
