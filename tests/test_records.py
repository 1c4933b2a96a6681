"""The record contract (docs/records.md): canonical JSON that round-trips byte for byte."""

from __future__ import annotations

import pytest

from funes.records import Block, Chunk, RecordError, Turn, dumps, loads

TURN_LINE = (
    '{"kind":"turn","v":1,"harness":"codex","session_id":"s","turn_uuid":"s-0","parent_uuid":null,'
    '"seq":0,"ts":"2026-03-03T08:00:01.000Z","role":"user","workdir":"-srv-app","repo":"acme/app",'
    '"source_path":"/r.jsonl","blocks":[{"type":"text","text":"héllo \\"x\\"\\n","tool_name":null,'
    '"tool_use_id":null,"note":"block extra"}],"x_custom":{"kept":[1,2]}}'
)
CHUNK_LINE = (
    '{"kind":"chunk","v":1,"id":"0123456789abcdef","text":"héllo","session_id":"s","turn_uuid":"s-0",'
    '"parent_uuid":"p","seq":0,"ts":"","role":"user","block_type":"text","block_idx":0,"split_idx":0,'
    '"tool_name":null,"harness":"codex","workdir":"-srv-app","repo":"","source_path":"/r.jsonl",'
    '"vector":[0.1,-0.25,1e-07],"model":"m","x_custom":true}'
)


@pytest.mark.parametrize("line", [TURN_LINE, CHUNK_LINE])
def test_canonical_lines_round_trip_byte_for_byte(line: str) -> None:
    assert dumps(loads(line)) == line
    assert dumps(loads(line.encode("utf-8"))) == line


def test_unknown_fields_are_kept_in_order_after_known_ones() -> None:
    t = loads(TURN_LINE)
    assert isinstance(t, Turn)
    assert t.extra == {"x_custom": {"kept": [1, 2]}}
    assert t.blocks[0].extra == {"note": "block extra"}
    c = loads(CHUNK_LINE)
    assert (
        isinstance(c, Chunk) and c.vector == [0.1, -0.25, 1e-07] and c.extra == {"x_custom": True}
    )


def test_unknown_kinds_come_back_as_plain_dicts() -> None:
    assert loads('{"kind":"hit","v":1,"rank":1}') == {"kind": "hit", "v": 1, "rank": 1}


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("{not json", "invalid JSON"),
        ("[1,2]", "not a JSON object"),
        ('{"v":1}', "no 'kind'"),
        ('{"kind":"turn","session_id":"s","turn_uuid":"t"}', "blocks"),
        ('{"kind":"turn","turn_uuid":"t","blocks":[]}', "missing 'session_id'"),
        ('{"kind":"turn","session_id":"s","turn_uuid":"t","seq":"3","blocks":[]}', "'seq'"),
        (
            '{"kind":"chunk","id":"x","text":"t","session_id":"s","turn_uuid":"u","vector":"no"}',
            "vector",
        ),
        ('{"kind":"turn","v":0,"session_id":"s","turn_uuid":"t","blocks":[]}', "'v'"),
    ],
)
def test_bad_lines_raise_a_record_error_saying_why(line: str, why: str) -> None:
    with pytest.raises(RecordError, match=why):
        loads(line)


def test_minimal_turn_gets_defaults() -> None:
    t = loads(
        '{"kind":"turn","session_id":"s","turn_uuid":"t","blocks":[{"type":"text","text":"x"}]}'
    )
    assert isinstance(t, Turn)
    assert (t.v, t.seq, t.role, t.parent_uuid) == (1, 0, "", None)
    assert t.blocks == [Block("text", "x")]
