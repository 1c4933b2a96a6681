"""The memory store: the LanceDB table, its model stamp, the lexical index, the writer lock and
the indexing state. Importing this package is cheap; lancedb loads on open.

    from funes.store import open_memory
    mem = open_memory()                          # or open_memory("/path/to/memory")
    mem.lexical_search("src/store/lock.py", k=30)   # [(chunk id, bm25 score)]
    mem.vector_search(vec, k=30, where="block_type = 'text'")   # [(chunk id, l2 distance)]
    mem.fetch(ids)                               # rows, in the order given
    mem.session_rows(session_id, seq - 1, seq + 1)
    mem.counts()                                 # chunks, sessions, without_vectors
    with mem.writer() as w:                      # the writer lock (fails fast off a TTY)
        w.append(chunks); w.backfill(embed); w.delete(ids); w.optimize()

See docs/store.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from funes.store.errors import MemoryIncompatible, MemoryMissing
from funes.store.lock import LockBusy, WriterLock
from funes.store.paths import default_memory_dir, funes_home, memory_dir, memory_label

if TYPE_CHECKING:
    from funes.store.memory import (
        Counts,
        Memory,
        MemoryWriter,
        open_memory,
    )

__all__ = [
    "Counts",
    "LockBusy",
    "Memory",
    "MemoryIncompatible",
    "MemoryMissing",
    "MemoryWriter",
    "WriterLock",
    "default_memory_dir",
    "funes_home",
    "memory_dir",
    "memory_label",
    "open_memory",
]

_LAZY = frozenset(("Counts", "Memory", "MemoryWriter", "open_memory"))


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'funes.store' has no attribute {name!r}")
    # lazy: numpy stays off fast commands' start-up
    from funes.store import memory

    value = getattr(memory, name)
    globals()[name] = value
    return value
