"""What an index or backfill run reports, and the progress hook it calls as it goes.

The library draws nothing: a run calls a :class:`Progress` (by default :data:`SILENT`), and the
CLI passes one that draws a bar on a terminal. The summary line and the extra lines a person
reads (:func:`describe`) and the JSON form (:func:`as_dict`) are built from the report alone.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

from funes.chunking import EMBEDDED_SPLITS
from funes.errors import counted
from funes.sources import FileStats, no_turns

MAX_LINE_NOTES = 10  # bad or repaired lines named one by one; the rest are counted


@dataclass
class IndexReport:
    memory: str = ""
    sessions: int = 0  # distinct session ids read this run (a Hub shard holds many)
    skipped: int = 0  # files already current
    failed: list[tuple[str, str]] = field(default_factory=list)
    chunks: int = 0  # written
    seen: int = 0  # produced by chunking (written + already stored)
    embedded: int = 0  # vectors filled in this run (for this run's chunks or earlier ones)
    embed_seconds: float = 0.0  # spent embedding them, the model's loading left out
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
    # Codex rollouts read but yielding no turns, (file, why): said, never silently indexed as 0.
    no_turns: list[tuple[str, str]] = field(default_factory=list)
    oversized: int = 0  # blocks whose pieces past the embedded head got no vector
    # The detached backfill filling the waiting vectors in behind this run: (pid, started by
    # this run) — None when none was started or found (funes.ingest.behind).
    behind: tuple[int, bool] | None = None

    def summary(self, backfill: bool = False) -> str:
        """One line: sessions read and unchanged, chunks stored, vectors filled and waiting —
        or, for a ``backfill`` that found no chunk without a vector, that it had nothing to do."""
        if backfill and not (self.embedded or self.without_vectors or self.failed):
            return "nothing to embed: every chunk has its vector"
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
        if (stats.source == "codex" or stats.unrecognised) and (why := no_turns(stats)):
            self.no_turns.append((stats.path, why))
        self.lines_skipped.update(stats.skipped)
        self.lines_repaired.update(stats.repaired)
        for kind, lines in (("skipped", stats.bad_lines), ("repaired", stats.repaired_lines)):
            for lineno, why in lines:
                if len(self.line_notes) < MAX_LINE_NOTES:
                    self.line_notes.append((stats.path, lineno, why, kind))


class Progress(Protocol):
    """Where a run reports how far it is: ``status`` when a step with nothing to count yet
    starts (finding the sessions, opening the memory, loading the model), ``update`` per unit or
    embedded batch, ``clear`` before a prompt or the summary. The CLI passes one that draws on
    a terminal (funes.cli._tty.IndexProgress); by default nothing is shown (:data:`SILENT`)."""

    def status(self, text: str) -> None: ...

    def update(
        self,
        phase: str,
        done: int,
        total: int,
        chunks: int,
        force: bool = False,
        unit: str = "",
        after: int = 0,
    ) -> None:
        """``done`` of ``total`` ``unit`` (files, chunks) of ``phase``; ``after`` more units to
        go in the phases after it (the time estimate covers them too)."""

    def clear(self) -> None: ...


class _Silent:
    def status(self, text: str) -> None:
        return None

    def update(
        self,
        phase: str,
        done: int,
        total: int,
        chunks: int,
        force: bool = False,
        unit: str = "",
        after: int = 0,
    ) -> None:
        return None

    def clear(self) -> None:
        return None


SILENT: Progress = _Silent()


def fmt_eta(seconds: float) -> str:
    """A time left, as every estimate of an index run says it (the bar and the prompts)."""
    if seconds < 90:
        return f"{seconds:.0f}s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def describe(report: IndexReport, backfill_cmd: str = "funes index --backfill") -> list[str]:
    """Extra lines for the human summary (stderr): what failed, and what is left and how to
    finish it."""
    lines = []
    for path, err in report.failed[:10]:
        lines.append(f"{path} — read failed, skipping: {err}")
    for path, why in report.no_turns[:10]:
        lines.append(f"{path}: {why} — nothing indexed from it")
    if len(report.no_turns) > 10:
        lines.append(f"… and {len(report.no_turns) - 10} more files with no turns")
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
        lines.append(
            f"{counted(report.sessions_left, 'session')} not fully indexed yet — per-turn "
            "indexing (or a `funes index` rerun) picks them up"
        )
    if report.embed_note:
        lines.append(report.embed_note)
    elif report.without_vectors and report.behind is not None:
        pid, started = report.behind
        how = "started" if started else "already running"
        lines.append(
            f"{report.without_vectors:,} chunks are stored without vectors (searchable by words "
            f"now) — a backfill {how} behind this run embeds them (pid {pid}, niced; "
            "`funes status` shows it)"
        )
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
        "backfill_pid": report.behind[0] if report.behind else None,
        "seconds": round(report.seconds, 2),
    }
