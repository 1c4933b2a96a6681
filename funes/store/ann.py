"""The vector (ANN) index of a memory: when it pays, and how it is built behind the writers.

Below :func:`threshold` vectors recall's vector leg scans them all (exact, and fast enough);
from there on an IVF_RQ index (2-bit RaBitQ codes, every partition probed, the best
:data:`CANDIDATES` re-ranked on the stored vectors) answers it (see ``Memory.vector_search``).
Rows whose vector was stored after the index was built sit in fragments it does not cover, and
Lance searches those flat beside it; once :func:`refresh_rows` of them have piled up the index
is rebuilt over everything. Both figures are measured (``bench/ann.py``, docs/store.md), and
both can be set for a memory's user or a test through the environment
(:data:`THRESHOLD_ENV`, :data:`REFRESH_ENV`).

Nobody has to ask for it: the end of an index run or of a backfill behind one starts
:func:`build` in a detached, niced process when :func:`due` says so (``funes.ingest.ann``).

Why the build holds no writer lock: it takes a minute at 100k vectors on two cores, and every
hook run in that minute would find the memory busy. It need not: the index is a separate Lance
commit (a ``CreateIndex`` transaction: index files written under ``_indices/<uuid>/`` first,
then a new table version naming them, committed atomically), and Lance rebases it over the
appends, vector stores and deletes committed while it was built — rows written meanwhile are
simply not covered and are searched flat. A kill at any moment before that commit leaves the
table at the version readers were already using (plus unreferenced files under ``_indices/``);
after it, the index is whole. Either way the memory opens and recalls what it did.

What does need care is everything that would delete those not-yet-committed files or rewrite
the fragments the index is being built from: the purge of `funes scrub` (it deletes every file
no version names) and compaction (`funes optimize`). They take :class:`AnnLock` — the purge
waits for a running build, `optimize` builds the index itself only when no build runs — and the
build holds it for its whole life, so one runs at a time.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes.store import counts, native
from funes.store.lexical import LexicalIndex
from funes.store.lock import WriterLock
from funes.store.private import private_dir

if TYPE_CHECKING:
    from funes.store.memory import Memory

# Measured with bench/ann.py (random unit vectors; recall's vector leg, k = 100; CPU ms per
# query, medians of 40, 2 shared cores; docs/store.md "Vectors"): a flat scan costs
# ≈ 1 ms per 1,000 vectors (19.2 at 20k, 47.8 at 50k, 104.5 at 100k); through an index a query
# costs 14–31 whatever the size up to 100k, so it beats the scan from ≈ 15k vectors and is
# built from 20k. Rows stored after a build are scanned beside it at the flat rate (+8.6 ms for
# 10k over a 20k index, +19.8 for 20k; +11 and +39 over 50k; +0.2 and +15.7 over 100k),
# hence a refresh from 10k: the index rebuilt over everything, in the background.
ANN_THRESHOLD = 20_000
ANN_REFRESH_ROWS = 10_000
THRESHOLD_ENV = "FUNES_ANN_THRESHOLD"
REFRESH_ENV = "FUNES_ANN_REFRESH"
INDEX_NAME = "vector_idx"  # the name LanceDB gives a vector column's index
PARTITION_ROWS = 20_000  # one IVF partition per this many vectors
# The index built: IVF with RaBitQ codes of 2 bits a dimension (121 B a vector with its row id
# and correction factors). Measured with bench/ann.py --compare on the 1M bench memory (random
# vectors, the worst case; k = 100; CPU per query, medians of 40; 2026-12-02): 1,000 codes
# re-ranked give recall@10 1.00 (@100 0.94) against the exact answer in 112 ms, built in 23 s
# of CPU (797 MB peak). IVF_HNSW_SQ, the index before, cost 585 B a vector (the disk aim of
# 2.3 KB a chunk missed), 534-570 s of CPU to build (858-872 MB), 144 ms a query for 0.965, and
# a cold recall 0.8 s more CPU and +400 MB (its graphs read whole). 1-bit codes (65 B): 0.84
# at 2,000 re-ranked, 0.90 at 4,000 (186 ms); IVF_PQ, 192 4-bit sub-vectors (101 B): 0.995
# at 1,000 in 100 ms but @100 0.86.
INDEX_TYPE = "IVF_RQ"
INDEX_PARAMS: dict[str, int] = {"num_bits": 2}
# Every partition is probed (Lance takes the smaller of this and the partitions): random
# vectors, the worst case, spread a query's true neighbours over all of them (20 of 48 at 1M
# gave recall@10 0.64 under IVF_HNSW_SQ).
NPROBES = 1 << 16
# Codes re-ranked on the stored vectors (their exact distances order the hits), whatever the
# number of hits asked for: recall's leg asks 100. 500 cost 95 ms at 1M for recall@10 0.995,
# but @100 0.85: a memory of 4,000 random vectors then ranked recall's final hits differently
# from a flat scan (tests/test_ann_behind.py, the kill test).
CANDIDATES = 1000
# An index of an older type (IVF_HNSW_SQ) is searched as before, k × 5 re-ranked, until the
# next refresh replaces it.
LEGACY_REFINE = 5
LOCK_NAME = "ann.lock"
SETTLE_WAIT = 5.0  # seconds the build waits for the writer lock to record its commit


def threshold() -> int:
    """Vectors from which a memory gets an ANN index (:data:`THRESHOLD_ENV` overrides)."""
    return _env_int(THRESHOLD_ENV, ANN_THRESHOLD)


def refresh_rows() -> int:
    """Vectors stored since the index was built that make it worth rebuilding."""
    return _env_int(REFRESH_ENV, ANN_REFRESH_ROWS)


def _env_int(name: str, default: int) -> int:
    try:
        return max(1, int(os.environ[name]))
    except (KeyError, ValueError):
        return default


def refine_factor(index_type: str, k: int) -> int:
    """Stored vectors read per hit asked for (``k``) through an index of ``index_type``."""
    if index_type != INDEX_TYPE:
        return LEGACY_REFINE
    return max(1, -(-CANDIDATES // max(1, k)))


@dataclass(frozen=True)
class AnnState:
    vectors: int  # rows with a vector
    indexed: bool  # an ANN index exists
    unindexed: int  # rows in fragments the index does not cover (searched flat)
    index_type: str | None = None  # the Lance index type of the one that exists


def state(mem: Memory, vectors: int | None = None) -> AnnState:
    """What the memory's vector index is like now. ``vectors`` saves a count the caller made."""
    if vectors is None:
        vectors = mem.count("vector IS NOT NULL")
    kind = mem.ann_index_type()
    if kind is None:
        return AnnState(vectors, False, vectors)
    return AnnState(vectors, True, unindexed_rows(mem), kind)


def unindexed_rows(mem: Memory) -> int:
    """Rows of the fragments the vector index does not cover (from the manifest: no scan)."""
    ds = mem._ds
    covered: set[int] = set()
    for idx in ds.describe_indices():
        if list(idx.field_names) == ["vector"]:
            for seg in idx.segments:
                covered.update(seg.fragment_ids)
    # num_rows is the manifest's figure (physical rows less deletions): no file is opened,
    # however many small fragments hooks' appends have left
    return sum(int(f.metadata.num_rows) for f in ds.get_fragments() if f.fragment_id not in covered)


def due(st: AnnState) -> str | None:
    """``"build"`` (none yet, and enough vectors), ``"refresh"`` (enough rows stored since
    the build, or an index of an older type: it is rebuilt as :data:`INDEX_TYPE`), or None."""
    if not st.indexed:
        return "build" if st.vectors >= threshold() and st.vectors >= 2 else None
    if st.index_type is not None and st.index_type != INDEX_TYPE:
        return "refresh"
    return "refresh" if st.unindexed >= refresh_rows() else None


def create(ds: Any, vectors: int) -> Any:
    """Build :data:`INDEX_TYPE` over ``vectors`` rows of Lance dataset ``ds``, replacing the
    index there is (one commit); returns the dataset at the version it made."""
    ds = ds.create_index(
        "vector",
        INDEX_TYPE,
        name=INDEX_NAME,
        metric="l2",
        replace=True,
        num_partitions=max(1, vectors // PARTITION_ROWS),
        **INDEX_PARAMS,
    )
    native.release()  # the build's buffers (~+320 MB kept at 1M otherwise)
    return ds


class AnnLock:
    """`<memory>/ann.lock`: held by a vector index build for its whole life, and by what must
    not run beside one (a scrub's purge)."""

    def __init__(self, memory: Path) -> None:
        self.path = memory / LOCK_NAME
        self._fd: int | None = None

    def acquire(self, wait: bool = False) -> bool:
        private_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None


def building(memory: Path) -> bool:
    """Whether a vector index build runs on ``memory`` now."""
    lock = AnnLock(memory)
    if lock.acquire():
        lock.release()
        return False
    return True


def build(
    path: Path, force: bool = False, on_start: Callable[[str, int], None] | None = None
) -> str | None:
    """Build or refresh the memory's vector index if :func:`due` (``force``: build it now),
    without the writer lock; returns what was done (``"build"``, ``"refresh"``) or None
    (nothing due, or another build runs). ``on_start`` hears what it starts and over how many
    vectors. Atomic: see the module docstring."""
    # lazy: funes.store.memory imports this module
    from funes.store.memory import open_memory

    lock = AnnLock(path)
    if not lock.acquire():
        return None
    try:
        mem = open_memory(path)
        st = state(mem)
        what = due(st)
        if force and st.vectors >= 2:
            what = "build" if not st.indexed else "refresh"
        if what is None:
            return None
        if on_start is not None:
            on_start(what, st.vectors)
        before = counts.read(path)
        ds = mem._ds
        # A refresh rebuilds it too: a fresh build retrains the partitions on what the memory
        # now holds (and replaces an index of an older type). It is cheap: 3 s of CPU at 100k
        # vectors, 23 s at 1M; folding new rows into an IVF_HNSW_SQ index with Lance's
        # optimize_indices cost more than building it afresh.
        ds = create(ds, st.vectors)
        _settle(path, int(ds.version), before)
        return what
    finally:
        lock.release()


def _settle(
    path: Path, ours: int, before: tuple[counts.TableCounts, counts.TableState] | None
) -> None:
    """Tell the lexical index and counts.json that the version the build committed holds the
    same rows as the one before it, so readers neither catch the lexical index up nor recount
    the table, and fold the rows stored since into the id index (:func:`_fold_ids`). Under the
    writer lock, taken briefly; skipped when it stays busy (then the next writer reconciles,
    and the next `funes status` counts)."""
    lock = WriterLock(path)
    deadline = time.monotonic() + SETTLE_WAIT
    while not lock.try_acquire():
        if time.monotonic() >= deadline:
            return
        time.sleep(0.1)
    try:
        now = counts.signature(path)
        if now is None or now.version != ours:
            return  # someone wrote after us: they recorded their own version
        lex = LexicalIndex.open(path / "lexical")
        if lex.lance_version == ours - 1:
            lex.commit(ours)
        c = None
        if before is not None and before[1].version == ours - 1:
            c = before[0]
            c.ann_index = True
            counts.write(path, c, now)
        _fold_ids(path, lex, c)
    finally:
        lock.release()


def _fold_ids(path: Path, lex: LexicalIndex, c: counts.TableCounts | None) -> None:
    """Fold the rows the id index does not cover into it, under the writer lock :func:`_settle`
    holds. Storing a vector rewrites its row, id included, so the vectors that made this build
    due left as many rows outside the id index, and a writer folds them only once they are a
    tenth of the table: until then a cold recall reads every id to find its pool (the kept 1M
    bench memory, its id index covering no row: 2.80 s of CPU a cold `funes recall`, 2.06 s
    once folded; the fold costs 2.3 s of CPU and 346 MB there). Folding here, at every build
    and refresh, keeps them under the refresh's 10,000."""
    # lazy: funes.store.memory imports this module
    from funes.store.memory import ID_INDEX, open_memory

    mem = open_memory(path)
    if not mem.has_id_index() or not mem.unindexed_rows("id"):
        return
    mem._ds.optimize.optimize_indices(index_names=[ID_INDEX])
    mem.reload()
    if lex.lance_version == mem.version - 1:
        lex.commit(mem.version)
    now = counts.signature(path)
    if c is not None and now is not None and now.version == mem.version:
        counts.write(path, c, now)
