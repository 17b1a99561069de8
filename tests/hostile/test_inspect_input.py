"""Damaged Inspect AI logs: one clear line and exit 2, never a traceback;
damage inside one sample's events stops the replay at that event."""

from __future__ import annotations

import zipfile
from pathlib import Path

import orjson
import pytest

from tests.conftest import TESTS
from tests.helpers.cli import run_cli

LOGS = TESTS / "fixtures" / "inspect-logs"
ZSTD_LOG = LOGS / "generated" / "failing.eval"
DEFLATED = LOGS / "upstream" / "log_streaming.eval"


def _one_line_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = run_cli(capsys, *args)
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_a_cut_zip_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cut = tmp_path / "cut.eval"
    data = ZSTD_LOG.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    err = _one_line_error(capsys, "check", str(cut), "--format", "inspect")
    assert "damaged zip" in err


def _rewrite(src: Path, dst: Path, change: dict[str, bytes | None]) -> None:
    """``src`` copied to ``dst`` with members replaced (None: left out), deflated."""
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            if info.filename in change:
                if change[info.filename] is not None:
                    new.writestr(info.filename, change[info.filename])
            else:
                new.writestr(info.filename, old.read(info.filename))


def test_a_sample_that_does_not_parse_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.eval"
    _rewrite(DEFLATED, bad, {"samples/1_epoch_2.json": b'{"id": 1, "epoch": 2, "events": ['})
    err = _one_line_error(capsys, "check", f"{bad}#1:2")
    assert "sample 1:2 (member samples/1_epoch_2.json): not valid JSON" in err
    code, out, _ = run_cli(capsys, "check", str(bad))  # the others still verify
    assert code == 2
    assert "1:1: verified" in out and "4 runs: 3 verified, 0 failed, 1 could not be checked" in out


def test_damaged_zstd_data_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with zipfile.ZipFile(ZSTD_LOG) as zf:
        info = zf.getinfo("samples/boom_epoch_1.json")
        assert info.compress_type == 93
        start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data = bytearray(ZSTD_LOG.read_bytes())
    data[start + 8 : start + 40] = b"\xff" * 32
    bad = tmp_path / "bad.eval"
    bad.write_bytes(bytes(data))
    err = _one_line_error(capsys, "check", f"{bad}#boom")
    assert "member samples/boom_epoch_1.json" in err


def test_a_damaged_event_stops_the_replay_there(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with zipfile.ZipFile(DEFLATED) as zf:
        sample = orjson.loads(zf.read("samples/2_epoch_1.json"))
    sample["events"][4] = ["not", "an", "event"]
    bad = tmp_path / "bad.eval"
    _rewrite(DEFLATED, bad, {"samples/2_epoch_1.json": orjson.dumps(sample)})
    code, out, _ = run_cli(capsys, "check", str(bad), "--sample", "2")
    assert code == 1
    assert "FAILED at seq 5" in out and "bad_envelope" in out


def test_a_patch_that_does_not_apply_is_a_divergence_at_its_event(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with zipfile.ZipFile(DEFLATED) as zf:
        sample = orjson.loads(zf.read("samples/1_epoch_1.json"))
    at = next(i for i, e in enumerate(sample["events"]) if e["event"] == "state")
    sample["events"][at]["changes"] = [{"op": "remove", "path": "/messages/40"}]
    bad = tmp_path / "bad.eval"
    _rewrite(DEFLATED, bad, {"samples/1_epoch_1.json": orjson.dumps(sample)})
    code, out, _ = run_cli(capsys, "check", f"{bad}#1:1")
    assert code == 1
    assert f"FAILED at seq {at + 1}" in out and "divergence" in out
    assert "remove /messages/40" in out


def test_a_record_the_events_do_not_reach_is_a_divergence(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with zipfile.ZipFile(DEFLATED) as zf:
        sample = orjson.loads(zf.read("samples/1_epoch_1.json"))
    sample["store"] = {"answer": "never written by any event"}
    bad = tmp_path / "bad.eval"
    _rewrite(DEFLATED, bad, {"samples/1_epoch_1.json": orjson.dumps(sample)})
    code, out, _ = run_cli(capsys, "check", f"{bad}#1:1")
    assert code == 1
    assert f"FAILED at seq {len(sample['events']) + 1}" in out
    assert "the store differs at answer" in out


@pytest.mark.parametrize(
    ("field", "said"),
    [
        ("store", "the record's store is int 5, not an object"),
        ("messages", "the record's messages are int 5, not a list"),
    ],
)
def test_a_record_field_of_the_wrong_type_is_a_divergence(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, field: str, said: str
) -> None:
    """A sample record whose store or messages are a number: the events do
    not give it, and the verdict says which field (the rules raised TypeError)."""
    with zipfile.ZipFile(DEFLATED) as zf:
        sample = orjson.loads(zf.read("samples/1_epoch_1.json"))
    sample[field] = 5
    bad = tmp_path / "bad.eval"
    _rewrite(DEFLATED, bad, {"samples/1_epoch_1.json": orjson.dumps(sample)})
    code, out, _ = run_cli(capsys, "check", f"{bad}#1:1")
    assert code == 1
    assert "divergence" in out and said in out and "reducer_error" not in out


def test_a_cut_json_log_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cut = tmp_path / "cut.json"
    cut.write_bytes((LOGS / "upstream" / "log_formats.json").read_bytes()[:5000])
    err = _one_line_error(capsys, "check", str(cut))
    assert "not a readable Inspect log: not valid JSON" in err


def test_no_such_sample_lists_them(capsys: pytest.CaptureFixture[str]) -> None:
    err = _one_line_error(capsys, "state", str(DEFLATED), "--sample", "7", "--at", "3")
    assert "no sample '7'" in err and "1:1, 1:2, 2:1, 2:2" in err
    err = _one_line_error(capsys, "state", str(DEFLATED), "--at", "3")
    assert "an Inspect log of 4 samples: name one with --sample ID[:EPOCH]" in err


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"SQLite format 3\x00" + bytes(100), "it is a SQLite database"),
        (bytes(range(256)) * 4, "it looks like binary data"),
        (b"# notes\n\nsome text\n", "it looks like Markdown text"),
        (b"", "it is empty"),
    ],
    ids=["sqlite", "binary", "markdown", "empty"],
)
def test_a_file_that_is_no_log_says_what_it_is(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, said: str
) -> None:
    """``--format inspect`` on what is not JSON names what the file looks
    like and what a log is, not a JSON parser's complaint."""
    path = tmp_path / "run.json"
    path.write_bytes(content)
    err = _one_line_error(capsys, "check", str(path), "--format", "inspect")
    assert f"not an Inspect log: {said}" in err
    assert "an Inspect log is a .eval zip or a .json document" in err
    assert "not valid JSON" not in err


@pytest.mark.parametrize("samples", [5, True], ids=["number", "boolean"])
def test_samples_that_are_no_list_are_no_samples(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, samples: object
) -> None:
    log = orjson.loads((LOGS / "upstream" / "log_formats.json").read_bytes())
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps({**log, "samples": samples}))
    err = _one_line_error(capsys, "check", str(bad))
    assert "an Inspect log with no sample in it" in err


def test_a_member_named_with_other_digits_is_a_string_id(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``"²".isdigit()`` is True, ``int("²")`` a ValueError."""
    with zipfile.ZipFile(DEFLATED) as zf:
        sample = zf.read("samples/1_epoch_1.json")
    bad = tmp_path / "bad.eval"
    _rewrite(DEFLATED, bad, {"samples/1_epoch_1.json": None})
    with zipfile.ZipFile(bad, "a") as zf:
        zf.writestr("samples/\u00b2_epoch_1.json", sample)
    code, out, err = run_cli(capsys, "check", f"{bad}#\u00b2:1")
    assert code == 0, err
    assert "verified" in out


def test_integers_past_64_bits_keep_their_digits(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    big = 123456789012345678901234567891
    with zipfile.ZipFile(DEFLATED) as zf:
        sample = orjson.loads(zf.read("samples/1_epoch_1.json"))
    ts = sample["events"][-1]["timestamp"]
    change = {"event": "store", "timestamp": ts, "changes": [{"op": "add", "path": "/x"}]}
    raw = orjson.dumps({**sample, "events": [*sample["events"], change], "store": {"x": 0}})
    raw = raw.replace(b'"path":"/x"}', b'"path":"/x","value":%d}' % big)
    raw = raw.replace(b'"store":{"x":0}', b'"store":{"x":%d}' % big)
    bad = tmp_path / "big.eval"
    _rewrite(DEFLATED, bad, {"samples/1_epoch_1.json": raw})
    code, out, err = run_cli(capsys, "history", f"{bad}#1:1", "store.x")
    assert code == 0, err
    assert f"absent → {big}" in out
    log = orjson.loads((LOGS / "upstream" / "log_formats.json").read_bytes())
    log["samples"][0]["id"] = "the id"
    as_json = tmp_path / "big.json"
    as_json.write_bytes(orjson.dumps(log).replace(b'"id":"the id"', b'"id":%d' % big))
    code, out, err = run_cli(capsys, "check", str(as_json))
    assert code == 0, err
    assert f"#{big}:1: verified" in out


def test_a_sample_selector_reads_the_epochs_the_list_names() -> None:
    """``#ID:EPOCH`` as the samples list names it: a negative epoch too (it
    was listed as ``1:-3`` and refused); a digit outside ASCII is part of
    the id, not an epoch (``int("²")`` raised)."""
    from replay_tui.formats.inspect.log import split_selector

    assert split_selector("1:-3") == ("1", -3)
    assert split_selector("task-a:12") == ("task-a", 12)
    assert split_selector("a:²") == ("a:²", None)
    assert split_selector("7") == ("7", None)
