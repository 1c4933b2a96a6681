"""What a memory holds and what state it is in — the domain answer behind `funes status`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from funes.store.lock import behind_pid
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
    extra: dict[str, Any] = field(default_factory=dict)


def memory_status(mem: Memory, pending_sources: int | None = None) -> Status:
    """Counts come from one projected scan. ``pending_sources`` is counted by the caller, which
    knows the transcript sources (a stat-only sweep of the agents' known locations against the
    memory's index state); None when not checked."""
    # lazy: pyarrow stays off fast commands' start-up
    import pyarrow.compute as pc

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
    return Status(
        label=mem.label,
        chunks=chunks,
        sessions=sessions,
        without_vectors=mem.count_without_vectors(),
        by_agent=by_agent,
        pending_sources=pending_sources,
        last_indexed=mem.last_indexed(),
        model=mem.model,
        ann_index=mem.has_ann_index(),
        disk_bytes=_du(mem.path),
        backfill_pid=behind_pid(mem.path),
    )


def _du(path: Path) -> int:
    total = 0
    for p in path.rglob("*"):
        try:
            if p.is_file():
                total += p.stat().st_size
        except OSError:
            pass
    return total
