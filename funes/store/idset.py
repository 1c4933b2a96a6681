"""The set of chunk ids a writer checks new chunks against, in 8 bytes an id.

A Python set of a memory's ids costs about 100 bytes an id (a million chunks: ~100 MB, held
for a whole index run). funes's own chunk ids are 16 lowercase hex digits (a truncated SHA-1,
:func:`funes.chunking.chunk_id`): those are kept as sorted ``uint64`` values, exactly (no
hashing, no false positives); any other id (a hand-made `funes-write` record) in a plain set.
Ids added while the writer runs are folded into the sorted array every :data:`FOLD` additions,
so an index run that writes a million chunks holds them in the array too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import numpy as np

FOLD = 65_536
_HEX = re.compile(r"[0-9a-f]{16}")


def _hex(i: str) -> int | None:
    return int(i, 16) if len(i) == 16 and _HEX.fullmatch(i) else None


class IdSet:
    """A set of str ids (``in``, ``add``, ``discard``, ``update``, ``difference_update``)."""

    def __init__(self, ids: Iterable[Iterable[str]] = ()) -> None:
        """``ids``: batches of ids (a batch at a time is turned into values)."""
        parts: list[np.ndarray] = []
        self._other: set[str] = set()
        for batch in ids:
            vals = []
            for i in batch:
                v = _hex(i)
                if v is None:
                    self._other.add(i)
                else:
                    vals.append(v)
            parts.append(np.array(vals, dtype=np.uint64))
        self._sorted = np.unique(np.concatenate(parts)) if parts else np.empty(0, np.uint64)
        self._added: set[int] = set()  # hex ids added since the last fold
        self._removed: set[int] = set()  # hex ids of the array removed since

    def _in_sorted(self, v: int) -> bool:
        a = self._sorted
        j = int(np.searchsorted(a, np.uint64(v)))
        return j < len(a) and int(a[j]) == v

    def __contains__(self, i: object) -> bool:
        if not isinstance(i, str):
            return False
        v = _hex(i)
        if v is None:
            return i in self._other
        if v in self._added:
            return True
        return v not in self._removed and self._in_sorted(v)

    def add(self, i: str) -> None:
        v = _hex(i)
        if v is None:
            self._other.add(i)
            return
        self._removed.discard(v)
        if not self._in_sorted(v):
            self._added.add(v)
            if len(self._added) >= FOLD:
                self._fold()

    def discard(self, i: str) -> None:
        v = _hex(i)
        if v is None:
            self._other.discard(i)
            return
        self._added.discard(v)
        if self._in_sorted(v):
            self._removed.add(v)

    def update(self, ids: Iterable[str]) -> None:
        for i in ids:
            self.add(i)

    def difference_update(self, ids: Iterable[str]) -> None:
        for i in ids:
            self.discard(i)

    def _fold(self) -> None:
        a = self._sorted
        if self._removed:
            a = a[~np.isin(a, np.fromiter(self._removed, np.uint64, len(self._removed)))]
        if self._added:
            a = np.union1d(a, np.fromiter(self._added, np.uint64, len(self._added)))
        self._sorted, self._added, self._removed = a, set(), set()

    def __len__(self) -> int:
        return len(self._sorted) + len(self._added) - len(self._removed) + len(self._other)

    def __iter__(self) -> Iterator[str]:
        self._fold()
        yield from (f"{int(v):016x}" for v in self._sorted)
        yield from self._other
