"""Which transcript files a memory has indexed, and how far.

`<memory>/state.json` maps a unit key (the file's absolute path) to the file signature it was
indexed at (`size:mtime`) and the highest tier indexed: a unit is current for a run at tier T
when its signature is unchanged and its level ≥ T. The file lives inside the memory, so
deleting a memory forgets its state too; a state file next to a memory with no table is
ignored, so a half-deleted memory re-indexes in full. Written atomically (temp + rename).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from funes.chunking import TIERS

STATE = "state.json"


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
        tmp.write_text(json.dumps(self.entries, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, self.path)
        self.dirty = False
