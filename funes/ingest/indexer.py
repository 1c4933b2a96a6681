"""`funes index` as a library call: parse → chunk (redacted) → skip stored ids → write → embed.

Lexical-first: chunks are appended without vectors and are lexically searchable as soon as
their batch commits (every :data:`FLUSH_SECONDS` or :data:`FLUSH_CHUNKS`); vectors are filled
in behind (:mod:`funes.ingest.backfill`), in the same run or in a detached
`funes index --backfill`.

Two kinds of run:

- **explicit paths** (and the shards of Hub trace datasets, :func:`hub_units`) are indexed in
  full, all tiers per file, in path order;
- **a sweep** (no path: every known agent root, or one harness's) is tier-major — text of
  every pending session, newest first, then tool calls, then tool results — and stops at the
  time budget unless told to finish (``yes``, or the user says so at the prompt).

Incremental at two levels: a file whose signature is unchanged since it was indexed at a tier is
not read again (`state.json`), and a chunk whose id is stored is never written again. State is
recorded only after the file's chunks are committed, so a run killed at any point leaves a
memory that opens, and the next run completes it without duplicates.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from funes.chunking import EMBEDDED_SPLITS, TIERS, chunk_turns
from funes.errors import FunesError
from funes.hub import traces
from funes.ingest import ann
from funes.ingest.backfill import embed_behind, stdin_interactive
from funes.ingest.plan import BUDGET_SECONDS as BUDGET_SECONDS  # re-exported
from funes.ingest.plan import IndexOptions, plan
from funes.ingest.plan import key as _key
from funes.ingest.report import SILENT, IndexReport, Progress, fmt_eta
from funes.memories import open_for_write, writable_dir
from funes.records import Chunk, Turn
from funes.secrets import redact
from funes.sources import FileStats, Unit, display_path, os_reason, parse_unit
from funes.store import redaction
from funes.store.errors import DiskFull
from funes.store.lock import behind_pid
from funes.store.paths import TABLE
from funes.store.state import IndexState, mark_all_embedded

if TYPE_CHECKING:
    from funes.store.memory import Memory
    from funes.store.writer import MemoryWriter

FLUSH_CHUNKS = 4000
FLUSH_SECONDS = 2.0
EMBED_RATE_GUESS = 60.0  # chunks/s on 2 cores (bench/README.md), for an ETA before any is timed


# ---------------------------------------------------------------------------- the run


def redactor() -> Callable[[str], str]:
    """The ingest redaction; never optional (imported at the top: a missing module fails the
    import, it never switches redaction off)."""
    return redact


def index(
    opts: IndexOptions,
    progress: Progress | None = None,
    ask: Callable[[str], bool] | None = None,
) -> IndexReport:
    """Index transcripts into a memory; see the module docstring. Holds the writer lock."""
    t0 = time.monotonic()
    path = writable_dir(opts.memory)  # a Hub memory is refused before anything is read
    progress = progress or SILENT
    progress.status("finding agent sessions" if not (opts.paths or opts.units) else "listing files")
    units, sweep = plan(opts)
    fresh = not (path / f"{TABLE}.lance").is_dir()
    progress.status(f"opening the memory ({len(units):,} files to look at)")
    # Its writer brings the lexical index up to date with the table (on disk, once).
    mem = open_for_write(path, create=True, catch_up=False)
    report = IndexReport(memory=mem.label)
    held = mem.count()
    interactive = stdin_interactive(opts.interactive)
    try:
        with mem.writer(interactive=interactive) as w:
            # Every row this run writes is redacted: an empty memory is vouched for from the start
            # (so a run killed half-way still leaves it stamped); one with unvouched rows is not.
            if not redaction.vouched(path) and mem.count() == 0:
                redaction.write_stamp(path, ingest={"detectors": "builtin"})
            state = IndexState.load(path, table_exists=not fresh)
            run = _Run(w, state, opts, report, progress)
            deadline = t0 + opts.budget if (sweep and opts.budget is not None) else None
            progress.status(f"comparing {len(units):,} files with what is indexed")
            # A file that cannot be read at all (a FIFO where sessions are kept, or one named) is
            # said once, not once per tier, and never opened.
            report.failed += [(display_path(u.name), u.error) for u in units if u.error]
            units = [u for u in units if u.error is None]
            # finish: read (and embed) everything, whatever the budget; declined: the user said
            # no to finishing, so nothing more is asked
            finish, declined = opts.yes or deadline is None, False
            if sweep:
                finish, declined = _sweep(run, units, t0, deadline, finish, interactive, ask)
            else:
                _read_named(run, units)
            run.flush()
            if report.chunks:
                progress.status("indexing sessions")
                w.index_sessions()  # once, when the memory first grows past SESSION_INDEX_ROWS
            progress.clear()
            # A backfill running behind an earlier run embeds this run's chunks too (it looks
            # for waiting chunks until none are left): embedding here would only race it for
            # the writer lock, at full priority.
            if opts.embed and behind_pid(path) is None:
                asking = interactive and ask is not None and not (finish or declined)
                _embed(w, report, progress, None if finish else deadline, ask if asking else None)
            report.without_vectors = mem.count_without_vectors()
            if not report.without_vectors:
                mark_all_embedded(path)
    except DiskFull as e:
        raise _disk_full(mem, held, e) from None
    if report.embedded:  # the vector index, built behind this run once it pays
        ann.maybe_start(mem, vectors=mem.count() - report.without_vectors)
    report.seconds = time.monotonic() - t0
    return report


def _sweep(
    run: _Run,
    units: list[Unit],
    t0: float,
    deadline: float | None,
    finish: bool,
    interactive: bool,
    ask: Callable[[str], bool] | None,
) -> tuple[bool, bool]:
    """Read what changed in ``units``, a tier at a time, until ``deadline`` (unless the run is
    told to ``finish``, or the user says so when asked); returns (finish, declined)."""
    state, opts, report, progress = run.state, run.opts, run.report, run.progress
    declined = False
    passes = [
        (
            tier,
            [u for u in units if not state.current(_key(u), u.signature(), tier, opts.thinking)],
        )
        for tier in TIERS
    ]
    # Each read: its tier, its file, the file's place among the tier's, the files
    # of the tiers after (the bar counts one tier's files; its estimate, all).
    todo = [
        (tier, u, j + 1, len(us), sum(len(later) for _, later in passes[k + 1 :]))
        for k, (tier, us) in enumerate(passes)
        for j, u in enumerate(us)
    ]
    pending = {u for _, us in passes for u in us}
    report.skipped = len([u for u in units if u not in pending])
    for i, (tier, u, j, m, after) in enumerate(todo):
        if not finish and deadline is not None and time.monotonic() >= deadline:
            left = len(todo) - i
            if interactive and ask is not None:
                eta = fmt_eta((time.monotonic() - t0) / max(i, 1) * left)
                progress.clear()
                finish = ask(f"more to index (~{eta} left, rough). Finish it now? [Y/n] ")
                declined = not finish
            if not finish:
                report.passes_left = left
                report.sessions_left = len({_key(x[1]) for x in todo[i:]})
                break
        run.unit(u, (tier,), _reading(tier), j, m, after)
    return finish, declined


def _read_named(run: _Run, units: list[Unit]) -> None:
    """Read the files a run was given, each whole (every tier), unless indexed already."""
    for i, u in enumerate(units):
        if run.state.current(_key(u), u.signature(), TIERS[-1], run.opts.thinking):
            run.report.skipped += 1
            continue
        run.unit(u, TIERS, "indexing", i + 1, len(units))


def _embed(
    w: MemoryWriter,
    report: IndexReport,
    progress: Progress,
    deadline: float | None,
    ask: Callable[[str], bool] | None,
) -> None:
    """Embed the chunks waiting for a vector until ``deadline``; then, with ``ask``, offer to
    embed the rest now."""
    # A budgeted sweep embeds in what is left of its budget; told to finish, all of it.
    embed_behind(w, report, progress, deadline)
    left = w.memory.count_without_vectors()
    if left and ask is not None and report.embed_note is None:
        # The bar's rate: chunks per second of embedding, the model's load left out
        rate = report.embedded / max(report.embed_seconds, 1e-3)
        eta = fmt_eta(left / (rate if report.embedded else EMBED_RATE_GUESS))
        question = (
            f"{left:,} chunks are searchable by words but still need vectors "
            f"(~{eta} left, rough). Finish it now? [Y/n] "
        )
        if ask(question):
            embed_behind(w, report, progress, None)


def _disk_full(mem: Memory, held: int, e: DiskFull) -> DiskFull:
    """``e`` saying how much of this run was kept: every table version Lance committed is whole
    (and the lexical index catches up with it on the next open), so what the table holds now
    beyond the ``held`` rows it started with is what this run kept."""
    try:
        mem.reload()
        kept = f"{mem.count() - held:,} chunks"
    except Exception:  # the disk is full: any read may fail, and the message must still be said
        kept = "the chunks"
    return DiskFull(
        e.label,
        kept=f"{kept} of this run were stored before it filled and are kept, the rest was "
        "not (a rerun goes on from there)",
    )


def _reading(tier: str) -> str:
    """A sweep's phase as its bar names it: what of the sessions it reads, and which of the
    sweep's reads that is (`text (1 of 3)`, `tool calls (2 of 3)`)."""
    what = {"text": "text", "tool_use": "tool calls", "tool_result": "tool results"}
    return f"{what.get(tier, tier)} ({TIERS.index(tier) + 1} of {len(TIERS)})"


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
        self.sessions: set[str] = set()  # session ids read (a Hub shard holds many)
        self.last_flush = time.monotonic()

    def unit(
        self, u: Unit, tiers: tuple[str, ...], phase: str, i: int, n: int, after: int = 0
    ) -> None:
        """Read ``u``, the ``i``-th of the ``n`` files of ``phase``, with ``after`` files to
        read in the phases after it."""
        chunks = self.report.chunks + len(self.buf)
        self.progress.update(phase, i - 1, n, chunks, unit="files", after=after)  # from the first
        sig = u.signature()
        stats = FileStats(display_path(u.name))
        # Stored chunks are dropped here once the writer has loaded the stored ids (a large
        # run); before that, its append asks the table about each batch (a hook's session).
        ids = self.w.ids_loaded
        seen: set[str] = set()
        # Streamed, turn by turn, and committed every FLUSH_CHUNKS: a huge file (a 50 MB tool
        # output) never sits in memory whole. A file that fails half-way keeps the turns read
        # before the failure (ids dedupe them when the next run retries the file).
        failed = False
        try:
            turns = _seen(_read(parse_unit(u, stats)), seen)
            for c in chunk_turns(turns, tiers, self.opts.thinking, self.redact):
                self.report.seen += 1
                if c.split_idx == EMBEDDED_SPLITS:
                    self.report.oversized += 1
                if ids is None or c.id not in ids:
                    self.buf.append(c)
                    if len(self.buf) >= FLUSH_CHUNKS:
                        self.commit()
        except _ReadFailed as e:
            # Unreadable now: no state recorded, so the next run retries it.
            self.report.failed.append((stats.path, e.reason))
            failed = True
            return
        finally:
            # A sweep reads a file once per tier: count lines once. A file refused without one
            # record read (no JSON at all) is its one `read failed` line, not one per line.
            if tiers[0] == TIERS[0] and not (failed and not stats.records_kept):
                self.report.note_lines(stats)
        self.sessions |= seen
        self.report.sessions = len(self.sessions)
        self.done_units.append((_key(u), sig, tiers))
        if (
            len(self.buf) >= FLUSH_CHUNKS
            or time.monotonic() - self.last_flush >= FLUSH_SECONDS
            or (i == n and not after)
        ):
            self.flush()
        # chunks found so far, stored or still in the batch (committed every 2 s or 4,000)
        self.progress.update(
            phase, i, n, self.report.chunks + len(self.buf), unit="files", after=after
        )

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


def _seen(turns: Iterator[Turn], sessions: set[str]) -> Iterator[Turn]:
    """``turns``, each one's session id added to ``sessions`` as it passes."""
    for t in turns:
        sessions.add(t.session_id)
        yield t


# ---------------------------------------------------------------------------- Hub datasets


def hub_units(
    args: Sequence[str], on_dataset: Callable[[traces.TraceDataset], None] | None = None
) -> tuple[list[str], list[Unit]]:
    """Split PATH arguments into local paths and the shards of Hub trace datasets (a path that
    exists locally always wins). Each dataset is resolved on the Hub (its parquet conversion)
    and, once resolved, handed to ``on_dataset`` before the next argument is looked at."""
    if all(os.path.exists(os.path.expanduser(a)) for a in args):
        return list(args), []
    paths, units = [], []
    for a in args:
        repo_id = traces.target(a)
        if repo_id is None:
            paths.append(a)
            continue
        ds = traces.resolve(repo_id)
        if on_dataset is not None:
            on_dataset(ds)
        units.extend(traces.units(ds))
    return paths, units
