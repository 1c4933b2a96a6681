"""Records defined once: conversions and field lists come from the dataclasses."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any

import pytest

from funes import records
from funes.records import (
    CHUNK_FIELDS,
    FILTERS,
    OMITTED,
    QUERY_OPTIONS,
    REQUIRED,
    Chunk,
    HitRecord,
    JsonRecord,
    MissRecord,
    QueryLine,
    RecordError,
    dumps,
)

HIT_LINE = (
    '{"kind":"hit","v":1,"rank":1,"score":0.5,"scores":{"lexical_rank":1,"vector_rank":null,'
    '"rerank":null,"relevance":0.9,"recency":1.0},"memory":"local","id":"0123456789abcdef",'
    '"text":"t","session_id":"s","turn_uuid":"u","parent_uuid":null,"seq":2,"ts":"","role":"user",'
    '"block_type":"text","block_idx":0,"split_idx":0,"tool_name":null,"harness":"codex",'
    '"workdir":"w","repo":"","source_path":"/r.jsonl","neighbors":[],"duplicates":[{"session_id":'
    '"s2","turn_uuid":"u2","seq":1,"ts":"","get":"funes get s2 u2"}],"trusted":false,'
    '"verdict":"weak","answerable":0.25,"query":"q","query_id":7}'
)


def test_chunk_fields_are_the_chunk_dataclass_fields_a_hit_shows() -> None:
    names = [f.name for f in fields(Chunk)]
    assert list(CHUNK_FIELDS) == names[: names.index("vector")]


def test_a_hit_line_round_trips_byte_for_byte() -> None:
    assert dumps(HitRecord.from_dict(json.loads(HIT_LINE))) == HIT_LINE


def test_a_hit_leaves_out_what_it_does_not_have() -> None:
    d = json.loads(HIT_LINE)
    for key in ("duplicates", "trusted", "answerable", "query_id"):
        del d[key]
    line = dumps(HitRecord.from_dict(d))
    assert line == dumps(d)
    assert '"trusted"' not in line and '"duplicates"' not in line


def test_a_miss_line_carries_memory_verdict_query_and_its_id() -> None:
    assert dumps(MissRecord(memory="m", query="q")) == (
        '{"kind":"miss","v":1,"memory":"m","verdict":"weak","query":"q"}'
    )
    assert dumps(MissRecord(memory="m", query="q", query_id="a")).endswith(',"query_id":"a"}')


def test_a_query_line_keeps_values_as_given_and_reads_type_as_block_type() -> None:
    line = QueryLine.parse(b'{"query":"x","id":3,"k":"2","type":"text","mine":1}')
    assert (line.query, line.id, line.extra) == ("x", 3, {"mine": 1})
    assert line.options() == {"k": "2", "block_type": "text"}
    both = QueryLine.parse('{"query":"x","type":"text","block_type":"thinking"}')
    assert both.options() == {"block_type": "thinking"}


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (b"{bad", "invalid JSON"),
        (b"[1]", "non-empty string 'query'"),
        (b'{"query":1}', "non-empty string 'query'"),
        (b'{"query":"  "}', "non-empty string 'query'"),
        (b"[" * 100_000, "invalid JSON"),
    ],
)
def test_a_bad_query_line_says_why(raw: bytes, why: str) -> None:
    with pytest.raises(RecordError, match=why):
        QueryLine.parse(raw)


def test_the_query_options_are_what_a_query_and_its_filters_take() -> None:
    from funes.retrieval import Filters, Query

    assert tuple(f.name for f in fields(Filters)) == FILTERS
    numbers = [k for k in QUERY_OPTIONS if k not in FILTERS]
    assert set(numbers) <= {f.name for f in fields(Query)}


def test_a_chunk_from_a_table_row_fills_nulls() -> None:
    row = {f: None for f in CHUNK_FIELDS} | {"id": "i", "vector": (0.5, 1.0)}
    c = Chunk.from_row(row)
    assert (c.text, c.seq, c.parent_uuid, c.tool_name, c.vector) == ("", 0, None, None, [0.5, 1.0])


def test_records_imports_nothing_heavy() -> None:
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(records))
    imported = {
        n.module if isinstance(n, ast.ImportFrom) else a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    }
    assert imported <= {
        "__future__", "copy", "json", "re", "collections.abc", "dataclasses", "types", "typing",
    }  # fmt: skip


def test_the_table_columns_are_the_chunk_fields_and_its_vector() -> None:
    from funes.store.memory import COLUMNS

    assert sorted(COLUMNS) == sorted([*CHUNK_FIELDS, "vector"])


def test_a_new_record_type_is_a_dataclass_and_nothing_else() -> None:
    @dataclass(slots=True)
    class Tag(JsonRecord):
        KIND = "tag"
        name: str = field(metadata=REQUIRED)
        note: str | None = field(default=None, metadata=OMITTED)
        extra: dict[str, Any] = field(default_factory=dict)
        v: int = 1

    assert "_FROM_DICT" not in Tag.__dict__  # derived on first use
    tag = Tag.from_dict({"kind": "tag", "name": "x", "mine": [1]})
    compiled = Tag.__dict__["to_dict"]
    assert dumps(tag) == '{"kind":"tag","v":1,"name":"x","mine":[1]}'
    assert Tag.__dict__["to_dict"] is compiled
    with pytest.raises(RecordError, match="missing 'name'"):
        Tag.from_dict({"kind": "tag"})
