"""Which transcripts on this machine are not fully indexed yet (`funes status`, `funes add`)."""

from __future__ import annotations

from pathlib import Path

from funes import sources
from funes.sources.routing import file_signature, sweep_paths
from funes.store.state import IndexState


def pending_sources(memory: Path, home: Path | None = None, harness: str | None = None) -> int:
    """Transcripts under the known agent roots (one agent's, with ``harness``) whose current
    version is not fully indexed. Reads no transcript: a stat per file."""
    state = IndexState.load(memory)
    found = sweep_paths(home)
    if harness:
        src = sources.get_source(harness)
        found = [f for f in found if f[1] == src]
    # A unit the sweep could not read (a FIFO named like a transcript, a directory it cannot
    # list) is skipped by every index run with its reason: counting it would ask for an index
    # run that can never clear it. (A swept file is keyed by its path: ``Unit.name``.)
    current = state.current
    return sum(
        not current(path, file_signature(path), "tool_result", thinking=False)
        for path, _, why in found
        if why is None
    )
