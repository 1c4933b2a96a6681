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

The memory is split by what a reader of the code looks for: this module opens a memory and
reads it (:class:`Memory`, :func:`open_memory`); :mod:`funes.store.writer` writes it,
:mod:`funes.store.maintenance` keeps its indexes and files in shape, :mod:`funes.store.catchup`
keeps the lexical index in step with the table, :mod:`funes.store.table` holds the table's
schema and SQL, and :mod:`funes.store.errors` what can go wrong. The names they define that
were importable from here still are.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from funes.errors import FunesError, no_space
from funes.records import Chunk
from funes.store import ann as ann_mod
from funes.store import catchup, counts, embedding
from funes.store.errors import DiskFull, MemoryIncompatible, MemoryMissing, missing_message
from funes.store.lexical import LexicalIndex
from funes.store.maintenance import (
    COMPACTION,
    ID_INDEX,
    ID_INDEX_ROWS,
    INDEX_STALE,
    SESSION_INDEX,
    SESSION_INDEX_ROWS,
)
from funes.store.paths import TABLE, memory_dir, memory_label
from funes.store.private import private_dir
from funes.store.table import (
    COLUMNS,
    DIM,
    EMBED_ORDER,
    LEAN_CACHE_BYTES,
    META_COLUMNS,
    MODEL_KEY,
    WAITING_FOR_VECTOR,
    dataset,
    default_model,
    deletion_files,
    files_vanished,
    require_table,
    schema,
    sql_in,
    sql_str,
    waiting_for_vector,
    waits,
)
from funes.store.writer import (
    BACKFILL_COMMIT,
    LOOKUP_IDS,
    MemoryWriter,
    chunks_to_arrow,
    locked,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "BACKFILL_COMMIT",
    "COLUMNS",
    "COMPACTION",
    "DIM",
    "EMBED_ORDER",
    "ID_INDEX",
    "ID_INDEX_ROWS",
    "INDEX_STALE",
    "LEAN_CACHE_BYTES",
    "LOCAL",
    "LOOKUP_IDS",
    "META_COLUMNS",
    "MODEL_KEY",
    "SESSION_INDEX",
    "SESSION_INDEX_ROWS",
    "WAITING_FOR_VECTOR",
    "Counts",
    "DiskFull",
    "Memory",
    "MemoryIncompatible",
    "MemoryMissing",
    "MemoryWriter",
    "Origin",
    "chunks_to_arrow",
    "default_model",
    "deletion_files",
    "files_vanished",
    "open_memory",
    "schema",
    "sql_in",
    "sql_str",
    "waiting_for_vector",
    "waits",
]


@dataclass(frozen=True)
class Counts:
    chunks: int
    sessions: int
    without_vectors: int


T = TypeVar("T")


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
        self.lean = False  # Lance's caches held small (:meth:`read_lean`)
        self.session: Any = None  # Lance's caches shared with other handles (:meth:`share_caches`)
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
        self._ds = dataset(self.path, lean=self.lean, session=self.session)
        self.tool_results = embedding.tool_results(self.path)

    def read_lean(self, lean: bool = True) -> None:
        """Read this version with Lance's caches held to :data:`LEAN_CACHE_BYTES` (``lean``),
        or as large as Lance keeps them. A process asking one question never reads twice what
        a cache keeps, and keeping it costs it the pages: at 1M chunks, a cold recall kept
        the vector index's partitions, the index pages and the text dictionaries its pool
        touched — ~120 MB and ~0.3 s of system time more than lean. A reader asked again
        wants them kept (a warm searcher's second question, :class:`funes.retrieval.Searcher`)."""
        if lean != self.lean:
            self._ds = dataset(self.path, self.version, lean, self.session)
            self.lean = lean

    def share_caches(self, session: Any) -> None:
        """Read this version, and every later one :meth:`reload` opens, with ``session``'s
        Lance caches (:func:`funes.store.table.reader_session`), not lean: what another handle
        on this table read through them is not read again (a warm searcher handed a memory
        opened anew for each question, as the MCP server does)."""
        if session is not self.session or self.lean:
            self._ds = dataset(self.path, self.version, session=session)
            self.session, self.lean = session, False

    def version_count(self) -> int:
        return len(self._ds.versions())

    def reopen(self) -> None:
        """Read the table's latest version and the lexical index afresh."""
        self.reload()
        self.lexical = LexicalIndex.open(self.path / "lexical")
        if self.lexical.lance_version != self.version:
            catchup.catch_up(self, self.lexical, persist=False)

    def retrying(self, read: Callable[[], T]) -> T:
        """Run ``read``; if a concurrent `funes scrub` or `funes optimize` removed files this
        reader held (they purge old versions), reopen the memory and run it once more."""
        try:
            return read()
        except (RuntimeError, OSError, ValueError) as e:  # how Lance says a file is gone
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
        ds = dataset(self.path, self.version, lean=True)
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
        read whose memory does not grow with the table (`funes push`, `funes scrub`): Lance's
        caches held small (the default ones kept every fragment's pages read: +0.5 KB a row)."""
        scanner = dataset(self.path, self.version, lean=True).scanner(
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

        ds = dataset(self.path, self.version, lean=True)
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
        with locked(self.path, interactive):
            # lazy: funes.secrets.scanner stays off fast commands' start-up
            from funes.secrets.scanner import sweep

            sweep(self.path)  # plaintext scan files a killed scrub or push left behind
            self.reload()
            self.lexical = LexicalIndex.open(self.path / "lexical")
            try:
                w = MemoryWriter(self)
                w.reconcile()
                yield w
            # any layer's error may say the disk is full (no_space); every other is re-raised
            except Exception as e:
                if no_space(e):
                    raise DiskFull(self.label) from None
                raise


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
    else:
        require_table(path)
    try:
        ds = dataset(path)
    except (FileNotFoundError, ValueError, OSError):
        if not create:
            raise MemoryMissing(missing_message(path)) from None
        # lazy: lancedb stays off fast commands' start-up
        import lancedb

        with locked(path, None), contextlib.suppress(ValueError):
            lancedb.connect(str(path)).create_table(TABLE, schema=schema(model))
        ds = dataset(path)
    _check_compatible(path, ds.schema, model)
    lex = LexicalIndex.open(path / "lexical")
    mem = Memory(path, ds, lex, origin)
    if catch_up and lex.lance_version != mem.version:
        catchup.catch_up(mem, lex, persist=False)
    return mem


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
