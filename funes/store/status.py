"""What a memory holds and what state it is in — the domain answer behind `funes status`.

The counts come from a scan of the table; they are cached per table version
(:mod:`funes.store.textcache`), so a status of a memory that has not changed since the last
one is read from a small file — no Lance, no numpy, no scan (:func:`cached_status`). The disk
use, the pending sources and a running backfill are looked at afresh every time."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes.store import textcache
from funes.store.lock import behind_pid
from funes.store.paths import TABLE, memory_label
from funes.store.state import all_embedded

if TYPE_CHECKING:
    from funes.store.memory import Memory

CACHE = "status"
# The fields read from the table, cached per version of it.
_TABLE_FIELDS = ("chunks", "sessions", "without_vectors", "by_agent", "model", "ann_index")


@dataclass
class Status:
    label: str
    chunks: int
    sessions: int
    without_vectors: int
    by_agent: dict[str, dict[str, int]]  # harness -> {"sessions": n, "chunks": n}
    pending_sources: int | None  # transcript files not yet fully indexed; None: not checked
    last_indexed: datetime | None
    model: str | None
    ann_index: bool
    disk_bytes: int
    backfill_pid: int | None = None  # a backfill running behind an index run (0: pid unknown)
    extra: dict[str, Any] = field(default_factory=dict)


def memory_status(mem: Memory, pending_sources: int | None = None) -> Status:
    """Counts come from one projected scan. ``pending_sources`` is counted by the caller, which
    knows the transcript sources (a stat-only sweep of the agents' known locations against the
    memory's index state); None when not checked."""
    # lazy: pyarrow stays off fast commands' start-up
    import pyarrow.compute as pc

    # Cached only when ``mem`` reads the table's newest version (a long-lived reader, the MCP
    # server, may read an older one) and nothing was written while it was counted.
    key = textcache.key(mem.path, CACHE, []) if mem.origin.uri is None else None
    if latest_version(mem.path) != mem.version:
        key = None
    t = mem.rows(columns=("session_id", "harness"))
    chunks = t.num_rows
    by_agent: dict[str, dict[str, int]] = {}
    if chunks:
        harness = t.column("harness").fill_null("")
        per_chunk = Counter(harness.to_pylist())
        pairs = {
            (h, s)
            for h, s in zip(harness.to_pylist(), t.column("session_id").to_pylist(), strict=True)
        }
        per_session = Counter(h for h, _ in pairs)
        by_agent = {
            h or "(none)": {"sessions": per_session[h], "chunks": n}
            for h, n in sorted(per_chunk.items())
        }
        sessions = len(pc.unique(t.column("session_id")))
    else:
        sessions = 0
    st = Status(
        label=mem.label,
        chunks=chunks,
        sessions=sessions,
        # the mark an index run leaves when nothing waited: no scan of 20k vectors (~0.05 s)
        without_vectors=0 if all_embedded(mem.path) else mem.count_without_vectors(),
        by_agent=by_agent,
        pending_sources=pending_sources,
        last_indexed=mem.last_indexed(),
        model=mem.model,
        ann_index=mem.has_ann_index(),
        disk_bytes=_du(mem.path),
        backfill_pid=behind_pid(mem.path),
    )
    doc = {f: getattr(st, f) for f in _TABLE_FIELDS}
    doc["last_indexed"] = st.last_indexed.isoformat() if st.last_indexed else None
    if key is not None and textcache.key(mem.path, CACHE, []) == key:
        textcache.put(CACHE, key, json.dumps(doc))
    return st


def latest_version(path: Path) -> int | None:
    """The newest version of the table at ``path``, from its manifests' names (Lance writes
    ``<version>.manifest``, or ``<2**64 - 1 - version>.manifest`` in its newer naming)."""
    try:
        names = os.listdir(path / f"{TABLE}.lance" / "_versions")
    except OSError:
        return None
    versions = []
    for n in names:
        stem = n.removesuffix(".manifest")
        if n.endswith(".manifest") and stem.isdigit():
            v = int(stem)
            versions.append(v if v < 2**63 else 2**64 - 1 - v)
    return max(versions, default=None)


def cached_status(path: Path, pending_sources: int | None = None) -> Status | None:
    """The status of the local memory at ``path`` from the counts cached at its current table
    version, or None when there are none (the caller opens the memory: :func:`memory_status`)."""
    text = textcache.get(CACHE, textcache.key(path, CACHE, []))
    if text is None:
        return None
    try:
        doc = json.loads(text)
        when = doc["last_indexed"]
        return Status(
            label=memory_label(path),
            last_indexed=datetime.fromisoformat(when) if when else None,
            pending_sources=pending_sources,
            disk_bytes=_du(path),
            backfill_pid=behind_pid(path),
            **{f: doc[f] for f in _TABLE_FIELDS},
        )
    except (ValueError, KeyError, TypeError):
        return None


def _du(path: Path) -> int:
    total = 0
    for p in path.rglob("*"):
        try:
            if p.is_file():
                total += p.stat().st_size
        except OSError:
            pass
    return total
