"""Upkeep of a memory's table under the writer lock: the scalar indexes on ``session_id`` and
``id`` (built from a size, folded in as rows go stale), compaction, reaping old versions,
`funes optimize` (with the vector index: :mod:`funes.store.ann`) and the purge of `funes scrub`.
Each takes the :class:`~funes.store.writer.MemoryWriter` that holds the lock."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from funes.store import ann as ann_mod
from funes.store import counts, native
from funes.store.table import dataset

if TYPE_CHECKING:
    from funes.store.writer import MemoryWriter

# At and above this many rows a writer keeps a BTREE index on ``session_id``: `funes get` and
# recall's neighbours filter one session's seq window, which without it reads the session_id
# and seq columns of every row (≈ 0.14 s of CPU at 144k rows in 256-row fragments, 6 ms at
# 3k; with it ≈ 5 ms at any size, measured in bench/README.md).
SESSION_INDEX_ROWS = 5_000
SESSION_INDEX = "session_id_idx"
# Rows written after a scalar index was built (appended, or rewritten: storing a vector rewrites
# its id) are read by a scan until they are folded into it: a writer folds them in once they
# are this share of the table (and the index's row threshold or more). Hooks append a session
# at a time and a backfill rewrites every id, so an index built once soon covered nothing: a
# cold `funes get` and every id lookup (recall's pool, each backfill batch) grew with the table.
INDEX_STALE = 0.1
# At and above this many rows a writer storing vectors keeps a BTREE index on ``id``: storing a
# batch's vectors is a merge-insert on ``id``, which without it joins the whole table (every
# column: +400 MB of RSS per 256-vector commit at 120k rows, growing with the table; with it
# ≈ 1 ms-order lookups and a bounded peak, measured).
ID_INDEX_ROWS = 5_000
# Lance's compaction in bounded memory: one thread, 1,024-row batches (its defaults, a thread
# per core reading with its default I/O buffer, peaked at 4.8 GB compacting a million rows).
COMPACTION = {"target_rows_per_fragment": 1 << 20, "num_threads": 1, "batch_size": 1024}
ID_INDEX = "id_idx"


def purge(w: MemoryWriter) -> None:
    """Physically remove deleted rows and every older version of the table and the
    lexical index, so no file under the memory still holds text that was deleted.

    Readers using an older table version fail (their files are gone): call it only for
    a rewrite that must not be recoverable (`funes scrub`), under the writer lock.
    """
    w._counts = None
    w.memory.lexical.compact()
    w.memory.lexical.commit(w.memory.version)
    # The purge deletes every file no version names: a vector index build running in the
    # background has written files its commit has not named yet. Wait for it.
    building = ann_mod.AnnLock(w.memory.path)
    building.acquire(wait=True)
    try:
        _purge_table(w)
    finally:
        building.release()
    w.memory.reload()
    w.memory.lexical.commit(w.memory.version)


def _purge_table(w: MemoryWriter) -> None:
    # Every fragment that lost a row is rewritten (Lance's default leaves one alone below
    # 10 % of rows deleted, and their bytes on disk), a batch at a time: the whole table
    # read and written back peaked with the memory's size.
    _compact(w, deletions=0.0, lean=True)
    _cleanup(w, timedelta(0), delete_unverified=True)


def _compact(w: MemoryWriter, deletions: float | None = None, lean: bool = False) -> None:
    """Compact the table's fragments in bounded memory (:data:`COMPACTION`); ``deletions``:
    the fraction of a fragment's rows deleted from which it is rewritten without them;
    ``lean``: with Lance's caches held to :data:`LEAN_CACHE_BYTES`."""
    ds = dataset(w.memory.path, lean=lean)
    opts: dict[str, Any] = dict(COMPACTION)
    if deletions is not None:
        opts["materialize_deletions_threshold"] = deletions
    ds.optimize.compact_files(**opts)
    del ds
    native.release()
    w._table.checkout_latest()
    w.memory.reload()


def _cleanup(w: MemoryWriter, older_than: timedelta, delete_unverified: bool = False) -> None:
    """Remove table versions older than ``older_than`` and the files only they name."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "older_than=0 removes every version"
        dataset(w.memory.path).cleanup_old_versions(
            older_than=older_than, delete_unverified=delete_unverified
        )
    w._table.checkout_latest()


def index_sessions(w: MemoryWriter, min_rows: int | None = None) -> bool:
    """Build the BTREE index on ``session_id`` when the table has none and holds at least
    ``min_rows`` rows (default :data:`SESSION_INDEX_ROWS`), or fold into it the rows
    appended since, once they are :data:`INDEX_STALE` of the table; returns whether
    it built or updated one (≈ 0.2 s at 144k rows).

    Lance keeps it usable as the table changes: rows appended (or rewritten by a scrub)
    after the build sit in fragments the index does not cover, and a filtered read scans
    those besides looking the rest up, until they are folded in here or by `funes optimize`.

    Nothing stored is at risk: Lance writes the index files under ``_indices/`` first and
    then commits a new table version (a manifest naming them) atomically, so a kill during
    the build leaves the table at its previous version (plus unreferenced index files, a
    few bytes per row), and the next writer past the threshold builds the index again. The table's
    rows are not rewritten. The counts stay valid (an index changes none of them) and the
    lexical index is told the new version, so neither `funes status` nor the next reader
    recounts or catches up.
    """
    least = SESSION_INDEX_ROWS if min_rows is None else min_rows
    return _btree(w, "session_id", SESSION_INDEX, w.memory.has_session_index(), least)


def index_ids(w: MemoryWriter, min_rows: int = ID_INDEX_ROWS) -> bool:
    """Build the BTREE index on ``id`` when the table has none and holds at least
    ``min_rows`` rows, or fold into it the rows rewritten since once they are
    :data:`INDEX_STALE` of the table; returns whether it built or updated one. Safe like
    :meth:`index_sessions` (an atomic commit of index files; rows, counts and the lexical
    index unchanged). Rows rewritten after the build (each stored vector rewrites its
    row's id) are looked up by a scan of their fragments until folded in: a backfill of
    15,000 vectors into a 120k-row table kept the peak under 600 MB, against 850 MB after
    3 commits without the index; at 1M rows every vector stored left recall's pool read
    by id scanning a million ids (0.44-0.59 s of CPU a cold recall)."""
    return _btree(w, "id", ID_INDEX, w.memory.has_id_index(), min_rows)


def _btree(w: MemoryWriter, column: str, name: str, present: bool, least: int) -> bool:
    """:meth:`index_sessions` and :meth:`index_ids`: build the BTREE index ``name`` on
    ``column`` from ``least`` rows, or fold in the rows it does not cover once they are
    :data:`INDEX_STALE` of the table (an incremental update, committed like the build)."""
    m = w.memory
    rows = m.count()
    if rows < least:
        return False
    if present:
        stale = m.unindexed_rows(column)
        if not stale or stale < max(least, INDEX_STALE * rows):
            return False
        before = w._counts_before()
        m._ds.optimize.optimize_indices(index_names=[name])
    else:
        # lazy: lancedb stays off fast commands' start-up
        from lancedb.index import BTree

        before = w._counts_before()
        w._table.create_index(column, config=BTree(), name=name, replace=False)
    m.reload()
    w._counts_after(before)
    m.lexical.commit(m.version)
    return True


def optimize(
    w: MemoryWriter,
    ann: bool | None = None,
    cleanup_older_than: timedelta = timedelta(minutes=10),
    on_step: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Maintenance off the hot path: compact table fragments and the lexical index, build
    the ANN index when there are enough vectors (``ann=True`` forces it, ``False`` skips
    it) and the session index when there are enough rows (:meth:`index_sessions`; the
    compaction brings an existing one up to date), and reap table versions older than
    ``cleanup_older_than``. ``on_step`` hears the
    name of each phase as it starts."""
    step = on_step or (lambda _: None)
    report: dict[str, Any] = {}
    before = w._counts_before()  # optimizing changes no count but the ANN index
    step("compacting the lexical index")
    t0 = time.monotonic()
    w.memory.lexical.compact()
    w.memory.lexical.commit(w.memory.version)
    report["lexical_s"] = round(time.monotonic() - t0, 2)
    # streamed: a count whose filter reads the vector column held it whole (+235 MB at 1M)
    with_vectors = w.memory.count_streamed("vector IS NOT NULL")
    if ann is None:
        ann = with_vectors >= ann_mod.threshold()
    # Not beside a vector index build running in the background: it builds the same
    # index, and compaction would rewrite the fragments it reads (its commit would fail).
    # Both wait for the next optimize then.
    building = ann_mod.AnnLock(w.memory.path)
    if not building.acquire():
        report["ann_behind"] = True
        return _finish_optimize(w, report, before, with_vectors)
    try:
        if ann and with_vectors >= 2:
            step("building the vector index")
            t0 = time.monotonic()
            ann_mod.create(w.memory._ds, with_vectors)
            w.memory.reload()
            report["ann_s"] = round(time.monotonic() - t0, 2)
        step("compacting the table")
        t0 = time.monotonic()
        _compact(w)
        _fold_scalar(w)
        _cleanup(w, cleanup_older_than)
        report["table_s"] = round(time.monotonic() - t0, 2)
    finally:
        building.release()
    return _finish_optimize(w, report, before, with_vectors)


def _fold_scalar(w: MemoryWriter) -> None:
    """Fold the rows appended or rewritten since a scalar index (``session_id``, ``id``) was
    built into it, after the compaction (which carried every index over to the fragments it
    wrote). Not the vector index: Lance's fold of an IVF index splits each partition of more
    than 4 × 4,096 rows, and ours hold :data:`~funes.store.ann.PARTITION_ROWS` by design, so it
    re-partitioned the index just built (48 → 262 partitions at 1M, every vector read again,
    a `partition index is N … skip loading it` line on stderr for each new one) and lost no
    row. Rows stored after the vector index are searched flat beside it until
    :func:`funes.store.ann.build` rebuilds it, as between optimizes."""
    ds = dataset(w.memory.path)
    names = [i.name for i in ds.describe_indices() if list(i.field_names) != ["vector"]]
    if names:  # none named would fold every index
        ds.optimize.optimize_indices(index_names=names)
    del ds
    native.release()


def _finish_optimize(
    w: MemoryWriter, report: dict[str, Any], before: counts.TableCounts | None, with_vectors: int
) -> dict[str, Any]:
    w.memory.reload()
    if before is not None:
        before.ann_index = w.memory.has_ann_index()
    w._counts_after(before)
    w.memory.lexical.commit(w.memory.version)
    index_sessions(w)
    report["session_index"] = w.memory.has_session_index()
    report["vectors"] = with_vectors
    report["ann"] = w.memory.has_ann_index()
    return report
