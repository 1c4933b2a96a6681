"""`funes index` as a library call: parse → chunk (redacted) → skip stored ids → write → embed.

Lexical-first: chunks are appended without vectors and are lexically
searchable as soon as their batch commits (every :data:`FLUSH_SECONDS` or
:data:`FLUSH_CHUNKS`); vectors are filled in behind by :func:`backfill`, in the same run or in
a detached `funes index --backfill`.

Two kinds of run:

- **explicit paths** are indexed in full, all tiers per file, in path order;
- **a sweep** (no path: every known agent root, or one harness's) is tier-major — text of
  every pending session, newest first, then tool calls, then tool results — and stops at the
  time budget unless told to finish (``yes``, or the user says so at the prompt).

Incremental at two levels: a file whose signature is unchanged since it was indexed at a tier is
not read again (`state.json`), and a chunk whose id is stored is never written again. State is
recorded only after the file's chunks are committed, so a run killed at any point leaves a
memory that opens, and the next run completes it without duplicates.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from funes.chunking import EMBEDDED_SPLITS, TIERS, chunk_turns
from funes.errors import FunesError, UsageError
from funes.records import Chunk, Turn
from funes.sources import (
    FileStats,
    Unit,
    discover,
    display_path,
    get_source,
    os_reason,
    parse_unit,
)
from funes.store import redaction
from funes.store.paths import TABLE, memory_dir
from funes.store.state import IndexState

if TYPE_CHECKING:
    import numpy as np

    from funes.store.memory import MemoryWriter

BUDGET_SECONDS = 60.0
FLUSH_CHUNKS = 4000
FLUSH_SECONDS = 2.0
EMBED_BATCH = 64
MAX_LINE_NOTES = 10  # bad or repaired lines named one by one; the rest are counted
EMBED_RATE_GUESS = 60.0  # chunks/s on 2 cores (bench/README.md), for an ETA before any is timed


@dataclass
class IndexOptions:
    paths: Sequence[str] = ()
    # Units resolved elsewhere (shards of a Hub trace dataset), indexed in full after ``paths``;
    # ``limit`` and ``harness`` do not apply to them.
    units: Sequence[Unit] = ()
    harness: str | None = None
    limit: int | None = None
    thinking: bool = True
    yes: bool = False
    memory: str | None = None
    budget: float | None = BUDGET_SECONDS  # sweeps only; None = no limit
    embed: bool = True
    home: Path | None = None  # where agent roots are looked for (default $HOME)
    interactive: bool | None = None  # default: stdin is a TTY


@dataclass
class IndexReport:
    memory: str = ""
    sessions: int = 0  # distinct files read this run (a sweep reads one in up to three passes)
    skipped: int = 0  # files already current
    failed: list[tuple[str, str]] = field(default_factory=list)
    chunks: int = 0  # written
    seen: int = 0  # produced by chunking (written + already stored)
    embedded: int = 0  # vectors filled in this run (for this run's chunks or earlier ones)
    without_vectors: int = 0  # chunks in the memory still waiting for a vector after the run
    passes_left: int = 0
    sessions_left: int = 0
    embed_note: str | None = None
    seconds: float = 0.0
    # Transcript lines: unreadable ones skipped, defective ones read anyway — by reason, with
    # the first few (file, line, reason) to name in diagnostics.
    lines_skipped: Counter[str] = field(default_factory=Counter)
    lines_repaired: Counter[str] = field(default_factory=Counter)
    line_notes: list[tuple[str, int, str, str]] = field(default_factory=list)
    oversized: int = 0  # blocks whose pieces past the embedded head got no vector

    def summary(self) -> str:
        """One line: sessions read and unchanged, chunks stored, vectors filled and waiting."""
        s = f"indexed sessions={self.sessions} skipped={self.skipped} chunks={self.chunks}"
        s += f" embedded={self.embedded}"
        if self.without_vectors:
            s += f" waiting={self.without_vectors}"
        if self.failed:
            s += f" failed={len(self.failed)}"
        return s + self.lines_clause()

    def lines_clause(self) -> str:
        """` lines_skipped=N lines_repaired=M` when any transcript line was bad."""
        s = ""
        if self.lines_skipped:
            s += f" lines_skipped={sum(self.lines_skipped.values())}"
        if self.lines_repaired:
            s += f" lines_repaired={sum(self.lines_repaired.values())}"
        return s

    def note_lines(self, stats: FileStats) -> None:
        self.lines_skipped.update(stats.skipped)
        self.lines_repaired.update(stats.repaired)
        for kind, lines in (("skipped", stats.bad_lines), ("repaired", stats.repaired_lines)):
            for lineno, why in lines:
                if len(self.line_notes) < MAX_LINE_NOTES:
                    self.line_notes.append((stats.path, lineno, why, kind))


class Progress(Protocol):
    """Where a run reports how far it is: ``update`` per unit or embedded batch, ``clear``
    before a prompt or the summary. The CLI passes one that draws a bar on a terminal
    (funes.cli._tty.IndexProgress); by default nothing is shown."""

    def update(
        self, phase: str, done: int, total: int, chunks: int, force: bool = False, unit: str = ""
    ) -> None: ...

    def clear(self) -> None: ...


class _Silent:
    def update(
        self, phase: str, done: int, total: int, chunks: int, force: bool = False, unit: str = ""
    ) -> None:
        return None

    def clear(self) -> None:
        return None


def fmt_eta(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f}s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# ---------------------------------------------------------------------------- planning


def plan(opts: IndexOptions) -> tuple[list[Unit], bool]:
    """The files to index and whether this is a sweep (budgeted) run."""
    if opts.paths or opts.units:
        units = list(discover(list(opts.paths), opts.harness)) if opts.paths else []
        return [*_limit(units, opts.limit), *opts.units], False
    from funes import sources

    if opts.harness:
        src = get_source(opts.harness)
        units = [u for u in sources.sweep(opts.home) if u.source is not None and u.source == src]
        if not units:
            raise FunesError(f"no {src.name} session dir found on this machine")
    else:
        units = sources.sweep(opts.home)
        if not units:
            roots = ", ".join(
                f"~/{r}" for s in sources.registry() for r in s.roots
            )  # what we looked for
            raise FunesError(f"no agent sessions found (looked in {roots}); pass a path")
    return _limit(_newest_first(units), opts.limit), True


def _newest_first(units: list[Unit]) -> list[Unit]:
    def key(u: Unit) -> tuple[bool, float]:
        try:
            mtime = u.path.stat().st_mtime
        except OSError:
            mtime = 0.0
        return (u.path.stem.startswith("agent-"), -mtime)

    return sorted(units, key=key)


def _limit(units: list[Unit], limit: int | None) -> list[Unit]:
    """Per source, the most recent ``limit`` files."""
    if limit is None:
        return units
    if limit < 0:
        raise UsageError("--limit must be ≥ 0")
    by_src: dict[str, int] = {}
    keep = []
    for u in _newest_first(units):
        name = u.source.name if u.source else ""
        if by_src.get(name, 0) < limit:
            by_src[name] = by_src.get(name, 0) + 1
            keep.append(u)
    kept = set(keep)
    return [u for u in units if u in kept]


# ---------------------------------------------------------------------------- the run


def redactor() -> Callable[[str], str]:
    """The ingest redaction; never optional (a missing module must fail, not switch it off)."""
    from funes.secrets import redact

    return redact


def index(
    opts: IndexOptions,
    progress: Progress | None = None,
    ask: Callable[[str], bool] | None = None,
) -> IndexReport:
    """Index transcripts into a memory; see the module docstring. Holds the writer lock."""
    from funes.store.memory import open_memory

    t0 = time.monotonic()
    progress = progress or _Silent()
    units, sweep = plan(opts)
    path = memory_dir(opts.memory)
    fresh = not (path / f"{TABLE}.lance").is_dir()
    mem = open_memory(opts.memory, create=True)
    report = IndexReport(memory=mem.label)
    interactive = _interactive(opts.interactive)
    with mem.writer(interactive=interactive) as w:
        # Every row this run writes is redacted: an empty memory is vouched for from the start
        # (so a run killed half-way still leaves it stamped); one with unvouched rows is not.
        if not redaction.vouched(path) and mem.count() == 0:
            redaction.write_stamp(path, ingest={"detectors": "builtin"})
        state = IndexState.load(path, table_exists=not fresh)
        run = _Run(w, state, opts, report, progress)
        deadline = t0 + opts.budget if (sweep and opts.budget is not None) else None
        finish = opts.yes or deadline is None
        declined = False  # the user said no to finishing: ask nothing more
        if sweep:
            passes = [
                (
                    tier,
                    [
                        u
                        for u in units
                        if not state.current(_key(u), u.signature(), tier, opts.thinking)
                    ],
                )
                for tier in TIERS
            ]
            todo = [(tier, u) for tier, us in passes for u in us]
            pending = {u for _, us in passes for u in us}
            report.skipped = len([u for u in units if u not in pending])
            for i, (tier, u) in enumerate(todo):
                if not finish and deadline is not None and time.monotonic() >= deadline:
                    left = len(todo) - i
                    if interactive and ask is not None:
                        eta = fmt_eta((time.monotonic() - t0) / max(i, 1) * left)
                        progress.clear()
                        finish = ask(f"more to index (~{eta} left, rough). Finish it now? [Y/n] ")
                        declined = not finish
                    if not finish:
                        report.passes_left = left
                        report.sessions_left = len({_key(x) for _, x in todo[i:]})
                        break
                run.unit(u, (tier,), tier, i + 1, len(todo))
        else:
            for i, u in enumerate(units):
                if state.current(_key(u), u.signature(), TIERS[-1], opts.thinking):
                    report.skipped += 1
                    continue
                run.unit(u, TIERS, "indexing", i + 1, len(units))
        run.flush()
        progress.clear()
        if opts.embed:
            # A budgeted sweep embeds in what is left of its budget; told to finish, all of it.
            t_embed = time.monotonic()
            _embed_behind(w, report, progress, None if finish else deadline)
            left = mem.count_without_vectors()
            asking = interactive and ask is not None and not (finish or declined)
            if left and asking and ask is not None and report.embed_note is None:
                rate = report.embedded / max(time.monotonic() - t_embed, 1e-3)
                eta = fmt_eta(left / (rate if report.embedded else EMBED_RATE_GUESS))
                question = (
                    f"{left:,} chunks are searchable by words but still need vectors "
                    f"(~{eta} left, rough). Finish it now? [Y/n] "
                )
                if ask(question):
                    _embed_behind(w, report, progress, None)
        report.without_vectors = mem.count_without_vectors()
    report.seconds = time.monotonic() - t0
    return report


def backfill(
    memory: str | None = None,
    deadline: float | None = None,
    progress: Progress | None = None,
    interactive: bool | None = None,
) -> IndexReport:
    """Fill in the vectors of chunks stored without one (`funes index --backfill`)."""
    from funes.store.memory import open_memory

    t0 = time.monotonic()
    mem = open_memory(memory)
    report = IndexReport(memory=mem.label)
    progress = progress or _Silent()
    with mem.writer(interactive=_interactive(interactive)) as w:
        _embed_behind(w, report, progress, deadline)
        report.without_vectors = mem.count_without_vectors()
    report.seconds = time.monotonic() - t0
    return report


def _embed_behind(
    w: MemoryWriter, report: IndexReport, progress: Progress, deadline: float | None
) -> None:
    missing = w.memory.count_without_vectors()
    if not missing:
        return
    try:
        embed = load_embed()
    except FunesError as e:
        report.embed_note = f"vectors pending for {missing} chunks: {e}"
        return
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        progress.update("embedding", done, missing, done)

    report.embedded = w.backfill(embed, deadline=deadline, on_progress=tick)
    progress.clear()


def load_embed() -> Callable[[list[str]], np.ndarray]:
    """The embedder as a texts → vectors function (funes.models); FunesError if unavailable."""
    import numpy as np

    try:
        from funes.models import load_embedder
    except ImportError as e:
        raise FunesError(f"the embedding model is not available ({e})") from None
    emb = load_embedder()

    def embed(texts: list[str]) -> np.ndarray:
        parts = [emb.embed(texts[i : i + EMBED_BATCH]) for i in range(0, len(texts), EMBED_BATCH)]
        return np.concatenate(parts) if parts else np.empty((0, emb.dim), np.float32)

    return embed


class _Run:
    """Buffers chunks across files and commits them in batches; records state after commits."""

    def __init__(
        self,
        w: MemoryWriter,
        state: IndexState,
        opts: IndexOptions,
        report: IndexReport,
        progress: Progress,
    ) -> None:
        self.w, self.state, self.opts, self.report, self.progress = w, state, opts, report, progress
        self.redact = redactor()
        self.buf: list[Chunk] = []
        self.done_units: list[tuple[str, str | None, tuple[str, ...]]] = []
        self.read: set[str] = set()
        self.last_flush = time.monotonic()

    def unit(self, u: Unit, tiers: tuple[str, ...], phase: str, i: int, n: int) -> None:
        sig = u.signature()
        stats = FileStats(display_path(u.name))
        ids = self.w.ids
        # Streamed, turn by turn, and committed every FLUSH_CHUNKS: a huge file (a 50 MB tool
        # output) never sits in memory whole. A file that fails half-way keeps the turns read
        # before the failure (ids dedupe them when the next run retries the file).
        try:
            turns = _read(parse_unit(u, stats))
            for c in chunk_turns(turns, tiers, self.opts.thinking, self.redact):
                self.report.seen += 1
                if c.split_idx == EMBEDDED_SPLITS:
                    self.report.oversized += 1
                if c.id not in ids:
                    self.buf.append(c)
                    if len(self.buf) >= FLUSH_CHUNKS:
                        self.commit()
        except _ReadFailed as e:
            # Unreadable now: no state recorded, so the next run retries it.
            self.report.failed.append((stats.path, e.reason))
            return
        finally:
            if tiers[0] == TIERS[0]:  # a sweep reads a file once per tier: count lines once
                self.report.note_lines(stats)
        self.read.add(_key(u))
        self.report.sessions = len(self.read)
        self.done_units.append((_key(u), sig, tiers))
        if (
            len(self.buf) >= FLUSH_CHUNKS
            or time.monotonic() - self.last_flush >= FLUSH_SECONDS
            or i == n
        ):
            self.flush()
        self.progress.update(phase, i, n, self.report.chunks)

    def commit(self) -> None:
        """Store the buffered chunks (state is recorded only by :meth:`flush`)."""
        if self.buf:
            self.report.chunks += self.w.append(self.buf, redacted=True)
            self.buf = []

    def flush(self) -> None:
        self.commit()
        for key, sig, tiers in self.done_units:
            self.state.record(key, sig, tiers, self.opts.thinking)
        self.done_units = []
        self.state.save()
        self.last_flush = time.monotonic()


class _ReadFailed(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _read(turns: Iterator[Turn]) -> Iterator[Turn]:
    """``turns``, with a failure to read them (and only that) raised as :class:`_ReadFailed`."""
    try:
        yield from turns
    except FunesError as e:
        raise _ReadFailed(str(e)) from None
    except OSError as e:
        raise _ReadFailed(os_reason(e)) from None


def _key(u: Unit) -> str:
    return u.name


def _interactive(flag: bool | None) -> bool:
    if flag is not None:
        return flag
    with contextlib.suppress(ValueError, OSError):
        return sys.stdin is not None and sys.stdin.isatty()
    return False


def describe(report: IndexReport, backfill_cmd: str = "funes index --backfill") -> list[str]:
    """Extra lines for the human summary (stderr): what failed, and what is left and how to
    finish it."""
    lines = []
    for path, err in report.failed[:10]:
        lines.append(f"{path} — read failed, skipping: {err}")
    for path, lineno, why, kind in report.line_notes:
        where = f"{path}:{lineno}" if lineno else path
        what = why.replace("_", " ")
        lines.append(
            f"{where}: {what} — read anyway" if kind == "repaired" else f"{where}: {what} — skipped"
        )
    named = len(report.line_notes)
    total = sum(report.lines_skipped.values()) + sum(report.lines_repaired.values())
    if total > named:
        lines.append(f"… and {total - named} more bad or repaired lines")
    if report.oversized:
        n = report.oversized
        lines.append(
            f"{n} oversized block{'' if n == 1 else 's'} (over {EMBEDDED_SPLITS} pieces): the "
            "head is embedded, the whole text is stored and searchable by words"
        )
    if report.passes_left:
        s = "" if report.sessions_left == 1 else "s"
        lines.append(
            f"{report.passes_left} pass(es) over {report.sessions_left} session{s} left — "
            "per-turn indexing (or a `funes index` rerun) picks them up"
        )
    if report.embed_note:
        lines.append(report.embed_note)
    elif report.without_vectors:
        lines.append(
            f"{report.without_vectors:,} chunks are stored without vectors (searchable by words "
            f"now) — `{backfill_cmd}` embeds them"
        )
    return lines


def as_dict(report: IndexReport) -> dict[str, Any]:
    return {
        "memory": report.memory,
        "sessions": report.sessions,
        "skipped": report.skipped,
        "chunks": report.chunks,
        "embedded": report.embedded,
        "without_vectors": report.without_vectors,
        "waiting": report.without_vectors,
        "passes_left": report.passes_left,
        "sessions_left": report.sessions_left,
        "failed": len(report.failed),
        "lines_skipped": dict(report.lines_skipped),
        "lines_repaired": dict(report.lines_repaired),
        "oversized_blocks": report.oversized,
        "seconds": round(report.seconds, 2),
    }
