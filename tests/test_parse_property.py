"""Property: no transcript line, however mangled, aborts a parse-and-chunk run.

Hypothesis mutates real-shaped transcript lines of each JSONL format — random bytes, cut
lines, values swapped for arbitrary JSON, lone surrogates, deep nesting, dropped keys — and
puts them between two good turns. The run must finish, keep both good turns, and produce only
records that serialise as UTF-8 JSON lines.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from funes.chunking import chunk_turns
from funes.records import dumps
from funes.secrets import redact
from funes.sources import FileStats, get_source, parse_stream


def claude(uuid: str, text: str) -> dict[str, Any]:
    return {
        "type": "assistant",
        "uuid": uuid,
        "parentUuid": None,
        "sessionId": "s",
        "timestamp": "2026-11-01T10:00:00.000Z",
        "cwd": "/home/ana/proj",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": text},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
            ],
        },
    }


def pi(uuid: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": uuid,
        "parentId": None,
        "timestamp": "2026-11-01T10:00:00.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
    }


def codex(uuid: str, text: str) -> dict[str, Any]:
    return {
        "timestamp": "2026-11-01T10:00:00.000Z",
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": f"{uuid} {text}"}],
        },
    }


FORMATS = {"claude": claude, "pi": pi, "codex": codex}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _set(value: Any, path: tuple[Any, ...], new: Any, delete: bool = False) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy = dict(value) if isinstance(value, dict) else list(value)
    if delete and not rest:
        del copy[head]
    else:
        copy[head] = _set(copy[head], rest, new, delete)
    return copy


@st.composite
def mutated_line(draw: st.DrawFn, make: Any) -> bytes:
    rec = make(draw(st.sampled_from(["m-1", "m-2"])), "a line to mangle")
    line = json.dumps(rec).encode()
    how = draw(st.integers(0, 6))
    if how == 0:
        return draw(st.binary(max_size=200)).replace(b"\n", b" ")
    if how == 1:
        return line[: draw(st.integers(0, len(line)))]
    paths = _paths(rec)
    path = draw(st.sampled_from(paths))
    if how == 2:
        return json.dumps(_set(rec, path, draw(json_values))).encode()
    if how == 3 and path:
        return json.dumps(_set(rec, path, None, delete=True)).encode()
    if how == 4:
        half = draw(st.sampled_from(["\\ud83d", "\\ude00", "\\udfff", "x\\ud800y"]))
        return line.replace(b"a line to mangle", half.encode())
    if how == 5:
        depth = draw(st.integers(150, 3000))
        return (
            json.dumps(_set(rec, path, "DEEP"))
            .replace('"DEEP"', "[" * depth + "]" * depth)
            .encode()
        )
    return line.replace(b'"', b"", draw(st.integers(1, 3)))


@settings(
    max_examples=int(os.environ.get("FUNES_PROPERTY_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data(), fmt=st.sampled_from(sorted(FORMATS)))
def test_mutated_lines_never_abort_parse_and_chunk(data: st.DataObject, fmt: str) -> None:
    make = FORMATS[fmt]
    bad = data.draw(st.lists(mutated_line(make), max_size=6))
    head = json.dumps(make("good-first", "the first good turn")).encode()
    tail = json.dumps(make("good-last", "the last good turn")).encode()
    stream = io.BufferedReader(io.BytesIO(b"\n".join([head, *bad, tail]) + b"\n"))
    stats = FileStats("s.jsonl")
    turns = list(parse_stream(stream, Path("s.jsonl"), stats, get_source(fmt)))
    chunks = list(chunk_turns(turns, redact=redact))
    for record in [*turns, *chunks]:
        json.loads(dumps(record).encode("utf-8"))  # writable as a UTF-8 JSON line
    texts = " ".join(c.text for c in chunks)
    assert "the first good turn" in texts and "the last good turn" in texts
    assert stats.lines == len(bad) + 2
