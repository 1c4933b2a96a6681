"""The write side of a memory: :class:`MemoryWriter`, which exists only while the writer lock
is held. It appends chunks (one table commit, then one lexical index commit), replaces and
deletes rows, stores vectors (``backfill``), keeps counts.json in step with its commits, and
hands upkeep to :mod:`funes.store.maintenance`."""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from funes.errors import FunesError
from funes.records import Chunk
from funes.store import counts, maintenance, redaction
from funes.store.catchup import catch_up, lexical_texts
from funes.store.errors import MemoryIncompatible
from funes.store.idset import IdSet
from funes.store.lexical import LexicalIndex
from funes.store.lock import WriterLock
from funes.store.table import COLUMNS, META_COLUMNS, lancedb_table, sql_in, waits

if TYPE_CHECKING:
    import pyarrow as pa

    from funes.store.memory import Memory

# A writer asks the table which of a batch's ids it holds (≈ 0.09 s of CPU per 1,000 ids at 1M
# rows) until it has asked about this many, and only then loads every stored id once (IdSet:
# ≈ 2 s of CPU and +110 MB at 1M rows): a hook's session costs a query or two, not the load.
LOOKUP_IDS = 16_384
# Append batches are committed together: fewer table versions and lexical segments.
BACKFILL_COMMIT = 256

T = TypeVar("T")


@contextlib.contextmanager
def locked(path: Path, interactive: bool | None) -> Iterator[None]:
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
        self._table = lancedb_table(memory.path)
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
        added, removed = catch_up(self.memory, lex, persist=True)
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
        self.memory.lexical.append([c.id for c in new], lexical_texts(new, redacted))
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
        # What the run appended, in memory that does not grow with its rows: a million pushed
        # rows kept as str ids and (session, harness) pairs held ~250 MB until the commit.
        added = IdSet()
        pairs: Counter[tuple[str, str | None]] = Counter()
        waiting = written = 0

        def arrow() -> Iterator[pa.RecordBatch]:
            nonlocal waiting, written
            for chunks in batches:
                new = [c for c in chunks if c.id not in ids]
                if not new:
                    continue
                if not redacted and not written:  # before the first row lands
                    redaction.invalidate(self.memory.path)
                for c in new:
                    ids.add(c.id)
                    added.add(c.id)
                written += len(new)
                data = chunks_to_arrow(new, self.memory)
                pairs.update((c.session_id, c.harness) for c in new)
                waiting += sum(1 for c in new if waits(c, self.memory.tool_results))
                # Not committed: the manifest written after the table commit names them.
                self.memory.lexical.append([c.id for c in new], lexical_texts(new))
                yield from data.to_batches()

        stream = arrow()
        first = next(stream, None)  # nothing new: no commit at all
        if first is None:
            return 0
        before = self._counts_before()
        try:
            self._table.add(pa.RecordBatchReader.from_batches(first.schema, _chain(first, stream)))
        except BaseException:
            ids.difference_update(added)
            self.memory.lexical = LexicalIndex.open(self.memory.path / "lexical")
            raise
        self.memory.reload()
        if before is not None:
            before.add_rows(list(pairs.elements()), waiting)
        self._counts_after(before)
        self.memory.lexical.commit(self.memory.version)
        return written

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
        self.memory.lexical.append([c.id for c in chunks], lexical_texts(chunks))
        self.memory.lexical.commit(self.memory.version)
        if self._ids is not None:
            self._ids.difference_update(gone)
            self._ids.update(c.id for c in chunks)

    # ------------------------------------------------------------------ upkeep (maintenance)

    def purge(self) -> None:
        """:func:`funes.store.maintenance.purge`."""
        maintenance.purge(self)

    def index_sessions(self, min_rows: int | None = None) -> bool:
        """:func:`funes.store.maintenance.index_sessions`."""
        return maintenance.index_sessions(self, min_rows)

    def index_ids(self, min_rows: int = maintenance.ID_INDEX_ROWS) -> bool:
        """:func:`funes.store.maintenance.index_ids`."""
        return maintenance.index_ids(self, min_rows)

    def optimize(
        self,
        ann: bool | None = None,
        cleanup_older_than: timedelta = timedelta(minutes=10),
        on_step: Callable[[str], None] | None = None,
    ) -> dict[str, Any]:
        """:func:`funes.store.maintenance.optimize`."""
        return maintenance.optimize(self, ann, cleanup_older_than, on_step)

    # ------------------------------------------------------------------ vectors

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


def _chain(first: T, rest: Iterator[T]) -> Iterator[T]:
    yield first
    yield from rest


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
