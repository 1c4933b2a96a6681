"""Recall reads the shapes of its pool's sessions only (what kind of record sits at each seq,
and the last seq), not every row of the memory: every feature of the second stage and every
hit is the same as with every session's shape read in one scan — cold, warm, and after
appends, a remove, a scrub's rewrite and a compaction."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from funes.ingest.scrub import scrub
from funes.ranker import Sessions
from funes.records import Chunk
from funes.retrieval import Query, Searcher
from funes.store import open_memory
from funes.store.memory import Memory

COLS = ("session_id", "seq", "role", "block_type")
WORDS = ("lock", "parser", "vector", "segment", "manifest", "backfill", "scrub", "hook",
         "tile", "cache", "leak", "zoom", "retry", "token", "schema", "quota")  # fmt: skip
KINDS = [("user", "text"), ("assistant", "text"), ("assistant", "thinking"),
         ("assistant", "tool_use"), ("user", "tool_result"), ("system", "text")]  # fmt: skip
NOW = datetime(2026, 4, 1, tzinfo=UTC)  # recency is part of a hit's score
QUESTIONS = ("tile cache leak", "parser lock retry", "schema quota", "zoom token hook",
             "manifest backfill segment", "why does the vector scrub fail")  # fmt: skip


def unit_vectors(texts: list[str]) -> np.ndarray:
    v = np.random.default_rng(len(texts)).standard_normal((len(texts), 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


class FullScan(Searcher):
    """The searcher as it was: every session's shape, read with one scan of every row."""

    def _sessions(self, sids: Any) -> Sessions:
        t = self.memory.rows(None, COLS).to_pydict()
        return Sessions.build(*(t[c] for c in COLS))


def session(sid: str, rng: random.Random, first_seq: int = 0, turns: int | None = None) -> list:
    """A generated session: records of every kind at increasing seqs (gaps included), some
    seqs holding several blocks or split pieces, words drawn so questions match many
    sessions."""
    out = []
    seq = first_seq
    for _ in range(turns if turns is not None else rng.randint(3, 40)):
        seq += rng.choice((1, 1, 1, 2, 5))
        for block_idx in range(rng.choice((1, 1, 1, 2, 3))):
            role, block = rng.choice(KINDS)
            for split_idx in range(rng.choice((1, 1, 1, 2))):
                words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
                out.append(
                    Chunk(
                        id=f"{sid}-{seq}-{block_idx}-{split_idx}", text=f"{words} {sid} {seq}",
                        session_id=sid, turn_uuid=f"{sid}-t{seq}", parent_uuid=None, seq=seq,
                        ts=f"2026-03-{1 + seq % 28:02d}T10:00:00.000Z", role=role,
                        block_type=block, block_idx=block_idx, split_idx=split_idx,
                        tool_name="Bash" if block == "tool_use" else None, harness="claude",
                        workdir="/home/ana/proj", repo="ana/proj", source_path=f"/{sid}.jsonl",
                        vector=None,
                    )
                )  # fmt: skip
    return out


def history(first: int, n: int, seed: int) -> list[Chunk]:
    rng = random.Random(seed)
    return [c for i in range(first, first + n) for c in session(f"s{i:03d}", rng)]


def same_answers(warm: Searcher, path: Path) -> int:
    """Assert ``warm`` (and a cold searcher) compute the features and hits a full scan does
    for every question; returns how many sessions the pools held."""
    pooled: set[str] = set()
    for text in QUESTIONS:
        q = Query(text, k=8)
        full = FullScan(open_memory(path), pair=None).gather(q)
        assert full is not None
        for s in (warm, Searcher(open_memory(path), pair=None)):
            pool = s.gather(q)
            assert pool is not None
            assert [r["id"] for r in pool.rows] == [r["id"] for r in full.rows]
            assert np.array_equal(pool.x, full.x)
            sids = {r["session_id"] for r in pool.rows}
            for sid in sids:
                assert pool.ctx.sessions.shape[sid] == full.ctx.sessions.shape[sid]
                assert pool.ctx.sessions.last_seq[sid] == full.ctx.sessions.last_seq[sid]
            pooled |= sids
            got = s.search(q, NOW, pool=pool)
            want = FullScan(open_memory(path), pair=None).search(q, NOW, pool=full)
            assert [(h.row["id"], h.score) for h in got.hits] == [
                (h.row["id"], h.score) for h in want.hits
            ]
            assert got.verdict == want.verdict
    return len(pooled)


def reads_of(mem: Memory) -> list[tuple[str | None, Any]]:
    """Spy on a memory's projected scans: (filter, fragments) of each."""
    seen: list[tuple[str | None, Any]] = []
    rows = mem.rows

    def spy(where: str | None = None, columns: Any = (), fragments: Any = None, **more: Any) -> Any:
        if tuple(columns) == COLS:
            seen.append((where, fragments))
        return rows(where, columns, fragments, **more)

    mem.rows = spy  # type: ignore[method-assign]
    return seen


@pytest.fixture
def path(tmp_path: Path) -> Path:
    p = tmp_path / "mem"
    mem = open_memory(p, create=True)
    with mem.writer(interactive=False) as w:
        chunks = history(0, 60, seed=7)
        for i in range(0, len(chunks), 500):  # several fragments, as indexing leaves them
            w.append(chunks[i : i + 500], redacted=True)
        w.index_sessions(min_rows=0)  # the session index the filtered read goes through
    return p


def test_a_cold_searcher_reads_only_its_pools_sessions(path: Path) -> None:
    mem = open_memory(path)
    every = len({r["session_id"] for r in mem.rows(None, ("session_id",)).to_pylist()})
    searcher = Searcher(mem, pair=None)
    reads = reads_of(mem)
    pool = searcher.gather(Query("tile cache leak", k=8))
    assert pool is not None
    pooled = {r["session_id"] for r in pool.rows}
    assert len(reads) == 1 and reads[0][0] is not None  # one filtered scan, no full one
    assert set(pool.ctx.sessions.shape) == pooled
    assert len(pooled) < every
    assert same_answers(searcher, path) > len(pooled)


def test_shapes_stay_those_of_a_full_scan_through_appends_removes_and_rewrites(
    path: Path,
) -> None:
    searcher = Searcher(open_memory(path), pair=None)
    same_answers(searcher, path)
    kept = set(searcher._shapes.shapes.shape) if searcher._shapes else set()
    assert kept

    # A hook appends turns to sessions the searcher holds, and new sessions.
    rng = random.Random(11)
    grown = sorted(kept)[:5]
    more = [c for sid in grown for c in session(sid, rng, first_seq=500, turns=4)]
    more += history(60, 8, seed=12)
    more[-1].text += " GITHUB_TOKEN=ghp_" + "a1B2c3D4e5" * 3 + "x1y2z3 and more words"
    with open_memory(path).writer(interactive=False) as w:
        w.append(more, redacted=True)
    searcher.memory.reopen()
    reads = reads_of(searcher.memory)
    searcher._sessions(grown)
    assert [f is not None for _, f in reads] == [True]  # only the new fragment is read
    for sid in grown:
        assert searcher._sessions([sid]).last_seq[sid] > 500
    same_answers(searcher, path)

    # A remove: records in the middle and at the end of held sessions are deleted.
    mem = open_memory(path)
    gone_ids = [
        r["id"]
        for r in mem.rows(None, ("id", "session_id", "seq")).to_pylist()
        if r["session_id"] in grown and (r["seq"] > 500 or r["seq"] % 3 == 0)
    ]
    with mem.writer(interactive=False) as w:
        assert w.delete(gone_ids) == len(gone_ids)
    searcher.memory.reopen()
    for sid in grown:
        assert searcher._sessions([sid]).last_seq[sid] < 500
    same_answers(searcher, path)

    # A scrub rewrites the rows of a block holding a secret, in one commit, and purges.
    searcher._sessions([more[-1].session_id])
    report = scrub(str(path), builtin_only=True, embed=unit_vectors)
    assert report.rows_written >= 1 and report.purged
    searcher.memory.reopen()
    same_answers(searcher, path)

    # A compaction: every row moves to new fragments.
    with open_memory(path).writer(interactive=False) as w:
        w.optimize(ann=False)
    searcher.memory.reopen()
    same_answers(searcher, path)
