"""Agent-traces parquet: one row per session, read in batches, tolerant of messy rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import jsonl, run_cli

from funes import sources
from funes.errors import FunesError
from funes.records import Turn
from funes.sources import FileStats, parquet

CONVERSATION = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "why is CI red?"},
    {"role": "assistant", "content": None, "reasoning_content": "check the log",
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "bash", "arguments": '{"cmd":"gh run view"}'}},
                    {"id": "call_2", "type": "function",
                     "function": {"name": "read", "arguments": {"path": "ci.yml"}}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "error: lint failed"},
    {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "jobs: lint"}]},
    {"role": "tool", "content": "a tool message with no call id"},
    {"role": "assistant", "content": "Lint fails on ci.yml."},
]  # fmt: skip


def write(
    path: Path, rows: list[dict[str, Any]], schema: pa.Schema | None = None, **kw: Any
) -> Path:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, **kw)
    return path


def row(sid: str | None, messages: list[Any] | None, **extra: Any) -> dict[str, Any]:
    msgs = (
        None
        if messages is None
        else [m if m is None or isinstance(m, str) else json.dumps(m) for m in messages]
    )
    return {"session_id": sid, "messages": msgs, **extra}


def parse_one(path: Path) -> tuple[list[Turn], FileStats]:
    got: list[FileStats] = []
    turns = list(sources.parse([path], on_file=got.append))
    return turns, got[0]


def test_rows_become_sessions_with_tool_results_named_by_their_calls(tmp_path: Path) -> None:
    meta = json.dumps({"cwd": "/home/ana/proj", "model": "x"})
    f = write(tmp_path / "traces.parquet", [
        row("s1", CONVERSATION, sent_at="2026-03-02T10:00:00Z", harness="claude_code",
            file_path="/orig/s1.jsonl", metadata=meta),
    ])  # fmt: skip
    turns, st = parse_one(f)
    assert st.source == "parquet" and st.error is None
    assert [t.role for t in turns] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "assistant",
    ]
    assert [t.turn_uuid for t in turns] == [f"s1-{i}" for i in range(7)]
    assert [t.parent_uuid for t in turns] == [None, *[f"s1-{i}" for i in range(6)]]
    assert {(t.harness, t.ts, t.workdir, t.source_path) for t in turns} == {
        ("claude_code", "2026-03-02T10:00:00Z", "-home-ana-proj", "/orig/s1.jsonl")
    }
    assert [(b.type, b.text, b.tool_name, b.tool_use_id) for b in turns[2].blocks] == [
        ("thinking", "check the log", None, None),
        ("tool_use", '{"cmd":"gh run view"}', "bash", "call_1"),
        ("tool_use", '{"path":"ci.yml"}', "read", "call_2"),
    ]
    results = [(b.type, b.text, b.tool_name, b.tool_use_id) for t in turns[3:5] for b in t.blocks]
    assert results == [
        ("tool_result", "error: lint failed", "bash", "call_1"),
        ("tool_result", "jobs: lint", "read", "call_2"),
    ]
    # Without a tool_call_id a tool message stays text, as in the reference.
    assert [b.type for b in turns[5].blocks] == ["text"]


def test_extra_columns_null_rows_and_invalid_json_elements(tmp_path: Path) -> None:
    f = write(tmp_path / "messy.parquet", [
        row("a", [{"role": "user", "content": "kept"}, "{not json", None, "[1, 2]",
                  {"role": "assistant", "content": "  "}], score=0.5, tags=["x"]),
        row(None, [{"role": "user", "content": "no session id"}], score=None, tags=None),
        row("b", None, score=1.0, tags=[]),
        row("c", [{"role": "user", "content": "also kept"}], score=2.0, tags=["y"]),
    ])  # fmt: skip
    turns, st = parse_one(f)
    assert [(t.session_id, t.blocks[0].text) for t in turns] == [("a", "kept"), ("c", "also kept")]
    assert {t.workdir for t in turns} == {"messy"}  # no metadata: the file stem
    assert {t.harness for t in turns} == {""}
    assert st.skipped == {
        "malformed_json": 1, "null_message": 1, "not_object": 1,
        "null_session_id": 1, "null_messages": 1,
    }  # fmt: skip
    assert st.empty == {"assistant": 1}
    cov = sources.coverage(st)
    assert cov["sessions"] == 2 and cov["unexplained"] == {}


def test_large_utf8_columns_and_large_list(tmp_path: Path) -> None:
    schema = pa.schema([
        ("session_id", pa.large_string()),
        ("messages", pa.large_list(pa.large_string())),
        ("sent_at", pa.large_string()),
        ("metadata", pa.large_string()),
    ])  # fmt: skip
    f = write(tmp_path / "large.parquet", [
        row("L", [{"role": "user", "content": "big strings"}], sent_at="2026-01-01T00:00:00Z",
            metadata='{"cwd": "/srv/app"}'),
    ], schema=schema)  # fmt: skip
    turns, st = parse_one(f)
    assert st.error is None
    assert [(t.session_id, t.workdir, t.blocks[0].text) for t in turns] == [
        ("L", "-srv-app", "big strings")
    ]


def test_sessions_spanning_many_row_batches_are_read_whole(tmp_path: Path) -> None:
    rows = [row(f"s{i}", [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}])
            for i in range(50)]  # fmt: skip
    f = write(tmp_path / "many.parquet", rows, row_group_size=7)
    st = FileStats(str(f))
    turns = list(parquet.parse_path(f, st, batch_rows=3))
    assert len(turns) == 100 and len({t.session_id for t in turns}) == 50
    assert [t.blocks[0].text for t in turns[:4]] == ["q0", "a0", "q1", "a1"]


def test_missing_required_column_is_a_clear_error(tmp_path: Path) -> None:
    f = write(tmp_path / "nomsg.parquet", [{"session_id": "x", "text": "hello"}])
    with pytest.raises(FunesError, match="no 'messages' column"):
        list(parquet.parse_path(f, FileStats(str(f))))
    r = run_cli("funes-parse", f)
    assert r.returncode == 1 and b"no 'messages' column" in r.stderr


def test_messages_of_the_wrong_type_are_a_clear_error(tmp_path: Path) -> None:
    f = write(tmp_path / "structs.parquet", [{"session_id": "x", "messages": [{"role": "user"}]}])
    with pytest.raises(FunesError, match="expected a list of JSON strings"):
        list(parquet.parse_path(f, FileStats(str(f))))


def test_funes_parse_routes_parquet_by_extension(tmp_path: Path) -> None:
    f = write(tmp_path / "t.PARQUET", [row("s1", CONVERSATION)])
    r = run_cli("funes-parse", f)
    assert r.returncode == 0, r.stderr
    assert [t["role"] for t in jsonl(r.stdout)][:2] == ["system", "user"]
    r = run_cli("funes-parse", "-", input=f.read_bytes())
    assert r.returncode == 1 and b"read from a file path, not a stream" in r.stderr
