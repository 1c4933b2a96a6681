"""A warm searcher keeps every session's shape packed in a few arrays, read in one scan: each
shape, last seq and neighbourhood is the one a full scan into :class:`Sessions` gives — for
any rows (several blocks at one seq in any order, rows without a session, seq, role or block
type, batches cut anywhere), after appends, and in recall's features and hits."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_ann_behind import rows
from test_recall_shapes import COLS, FullScan, history, same_answers, session

from funes import retrieval
from funes.ranker import PackedSessions, Sessions
from funes.retrieval import SHAPE_COLUMNS, Query, Searcher, _pack
from funes.store import open_memory

ROLES = ("user", "assistant", "system", "tool", None)
BLOCKS = ("text", "thinking", "tool_use", "tool_result", "image", None)

row = st.tuples(
    st.sampled_from(("s1", "s2", "s3", "", None)),
    st.one_of(st.none(), st.integers(0, 9), st.sampled_from((2**40, -3))),
    st.sampled_from(ROLES),
    st.sampled_from(BLOCKS),
)


def batches(rows: list[tuple[Any, ...]], cuts: list[int]) -> list[pa.RecordBatch]:
    """``rows`` as record batches of the shape columns, cut at ``cuts``."""
    types = (pa.string(), pa.int64(), pa.string(), pa.string())
    edges = sorted({0, len(rows), *(c % (len(rows) + 1) for c in cuts)})
    out = []
    for a, b in itertools.pairwise(edges):
        cols = [pa.array([r[i] for r in rows[a:b]], type=t) for i, t in enumerate(types)]
        out.append(pa.RecordBatch.from_arrays(cols, names=list(SHAPE_COLUMNS)))
    return out


def assert_same(packed: PackedSessions, built: Sessions) -> None:
    assert set(packed.shape) == set(built.shape)
    assert len(packed.shape) == len(built.shape)
    for sid, (keys, kinds) in built.shape.items():
        assert packed.shape[sid] == (keys, kinds)
        assert packed.last_seq[sid] == built.last_seq[sid]
        assert packed.last_seq.get(sid) == built.last_seq.get(sid)
        for seq in [*keys, min(keys) - 1, max(keys) + 1]:
            assert packed.around(sid, seq) == built.around(sid, seq)
    assert packed.last_seq.get("never") is None
    assert packed.around("never", 3) == built.around("never", 3)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(row, max_size=60),
    st.lists(row, max_size=20),
    st.lists(st.integers(0, 80), max_size=4),
)
def test_packed_shapes_are_those_of_sessions_for_any_rows(
    rows: list[tuple[Any, ...]], more: list[tuple[Any, ...]], cuts: list[int]
) -> None:
    packed = _pack(batches(rows, cuts))
    assert_same(packed, Sessions.build(*zip(*rows, strict=True)) if rows else Sessions({}, {}))
    # rows appended later (a hook's write) are added as Sessions.extend adds them
    grown = packed.extend(*zip(*more, strict=True)) if more else packed
    every = rows + more
    assert_same(grown, Sessions.build(*zip(*every, strict=True)) if every else Sessions({}, {}))
    assert_same(packed, Sessions.build(*zip(*rows, strict=True)) if rows else Sessions({}, {}))


def test_a_warm_searcher_reads_every_shape_once_and_answers_as_a_full_scan(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mem"
    mem = open_memory(path, create=True)
    with mem.writer(interactive=False) as w:
        chunks = history(0, 40, seed=3)
        for i in range(0, len(chunks), 400):
            w.append(chunks[i : i + 400], redacted=True)
        w.index_sessions(min_rows=0)
    searcher = Searcher(open_memory(path), pair=None)
    scans: list[Any] = []
    scan = searcher.memory.scan_batches

    def spy(columns: Any, batch_size: int) -> Any:
        scans.append(tuple(columns))
        return scan(columns, batch_size)

    searcher.memory.scan_batches = spy  # type: ignore[method-assign]
    same_answers(searcher, path)
    assert scans == [COLS]  # the second question read every shape, once
    assert searcher._shapes is not None and searcher._shapes.every
    full = FullScan(open_memory(path), pair=None)._sessions(())
    assert isinstance(searcher._shapes.shapes, PackedSessions)
    assert_same(searcher._shapes.shapes, full)

    # A hook appends to a session and starts another: only the new fragment is read, and the
    # shapes stay those of a full scan.
    rng = random.Random(5)
    with open_memory(path).writer(interactive=False) as w:
        w.append(session("s001", rng, first_seq=900, turns=3) + history(40, 1, seed=4))
    searcher.memory.reopen()
    same_answers(searcher, path)
    assert scans == [COLS]
    packed = searcher._shapes.shapes
    assert isinstance(packed, PackedSessions)
    assert packed.last_seq["s001"] > 900 and "s040" in packed.shape
    assert_same(packed, FullScan(open_memory(path), pair=None)._sessions(()))
    pool = searcher.gather(Query("tile cache leak"))
    assert pool is not None and np.isfinite(pool.x).all()


def test_pool_rows_found_by_address_carry_the_stored_session_seq_role_and_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm searcher takes a pool row's session, seq, role and block type from what it keeps
    beside the row's address, not from the table: they are the stored values, nulls included,
    through appends and deletions."""
    path = tmp_path / "mem"
    mem = open_memory(path, create=True)
    kinds = [("user", "text"), ("assistant", "text"), ("assistant", "tool_use"),
             ("user", "tool_result"), (None, "text"), ("assistant", None)]  # fmt: skip
    made = rows(0, 300, seed=1)
    for i, c in enumerate(made):
        c.role, c.block_type = kinds[i % len(kinds)]
        c.seq = None if i % 11 == 0 else c.seq  # type: ignore[assignment]
    with mem.writer(interactive=False) as w:
        w.append(made[:200])
        w.append(made[200:])
    monkeypatch.setattr(retrieval, "ADDRESS_ROWS", 0)  # always by address
    warm = Searcher(open_memory(path), pair=None)
    fields = list(retrieval.POOL_FIELDS)

    def check() -> None:
        warm.memory = open_memory(path)
        stored = {r["id"]: r for r in warm.memory.rows(None, fields).to_pylist()}
        ids = [*sorted(stored)[::2], "not-stored"]
        got = warm._fetch(ids, fields)
        assert [r["id"] for r in got] == [i for i in ids if i in stored]
        for r in got:
            assert {f: r[f] for f in fields} == stored[r["id"]]
        assert any(r["seq"] is None for r in got) and any(r["role"] is None for r in got)

    check()
    with open_memory(path).writer(interactive=False) as w:
        w.append(rows(300, 60, seed=2))
        w.delete([c.id for c in made[::7]])
    check()
