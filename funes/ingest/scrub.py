"""`funes scrub`: find secrets already stored in a memory and take them out for good.

Every stored block is reassembled from the pieces chunking split it into, redacted with the
built-in detectors, then scanned by the external scanner (fail-closed); what the scanner still
finds is replaced by ``[REDACTED:<detector>]`` where it can say where, and the result is
scanned again. A block is **redacted** when that leaves it clean: its rows are
replaced by a fresh split of the redacted text (same ids for the same coordinates) with new
vectors. It is **dropped** when the scanner cannot locate its secret, or the redacted text
still scans dirty. Clean blocks are not touched (their rows and vectors stay as they are).

The rewrite is one table commit; then deleted rows, old table versions and old lexical
segments are physically removed (:meth:`MemoryWriter.purge`), and the memory is stamped as
scanned (:mod:`funes.store.redaction`). Source transcripts are never read or changed. A second
run finds nothing to do.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from funes.chunking import chunk_id, reassemble, split
from funes.errors import FunesError, counted
from funes.ingest.backfill import load_embed
from funes.memories import open_for_write, open_one
from funes.records import CHUNK_FIELDS, Chunk
from funes.secrets import find, redact
from funes.secrets import scanner as secret_scanner
from funes.store import redaction
from funes.store.lock import LockBusy
from funes.store.memory import (
    META_COLUMNS,
    Memory,
    MemoryMissing,
    MemoryWriter,
    deletion_files,
)
from funes.store.state import mark_all_embedded

BUILTIN_ONLY = "builtin-only"
BUSY = "another funes memory operation is in progress; retry once it finishes"
# Characters of block text per scanner run: bounds the scanner's temporary files.
SCAN_BATCH_CHARS = 32_000_000
# Rows read and judged at a time (whole sessions): the scrub's memory is one batch's, not the
# memory's (677 MB, + 253 MB of scanner, at 100k chunks read at once).
BATCH_ROWS = 10_000

BlockKey = tuple[str, str, int]


@dataclass
class ScrubReport:
    memory: str = ""
    scanner: str = ""  # the scanner kind, or "builtin-only"
    dry_run: bool = False
    rows: int = 0  # rows scanned
    blocks: int = 0  # blocks scanned
    redacted_blocks: int = 0
    redacted: dict[str, int] = field(default_factory=dict)  # secrets removed, by detector
    dropped_blocks: int = 0
    dropped_rows: int = 0
    dropped: dict[str, int] = field(default_factory=dict)  # by detector, one per block
    rows_removed: int = 0  # old rows of redacted and dropped blocks
    rows_written: int = 0  # new rows of redacted blocks
    embedded: int = 0
    purged: bool = False  # old versions and deleted rows physically removed
    note: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.redacted_blocks or self.dropped_blocks)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "changed": self.changed}


@dataclass
class _Block:
    key: BlockKey
    rows: list[dict[str, Any]]  # in split order
    text: str  # reassembled
    new_text: str | None = None  # redacted, when it changes
    found: Counter[str] = field(default_factory=Counter)
    drop: bool = False


def scrub(
    memory: str | None = None,
    *,
    dry_run: bool = False,
    builtin_only: bool = False,
    embed: Callable[[list[str]], np.ndarray] | None = None,
    on_step: Callable[[str], None] | None = None,
) -> ScrubReport:
    """Scrub a local memory (see the module docstring); ``dry_run`` changes nothing.

    Without ``builtin_only`` a scanner must be available (ScannerError otherwise). ``embed``
    (texts → vectors) defaults to the installed embedder; without one, replaced rows are
    stored without vectors (``funes index --backfill`` fills them in). ``on_step`` hears the
    name of each phase as it starts (scanning, re-embedding, writing, purging). A dry run reads
    any memory ``memory`` names (a remote's cached copy too); a scrub writes only a local one.
    """
    step = on_step or (lambda _: None)
    try:
        mem = open_one(memory) if dry_run else open_for_write(memory)
    except MemoryMissing as e:
        raise MemoryMissing(f"nothing to scrub: {e}") from None
    scanner = BUILTIN_ONLY if builtin_only else _scanner_kind()
    report = ScrubReport(memory=mem.label, scanner=scanner, dry_run=dry_run)
    if dry_run:
        step("scanning")
        _plan(mem, scanner, report)
        return report
    with _writer(mem) as w:
        step("scanning")
        dirty = _plan(mem, scanner, report)
        if dirty:
            chunks = _rechunk([b for b in dirty if not b.drop])
            step("re-embedding")
            report.embedded = _embed(chunks, embed, report)
            step("writing")
            w.replace([r["id"] for b in dirty for r in b.rows], chunks)
            report.rows_written = len(chunks)
        if dirty or _has_history(mem):
            step("purging old versions")
            w.purge()
            report.purged = True
        if not mem.count_streamed(mem.waiting):
            # The purge leaves no counts for its version: without this mark the next no-op
            # `funes index` would open the table to find nothing waits.
            mark_all_embedded(mem.path)
        redaction.write_stamp(
            mem.path,
            scrub={
                "scanner": scanner,
                "table_version": mem.version,
                "blocks": report.blocks,
                "redacted_blocks": report.redacted_blocks,
                "dropped_blocks": report.dropped_blocks,
            },
        )
    return report


def _scanner_kind() -> str:
    try:
        return secret_scanner.find_scanner().kind
    except secret_scanner.ScannerError as e:
        raise secret_scanner.ScannerError(
            f"{e}; or, to scan with the built-in detectors alone, run `funes scrub --builtin-only`"
        ) from None


@contextlib.contextmanager
def _writer(mem: Memory) -> Iterator[MemoryWriter]:
    """The writer lock, one attempt (scrub is never worth queueing behind a long index)."""
    stack = contextlib.ExitStack()
    try:
        w = stack.enter_context(mem.writer(interactive=False))
    except LockBusy:
        raise LockBusy(BUSY) from None
    with stack:
        yield w


def _has_history(mem: Memory) -> bool:
    """Whether older table versions (or deleted rows) may still hold old text on disk."""
    try:
        return mem.version_count() > 1 or bool(deletion_files(mem.path))
    except Exception:  # unsure (Lance's errors are untyped): old text may remain, so purge
        return True


# ---------------------------------------------------------------------------- planning


def _plan(mem: Memory, scanner: str, report: ScrubReport) -> list[_Block]:
    """The blocks scrub changes (redacted or dropped), every stored block judged by
    :func:`_judge` whole sessions at a time (:data:`BATCH_ROWS` rows), so what is held is one
    batch and the blocks that change; fills in the report's counts."""
    dirty: list[_Block] = []
    redacted: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    for t in mem.by_sessions(META_COLUMNS, BATCH_ROWS):
        rows = t.to_pylist()
        del t
        report.rows += len(rows)
        blocks = _blocks(rows)
        del rows
        report.blocks += len(blocks)
        _judge(blocks, scanner, mem.path)
        for b in blocks:
            if b.drop:
                report.dropped_blocks += 1
                report.dropped_rows += len(b.rows)
                dropped.update(set(b.found) or {"unknown"})
            elif b.new_text is not None:
                report.redacted_blocks += 1
                redacted.update(b.found)
            else:
                continue
            report.rows_removed += len(b.rows)
            dirty.append(b)
    report.redacted = dict(sorted(redacted.items()))
    report.dropped = dict(sorted(dropped.items()))
    return dirty


def _blocks(rows: list[dict[str, Any]]) -> list[_Block]:
    grouped: dict[BlockKey, list[dict[str, Any]]] = {}
    for r in rows:
        key = (r["session_id"] or "", r["turn_uuid"] or "", int(r["block_idx"] or 0))
        grouped.setdefault(key, []).append(r)
    blocks = []
    for key, rs in grouped.items():
        rs.sort(key=lambda r: int(r["split_idx"] or 0))
        blocks.append(_Block(key, rs, reassemble(r["text"] or "" for r in rs)))
    return blocks


def _judge(blocks: list[_Block], scanner: str, workdir: Path) -> None:
    """Decide each block's fate: ``new_text`` (redacted) or ``drop``; clean ones untouched."""
    # 1. The built-in detectors, whose spans are exact.
    stage: dict[int, str] = {}
    for i, b in enumerate(blocks):
        found = find(b.text)
        b.found.update(f.detector for f in found)
        stage[i] = redact(b.text) if found else b.text
    # 2. The scanner, over what the built-ins left; then once more over what it redacted.
    if scanner != BUILTIN_ONLY:
        rescan: dict[int, str] = {}
        for i, spans in _scan(stage, scanner, workdir).items():
            if any(sp is None for _, sp in spans):
                blocks[i].drop = True
                blocks[i].found.update(d for d, _ in spans)
                continue
            blocks[i].found.update(d for d, _ in spans)
            stage[i] = _excise(stage[i], [(sp, d) for d, sp in spans if sp is not None])
            rescan[i] = stage[i]
        for i in _scan(rescan, scanner, workdir):
            blocks[i].drop = True
    for i, b in enumerate(blocks):
        if b.drop:
            continue
        if find(stage[i]):  # never expected: redaction is idempotent
            b.drop = True
        elif stage[i] != b.text:
            b.new_text = stage[i]


def _scan(texts: dict[int, str], scanner: str, workdir: Path) -> dict[int, list[tuple[str, Any]]]:
    """Scanner findings per block index: [(detector, span or None)]. The scan files live in
    the memory directory (``workdir``), never in a shared temporary directory."""
    out: dict[int, list[tuple[str, Any]]] = {}
    batch: dict[str, str] = {}
    size = 0

    def run() -> None:
        for f in secret_scanner.scan_texts(batch, prefer=scanner, workdir=workdir):
            out.setdefault(int(f.key), []).append((f.detector, f.span))
        batch.clear()

    for i, text in texts.items():
        batch[str(i)] = text
        size += len(text)
        if size >= SCAN_BATCH_CHARS:
            run()
            size = 0
    if batch:
        run()
    return out


def _excise(text: str, spans: Sequence[tuple[tuple[int, int], str]]) -> str:
    """``text`` with each span replaced by ``[REDACTED:<detector>]`` (overlaps merged)."""
    merged: list[list[Any]] = []
    for (s, e), d in sorted(spans):
        if merged and s < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e, d])
    parts, pos = [], 0
    for s, e, d in merged:
        parts.append(text[pos:s])
        parts.append(f"[REDACTED:{d}]")
        pos = e
    parts.append(text[pos:])
    return "".join(parts)


# ---------------------------------------------------------------------------- rewriting


def resplit(template: dict[str, Any], text: str) -> list[Chunk]:
    """The chunks of a redacted block: ``text`` split afresh, ids from the block's
    coordinates — what chunking the redacted block would have produced."""
    sid, turn, bidx = template["session_id"], template["turn_uuid"], int(template["block_idx"])
    block = {f: template[f] for f in CHUNK_FIELDS}
    return [
        Chunk(**{**block, "id": chunk_id(sid, turn, bidx, i), "text": piece, "block_idx": bidx,
                 "split_idx": i})
        for i, piece in enumerate(split(text))
    ]  # fmt: skip


def _rechunk(blocks: Sequence[_Block]) -> list[Chunk]:
    return [c for b in blocks if b.new_text is not None for c in resplit(b.rows[0], b.new_text)]


def _embed(
    chunks: list[Chunk],
    embed: Callable[[list[str]], np.ndarray] | None,
    report: ScrubReport,
) -> int:
    if not chunks:
        return 0
    if embed is None:
        try:
            embed = load_embed()
        except FunesError as e:
            report.note = f"vectors pending for {len(chunks)} rewritten chunks: {e}"
            return 0
    vectors = embed([c.text for c in chunks])
    for c, v in zip(chunks, vectors, strict=True):
        c.vector = [float(x) for x in v]
    return len(chunks)


def describe(report: ScrubReport) -> list[str]:
    """The human summary: counts by detector, never a value."""
    would = "would " if report.dry_run else ""
    used = (
        "the built-in detectors only (--builtin-only)"
        if report.scanner == BUILTIN_ONLY
        else f"the built-in detectors and {report.scanner}"
    )
    lines = [f"scanned {report.rows} rows in {report.blocks} blocks of {report.memory} with {used}"]
    if not report.changed:
        lines.append(
            "memory is empty"
            if not report.rows
            else f"memory is already clean ({report.rows} chunks)"
        )
    if report.redacted_blocks:
        lines.append(
            f"{would}redact {counted(sum(report.redacted.values()), 'secret')} in "
            f"{counted(report.redacted_blocks, 'block')}: {_counts(report.redacted)}"
        )
    if report.dropped_blocks:
        lines.append(
            f"{would}drop {counted(report.dropped_rows, 'row')} in "
            f"{counted(report.dropped_blocks, 'block')} that "
            f"could not be redacted safely: {_counts(report.dropped)}"
        )
    if report.changed and not report.dry_run:
        lines.append(
            f"rewrote {counted(report.rows_removed, 'row')} as {report.rows_written}, "
            f"re-embedded {report.embedded}; old versions removed"
        )
    if report.note:
        lines.append(report.note)
    return lines


def _counts(by: dict[str, int]) -> str:
    return ", ".join(f"{d}×{n}" for d, n in sorted(by.items()))
