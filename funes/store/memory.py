"""A memory: one LanceDB table of chunks plus its lexical index, in one directory.

    <memory>/chunks.lance/   the LanceDB table `chunks` (schema and model stamp below)
    <memory>/lexical/        the BM25 segments (funes.store.lexical)
    <memory>/state.json      which transcript files are indexed (funes.store.state)
    <memory>/store.lock      the writer lock (funes.store.lock)

Readers (:func:`open_memory`) take no lock and see the latest committed table version; if the
lexical index is behind the table (a writer was killed between its table append and its index
commit, or is between the two right now) the reader indexes the missing rows in memory, so
every committed row is lexically searchable. Writers (:meth:`Memory.writer`) take the lock,
persist that catch-up, and keep the two in step from then on.

Lexical-first: rows are appended with a null vector and searchable by
text at once; :meth:`MemoryWriter.backfill` fills vectors in behind.
"""

from __future__ import annotations

import contextlib
import math
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from funes.chunking import EMBEDDED_SPLITS
from funes.errors import FunesError, no_space
from funes.models.pins import EMBEDDER_PIN
from funes.records import Chunk
from funes.store import ann as ann_mod
from funes.store import counts, embedding, redaction
from funes.store.idset import IdSet
from funes.store.lexical import LexicalIndex
from funes.store.lock import WriterLock
from funes.store.paths import TABLE, default_memory_dir, memory_dir, memory_label
from funes.store.private import private_dir

if TYPE_CHECKING:
    import pyarrow as pa

DIM = 384
MODEL_KEY = "embedding_model"

# Column order is load-bearing: readers of the reference implementation's format rely on it.
COLUMNS = (
    "id", "text", "session_id", "workdir", "turn_uuid", "parent_uuid", "seq", "ts", "role",
    "block_type", "tool_name", "source_path", "block_idx", "split_idx", "vector", "harness",
    "repo",
)  # fmt: skip
META_COLUMNS = tuple(c for c in COLUMNS if c != "vector")
_INT_COLUMNS = frozenset(("seq", "block_idx", "split_idx"))

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
# Lance's index and file-metadata caches for a read of every row a batch at a time (`funes
# scrub`'s judging, its purge): by default they keep what each batch loaded, so a scrub's peak
# grew with the memory (the plan's reads 305 MB at 100k, 670 MB at 1M; the purge's compaction
# 990 MB at 1M); held to this, 426 MB and 615 MB at 1M.
LEAN_CACHE_BYTES = 16 << 20
ID_INDEX = "id_idx"
# A writer asks the table which of a batch's ids it holds (≈ 0.09 s of CPU per 1,000 ids at 1M
# rows) until it has asked about this many, and only then loads every stored id once (IdSet:
# ≈ 2 s of CPU and +110 MB at 1M rows): a hook's session costs a query or two, not the load.
LOOKUP_IDS = 16_384
# Append batches are committed together: fewer table versions and lexical segments.
BACKFILL_COMMIT = 256
WAITING_FOR_VECTOR = f"vector IS NULL AND (split_idx IS NULL OR split_idx < {EMBEDDED_SPLITS})"
# Backfills embed text first, then tool calls, then tool results (what recall needs most, first).
EMBED_ORDER = {"text": 0, "thinking": 0, "tool_use": 1, "tool_result": 2}


def waiting_for_vector(tool_results: str = "all") -> str:
    """The filter of rows waiting for a vector under a memory's tool-result setting
    (:mod:`funes.store.embedding`): rows it leaves without one by choice never wait."""
    skip = embedding.never_embedded(tool_results)
    return WAITING_FOR_VECTOR + (f" AND NOT ({skip})" if skip else "")


def default_model() -> str:
    return EMBEDDER_PIN.name


def schema(model: str | None = None, dim: int = DIM) -> pa.Schema:
    # lazy: pyarrow stays off fast commands' start-up
    import pyarrow as pa

    types: dict[str, pa.DataType] = {c: pa.utf8() for c in COLUMNS}
    for c in _INT_COLUMNS:
        types[c] = pa.int64()
    types["vector"] = pa.list_(pa.field("item", pa.float32(), nullable=True), dim)
    fields = [pa.field(c, types[c], nullable=True) for c in COLUMNS]
    return pa.schema(fields, metadata={MODEL_KEY: model or default_model()})


class MemoryMissing(FunesError):
    """There is no table at this memory path yet."""


class DiskFull(FunesError):
    """The disk holding a memory filled up while it was being written. Lance commits a version
    only once its files are whole, and the lexical index catches up with the table on the next
    open, so what was stored before the failed write is intact."""

    def __init__(self, label: str, kept: str = "") -> None:
        self.label = label
        kept = (
            kept or "the write in progress was not stored; what the memory held before it is intact"
        )
        super().__init__(
            f"no space left on the disk holding {label} — {kept}. Free some space and run the "
            "command again"
        )


class MemoryIncompatible(FunesError):
    """The memory was built with an embedding model or vector width we cannot use."""


@dataclass(frozen=True)
class Counts:
    chunks: int
    sessions: int
    without_vectors: int


T = TypeVar("T")


def files_vanished(e: BaseException) -> bool:
    """Whether ``e`` says a file of the memory disappeared under a reader."""
    if isinstance(e, FileNotFoundError):
        return True
    return isinstance(e, (RuntimeError, OSError, ValueError)) and "Not found" in str(e)


def sql_str(value: str) -> str:
    """A SQL string literal (quotes doubled)."""
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: Iterable[str]) -> str:
    return f"{column} IN ({', '.join(sql_str(v) for v in values)})"


@dataclass(frozen=True)
class Origin:
    """Where a memory's rows were read from, fixed when it is opened.

    Local (``uri`` None): a directory of this machine, the user's own words. Remote: the cached
    copy of a Hub dataset, named by its ``uri``; unless it is the user's ``own`` (pushed by the
    Hub user funes last pushed as), its passages are someone else's words and are served as
    untrusted input. ``note`` is a one-line notice for output about how it was reached (a
    remote read from its cache, or replaced by the local memory while the Hub is unreachable).
    """

    uri: str | None = None
    own: bool = True
    note: str = ""

    @property
    def remote(self) -> bool:
        return self.uri is not None

    @property
    def trusted(self) -> bool:
        """Whether the passages are the user's own words (else recall fences them)."""
        return self.uri is None or self.own


LOCAL = Origin()


class Memory:
    """A memory opened for reading (no lock). Get one from :func:`open_memory` (a local
    directory) or ``funes.memories`` (any memory spec, remote ones included).

    Reads go through the Lance dataset itself (pylance: ≈ 0.4 s of imports) rather than the
    LanceDB client (≈ 2 s, most of it its REST namespace client); the client is loaded only
    by :meth:`writer`, which needs its merge-insert, optimize and index builders.
    """

    def __init__(
        self, path: Path, dataset: Any, lexical: LexicalIndex, origin: Origin = LOCAL
    ) -> None:
        self.path = path
        self.origin = origin
        self._ds = dataset
        self.lexical = lexical
        md = dataset.schema.metadata or {}
        self.model: str | None = md.get(MODEL_KEY.encode(), b"").decode() or None
        self.dim: int = dataset.schema.field("vector").type.list_size
        self.tool_results = embedding.tool_results(path)  # which tool-result pieces get vectors

    @property
    def label(self) -> str:
        """How output names the memory, accepted back by ``--memory``: a remote's URI, else
        the directory."""
        return self.origin.uri if self.origin.uri is not None else memory_label(self.path)

    @property
    def note(self) -> str:
        return self.origin.note

    @property
    def trusted(self) -> bool:
        return self.origin.trusted

    @property
    def version(self) -> int:
        return int(self._ds.version)

    @property
    def schema(self) -> pa.Schema:
        return self._ds.schema

    def reload(self) -> None:
        """See the table's latest version (after a write, or to catch other writers)."""
        self._ds = _dataset(self.path)
        self.tool_results = embedding.tool_results(self.path)

    def version_count(self) -> int:
        return len(self._ds.versions())

    def reopen(self) -> None:
        """Read the table's latest version and the lexical index afresh."""
        self.reload()
        self.lexical = LexicalIndex.open(self.path / "lexical")
        if self.lexical.lance_version != self.version:
            _catch_up(self, self.lexical, persist=False)

    def retrying(self, read: Callable[[], T]) -> T:
        """Run ``read``; if a concurrent `funes scrub` or `funes optimize` removed files this
        reader held (they purge old versions), reopen the memory and run it once more."""
        try:
            return read()
        except Exception as e:
            if not files_vanished(e):
                raise
        self.reopen()
        return read()

    # ------------------------------------------------------------------ state for `status`

    def count(self, where: str | None = None) -> int:
        return int(self._ds.count_rows(filter=where))

    def count_without_vectors(self) -> int:
        """Rows waiting for a vector (the pieces past an oversized block's head never do).

        Read from the writers' `counts.json` when it describes this version of the table (a
        change of the tool-result setting drops it): counting reads the vector column (≈ 1.5 KB
        a row; +60–90 MB of RSS at 60–120k rows)."""
        found = counts.read(self.path)
        if found is not None and found[1].version == self.version:
            return found[0].without_vectors
        return self.count(self.waiting)

    def count_streamed(self, where: str, batch_rows: int = 8192) -> int:
        """:meth:`count` read ``batch_rows`` rows at a time with lean caches: a count whose
        filter reads the vector column of one compacted million-row fragment held all of it
        (`funes scrub` after its purge: +180 MB at 200k rows, growing with the memory)."""
        ds = _dataset(self.path, self.version, lean=True)
        scanner = ds.scanner(
            columns=["id"],
            filter=where,
            batch_size=batch_rows,
            batch_readahead=1,
            fragment_readahead=1,
            io_buffer_size=32 << 20,
        )
        return sum(b.num_rows for b in scanner.to_batches())

    @property
    def waiting(self) -> str:
        """The filter of rows waiting for a vector (:func:`waiting_for_vector`)."""
        return waiting_for_vector(self.tool_results)

    def has_vectors(self) -> bool:
        """Whether any row has a vector, without reading the vector column when the ANN index
        or counts.json can tell (a scan for one costs ≈ 0.16 s of CPU at 100k rows, since the
        filter reads vectors; the counts 4 ms, the index a look at the manifest)."""
        if self.has_ann_index():
            return True
        found = counts.read(self.path) if self.origin.uri is None else None
        if found is not None and found[1].version == self.version:
            return found[0].chunks > found[0].without_vectors
        return self._scan(["id"], "vector IS NOT NULL", 1).num_rows > 0

    def ids_without_vectors(self, limit: int | None = None) -> list[str]:
        """Ids of the rows waiting for a vector: text first, then tool calls, then tool results
        (:data:`EMBED_ORDER`), each in table order; the first ``limit`` of them."""
        t = self._scan(["id", "block_type"], self.waiting)
        ids = t.column("id").to_pylist()
        kinds = t.column("block_type").to_pylist()
        order = sorted(range(len(ids)), key=lambda i: EMBED_ORDER.get(kinds[i], 0))
        return [str(ids[i]) for i in order[:limit]]

    def waiting_batches(self, batch: int) -> Iterator[tuple[list[str], list[str]]]:
        """The rows waiting for a vector as (ids, texts), ``batch`` at a time (the last one
        shorter), in the order of :meth:`ids_without_vectors`: one streamed scan of this version
        of the table per kind, so what a backfill holds does not grow with the memory (every
        waiting id, sorted, then a lookup by id for each batch's texts did)."""
        ranks = sorted(set(EMBED_ORDER.values()))
        for rank in ranks:
            if rank == 0:  # with the kinds EMBED_ORDER does not name
                other = [sql_str(k) for k, r in EMBED_ORDER.items() if r != rank]
                kind = f"(block_type IS NULL OR block_type NOT IN ({', '.join(other)}))"
            else:
                kind = sql_in("block_type", [k for k, r in EMBED_ORDER.items() if r == rank])
            scanner = self._ds.scanner(
                columns=["id", "text"],
                filter=f"({self.waiting}) AND {kind}",
                batch_size=batch,
                batch_readahead=1,
                fragment_readahead=1,
                io_buffer_size=32 << 20,
            )
            ids: list[str] = []
            texts: list[str] = []
            for b in scanner.to_batches():
                ids.extend(str(i) for i in b.column("id").to_pylist())
                texts.extend(t or "" for t in b.column("text").to_pylist())
                while len(ids) >= batch:
                    yield ids[:batch], texts[:batch]
                    del ids[:batch], texts[:batch]
            if ids:
                yield ids, texts

    def session_count(self) -> int:
        # lazy: pyarrow stays off fast commands' start-up
        import pyarrow.compute as pc

        t = self._scan(["session_id"])
        return len(pc.unique(t.column("session_id")))

    def counts(self) -> Counts:
        return Counts(self.count(), self.session_count(), self.count_without_vectors())

    def last_indexed(self) -> datetime | None:
        """When the table last changed (its head version's timestamp, UTC)."""
        try:
            versions = self._ds.versions()
        except Exception:  # best-effort, like the reference's status line
            return None
        if not versions:
            return None
        ts = versions[-1]["timestamp"]
        return ts.astimezone(UTC) if ts.tzinfo else ts.replace(tzinfo=UTC)

    def has_ann_index(self) -> bool:
        return self._has_index("vector")

    def ann_index_type(self) -> str | None:
        """The Lance type of the vector column's index (``"IVF_RQ"``, …), or None: from the
        manifest, no index file is opened."""
        for i in self._ds.describe_indices():
            if list(i.field_names) == ["vector"]:
                return str(i.index_type)
        return None

    def has_id_index(self) -> bool:
        """Whether the table has its scalar index on ``id`` (:data:`ID_INDEX`)."""
        return self._has_index("id")

    def has_session_index(self) -> bool:
        """Whether the table has its scalar index on ``session_id`` (:data:`SESSION_INDEX`)."""
        return self._has_index("session_id")

    def unindexed_rows(self, column: str) -> int:
        """Rows of the fragments the index on ``column`` does not cover, all of them without
        one (from the manifest: no scan)."""
        covered: set[int] = set()
        for idx in self._ds.describe_indices():
            if list(idx.field_names) == [column]:
                for seg in idx.segments:
                    covered.update(seg.fragment_ids)
        frags = self._ds.get_fragments()
        return sum(int(f.metadata.num_rows) for f in frags if f.fragment_id not in covered)

    def _has_index(self, column: str) -> bool:
        return any(list(i.field_names) == [column] for i in self._ds.describe_indices())

    # ------------------------------------------------------------------ ids

    def id_batches(self, batch: int = 65_536) -> Iterator[list[str]]:
        """Every stored chunk id, ``batch`` at a time (one projected scan, streamed)."""
        for b in self._ds.to_batches(columns=["id"], batch_size=batch):
            yield [str(x) for x in b.column("id").to_pylist()]

    def existing_ids(self) -> set[str]:
        """Every stored chunk id (one projected scan)."""
        return {str(x) for x in self._scan(["id"]).column("id").to_pylist()}

    def filter_new(self, chunks: Iterable[Chunk], known: set[str] | None = None) -> Iterator[Chunk]:
        """The chunks whose id is not stored yet (nor seen earlier in ``chunks``).

        This is what ``funes-embed --skip-existing`` calls before embedding.
        """
        seen = self.existing_ids() if known is None else known
        for c in chunks:
            if c.id not in seen:
                seen.add(c.id)
                yield c

    # ------------------------------------------------------------------ search

    def lexical_search(
        self, query: str, k: int = 30, where: str | None = None
    ) -> list[tuple[str, float]]:
        """Top ``k`` (chunk id, BM25 score) for ``query``, best first.

        ``where`` is a SQL filter over the table's columns (e.g. ``block_type = 'text'``); it
        prefilters, so a selective filter still returns up to ``k`` hits.
        """
        allow = None
        if where:
            allowed = np.array(
                [s.encode("utf-8") for s in self._scan(["id"], where).column("id").to_pylist()]
            )

            def allow(ids: np.ndarray) -> np.ndarray:
                return np.isin(ids, allowed.astype(ids.dtype)) if len(allowed) else ids != ids

        return self.lexical.search(query, k, allow)

    def vector_search(
        self,
        vector: Sequence[float] | np.ndarray,
        k: int = 30,
        where: str | None = None,
        exact: bool = False,
    ) -> list[tuple[str, float]]:
        """Top ``k`` (chunk id, L2 distance) among rows that have a vector, nearest first.

        Flat (exact) search until an ANN index exists (:mod:`funes.store.ann` builds one in the
        background from its threshold); then every partition of the index probed and its best
        codes re-ranked on the stored vectors, plus a flat pass over rows stored since the
        index was built (Lance does this itself). ``where`` prefilters. A
        filter that leaves few rows is searched flat (exact) even with an index: a graph walk
        restricted to 1 % of its nodes can miss their nearest ones. ``exact`` always scans.
        """
        q = np.asarray(vector, dtype=np.float32)
        if q.shape != (self.dim,):
            raise FunesError(f"query vector has {q.size} dimensions; {self.label} holds {self.dim}")
        nearest: dict[str, Any] = {"column": "vector", "q": q, "k": k, "metric": "l2"}
        kind = None if exact else self.ann_index_type()
        if kind is not None:
            nearest.update(nprobes=ann_mod.NPROBES, refine_factor=ann_mod.refine_factor(kind, k))
            # No `vector IS NOT NULL` here: the index holds no null vector, rows outside it
            # without one are at no distance (dropped below), and evaluating it reads every
            # row's vector — 135 ms of CPU a query at 100k instead of 10 (bench/ann.py).
            cond = where
        else:
            nearest["use_index"] = False
            cond = "vector IS NOT NULL" + (f" AND ({where})" if where else "")
        t = self._ds.to_table(
            columns=["id", "_distance"], nearest=nearest, filter=cond, prefilter=True
        )
        ids, dist = t.column("id").to_pylist(), t.column("_distance").to_pylist()
        # a row whose stored vector is not finite is at no distance at all: never a neighbour
        return [
            (i, d) for i, d in zip(ids, dist, strict=True) if d is not None and math.isfinite(d)
        ]

    # ------------------------------------------------------------------ fetch

    def fetch(
        self,
        ids: Sequence[str],
        columns: Sequence[str] = META_COLUMNS,
        arrays: bool = False,
        addresses: bool = False,
    ) -> list[dict]:
        """Rows for ``ids`` in the order given (ids not stored are left out). ``arrays``: each
        vector as a float32 numpy row (None when it has none), not a list of 384 Python
        floats; ``addresses``: each row's ``_rowaddr``, for :meth:`take` of more columns."""
        if not ids:
            return []
        cols = list(dict.fromkeys(["id", *columns]))
        rows: dict[str, dict] = {}
        for i in range(0, len(ids), 1000):
            t = self._ds.to_table(
                columns=cols, filter=sql_in("id", ids[i : i + 1000]), with_row_address=addresses
            )
            for r in _pylist(t, self.dim) if arrays else t.to_pylist():
                rows.setdefault(r["id"], r)
        return [rows[i] for i in ids if i in rows]

    def take(
        self, addresses: Sequence[int], columns: Sequence[str], arrays: bool = False
    ) -> list[dict]:
        """Rows by their ``_rowaddr`` at this version (:meth:`fetch` with ``addresses``,
        :meth:`addresses`), in the order given: no lookup of ids. ``arrays`` as in fetch."""
        if not addresses:
            return []
        t = self._ds._take_rows(list(addresses), columns=list(columns))
        return _pylist(t, self.dim) if arrays else t.to_pylist()

    def fragment_keys(self) -> set[tuple[int, str]]:
        """This version's fragments, each with its deletions (deleting rows of a fragment gives
        it a new deletion file): what a reader keeping answers per fragment compares."""
        return {(f.fragment_id, str(f.metadata.deletion_file)) for f in self._ds.get_fragments()}

    def addresses(
        self, fragments: Iterable[int], columns: Sequence[str] = (), batch_rows: int = 65_536
    ) -> Iterator[tuple[np.ndarray, np.ndarray, pa.RecordBatch]]:
        """The live rows of ``fragments``, ``batch_rows`` at a time: their ids (bytes), row
        addresses (uint64; the fragment id in the upper 32 bits) and ``columns`` (same order).
        A batch at a time, so a reader keeping a compact copy (a warm searcher's address map)
        never holds every row's values as Python objects at once."""
        want = set(fragments)
        frags = [f for f in self._ds.get_fragments() if f.fragment_id in want]
        if not frags:
            return
        cols = list(dict.fromkeys(["id", *columns]))
        scanner = self._ds.scanner(
            columns=cols, fragments=frags, with_row_address=True, batch_size=batch_rows
        )
        for b in scanner.to_batches():
            if not b.num_rows:
                continue
            ids = np.array([i.encode("utf-8") for i in b.column("id").to_pylist()])
            addrs = b.column("_rowaddr").to_numpy().astype(np.uint64)
            yield ids, addrs, b.select([c for c in cols if c != "id"])

    def session_rows(
        self,
        session_id: str,
        seq_min: int | None = None,
        seq_max: int | None = None,
        columns: Sequence[str] = META_COLUMNS,
    ) -> list[dict]:
        """One session's rows (optionally a seq window), ordered by (seq, block_idx, split_idx).

        For `funes get` and recall's neighbours.
        """
        cond = f"session_id = {sql_str(session_id)}"
        if seq_min is not None:
            cond += f" AND seq >= {int(seq_min)}"
        if seq_max is not None:
            cond += f" AND seq <= {int(seq_max)}"
        cols = list(dict.fromkeys([*columns, "seq", "block_idx", "split_idx"]))
        rows = self._scan(cols, cond).to_pylist()
        rows.sort(key=lambda r: (r["seq"] or 0, r["block_idx"] or 0, r["split_idx"] or 0))
        return rows

    def rows(
        self,
        where: str | None = None,
        columns: Sequence[str] = META_COLUMNS,
        fragments: Iterable[int] | None = None,
        addresses: bool = False,
    ) -> pa.Table:
        """A projected scan (an Arrow table) for callers that filter by other facets;
        ``fragments`` limits it to those table fragments (ids from :meth:`fragments`);
        ``addresses`` adds each row's ``_rowaddr`` (for :meth:`take`)."""
        if fragments is None:
            if addresses:
                return self._ds.to_table(columns=list(columns), filter=where, with_row_address=True)
            return self._scan(list(columns), where)
        want = set(fragments)
        frags = [f for f in self._ds.get_fragments() if f.fragment_id in want]
        return self._ds.scanner(
            columns=list(columns), filter=where, fragments=frags, with_row_address=addresses
        ).to_table()

    def scan_batches(self, columns: Sequence[str], batch_size: int) -> Iterator[pa.RecordBatch]:
        """Every row's ``columns``, ``batch_size`` rows at a time in table order: a whole-table
        read whose memory does not grow with the table (`funes push`, `funes scrub`)."""
        scanner = self._ds.scanner(
            columns=list(columns),
            batch_size=batch_size,
            batch_readahead=1,
            fragment_readahead=1,
            io_buffer_size=32 << 20,
        )
        for b in scanner.to_batches():
            if b.num_rows:
                yield b

    def by_sessions(
        self, columns: Sequence[str], batch_rows: int, sessions: Iterable[str] | None = None
    ) -> Iterator[pa.Table]:
        """The rows of whole sessions (every session, or those named; a null session id is
        ``""``), sessions in sorted order, about ``batch_rows`` rows per table (a larger session
        alone): a read of every block whole whose memory does not grow with the memory's size
        (`funes scrub`, push's gate)."""
        # lazy: pyarrow stays off fast commands' start-up
        import pyarrow.compute as pc

        ds = _dataset(self.path, self.version, lean=True)
        col = ds.to_table(columns=["session_id"]).column("session_id").fill_null("")
        per = pc.value_counts(col)
        del col
        rows_of = dict(
            zip(per.field("values").to_pylist(), per.field("counts").to_pylist(), strict=True)
        )
        names = sorted(rows_of if sessions is None else set(sessions) & rows_of.keys())
        group: list[str] = []
        n = 0
        for name in [*names, None]:
            if group and (name is None or n + rows_of[name] > batch_rows):
                where = sql_in("session_id", group)
                if "" in group:
                    where = f"({where} OR session_id IS NULL)"
                yield ds.to_table(columns=list(columns), filter=where)
                group, n = [], 0
            if name is not None:
                group.append(name)
                n += rows_of[name]

    def fragments(self) -> dict[int, int]:
        """The table's fragments at this version, by id, with the rows each holds (appends add
        fragments; a delete takes rows from one; a compaction puts rows in new ones)."""
        return {f.fragment_id: int(f.metadata.num_rows) for f in self._ds.get_fragments()}

    def _scan(self, columns: list[str], where: str | None = None, limit: int | None = None) -> Any:
        return self._ds.to_table(columns=columns, filter=where, limit=limit)

    # ------------------------------------------------------------------ writing

    @contextlib.contextmanager
    def writer(self, interactive: bool | None = None) -> Iterator[MemoryWriter]:
        """Take the writer lock and yield a :class:`MemoryWriter` (released on exit)."""
        with _locked(self.path, interactive):
            # lazy: funes.secrets.scanner stays off fast commands' start-up
            from funes.secrets.scanner import sweep

            sweep(self.path)  # plaintext scan files a killed scrub or push left behind
            self.reload()
            self.lexical = LexicalIndex.open(self.path / "lexical")
            try:
                w = MemoryWriter(self)
                w.reconcile()
                yield w
            except Exception as e:
                if no_space(e):
                    raise DiskFull(self.label) from None
                raise


@contextlib.contextmanager
def _locked(path: Path, interactive: bool | None) -> Iterator[None]:
    lock = WriterLock(path)
    lock.acquire(interactive=interactive)
    try:
        yield
    finally:
        lock.release()


class MemoryWriter:
    """The write side of a memory; exists only while the writer lock is held."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self._table = _lancedb_table(memory.path)
        self._ids: IdSet | None = None
        self._looked_up = 0  # ids asked of the table before loading them all (LOOKUP_IDS)
        self._id_index_checked = False
        self._counts = self._load_counts()

    # ------------------------------------------------------------------ counts.json

    def _load_counts(self) -> tuple[counts.TableCounts, counts.TableState] | None:
        """The counts of the table as this writer found it: the file's, when they describe
        it; zero for an empty table; else None (this writer keeps no counts, and the next
        `funes status` counts the table and writes them)."""
        found = counts.read(self.memory.path)
        if found is not None:
            return found
        state = counts.signature(self.memory.path)
        if state is None or state.version != self.memory.version or self.memory.count():
            return None
        zero = counts.TableCounts(model=self.memory.model)
        counts.write(self.memory.path, zero, state)
        return zero, state

    def _counts_before(self) -> counts.TableCounts | None:
        """The counts, if they still describe the table (nothing committed since they were
        written); call it before a commit whose change is then given to :meth:`_counts_after`."""
        if self._counts is None:
            return None
        c, state = self._counts
        now = counts.signature(self.memory.path)
        if now is None or now.sig != state.sig:
            self._counts = None
            return None
        return c

    def _counts_after(self, c: counts.TableCounts | None) -> None:
        """Record ``c`` (the counts before this writer's commit, changed by it) as the counts of
        the table as it is now."""
        if c is None:
            return
        state = counts.signature(self.memory.path)
        if state is None or state.version != self.memory.version:
            self._counts = None
            return
        counts.write(self.memory.path, c, state)
        self._counts = (c, state)

    @property
    def ids(self) -> IdSet:
        """The stored ids (8 bytes each, :class:`IdSet`: a set of a million ids as str would hold
        ~100 MB for the whole run), kept up to date by this writer's appends and removals."""
        if self._ids is None:
            self._ids = IdSet(self.memory.id_batches())
        return self._ids

    @property
    def ids_loaded(self) -> IdSet | None:
        """:attr:`ids` if this writer has loaded them, else None (they are not loaded for it)."""
        return self._ids

    def _new_chunks(self, chunks: Sequence[Chunk]) -> list[Chunk]:
        """The chunks whose id is not stored (nor met earlier in ``chunks``): asked of the table
        while few ids have been (:data:`LOOKUP_IDS`), else checked against :attr:`ids`, which
        then counts them as stored."""
        new: list[Chunk] = []
        if self._ids is None and self._looked_up + len(chunks) <= LOOKUP_IDS:
            self._looked_up += len(chunks)
            stored = self._stored([c.id for c in chunks])
            for c in chunks:
                if c.id not in stored:
                    stored.add(c.id)
                    new.append(c)
            return new
        ids = self.ids
        for c in chunks:
            if c.id not in ids:
                ids.add(c.id)
                new.append(c)
        return new

    def _stored(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` the table holds (a filtered scan of its id column per 1,000)."""
        found: set[str] = set()
        want = list(dict.fromkeys(ids))
        for i in range(0, len(want), 1000):
            part = self.memory._scan(["id"], sql_in("id", want[i : i + 1000]))
            found.update(str(x) for x in part.column("id").to_pylist())
        return found

    def reconcile(self) -> tuple[int, int]:
        """Bring the lexical index in step with the table; returns (indexed, unindexed) rows.

        Runs when the index does not record the table's current version: a previous writer died
        between its table commit and its index commit, or the index was deleted.
        """
        lex = self.memory.lexical
        if lex.lance_version == self.memory.version:
            return (0, 0)
        added, removed = _catch_up(self.memory, lex, persist=True)
        lex.commit(self.memory.version)
        return (added, removed)

    def check(self, chunk: Chunk) -> str | None:
        """Why ``chunk`` cannot be stored here (a vector of another width or model), or None."""
        m = self.memory
        if chunk.vector is None:
            return None
        if len(chunk.vector) != m.dim:
            return f"vector has {len(chunk.vector)} dimensions; {m.label} holds {m.dim}-d vectors"
        if chunk.model is not None and m.model is not None and chunk.model != m.model:
            return f"vector made by {chunk.model}; {m.label} holds {m.model} vectors"
        return None

    def append(self, chunks: Sequence[Chunk], redacted: bool = False) -> int:
        """Append the chunks whose id is new (one table commit, then one index commit).

        Vectors are optional: chunks without one are stored with a null vector and are
        searchable lexically at once. Returns the number written. Unless the caller vouches
        that the text was ``redacted`` (``funes index``, ``funes scrub``), writing new rows
        removes the memory's redaction stamp, so recall masks secrets in what it serves.
        """
        new = self._new_chunks(chunks)
        if not new:
            return 0
        if not redacted:  # before the rows land: a crash must not leave them vouched for
            redaction.invalidate(self.memory.path)
        before = self._counts_before()
        try:
            self._table.add(chunks_to_arrow(new, self.memory))
        except BaseException:
            if self._ids is not None:
                self._ids.difference_update(c.id for c in new)
            raise
        self.memory.reload()
        if before is not None:
            before.add_rows(
                [(c.session_id, c.harness) for c in new],
                sum(1 for c in new if waits(c, self.memory.tool_results)),
            )
        self._counts_after(before)
        self.memory.lexical.append([c.id for c in new], _lexical_texts(new, redacted))
        self.memory.lexical.commit(self.memory.version)
        return len(new)

    def append_batches(self, batches: Iterable[Sequence[Chunk]], redacted: bool = False) -> int:
        """:meth:`append` of chunks that arrive a batch at a time, still in one table commit
        (and one index commit): the table write streams the batches as they come, and each
        becomes a lexical segment (merged as appends are), so the memory held is one batch's,
        not the whole run's (`funes push`: 3.3 GB at 100k chunks appended at once). Returns the
        number written."""
        # lazy: pyarrow stays off fast commands' start-up
        import pyarrow as pa

        ids = self.ids
        added: list[str] = []
        pairs: list[tuple[str, str | None]] = []
        waiting = 0

        def arrow() -> Iterator[pa.RecordBatch]:
            nonlocal waiting
            for chunks in batches:
                new = [c for c in chunks if c.id not in ids]
                if not new:
                    continue
                if not redacted and not added:  # before the first row lands
                    redaction.invalidate(self.memory.path)
                for c in new:
                    ids.add(c.id)
                    added.append(c.id)
                data = chunks_to_arrow(new, self.memory)
                pairs.extend((c.session_id, c.harness) for c in new)
                waiting += sum(1 for c in new if waits(c, self.memory.tool_results))
                # Not committed: the manifest written after the table commit names them.
                self.memory.lexical.append([c.id for c in new], _lexical_texts(new))
                yield from data.to_batches()

        stream = arrow()
        first = next(stream, None)  # nothing new: no commit at all
        if first is None:
            return 0
        before = self._counts_before()
        try:
            self._table.add(pa.RecordBatchReader.from_batches(first.schema, _chain(first, stream)))
        except BaseException:
            for i in added:
                ids.discard(i)
            self.memory.lexical = LexicalIndex.open(self.memory.path / "lexical")
            raise
        self.memory.reload()
        if before is not None:
            before.add_rows(pairs, waiting)
        self._counts_after(before)
        self.memory.lexical.commit(self.memory.version)
        return len(added)

    def replace(self, remove: Sequence[str], chunks: Sequence[Chunk]) -> None:
        """Remove the rows ``remove`` and store ``chunks`` in their place, in one table commit
        (a reader sees either the old rows or the new ones). Chunk ids may reuse removed ids.
        For `funes scrub`: the caller vouches the new text is redacted."""
        gone = sorted(set(remove) - {c.id for c in chunks})
        if not gone and not chunks:
            return
        m = self._table.merge_insert("id")
        if chunks:
            m = m.when_matched_update_all().when_not_matched_insert_all()
            data = chunks_to_arrow(chunks, self.memory)
        else:
            data = chunks_to_arrow([], self.memory)
        if gone:
            m = m.when_not_matched_by_source_delete(sql_in("id", gone))
        self._counts = None  # rows of any session change: the next status counts the table
        m.execute(data)
        self.memory.reload()
        self.memory.lexical.delete([*gone, *(c.id for c in chunks)])
        self.memory.lexical.append([c.id for c in chunks], _lexical_texts(chunks))
        self.memory.lexical.commit(self.memory.version)
        if self._ids is not None:
            self._ids.difference_update(gone)
            self._ids.update(c.id for c in chunks)

    def purge(self) -> None:
        """Physically remove deleted rows and every older version of the table and the
        lexical index, so no file under the memory still holds text that was deleted.

        Readers using an older table version fail (their files are gone): call it only for
        a rewrite that must not be recoverable (`funes scrub`), under the writer lock.
        """
        self._counts = None
        self.memory.lexical.compact()
        self.memory.lexical.commit(self.memory.version)
        # The purge deletes every file no version names: a vector index build running in the
        # background has written files its commit has not named yet. Wait for it.
        building = ann_mod.AnnLock(self.memory.path)
        building.acquire(wait=True)
        try:
            self._purge_table()
        finally:
            building.release()
        self.memory.reload()
        self.memory.lexical.commit(self.memory.version)

    def _purge_table(self) -> None:
        # Every fragment that lost a row is rewritten (Lance's default leaves one alone below
        # 10 % of rows deleted, and their bytes on disk), a batch at a time: the whole table
        # read and written back peaked with the memory's size.
        self._compact(deletions=0.0, lean=True)
        self._cleanup(timedelta(0), delete_unverified=True)

    def _compact(self, deletions: float | None = None, lean: bool = False) -> None:
        """Compact the table's fragments in bounded memory (:data:`COMPACTION`); ``deletions``:
        the fraction of a fragment's rows deleted from which it is rewritten without them;
        ``lean``: with Lance's caches held to :data:`LEAN_CACHE_BYTES`."""
        ds = _dataset(self.memory.path, lean=lean)
        opts: dict[str, Any] = dict(COMPACTION)
        if deletions is not None:
            opts["materialize_deletions_threshold"] = deletions
        ds.optimize.compact_files(**opts)
        self._table.checkout_latest()
        self.memory.reload()

    def _cleanup(self, older_than: timedelta, delete_unverified: bool = False) -> None:
        """Remove table versions older than ``older_than`` and the files only they name."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "older_than=0 removes every version"
            _dataset(self.memory.path).cleanup_old_versions(
                older_than=older_than, delete_unverified=delete_unverified
            )
        self._table.checkout_latest()

    def set_vectors(self, ids: Sequence[str], vectors: np.ndarray, waited: bool = False) -> None:
        """Store vectors for existing rows (one commit). ``waited``: the caller knows each of
        them was waiting for one (:meth:`backfill`), else the rows still waiting are counted."""
        # lazy: pyarrow stays off fast commands' start-up
        import pyarrow as pa

        vecs = np.ascontiguousarray(vectors, dtype=np.float32)
        if vecs.shape != (len(ids), self.memory.dim):
            raise FunesError(
                f"{len(ids)} ids but vectors of shape {vecs.shape}; "
                f"{self.memory.label} holds {self.memory.dim}-d vectors"
            )
        if not len(ids):
            return
        if not self._id_index_checked:
            self._id_index_checked = True
            self.index_ids()
        vec_type = self._table.schema.field("vector").type
        batch = pa.table(
            {
                "id": pa.array(list(ids), pa.utf8()),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), type=vec_type),
            }
        )
        before = self._counts_before()
        self._table.merge_insert("id").when_matched_update_all().execute(batch)
        self.memory.reload()
        if before is not None:
            before.without_vectors = (
                before.without_vectors - len(ids) if waited else self.memory.count_without_vectors()
            )
        self._counts_after(before)
        self.memory.lexical.commit(self.memory.version)

    def store_vectors(self, ids: Sequence[str], texts: Sequence[str], vectors: np.ndarray) -> int:
        """Store vectors embedded from ``texts`` while the writer lock was not held: only for
        the rows that still wait for one and still hold that text (a scrub may have rewritten a
        row, another backfill filled it, a remove deleted it meanwhile). Returns how many were
        stored (one commit, none when that is 0)."""
        want = dict(zip(ids, texts, strict=True))
        if not want:
            return 0
        rows = self._scan_waiting(list(want))
        keep = [i for i, r in enumerate(ids) if rows.get(r) == want[r]]
        if not keep:
            return 0
        vecs = np.asarray(vectors, dtype=np.float32)[keep]
        self.set_vectors([ids[i] for i in keep], vecs, waited=True)
        return len(keep)

    def _scan_waiting(self, ids: list[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for i in range(0, len(ids), 1000):
            where = f"({self.memory.waiting}) AND {sql_in('id', ids[i : i + 1000])}"
            for r in self.memory._scan(["id", "text"], where).to_pylist():
                found[r["id"]] = r["text"] or ""
        return found

    def backfill(
        self,
        embed: Callable[[list[str]], np.ndarray],
        batch: int = BACKFILL_COMMIT,
        deadline: float | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> int:
        """Embed rows whose vector is null, ``batch`` rows per commit, until none are left or
        ``time.monotonic()`` passes ``deadline``. Returns the number of rows embedded."""
        done = 0
        # Streamed from the version this call starts at: the writer lock keeps every other
        # writer out, and a row this call gave a vector is behind the scan.
        for ids, texts in self.memory.waiting_batches(batch):
            if deadline is not None and time.monotonic() >= deadline:
                break
            self.set_vectors(ids, embed(texts), waited=True)
            done += len(ids)
            if on_progress is not None:
                on_progress(len(ids))
        return done

    def delete(self, ids: Sequence[str]) -> int:
        """Remove chunks by id from the table and the lexical index; returns rows removed."""
        if not ids:
            return 0
        before = self.memory.count()
        self._counts = None  # which sessions lose rows is not read: the next status counts
        for i in range(0, len(ids), 1000):
            self._table.delete(sql_in("id", ids[i : i + 1000]))
        self.memory.reload()
        self.memory.lexical.delete(ids)
        self.memory.lexical.commit(self.memory.version)
        if self._ids is not None:
            self._ids.difference_update(ids)
        return before - self.memory.count()

    def index_sessions(self, min_rows: int | None = None) -> bool:
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
        return self._btree("session_id", SESSION_INDEX, self.memory.has_session_index(), least)

    def index_ids(self, min_rows: int = ID_INDEX_ROWS) -> bool:
        """Build the BTREE index on ``id`` when the table has none and holds at least
        ``min_rows`` rows, or fold into it the rows rewritten since once they are
        :data:`INDEX_STALE` of the table; returns whether it built or updated one. Safe like
        :meth:`index_sessions` (an atomic commit of index files; rows, counts and the lexical
        index unchanged). Rows rewritten after the build (each stored vector rewrites its
        row's id) are looked up by a scan of their fragments until folded in: a backfill of
        15,000 vectors into a 120k-row table kept the peak under 600 MB, against 850 MB after
        3 commits without the index; at 1M rows every vector stored left recall's pool read
        by id scanning a million ids (0.44-0.59 s of CPU a cold recall)."""
        return self._btree("id", ID_INDEX, self.memory.has_id_index(), min_rows)

    def _btree(self, column: str, name: str, present: bool, least: int) -> bool:
        """:meth:`index_sessions` and :meth:`index_ids`: build the BTREE index ``name`` on
        ``column`` from ``least`` rows, or fold in the rows it does not cover once they are
        :data:`INDEX_STALE` of the table (an incremental update, committed like the build)."""
        m = self.memory
        rows = m.count()
        if rows < least:
            return False
        if present:
            stale = m.unindexed_rows(column)
            if not stale or stale < max(least, INDEX_STALE * rows):
                return False
            before = self._counts_before()
            m._ds.optimize.optimize_indices(index_names=[name])
        else:
            # lazy: lancedb stays off fast commands' start-up
            from lancedb.index import BTree

            before = self._counts_before()
            self._table.create_index(column, config=BTree(), name=name, replace=False)
        m.reload()
        self._counts_after(before)
        m.lexical.commit(m.version)
        return True

    def optimize(
        self,
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
        before = self._counts_before()  # optimizing changes no count but the ANN index
        step("compacting the lexical index")
        t0 = time.monotonic()
        self.memory.lexical.compact()
        self.memory.lexical.commit(self.memory.version)
        report["lexical_s"] = round(time.monotonic() - t0, 2)
        with_vectors = self.memory.count("vector IS NOT NULL")
        if ann is None:
            ann = with_vectors >= ann_mod.threshold()
        # Not beside a vector index build running in the background: it builds the same
        # index, and compaction would rewrite the fragments it reads (its commit would fail).
        # Both wait for the next optimize then.
        building = ann_mod.AnnLock(self.memory.path)
        if not building.acquire():
            report["ann_behind"] = True
            return self._finish_optimize(report, before, with_vectors)
        try:
            if ann and with_vectors >= 2:
                step("building the vector index")
                t0 = time.monotonic()
                ann_mod.create(self.memory._ds, with_vectors)
                self.memory.reload()
                report["ann_s"] = round(time.monotonic() - t0, 2)
            step("compacting the table")
            t0 = time.monotonic()
            self._compact()
            # Rows appended or rewritten since an index was built folded into it (the vector
            # index was just rebuilt when it was due).
            _dataset(self.memory.path).optimize.optimize_indices()
            self._cleanup(cleanup_older_than)
            report["table_s"] = round(time.monotonic() - t0, 2)
        finally:
            building.release()
        return self._finish_optimize(report, before, with_vectors)

    def _finish_optimize(
        self, report: dict[str, Any], before: counts.TableCounts | None, with_vectors: int
    ) -> dict[str, Any]:
        self.memory.reload()
        if before is not None:
            before.ann_index = self.memory.has_ann_index()
        self._counts_after(before)
        self.memory.lexical.commit(self.memory.version)
        self.index_sessions()
        report["session_index"] = self.memory.has_session_index()
        report["vectors"] = with_vectors
        report["ann"] = self.memory.has_ann_index()
        return report


def _pylist(t: pa.Table, dim: int) -> list[dict[str, Any]]:
    """``t.to_pylist()``, its ``vector`` column as float32 numpy rows (None for a null)."""
    if "vector" not in t.column_names:
        return t.to_pylist()
    col = t.column("vector").combine_chunks()
    rows = t.drop_columns(["vector"]).to_pylist()
    # a null slot of a fixed-size list still holds its dim child values: slice by position
    flat = col.values.to_numpy(zero_copy_only=False)
    mat = flat[col.offset * dim : (col.offset + len(col)) * dim].astype(np.float32, copy=False)
    mat = mat.reshape(len(col), dim)
    valid = col.is_valid().to_numpy(zero_copy_only=False)
    for r, v, ok in zip(rows, mat, valid, strict=True):
        r["vector"] = v if ok else None
    return rows


def _chain(first: T, rest: Iterator[T]) -> Iterator[T]:
    yield first
    yield from rest


def waits(chunk: Chunk, tool_results: str = "all") -> bool:
    """Whether ``chunk``, stored, waits for a vector (:func:`waiting_for_vector`)."""
    return (
        chunk.vector is None
        and (chunk.split_idx is None or chunk.split_idx < EMBEDDED_SPLITS)
        and not embedding.skipped(tool_results, chunk.block_type, chunk.split_idx)
    )


def deletion_files(path: Path) -> list[Path]:
    """The table's deletion files: rows deleted but whose bytes are still on disk."""
    d = path / f"{TABLE}.lance" / "_deletions"
    return [f for f in d.iterdir() if f.is_file()] if d.is_dir() else []


def chunks_to_arrow(chunks: Sequence[Chunk], memory: Memory) -> pa.Table:
    """Chunk records as a table in the memory's schema; vectors checked against its model."""
    # lazy: pyarrow stays off fast commands' start-up
    import pyarrow as pa

    sch = memory.schema
    cols: dict[str, list[Any]] = {c: [] for c in COLUMNS}
    flat: list[np.ndarray] = []
    valid: list[bool] = []
    zero = np.zeros(memory.dim, dtype=np.float32)
    for c in chunks:
        for name in META_COLUMNS:
            cols[name].append(getattr(c, name))
        if c.vector is None:
            flat.append(zero)
            valid.append(False)
            continue
        if c.model is not None and memory.model is not None and c.model != memory.model:
            raise MemoryIncompatible(
                f"chunk {c.id} was embedded with {c.model}, but {memory.label} holds "
                f"{memory.model} vectors — re-embed it, or write it without a vector"
            )
        v = np.asarray(c.vector, dtype=np.float32)
        if v.shape != (memory.dim,):
            raise MemoryIncompatible(
                f"chunk {c.id} has a {v.size}-d vector; {memory.label} holds {memory.dim}-d vectors"
            )
        flat.append(v)
        valid.append(True)
    arrays = []
    for f in sch:
        if f.name == "vector":
            values = pa.array(np.concatenate(flat) if flat else np.empty(0, np.float32))
            mask = pa.array([not x for x in valid], pa.bool_())
            arrays.append(
                pa.FixedSizeListArray.from_arrays(values, type=f.type, mask=mask)
                if not all(valid)
                else pa.FixedSizeListArray.from_arrays(values, type=f.type)
            )
        elif f.name in cols:
            arrays.append(pa.array(cols[f.name], f.type))
        else:
            arrays.append(pa.nulls(len(chunks), f.type))
    return pa.Table.from_arrays(arrays, schema=sch)


def _lexical_texts(chunks: Sequence[Chunk], redacted: bool = False) -> list[str]:
    """What the lexical index may see of ``chunks``: their text with every secret the built-in
    detectors find masked, block by block (a secret cut by a split is found whole), so no
    term hash is ever computed from a secret — whoever wrote the rows.

    ``redacted``: the caller vouches that each block's text was redacted by those detectors
    before it was split (`funes index`). A prose block's stored pieces are then exactly that
    redacted text, in which redaction finds nothing more (it is idempotent), so they are taken
    as they are: scanning them again was 18 % of a first index's CPU. A tool block's pieces
    carry a label with the tool's name, which was not redacted, so they are masked all the same.
    """
    out: list[str | None] = [
        c.text or "" if redacted and c.block_type in _PROSE else None for c in chunks
    ]
    todo = [i for i, t in enumerate(out) if t is None]
    if todo:
        rows = [
            {"session_id": c.session_id, "turn_uuid": c.turn_uuid, "block_idx": c.block_idx,
             "split_idx": c.split_idx, "text": c.text}
            for c in (chunks[i] for i in todo)
        ]  # fmt: skip
        for i, text in zip(todo, _masked(rows), strict=True):
            out[i] = text
    return [t or "" for t in out]


# Block types whose stored text is the block's text itself (chunking.render adds no label).
_PROSE = frozenset(("text", "thinking"))


def _masked(rows: list[dict[str, Any]]) -> list[str]:
    redaction.mask_rows(rows)
    return [r["text"] or "" for r in rows]


def _catch_up(memory: Memory, lex: LexicalIndex, persist: bool) -> tuple[int, int]:
    """Index table rows the lexical index lacks; mask index entries the table lost.

    In bounded memory whatever the table's size: the two id sets are compared as Arrow
    arrays (no Python string per id), and the missing rows are read, masked and indexed
    :data:`CATCH_UP_ROWS` at a time (read whole, a rebuild of a 100k-chunk index held every
    row's text as Python objects: 1.3 GB)."""
    # lazy: pyarrow stays off fast commands' start-up
    import pyarrow as pa
    import pyarrow.compute as pc

    table_ids = memory._scan(["id"]).column("id")
    lex_ids = pa.array(lex.ids()).cast(pa.utf8())  # bytes → str without a Python object each
    missing = pc.filter(table_ids, pc.invert(pc.is_in(table_ids, value_set=lex_ids)))
    extra = pc.filter(lex_ids, pc.invert(pc.is_in(lex_ids, value_set=table_ids)))
    del table_ids, lex_ids
    if len(extra):
        lex.delete(extra.to_pylist(), persist=persist)
    if len(missing):
        for ids, texts in _rows_to_index(memory, missing):
            if persist:
                lex.append(ids, texts)
            else:
                lex.add_pending(ids, texts)
    return len(missing), len(extra)


# Rows a catch-up reads, masks and indexes at a time.
CATCH_UP_ROWS = 4096


def _rows_to_index(memory: Memory, want: Any) -> Iterator[tuple[list[str], list[str]]]:
    """(ids, masked texts) of the rows of ``want`` (an Arrow array of ids), in table order,
    about :data:`CATCH_UP_ROWS` at a time; the pieces of a block are masked together (a batch
    ends at a block's end)."""
    # lazy: pyarrow stays off fast commands' start-up
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = ["id", "session_id", "turn_uuid", "block_idx", "split_idx", "text"]
    if len(want) <= 1000:
        batches: Iterable[Any] = memory._scan(cols, sql_in("id", want.to_pylist())).to_batches()
    else:
        value_set = pa.array(want, pa.utf8())
        batches = (
            b.filter(pc.is_in(b.column("id"), value_set=value_set))
            for b in memory._ds.to_batches(columns=cols, batch_size=CATCH_UP_ROWS)
        )
    held: list[dict[str, Any]] = []
    for b in batches:
        held += b.to_pylist()
        if len(held) < CATCH_UP_ROWS:
            continue
        # the last block may go on in the next batch: it waits for it
        last = _block_key(held[-1])
        cut = len(held)
        while cut > 0 and _block_key(held[cut - 1]) == last:
            cut -= 1
        if cut == 0:
            continue
        rows, held = held[:cut], held[cut:]
        yield [str(r["id"]) for r in rows], _masked(rows)
    if held:
        yield [str(r["id"]) for r in held], _masked(held)


def _block_key(r: dict[str, Any]) -> tuple[Any, Any, Any]:
    return (r.get("session_id"), r.get("turn_uuid"), r.get("block_idx"))


# ---------------------------------------------------------------------------- opening


def open_memory(
    spec: str | Path | None = None,
    *,
    create: bool = False,
    model: str | None = None,
    origin: Origin = LOCAL,
    catch_up: bool = True,
) -> Memory:
    """Open a local memory directory for reading (default ``$FUNES_HOME/memory``; ``local``
    names it too). Hub specs and lists of memories are resolved by ``funes.memories``.

    ``create`` makes an empty one stamped with ``model`` (default: the embedder pin) if none
    exists; otherwise a missing memory raises :class:`MemoryMissing`. A memory stamped with a
    model funes cannot load, or with another vector width, raises :class:`MemoryIncompatible`.
    ``origin`` says where the directory's rows come from (a remote's cached copy).
    ``catch_up=False`` leaves a lexical index behind the table as it is: for a caller about to
    take the writer, which brings it up to date on disk (indexing the rows in memory first
    would do that work twice).
    """
    path = memory_dir(spec)
    if create:
        private_dir(path)
    elif not (path / f"{TABLE}.lance").is_dir():
        raise MemoryMissing(_missing_message(path))
    try:
        ds = _dataset(path)
    except (FileNotFoundError, ValueError, OSError):
        if not create:
            raise MemoryMissing(_missing_message(path)) from None
        # lazy: lancedb stays off fast commands' start-up
        import lancedb

        with _locked(path, None), contextlib.suppress(ValueError):
            lancedb.connect(str(path)).create_table(TABLE, schema=schema(model))
        ds = _dataset(path)
    _check_compatible(path, ds.schema, model)
    lex = LexicalIndex.open(path / "lexical")
    mem = Memory(path, ds, lex, origin)
    if catch_up and lex.lance_version != mem.version:
        _catch_up(mem, lex, persist=False)
    return mem


def _dataset(path: Path, version: int | None = None, lean: bool = False) -> Any:
    """The memory's table as a Lance dataset at ``version`` (the latest by default), for
    read-only use; ``lean``: its caches held to :data:`LEAN_CACHE_BYTES`."""
    # lazy: lance stays off fast commands' start-up
    import lance

    cache = LEAN_CACHE_BYTES if lean else None
    return lance.dataset(
        str(path / f"{TABLE}.lance"),
        version=version,
        index_cache_size_bytes=cache,
        metadata_cache_size_bytes=cache,
    )


def _lancedb_table(path: Path) -> Any:
    """The memory's table through the LanceDB client, for writing (the heavier import)."""
    # lazy: lancedb stays off fast commands' start-up
    import lancedb

    return lancedb.connect(str(path)).open_table(TABLE)


def _missing_message(path: Path) -> str:
    if path == default_memory_dir():
        return (
            "no index yet — run `funes add <agent>` to build one (or `funes index`), "
            "then recall your own history"
        )
    return (
        f"no index found at {path} — check the path, or build one there with "
        f"`funes index PATH --memory {path}`"
    )


def _check_compatible(path: Path, sch: pa.Schema, model: str | None) -> None:
    # lazy: pyarrow stays off fast commands' start-up
    import pyarrow as pa

    want = model or default_model()
    stamped = (sch.metadata or {}).get(MODEL_KEY.encode(), b"").decode() or None
    if stamped is not None and stamped != want and not _model_installed(stamped):
        raise MemoryIncompatible(
            f"{path} was built with the embedding model {stamped}, but funes uses {want} — "
            "index your sessions into a new memory (`funes index --memory NEW_DIR`), "
            f"or install {stamped}"
        )
    try:
        vec = sch.field("vector").type
    except KeyError:
        raise MemoryIncompatible(f"{path} has no vector column; it is not a funes memory") from None
    if not pa.types.is_fixed_size_list(vec) or vec.value_type != pa.float32():
        raise MemoryIncompatible(f"{path}: the vector column is {vec}, not a float32 vector")
    if (stamped in (None, want)) and vec.list_size != DIM:
        raise MemoryIncompatible(
            f"{path} holds {vec.list_size}-d vectors, but {want} makes {DIM}-d ones — "
            "it was built with a different embedding model; index into a new memory"
        )


def _model_installed(name: str) -> bool:
    """Whether funes can load the embedding model ``name`` (then it reads such memories)."""
    try:
        # lazy: a models layer that cannot import means the model is not installed
        from funes import models
    except ImportError:
        return False
    check = getattr(models, "is_installed", None)
    return bool(check(name)) if callable(check) else False
