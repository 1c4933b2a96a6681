"""What a memory holds and what state it is in — the domain answer behind `funes status`.

The counts are those the writer keeps in `<memory>/counts.json` (:mod:`funes.store.counts`)
when they describe the table as it is, so a status answers without Lance, numpy or a scan
(:func:`cached_status`), a status right after a write included. When they do not (a memory
written by an older funes, or by a writer killed between its commit and its counts), the
table is counted with one projected scan (:func:`memory_status`) and the result written back
for the next one. The disk use, the pending sources and a running backfill are looked at afresh
every time."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes.store import counts, embedding
from funes.store.lock import behind_pid
from funes.store.paths import memory_label
from funes.store.state import all_embedded

if TYPE_CHECKING:
    from funes.store.memory import Memory


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
    tool_results: str = "all"  # which tool-result pieces get vectors (funes.store.embedding)
    extra: dict[str, Any] = field(default_factory=dict)


def memory_status(mem: Memory, pending_sources: int | None = None) -> Status:
    """The status of the table version ``mem`` reads: from `counts.json` when it describes
    that version, else from one projected scan (then written to `counts.json` when ``mem`` is a
    local memory at the table's newest version and nothing was committed while it counted).
    ``pending_sources`` is counted by the caller, which knows the transcript sources (a
    stat-only sweep of the agents' known locations against the memory's index state); None
    when not checked."""
    local = mem.origin.uri is None
    found = counts.read(mem.path) if local else None
    if found is not None and found[1].version == mem.version:
        tc, state = found
        st = _status(mem.path, tc, state.changed, pending_sources)
        st.label = mem.label
        return st
    before = counts.signature(mem.path) if local else None
    # the mark an index run leaves when nothing waited: no scan of 20k vectors (~0.05 s)
    tc = counts.count_table(mem, 0 if all_embedded(mem.path) else None)
    # When the table last changed: its newest manifest's time, as the counts' path says it,
    # without reading every version's manifest (a hook-fed table holds hundreds).
    latest = before is not None and before.version == mem.version
    changed = before.changed if before is not None and latest else mem.last_indexed()
    st = _status(mem.path, tc, changed, pending_sources)
    st.label = mem.label
    if before is not None and before.version == mem.version:
        now = counts.signature(mem.path)
        if now == before:
            counts.write(mem.path, tc, before)
    return st


def cached_status(path: Path, pending_sources: int | None = None) -> Status | None:
    """The status of the local memory at ``path`` from its `counts.json`, or None when that
    does not describe the table as it is (the caller opens the memory: :func:`memory_status`)."""
    found = counts.read(path)
    if found is None:
        return None
    tc, state = found
    return _status(path, tc, state.changed, pending_sources)


def _status(
    path: Path, tc: counts.TableCounts, changed: datetime | None, pending_sources: int | None
) -> Status:
    return Status(
        label=memory_label(path),
        chunks=tc.chunks,
        sessions=tc.session_count,
        without_vectors=tc.without_vectors,
        by_agent=tc.by_agent(),
        pending_sources=pending_sources,
        last_indexed=changed,
        model=tc.model,
        ann_index=tc.ann_index,
        disk_bytes=_du(path),
        backfill_pid=behind_pid(path),
        tool_results=embedding.tool_results(path),
    )


def _du(path: Path) -> int:
    """Bytes of the files under ``path`` (symlinked directories not entered), one stat per
    file: a memory of 1M chunks holds some 1,600 files, and a pathlib walk spent two stats
    and a path object on each."""
    total = 0
    stack = [path]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                entries = list(it)
        except OSError:
            continue
        for e in entries:
            try:
                if e.is_dir() and not e.is_symlink():
                    stack.append(Path(e.path))
                elif e.is_file():
                    total += e.stat().st_size
            except OSError:
                pass
    return total
