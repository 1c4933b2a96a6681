"""Vectors filled in behind the text (lexical-first): `funes index --backfill`, and the
embedding step that ends an index run.

Chunks are stored without vectors and are searchable by words at once; :func:`embed_behind`
embeds those still waiting, batch by batch under the writer lock, until done or until a
deadline, so an interrupted run leaves the rest for the next one.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from funes.errors import FunesError
from funes.ingest.report import SILENT, IndexReport, Progress
from funes.store import open_memory
from funes.store.state import mark_all_embedded

if TYPE_CHECKING:
    from funes.store.memory import Memory, MemoryWriter

EMBED_BATCH = 64


def backfill(
    memory: str | None = None,
    deadline: float | None = None,
    progress: Progress | None = None,
    interactive: bool | None = None,
    open_with: Callable[[str | None], Memory] = open_memory,
) -> IndexReport:
    """Fill in the vectors of chunks stored without one (`funes index --backfill`).
    ``open_with`` opens ``memory`` (default: a local directory; the CLI passes the resolver of
    memory specs)."""
    t0 = time.monotonic()
    mem = open_with(memory)
    report = IndexReport(memory=mem.label)
    progress = progress or SILENT
    with mem.writer(interactive=stdin_interactive(interactive)) as w:
        embed_behind(w, report, progress, deadline)
        report.without_vectors = mem.count_without_vectors()
        if not report.without_vectors:
            mark_all_embedded(mem.path)
    report.seconds = time.monotonic() - t0
    return report


def embed_behind(
    w: MemoryWriter, report: IndexReport, progress: Progress, deadline: float | None
) -> None:
    """Embed the chunks stored without a vector, until done or ``deadline`` (monotonic)."""
    missing = w.memory.count_without_vectors()
    if not missing:
        return
    progress.status(f"loading the embedding model ({missing:,} chunks to embed)")
    try:
        embed = load_embed()
    except FunesError as e:
        report.embed_note = f"vectors pending for {missing} chunks: {e}"
        return
    # The model is loaded: the bar replaces the loading line at once, and moves with every
    # EMBED_BATCH chunks embedded (not with every commit of BACKFILL_COMMIT: half a minute on
    # a busy machine, which read as the model still loading).
    progress.update("embedding", 0, missing, 0, force=True)
    done = 0

    def embed_ticking(texts: list[str]) -> np.ndarray:
        nonlocal done
        parts = []
        for i in range(0, len(texts), EMBED_BATCH):
            parts.append(embed(texts[i : i + EMBED_BATCH]))
            done += len(parts[-1])
            progress.update("embedding", min(done, missing), missing, done)
        return np.concatenate(parts) if parts else embed([])

    # Added to what the run embedded already: a run past its budget embeds in two calls, before
    # the question to finish and after it.
    report.embedded += w.backfill(embed_ticking, deadline=deadline)
    progress.clear()


def load_embed() -> Callable[[list[str]], np.ndarray]:
    """The embedder as a texts → vectors function (funes.models); FunesError if unavailable."""
    try:
        # lazy: an embedder that cannot be imported becomes a note on the report, not a crash
        from funes.models import load_embedder
    except ImportError as e:
        raise FunesError(f"the embedding model is not available ({e})") from None
    emb = load_embedder()

    def embed(texts: list[str]) -> np.ndarray:
        parts = [emb.embed(texts[i : i + EMBED_BATCH]) for i in range(0, len(texts), EMBED_BATCH)]
        return np.concatenate(parts) if parts else np.empty((0, emb.dim), np.float32)

    return embed


def stdin_interactive(flag: bool | None) -> bool:
    """``flag``, or by default whether stdin is a terminal (someone can answer a prompt)."""
    if flag is not None:
        return flag
    with contextlib.suppress(ValueError, OSError):
        return sys.stdin is not None and sys.stdin.isatty()
    return False
