"""The producer contract: `.funes.jsonl` files indexed from any path, validated as the reference
validates them (a file accepted or refused whole), and `funes index --check` that writes
nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_parse_property import json_values

from funes import sources
from funes.chunking import chunk_id
from funes.errors import FunesError
from funes.sources import FileStats, funes_jsonl

ISSUE = "gh/acme/tiles#42"


def turns() -> list[dict[str, Any]]:
    """A GitHub issue thread as a producer writes it (the reference's worked example's shape)."""
    return [
        {"format": 1, "session_id": ISSUE, "turn_uuid": "I_kw01", "seq": 0, "ts": "2026-06-02T14:03:55Z",
         "role": "contributor", "harness": "github",
         "blocks": [{"block_type": "text", "text": "**@ana** opened: the tile cache thrashes under load"}]},
        {"session_id": ISSUE, "turn_uuid": "IC_kw02@20260603T081240Z", "parent_uuid": "I_kw01", "seq": 1,
         "ts": "2026-06-03T08:12:40.250Z", "role": "member", "harness": "github",
         "blocks": [{"block_type": "text", "text": "**@bo** wrote: the eviction is FIFO; the issue weasel confirms it"},
                    {"block_type": "tool_use", "text": "gh pr diff 43", "tool_name": "gh"},
                    {"block_type": "tool_result", "text": "- fifo\n+ lru", "tool_name": "gh"}]},
    ]  # fmt: skip


def write(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def test_a_valid_file_becomes_its_turns_with_ids_from_coordinates(tmp_path: Path) -> None:
    f = write(tmp_path / "issue-42.funes.jsonl", turns())
    got = list(sources.parse([f]))
    assert [(t.harness, t.session_id, t.turn_uuid, t.seq, t.role) for t in got] == [
        ("github", ISSUE, "I_kw01", 0, "contributor"),
        ("github", ISSUE, "IC_kw02@20260603T081240Z", 1, "member"),
    ]
    assert [b.type for b in got[1].blocks] == ["text", "tool_use", "tool_result"]
    assert got[1].parent_uuid == "I_kw01" and got[1].ts == "2026-06-03T08:12:40.250Z"
    assert chunk_id(ISSUE, "I_kw01", 0, 0) == chunk_id(ISSUE, "I_kw01", 0, 0)  # text is no input


@pytest.mark.parametrize(
    ("mangle", "says"),
    [
        (lambda r: {**r, "colour": "red"}, "line 2: unknown field 'colour' on a turn"),
        (
            lambda r: {**r, "blocks": [{**r["blocks"][0], "lang": "en"}]},
            "line 2: unknown field 'lang' on a block",
        ),
        (lambda r: {k: v for k, v in r.items() if k != "ts"}, "line 2: missing field 'ts'"),
        (lambda r: {**r, "seq": "1"}, "line 2: field 'seq' on a turn must be an integer"),
        (lambda r: {**r, "ts": "2026-06-03T08:12:40+02:00"}, "is not RFC 3339 in UTC with a Z"),
        (lambda r: {**r, "format": 2}, "line 2: format 2 is not one funes knows"),
        (lambda r: {**r, "turn_uuid": "a:b"}, "may not contain ':'"),
        (lambda r: {**r, "harness": "GitHub"}, "harness 'GitHub' must be lowercase"),
        (
            lambda r: {**r, "blocks": [{"block_type": "image", "text": "x"}]},
            "block_type 'image' is not one of",
        ),
        (lambda r: "[1, 2]", "line 2: not a JSON object"),
        (lambda r: '{"session_id": "s", "tu', "line 2: not valid JSON"),
    ],
)
def test_one_bad_line_refuses_the_whole_file_naming_it(
    tmp_path: Path, mangle: Any, says: str
) -> None:
    good = turns()
    f = write(tmp_path / "t.funes.jsonl", [good[0], mangle(good[1])])
    stats: list[FileStats] = []
    assert list(sources.parse([f], on_file=stats.append)) == []  # not even the good first line
    (error,) = [s.error for s in stats]
    assert error is not None and error.startswith(f"{f}: ") and says in error and "\n" not in error


@pytest.mark.slow
def test_index_stores_a_valid_file_and_refuses_a_bad_one_whole(
    private_home: Path, tmp_path: Path
) -> None:
    good = write(tmp_path / "exports/issue-42.funes.jsonl", turns())
    r = run_cli("funes", "index", "--no-embed", "--json", good)
    assert r.returncode == 0, r.stderr.decode()
    out = run_cli("funes", "recall", "issue weasel eviction", "-k", "2").stdout.decode()
    assert f"→ get '{ISSUE}' " in out and "weasel" in out  # quoted: the id holds a #
    bad = write(
        tmp_path / "bad/other.funes.jsonl",
        [{**turns()[0], "session_id": "s2"}, {**turns()[1], "extra": 1}],
    )
    r = run_cli("funes", "index", "--no-embed", "--json", bad)
    assert "unknown field 'extra' on a turn" in r.stderr.decode()
    sessions = run_cli("funes", "sessions", "--json").stdout.decode()
    assert ISSUE in sessions and '"s2"' not in sessions  # nothing from the refused file


def test_check_validates_and_counts_without_writing(private_home: Path, tmp_path: Path) -> None:
    d = tmp_path / "exports"
    write(d / "a.funes.jsonl", turns())
    write(d / "b.funes.jsonl", [{**turns()[0], "oops": True}])
    dup = turns()[0]
    write(d / "c.funes.jsonl", [dup, {**dup, "seq": 1}])  # the same turn twice: the same ids
    r = run_cli("funes", "index", "--check", "--json", d)
    assert r.returncode == 1
    report = json.loads(r.stdout.decode())
    assert report["files"] == 3 and report["turns"] == 4 and report["duplicate_ids"] == 1
    assert report["chunks"] == 6
    (refused,) = report["refused"]
    assert refused.startswith(str(d / "b.funes.jsonl")) and "unknown field 'oops'" in refused
    assert r.stderr.decode().count("\n") == 1
    assert not Path(os.environ["FUNES_HOME"]).exists()  # no memory created, nothing written
    ok = run_cli("funes", "index", "--check", d / "a.funes.jsonl")
    assert ok.returncode == 0 and "checked 1 file: 2 turns, 4 chunks" in ok.stdout.decode()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_generated_records_are_accepted_or_refused_whole_never_crash(
    tmp_path: Path, data: st.DataObject
) -> None:
    good = turns()
    records: list[Any] = list(good)
    for _ in range(data.draw(st.integers(0, 3))):
        i = data.draw(st.integers(0, len(records)))
        kind = data.draw(st.integers(0, 2))
        if kind == 0:
            records.insert(i, data.draw(json_values))
        elif kind == 1:
            base = dict(good[data.draw(st.integers(0, 1))])
            base[data.draw(st.sampled_from([*sorted(funes_jsonl.TURN_FIELDS), "zz"]))] = data.draw(
                json_values
            )
            records.insert(i, base)
        else:
            records.insert(i, dict(good[0]))
    f = tmp_path / "gen.funes.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in records))
    stats = FileStats(str(f))
    try:
        got = list(funes_jsonl.parse_path(f, stats))
    except FunesError as e:
        assert str(e).startswith(f"{f}: ") and "\n" not in str(e)
    else:
        assert len(got) == len(records)
