"""What a memory holds, counted as it is written: `<memory>/counts.json`.

`funes status` needs the chunk, session and per-agent counts, how many chunks wait for a vector,
the model stamp and whether an ANN index exists. Counting them means opening the table (Lance,
pyarrow and numpy: ~0.3 s of CPU before the first row) and scanning it. Instead the writer
keeps them up to date: after each of its commits, under the writer lock, it applies what it
wrote (an append adds its chunks, a backfill subtracts the vectors it stored) and names the
table state the counts describe by the table's :func:`signature` — the names of its version
manifests and the newest one's size and mtime, read with one directory listing and one stat.

A reader takes the counts only when that signature is the table's current one. Counts written
before a write they do not describe — by an older funes that knows nothing of this file, by a
writer killed between its commit and this file, by anything that writes the table some other
way — no longer match and are never used: the reader counts the table instead, and leaves its
count here for the next one. Writers apply a change only to counts that describe the table as
it was just before their own commit, so a stale file is never carried forward either.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes.store.paths import TABLE

if TYPE_CHECKING:
    from funes.store.memory import Memory

FILE = "counts.json"
FORMAT = 1


@dataclass
class TableCounts:
    """The counts of one table state. ``sessions`` maps a session id to the chunks it holds per
    harness (``""`` for rows without one), so an append can tell a new session from a known one
    and the per-agent figures need no scan."""

    chunks: int = 0
    without_vectors: int = 0
    sessions: dict[str, dict[str, int]] = field(default_factory=dict)
    model: str | None = None
    ann_index: bool = False

    @property
    def session_count(self) -> int:
        return len(self.sessions)

    def by_agent(self) -> dict[str, dict[str, int]]:
        """harness (``(none)`` for rows without one) → {"sessions": n, "chunks": n}, sorted."""
        chunks: Counter[str] = Counter()
        sessions: Counter[str] = Counter()
        for per in self.sessions.values():
            for h, n in per.items():
                chunks[h] += n
                sessions[h] += 1
        return {
            h or "(none)": {"sessions": sessions[h], "chunks": n} for h, n in sorted(chunks.items())
        }

    def add_rows(self, rows: list[tuple[str, str | None]], waiting: int) -> None:
        """Count rows appended: their (session id, harness) pairs, ``waiting`` of them without
        a vector they will get."""
        for sid, harness in rows:
            per = self.sessions.setdefault(sid, {})
            h = harness or ""
            per[h] = per.get(h, 0) + 1
        self.chunks += len(rows)
        self.without_vectors += waiting

    def to_json(self, sig: str) -> str:
        doc = {
            "format": FORMAT,
            "table": sig,
            "chunks": self.chunks,
            "without_vectors": self.without_vectors,
            "model": self.model,
            "ann_index": self.ann_index,
            "sessions": self.sessions,
        }
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n"

    @classmethod
    def from_json(cls, doc: Any) -> TableCounts | None:
        """The counts in ``doc``, or None when it is not a file of this format."""
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            return None
        try:
            sessions = {
                str(s): {str(h): int(n) for h, n in per.items()}
                for s, per in doc["sessions"].items()
            }
            model = doc["model"]
            return cls(
                chunks=int(doc["chunks"]),
                without_vectors=int(doc["without_vectors"]),
                sessions=sessions,
                model=str(model) if model is not None else None,
                ann_index=bool(doc["ann_index"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


@dataclass(frozen=True)
class TableState:
    """The table's current state as :func:`signature` names it."""

    sig: str
    version: int
    changed: datetime  # the newest manifest's mtime: when the table last changed (UTC)


def _version(name: str) -> int | None:
    """A manifest's version from its name (Lance writes ``<version>.manifest``, or
    ``<2**64 - 1 - version>.manifest`` in its newer naming)."""
    stem = name.removesuffix(".manifest")
    if not name.endswith(".manifest") or not stem.isdigit():
        return None
    v = int(stem)
    return v if v < 2**63 else 2**64 - 1 - v


def signature(memory: Path) -> TableState | None:
    """The table's state: every committed version's manifest name, and the newest one's size
    and mtime (so a table deleted and built again to the same versions is not the same state).
    None without a table."""
    versions = memory / f"{TABLE}.lance" / "_versions"
    try:
        names = sorted(os.listdir(versions))
    except OSError:
        return None
    numbered = [(v, n) for n in names if (v := _version(n)) is not None]
    if not numbered:
        return None
    version, newest = max(numbered)
    try:
        st = os.stat(versions / newest)
    except OSError:
        return None
    sig = f"{len(names)}:{hash_names(names)}:{newest}:{st.st_size}:{st.st_mtime_ns}"
    return TableState(sig, version, datetime.fromtimestamp(st.st_mtime, UTC))


def hash_names(names: list[str]) -> str:
    return hashlib.sha256("\n".join(names).encode()).hexdigest()[:16]


def read(memory: Path) -> tuple[TableCounts, TableState] | None:
    """The counts of the table's current state and that state, or None when the file is
    missing, unreadable, or describes another state of the table."""
    try:
        doc = json.loads((memory / FILE).read_bytes())
    except (OSError, ValueError):
        return None
    now = signature(memory)
    if now is None or not isinstance(doc, dict) or doc.get("table") != now.sig:
        return None
    counts = TableCounts.from_json(doc)
    return None if counts is None else (counts, now)


def write(memory: Path, counts: TableCounts, state: TableState) -> None:
    """Record ``counts`` as those of the table state ``state`` (atomically; best-effort: a
    memory whose directory cannot be written is counted by its readers instead)."""
    tmp = memory / f".{FILE}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(counts.to_json(state.sig))
        os.replace(tmp, memory / FILE)
    except OSError:
        tmp.unlink(missing_ok=True)


def count_table(mem: Memory, without_vectors: int | None = None) -> TableCounts:
    """Count the table ``mem`` reads, with one projected scan (``without_vectors`` when the
    caller knows it, else a second, filtered count)."""
    t = mem.rows(columns=("session_id", "harness"))
    sessions: dict[str, dict[str, int]] = {}
    for sid, harness in zip(
        t.column("session_id").to_pylist(), t.column("harness").to_pylist(), strict=True
    ):
        per = sessions.setdefault(sid if sid is not None else "", {})
        h = harness or ""
        per[h] = per.get(h, 0) + 1
    return TableCounts(
        chunks=t.num_rows,
        without_vectors=(
            mem.count_without_vectors() if without_vectors is None else without_vectors
        ),
        sessions=sessions,
        model=mem.model,
        ann_index=mem.has_ann_index(),
    )
