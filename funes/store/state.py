"""Which transcript files a memory has indexed, and how far.

`<memory>/state.json` maps a unit key (the file's absolute path) to the file signature it was
indexed at (`size:mtime`) and the highest tier indexed: a unit is current for a run at tier T
when its signature is unchanged and its level ≥ T. The file lives inside the memory, so
deleting a memory forgets its state too; a state file next to a memory with no table is
ignored, so a half-deleted memory re-indexes in full. Written atomically (temp + rename).

`<memory>/vectors.json` says that every chunk had a vector at one version of the table, named
by :func:`table_signature` (the table's version files: any commit or cleanup changes it), so a
run with nothing to index can tell that nothing waits for a vector without opening the table.
A commit that leaves nothing waiting but is not an index run's (a compaction, an index build)
is told by the counts its writer keeps (`counts.json`, :mod:`funes.store.counts`).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from funes.chunking import TIERS
from funes.store import counts
from funes.store.paths import TABLE

STATE = "state.json"
VECTORS = "vectors.json"


def level(tier: str) -> int:
    return TIERS.index(tier)


class IndexState:
    def __init__(self, memory: Path, entries: dict[str, dict[str, Any]] | None = None) -> None:
        self.path = memory / STATE
        self.entries: dict[str, dict[str, Any]] = entries or {}
        self.dirty = False

    @classmethod
    def load(cls, memory: Path, table_exists: bool = True) -> IndexState:
        if not table_exists:
            return cls(memory)
        try:
            data = json.loads((memory / STATE).read_text())
        except (OSError, ValueError):
            return cls(memory)  # unreadable state: index everything again (ids dedupe)
        if not isinstance(data, dict):
            return cls(memory)
        return cls(memory, {k: v for k, v in data.items() if isinstance(v, dict)})

    def current(self, key: str, sig: str | None, tier: str, thinking: bool = True) -> bool:
        """Whether ``key`` at signature ``sig`` is already indexed through ``tier``."""
        e = self.entries.get(key)
        if sig is None or e is None or e.get("sig") != sig:
            return False
        if thinking and e.get("thinking") is False:
            return False
        lv = e.get("level")
        return lv in TIERS and level(lv) >= level(tier)

    def record(
        self, key: str, sig: str | None, tiers: tuple[str, ...], thinking: bool = True
    ) -> None:
        """Remember that a pass over ``tiers`` (all tiers up to the highest one, in a run)
        indexed ``key`` at ``sig``."""
        if sig is None or not tiers:
            return
        tier = max(tiers, key=level)
        e = self.entries.get(key)
        if e is not None and e.get("sig") == sig and e.get("level") in TIERS:
            tier = max(tier, e["level"], key=level)
            if "text" not in tiers:
                thinking = e.get("thinking", True) is not False
        self.entries[key] = {"sig": sig, "level": tier, "thinking": thinking}
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f"{STATE}.{os.getpid()}.tmp")
        # Compact: a sweep saves the whole state after every commit (every 2 s), and at 9,030
        # files an indented, sorted dump cost 34 ms a save against 12.7 ms.
        tmp.write_text(json.dumps(self.entries, separators=(",", ":")) + "\n")
        os.replace(tmp, self.path)
        self.dirty = False


def table_signature(memory: Path) -> str | None:
    """The table's committed versions as one short string (None without a table): a commit
    adds a version file and a cleanup removes some, so any write changes it; reads do not."""
    try:
        names = sorted(os.listdir(memory / f"{TABLE}.lance" / "_versions"))
    except OSError:
        return None
    return hashlib.sha256("\n".join(names).encode()).hexdigest()[:24] if names else None


def mark_all_embedded(memory: Path) -> None:
    """Record that no chunk waits for a vector at the table's current version (call it under
    the writer lock, after the last commit)."""
    sig = table_signature(memory)
    if sig is None:
        return
    tmp = memory / f"{VECTORS}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"table": sig}) + "\n")
    os.replace(tmp, memory / VECTORS)


def all_embedded(memory: Path) -> bool:
    """Whether no chunk waits for a vector in the table as it is now (no table: False): the
    mark an index run or backfill left at this version, else the counts of this version its
    last writer kept. A compaction, an index build or a scrub commits a version without the
    mark; without the counts, the next no-op `funes index` opened the table once (importing
    LanceDB: ~2 s of CPU) to find nothing to do."""
    sig = table_signature(memory)
    if sig is None:
        return False
    try:
        mark = json.loads((memory / VECTORS).read_text())
    except (OSError, ValueError):
        mark = None
    if isinstance(mark, dict) and mark.get("table") == sig:
        return True
    found = counts.read(memory)
    return found is not None and found[0].without_vectors == 0
