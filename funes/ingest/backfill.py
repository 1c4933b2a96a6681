"""Vectors filled in behind the text (lexical-first): `funes index --backfill`, and the
embedding step that ends an index run.

Chunks are stored without vectors and are searchable by words at once. A backfill
(:func:`backfill`, and the detached one behind an unattended sweep, :mod:`funes.ingest.behind`)
embeds them with :func:`embed_unlocked`: it reads and embeds a batch *without* the writer lock
and takes the lock only to store that batch's vectors (a commit, well under a second), so a
hook's turn never queues behind minutes of embedding. While a backfill runs it holds the
memory's :class:`~funes.store.lock.BehindLock`; a writer that finds the writer lock taken waits
for the gap between two commits instead of failing, and an index run leaves its own chunks'
vectors to the backfill, which looks for waiting chunks again until none are left — it says it
is done, and lets go of the BehindLock, under the writer lock, so a run that left its vectors to
it cannot slip in between. The embedding step that ends an index run (:func:`embed_behind`)
works under the run's own writer lock, until done or until a deadline.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

import numpy as np

from funes.errors import FunesError
from funes.ingest.report import SILENT, IndexReport, Progress
from funes.memories import open_for_write
from funes.store.lock import BehindLock
from funes.store.memory import BACKFILL_COMMIT
from funes.store.state import mark_all_embedded

if TYPE_CHECKING:
    from funes.store.memory import Memory, MemoryWriter

EMBED_BATCH = 64


def backfill(
    memory: str | None = None,
    deadline: float | None = None,
    progress: Progress | None = None,
    interactive: bool | None = None,
) -> IndexReport:
    """Fill in the vectors of chunks stored without one (`funes index --backfill`) in the
    local memory ``memory`` names (a Hub spec is refused), holding the writer lock only to
    store each batch (:func:`embed_unlocked`)."""
    t0 = time.monotonic()
    mem = open_for_write(memory)
    report = IndexReport(memory=mem.label)
    progress = progress or SILENT
    asking = stdin_interactive(interactive)
    running = BehindLock(mem.path)
    if running.try_acquire(tries=1):
        running.write_pid(os.getpid())
    try:
        missing = mem.count_without_vectors()
        if missing:
            progress.status(f"loading the embedding model ({missing:,} chunks to embed)")
            try:
                embed = load_embed()
            except FunesError as e:
                report.embed_note = f"vectors pending for {missing} chunks: {e}"
                embed = None
            if embed is not None:
                report.embedded, report.without_vectors = embed_unlocked(
                    mem,
                    ticking(embed, progress, missing),
                    lambda: mem.writer(interactive=asking),
                    deadline,
                    finished=running.release,
                )
                progress.clear()
            else:
                report.without_vectors = missing
        else:
            with mem.writer(interactive=asking):
                if not mem.count_without_vectors():
                    mark_all_embedded(mem.path)
                    running.release()
    finally:
        running.release()
    report.seconds = time.monotonic() - t0
    return report


def embed_unlocked(
    mem: Memory,
    embed: Callable[[list[str]], np.ndarray],
    writer: Callable[[], AbstractContextManager[MemoryWriter]],
    deadline: float | None = None,
    on_progress: Callable[[int], None] | None = None,
    finished: Callable[[], None] | None = None,
    batch: int = BACKFILL_COMMIT,
) -> tuple[int, int]:
    """Embed the chunks of ``mem`` waiting for a vector, a batch at a time, reading and
    embedding without the writer lock and taking it (``writer()``) only to store a batch; until
    none wait or ``time.monotonic()`` passes ``deadline``. Chunks appended meanwhile are
    embedded too. When none wait — checked under the writer lock — the memory is marked all
    embedded and ``finished`` is called there, before the lock is let go. Returns (embedded,
    still waiting)."""
    done = 0
    while True:
        mem.reload()  # rows appended since the last pass (a hook's turn) wait too
        seen = stored = 0
        # Streamed from the version the pass starts at (memory bounded at any size); a row
        # another writer filled or rewrote meanwhile is passed over by store_vectors.
        for ids, texts in mem.waiting_batches(batch):
            if deadline is not None and time.monotonic() >= deadline:
                return done, mem.count_without_vectors()
            seen += len(ids)
            vectors = embed(texts)
            with writer() as w:
                n = w.store_vectors(ids, texts, vectors)
            stored += n
            done += n
            if on_progress is not None and n:
                on_progress(n)
        with writer() as w:
            waiting = w.memory.count_without_vectors()
            if not waiting:
                mark_all_embedded(w.memory.path)
                if finished is not None:
                    finished()
                return done, 0
        if seen and not stored:  # a whole pass stored nothing: leave the rest to the next run
            return done, waiting


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
    # Added to what the run embedded already: a run past its budget embeds in two calls, before
    # the question to finish and after it.
    t0 = time.monotonic()
    report.embedded += w.backfill(ticking(embed, progress, missing), deadline=deadline)
    report.embed_seconds += time.monotonic() - t0
    progress.clear()


def ticking(
    embed: Callable[[list[str]], np.ndarray], progress: Progress, missing: int
) -> Callable[[list[str]], np.ndarray]:
    """``embed`` moving the embedding bar. The model is loaded: the bar replaces the loading
    line at once, and moves with every EMBED_BATCH chunks embedded (not with every commit of
    BACKFILL_COMMIT: half a minute on a busy machine, which read as the model still loading)."""
    progress.update("embedding", 0, missing, 0, force=True)
    done = 0

    def embed_ticking(texts: list[str]) -> np.ndarray:
        nonlocal done
        parts = []
        for i in range(0, len(texts), EMBED_BATCH):
            parts.append(embed(texts[i : i + EMBED_BATCH]))
            done += len(parts[-1])
            progress.update("embedding", min(done, missing), max(missing, done), done)
        return np.concatenate(parts) if parts else embed([])

    return embed_ticking


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
