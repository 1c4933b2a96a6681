"""The table of a memory as it lies on disk: its columns and schema (with the embedding model
stamped in it), the SQL a read filters with, which rows wait for a vector, and the Lance handles
on it. Nothing here loads numpy; pyarrow, lance and lancedb load inside the functions that use
them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes.chunking import EMBEDDED_SPLITS
from funes.models.pins import EMBEDDER_PIN
from funes.store import embedding, native
from funes.store.errors import MemoryMissing, missing_message
from funes.store.paths import TABLE

if TYPE_CHECKING:
    import pyarrow as pa

    from funes.records import Chunk

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
# Lance's index and file-metadata caches for a read of every row a batch at a time (`funes
# scrub`'s judging, its purge): by default they keep what each batch loaded, so a scrub's peak
# grew with the memory (the plan's reads 305 MB at 100k, 670 MB at 1M; the purge's compaction
# 990 MB at 1M); held to this, 426 MB and 615 MB at 1M.
LEAN_CACHE_BYTES = 16 << 20
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


def require_table(path: Path) -> None:
    """Raise :class:`MemoryMissing` when the memory directory ``path`` holds no table yet (a
    look at the directory: nothing heavy loads to say so)."""
    if not (path / f"{TABLE}.lance").is_dir():
        raise MemoryMissing(missing_message(path))


def dataset(path: Path, version: int | None = None, lean: bool = False, session: Any = None) -> Any:
    """The memory's table as a Lance dataset at ``version`` (the latest by default), for
    read-only use; ``lean``: its caches held to :data:`LEAN_CACHE_BYTES`; ``session``: the
    caches of a :func:`reader_session` instead of its own."""
    native.bound_arenas()  # before Lance's threads first allocate
    # lazy: lance stays off fast commands' start-up
    import lance

    uri = str(path / f"{TABLE}.lance")
    if session is not None and not lean:
        return lance.dataset(uri, version=version, session=session)
    cache = LEAN_CACHE_BYTES if lean else None
    return lance.dataset(
        uri, version=version, index_cache_size_bytes=cache, metadata_cache_size_bytes=cache
    )


# The caches a warm reader keeps across the handles it opens on one table, versions after
# versions (:meth:`Memory.share_caches`). Index and data files never change under a name, so
# what was read for one version is right for every version naming it. Bounded: a long-lived
# reader (the MCP server) would otherwise keep an old vector index after each rebuild, up to
# Lance's defaults of several GB; a question's working set at 1M chunks is ~400 MB.
READER_INDEX_CACHE_BYTES = 1 << 30
READER_METADATA_CACHE_BYTES = 512 << 20


def reader_session() -> Any:
    """New caches for :func:`dataset` (``session``) to share between handles."""
    native.bound_arenas()
    # lazy: lance stays off fast commands' start-up
    import lance

    return lance.Session(
        index_cache_size_bytes=READER_INDEX_CACHE_BYTES,
        metadata_cache_size_bytes=READER_METADATA_CACHE_BYTES,
    )


def lancedb_table(path: Path) -> Any:
    """The memory's table through the LanceDB client, for writing (the heavier import)."""
    native.bound_arenas()
    # lazy: lancedb stays off fast commands' start-up
    import lancedb

    return lancedb.connect(str(path)).open_table(TABLE)
