"""How much native memory a process that works on a memory's table keeps (glibc's allocator).

Lance and Arrow allocate from their own threads (a runtime thread per core, I/O threads), and
glibc gives each allocating thread an arena of its own, up to 8 per core. Memory freed in one
arena is kept for that arena, so a long writer's resident set grew with the work it had done
while its live heap did not: a backfill's RSS climbed 642 → 802 MB over 560 commits at 200k
rows, and `funes optimize` at 1M kept what its vector index build had freed (+320 MB) through
the compaction after it (whose live heap peaks near 200 MB at 200k rows, its RSS near 500).

:func:`bound_arenas` holds the process to :data:`ARENAS` arenas, as ``MALLOC_ARENA_MAX=2`` does,
before Lance starts its threads; :func:`release` hands the pages freed by a large step back to
the system (``malloc_trim``). Measured (bench/README.md, `## scale`): a backfill's peak 870 →
607 MB at 200k rows (flat from 100k; CPU unchanged), `funes optimize` at 1M 1,124 → 898 MB.

Elsewhere than glibc (macOS, musl) both do nothing. A ``MALLOC_ARENA_MAX`` the user set wins.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any

ARENAS = 2
_M_ARENA_MAX = -8  # mallopt's parameter numbers, from glibc's malloc.h
_M_MMAP_THRESHOLD = -3
# Blocks from this size up are mapped on their own and unmapped when freed (glibc's default,
# fixed: see :func:`streaming`).
MMAP_THRESHOLD = 128 << 10

_libc: Any = None
_bounded = False


def _glibc() -> Any:
    """glibc through ctypes, or None where the process does not run on it."""
    global _libc
    if _libc is None:
        _libc = False
        if sys.platform.startswith("linux"):
            try:
                lib = ctypes.CDLL(None)
            except OSError:
                return None
            if all(hasattr(lib, f) for f in ("mallopt", "malloc_trim", "gnu_get_libc_version")):
                _libc = lib
    return _libc or None


def bound_arenas() -> None:
    """Hold the process to :data:`ARENAS` allocator arenas (once; effective for the threads
    that allocate after it, so call it before Lance first runs)."""
    global _bounded
    if _bounded:
        return
    _bounded = True
    lib = _glibc()
    if lib is not None and "MALLOC_ARENA_MAX" not in os.environ:
        lib.mallopt(_M_ARENA_MAX, ARENAS)


def streaming() -> None:
    """Set up a process that streams a whole table through Arrow batches (`funes push`) so the
    batches' memory goes back to the system when they are freed, not kept for the next.

    glibc raises its mmap threshold to the largest block freed (up to 32 MB), so after the
    first batch every batch's buffers come from the heap, which keeps what it freed; and
    Arrow's own allocator (mimalloc) keeps its freed pages for a while too. The threshold is
    fixed where it started, and Arrow allocates from glibc, whose freed heap :func:`release`
    returns. Measured on push's append at 200k rows: 797 → 599 MB with :func:`release` every
    20,000 rows and push's batches of arrays, not Python floats (bench/notes/scale.md, "After:
    push (2)")."""
    lib = _glibc()
    if lib is None:
        return
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        lib.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    # lazy: pyarrow stays off fast commands' start-up
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())


def release() -> None:
    """Return the memory freed since to the system (after a step that allocated much)."""
    lib = _glibc()
    if lib is not None:
        lib.malloc_trim(0)
