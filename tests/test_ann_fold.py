"""`funes optimize` keeps the vector index it built: compaction carries the index over to the
rewritten fragments, and the scalar indexes alone are folded after it.

Folding the vector index too (Lance's ``optimize_indices`` with no names) re-partitioned it:
Lance splits every IVF partition of more than 4 × 4,096 rows, and ours hold
:data:`funes.store.ann.PARTITION_ROWS` (20,000) by design, so each optimize re-split the index it
had just built (48 → 262 partitions at 1M, after re-reading every vector) and printed a line
`partition index is N but the number of partitions is M, skip loading it` per new partition on
stderr (214 at 1M). No row was lost by it; rows stored after the build are searched flat beside
the index until the refresh rebuilds it (:mod:`funes.store.ann`)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cmd
from test_ann_behind import make_memory, rows

from funes.records import Chunk
from funes.store import ann, open_memory
from funes.store.memory import Memory

# One IVF partition (fewer than 2 × PARTITION_ROWS vectors) over Lance's split threshold of
# 16,384 rows, as every partition of a memory indexed at any size is.
BUILT = 15_000
APPENDED = 2_500
SPLIT_LOG = b"skip loading it"


def partitions(mem: Memory) -> int:
    os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")  # their statistics only
    segments = mem._ds.stats.index_stats(ann.INDEX_NAME)["segments"]
    return sum(int(s["num_partitions"]) for s in segments)


def lost(mem: Memory, sample: list[Chunk]) -> list[str]:
    """Ids of the sampled rows whose own stored vector does not find them in the top 10 of
    recall's vector leg (k = 100: every partition probed, 1,000 codes re-ranked)."""
    out = []
    for c in sample:
        got = [i for i, _ in mem.vector_search(np.asarray(c.vector, dtype=np.float32), k=100)]
        if c.id not in got[:10]:
            out.append(c.id)
    return out


@pytest.mark.slow
def test_optimize_keeps_the_vector_index_it_built_and_every_row_finds_itself(
    tmp_path: Path,
) -> None:
    path = make_memory(tmp_path / "m", BUILT)
    assert ann.build(path, force=True) == "build"
    with open_memory(path).writer(interactive=False) as w:
        w.append(rows(BUILT, APPENDED, seed=1))
    before = open_memory(path)
    assert ann.state(before) == ann.AnnState(BUILT + APPENDED, True, APPENDED, ann.INDEX_TYPE)
    pick = np.random.default_rng(3)
    old, new = rows(0, BUILT, seed=BUILT), rows(BUILT, APPENDED, seed=1)
    sample = [old[i] for i in pick.choice(BUILT, 120, replace=False)]
    sample += [new[i] for i in pick.choice(APPENDED, 60, replace=False)]
    assert lost(before, sample) == []

    r = run_cmd("funes", "optimize", "--ann", "--json", "--memory", path)
    assert r.returncode == 0, r.stderr
    assert SPLIT_LOG not in r.stderr, r.stderr.decode()[:500]
    mem = open_memory(path)
    # the index built over every row, as built: one partition a PARTITION_ROWS
    assert ann.state(mem) == ann.AnnState(BUILT + APPENDED, True, 0, ann.INDEX_TYPE)
    assert partitions(mem) == max(1, (BUILT + APPENDED) // ann.PARTITION_ROWS)
    assert lost(mem, sample) == []
    assert len(mem._ds.get_fragments()) == 1  # compacted

    # Rows stored after the index without rebuilding it (`--no-ann`): compaction keeps them in
    # a fragment of their own, searched flat beside the index, until the refresh.
    late = rows(BUILT + APPENDED, 400, seed=2)
    with mem.writer(interactive=False) as w:
        w.append(late)
    r = run_cmd("funes", "optimize", "--no-ann", "--json", "--memory", path)
    assert r.returncode == 0, r.stderr
    assert SPLIT_LOG not in r.stderr, r.stderr.decode()[:500]
    mem = open_memory(path)
    assert ann.state(mem) == ann.AnnState(BUILT + APPENDED + 400, True, 400, ann.INDEX_TYPE)
    assert partitions(mem) == 1
    assert lost(mem, sample[::3] + late[::8]) == []
