"""Property: no record of the newer agents' formats, however mangled, aborts a parse, and the
good turns around it are kept.

JSONL formats get hypothesis-mangled lines between two good records (random bytes, cut lines,
values swapped for arbitrary JSON, deleted keys, lone surrogates, deep nesting — see
test_parse_property). Whole-file JSON formats get a good document with mangled messages put in
it. Database formats get rows whose JSON columns are mangled.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import agent_homes as ah
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_parse_property import _paths, _set, json_values, mutated_line

from funes.chunking import chunk_turns
from funes.records import dumps
from funes.secrets import redact
from funes.sources import FileStats, get_source, parse_stream, parse_unit
from funes.sources.routing import Unit


def _good(records: list[Any]) -> list[dict[str, Any]]:
    return [r for r in records if isinstance(r, dict)]


# (source name, make(uuid, text) -> one good record, header records)
JSONL = {
    "openclaw": (lambda u, t: {**ah.pi_entries("s", "/p", t)[5], "id": u}, ah.pi_entries("s", "/p", "x")[:1]),
    "omp": (lambda u, t: {**ah.pi_entries("s", "/p", t)[5], "id": u}, ah.pi_entries("s", "/p", "x")[:1]),
    "copilot": (
        lambda u, t: {"type": "assistant.message", "data": {"content": t, "toolRequests": [{"toolCallId": "c", "name": "bash", "arguments": {"command": "ls"}}]}, "id": u},
        _good(ah.copilot_events("s", "/p", "x"))[:1],
    ),
    "qwen": (lambda u, t: {**_good(ah.qwen_records("s", "/p", t))[4], "uuid": u}, []),
    "cursor": (lambda u, t: {"role": "assistant", "id": u, "message": {"content": [{"type": "text", "text": t}, {"type": "tool_use", "id": "x", "name": "Shell", "input": {"c": 1}}]}}, []),
    "gemini": (
        lambda u, t: {"id": u, "type": "gemini", "content": t, "toolCalls": [{"id": "c", "name": "ls", "args": {}, "result": [{"functionResponse": {"response": {"output": "o"}}}]}]},
        _good(ah.gemini_records("s", "x"))[:1],
    ),
}  # fmt: skip

SETTINGS = settings(
    max_examples=int(os.environ.get("FUNES_PROPERTY_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _check(turns: list[Any]) -> str:
    chunks = list(chunk_turns(turns, redact=redact))
    for record in [*turns, *chunks]:
        json.loads(dumps(record).encode("utf-8"))
    return " ".join(c.text for c in chunks)


def _parse_file(path: Path, source: str) -> tuple[list[Any], FileStats]:
    stats = FileStats(str(path))
    return list(parse_unit(Unit(path, get_source(source)), stats)), stats


@SETTINGS
@given(data=st.data(), fmt=st.sampled_from(sorted(JSONL)))
def test_mangled_lines_never_abort_the_newer_jsonl_formats(
    tmp_path: Path, data: st.DataObject, fmt: str
) -> None:
    make, header = JSONL[fmt]
    bad = data.draw(st.lists(mutated_line(make), max_size=6))
    lines = [json.dumps(h).encode() for h in header]
    lines += [json.dumps(make("good-first", "the first good turn")).encode(), *bad]
    lines.append(json.dumps(make("good-last", "the last good turn")).encode())
    raw = b"\n".join(lines) + b"\n"
    if fmt == "gemini" or fmt == "cursor":  # read from a file, by path
        f = Path(tempfile.mkdtemp(dir=tmp_path)) / f"{fmt}.jsonl"
        f.write_bytes(raw)
        turns, _ = _parse_file(f, fmt)
    else:
        stream = io.BufferedReader(io.BytesIO(raw))
        turns = list(parse_stream(stream, Path("s.jsonl"), FileStats("s"), get_source(fmt)))
    texts = _check(turns)
    assert "the last good turn" in texts
    if fmt != "gemini":  # a mangled gemini record may legitimately $rewindTo the first one
        assert "the first good turn" in texts


@st.composite
def mangled_message(draw: st.DrawFn, good: dict[str, Any]) -> Any:
    how = draw(st.integers(0, 3))
    if how == 0:
        return draw(json_values)
    path = draw(st.sampled_from(_paths(good)))
    if how == 1:
        return _set(good, path, draw(json_values))
    if how == 2 and path:
        return _set(good, path, None, delete=True)
    return {
        "role": draw(st.sampled_from(["user", "assistant", "system", None])),
        "content": draw(json_values),
    }


@SETTINGS
@given(data=st.data(), fork=st.sampled_from(["cline", "roo", "kilo"]))
def test_mangled_messages_in_a_task_history_never_abort(
    tmp_path: Path, data: st.DataObject, fork: str
) -> None:
    good = ah.cline_messages("x")
    bad = data.draw(st.lists(mangled_message(good[3]), max_size=5))
    doc = [
        {"role": "user", "content": "the first good turn"},
        *bad,
        {"role": "assistant", "content": "the last good turn"},
    ]
    f = Path(tempfile.mkdtemp(dir=tmp_path)) / "api_conversation_history.json"
    f.write_text(json.dumps(doc))
    turns, _ = _parse_file(f, fork)
    texts = _check(turns)
    assert "the first good turn" in texts and "the last good turn" in texts


@SETTINGS
@given(data=st.data())
def test_mangled_opencode_rows_never_abort(tmp_path: Path, data: st.DataObject) -> None:
    db = Path(tempfile.mkdtemp(dir=tmp_path)) / "opencode.db"
    ah.opencode_db(db, "ses_p", "the last good turn")
    conn = sqlite3.connect(db)
    for i in range(data.draw(st.integers(0, 4))):
        value = data.draw(json_values | st.text(max_size=30))
        as_text = value if isinstance(value, str) else json.dumps(value)
        table = data.draw(st.sampled_from(["message", "part"]))
        if table == "message":
            conn.execute(
                "insert into message values (?, 'ses_p', ?, 0, ?)", (f"msg_9{i}", 1, as_text)
            )
        else:
            conn.execute(
                "insert into part values (?, 'msg_02a', 'ses_p', 0, 0, ?)", (f"prt_9{i}", as_text)
            )
    conn.commit()
    conn.close()
    turns, stats = _parse_file(db, "opencode")
    assert "the last good turn" in _check(turns) and stats.error is None


@SETTINGS
@given(data=st.data())
def test_mangled_cursor_bubbles_never_abort(tmp_path: Path, data: st.DataObject) -> None:
    db = Path(tempfile.mkdtemp(dir=tmp_path)) / "state.vscdb"
    ah.cursor_db(db, "cmp", "the last good turn")
    conn = sqlite3.connect(db)
    for i in range(data.draw(st.integers(0, 4))):
        value = data.draw(json_values | st.text(max_size=30) | st.binary(max_size=30))
        as_stored = value if isinstance(value, (str, bytes)) else json.dumps(value)
        key = data.draw(
            st.sampled_from([f"bubbleId:cmp:z{i}", f"composerData:x{i}", f"bubbleId:x{i}:y"])
        )
        conn.execute("insert into cursorDiskKV values (?, ?)", (key, as_stored))
    conn.commit()
    conn.close()
    turns, stats = _parse_file(db, "cursor")
    assert "the last good turn" in _check(turns) and stats.error is None
