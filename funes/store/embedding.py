"""Which chunks a memory embeds: its tool-result setting, `<memory>/embedding.json`.

A tool result is often long (a file read, a test log, a diff): on eval-dev tool results are
52 % of the chunks and 65 % of the tokens embedded. With ``tool_results: "head"`` a
memory embeds only the first piece of each tool result (its first ~1,200 characters) and keeps
the rest searchable by words only, like the pieces past an oversized block's head: they never
wait for a vector, so backfills skip them and `funes status` does not count them as waiting.
``"all"`` (the default, and what a missing or unreadable file means) embeds every piece.

Chosen on the labelled set (bench/labelled): of the 943 answers (of 2,576 found in a chunk) that
lie in a tool result, 930 lie in its first piece; on eval-dev the pieces after the first are 32 % of all
chunks, nearly all of them 256 tokens long (the model's longest, so the costliest to embed).

The setting is changed under the writer lock (:func:`set_tool_results`), which also drops the
cached counts and the all-embedded mark: both depend on which chunks wait.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from funes.store.counts import FILE as COUNTS_FILE
from funes.store.lock import WriterLock
from funes.store.state import VECTORS

FILE = "embedding.json"
TOOL_RESULTS = ("all", "head")  # what `funes index --embed-tool-results` accepts
HEAD_PIECES = 1  # pieces of a tool result embedded under "head"


def tool_results(memory: Path) -> str:
    """The memory's tool-result setting: "all" unless ``embedding.json`` says "head"."""
    try:
        doc = json.loads((memory / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "all"
    value = doc.get("tool_results") if isinstance(doc, dict) else None
    return value if value in TOOL_RESULTS else "all"


def never_embedded(setting: str) -> str | None:
    """A filter for the rows the setting leaves without a vector by choice (None: none)."""
    if setting == "head":
        return f"block_type = 'tool_result' AND split_idx >= {HEAD_PIECES}"
    return None


def skipped(setting: str, block_type: str | None, split_idx: int | None) -> bool:
    """Whether a chunk is left without a vector by the setting (:func:`never_embedded`)."""
    return setting == "head" and block_type == "tool_result" and (split_idx or 0) >= HEAD_PIECES


def set_tool_results(memory: Path, value: str, interactive: bool | None = None) -> bool:
    """Set the memory's tool-result setting under its writer lock; returns whether it changed.
    A change drops ``counts.json`` and ``vectors.json`` (the next reader counts again), so the
    chunks it makes wait (back to "all") or stop waiting ("head") are counted at once."""
    if value not in TOOL_RESULTS:
        raise ValueError(f"tool_results must be one of {TOOL_RESULTS}, not {value!r}")
    lock = WriterLock(memory)
    lock.acquire(interactive=interactive)
    try:
        if tool_results(memory) == value:
            return False
        tmp = memory / f"{FILE}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps({"tool_results": value}) + "\n", encoding="utf-8")
        os.replace(tmp, memory / FILE)
        for stale in (COUNTS_FILE, VECTORS):
            (memory / stale).unlink(missing_ok=True)
        return True
    finally:
        lock.release()
