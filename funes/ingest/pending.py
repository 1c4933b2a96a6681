"""Which transcripts on this machine are not fully indexed yet (`funes status`, `funes add`)."""

from __future__ import annotations

from pathlib import Path

from funes import sources
from funes.store.state import IndexState


def pending_sources(memory: Path, home: Path | None = None, harness: str | None = None) -> int:
    """Transcripts under the known agent roots (one agent's, with ``harness``) whose current
    version is not fully indexed. Reads no transcript: a stat per file."""
    state = IndexState.load(memory)
    units = sources.sweep(home)
    if harness:
        src = sources.get_source(harness)
        units = [u for u in units if u.source == src]
    # A unit the sweep could not read (a FIFO named like a transcript, a directory it cannot
    # list) is skipped by every index run with its reason: counting it would ask for an index
    # run that can never clear it.
    return sum(
        not state.current(str(u.path), u.signature(), "tool_result", thinking=False)
        for u in units
        if u.error is None
    )
