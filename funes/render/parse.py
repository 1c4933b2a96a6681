"""What `funes-parse` prints besides the turns: its warnings about each input, the one-line count
of what a parse read, and the coverage table of `--report` (what each input held and what became
of it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from funes import sources
from funes.sources import FileStats


def file_warnings(st: FileStats) -> list[str]:
    """What a parse of one input has to say on stderr: each line skipped and why, a file name
    that is not UTF-8, the error that stopped it, and why a file gave no turns (a Codex file, or
    one no source recognised)."""
    out = [
        f"{st.path}:{n}: {reason.replace('_', ' ')} line — skipped" for n, reason in st.bad_lines
    ]
    if st.repaired.get("file_name_not_utf8"):
        out.append(f"{st.path}: file name is not valid UTF-8 — read; its bad bytes show as �")
    if st.error:
        out.append(st.error)
    if (st.source == "codex" or st.unrecognised) and (why := sources.no_turns(st)):
        out.append(f"{st.path}: {why}")
    return out


def counts_text(st: FileStats) -> str:
    """What a parse read, in one line: sessions, turns, blocks, skipped and repaired lines."""
    n = len(st.sessions)
    blocks = sum(st.blocks.values())
    skipped = st.skipped_lines
    repaired = sum(st.repaired.values())
    return (
        f"{n} session{'' if n == 1 else 's'}, {st.turns} turn{'' if st.turns == 1 else 's'}, "
        f"{blocks} block{'' if blocks == 1 else 's'}, "
        f"{skipped} skipped line{'' if skipped == 1 else 's'}"
        + (f", {repaired} repaired" if repaired else "")
    )


def summary_text(files: int, total: FileStats) -> str:
    """The last line of a parse, for stderr: how many files, and what they held."""
    return f"{files} file{'' if files == 1 else 's'}: {counts_text(total)}"


BLOCK_COLUMNS = ("text", "thinking", "tool_use", "tool_result")


def report_text(reports: list[dict[str, Any]]) -> str:
    """The coverage table: one row per input, a total, then what each input did not keep."""
    head = ["file", "harness", "sessions", "read", "turns", "empty", "ignored", "UNEXPLAINED",
            "unreadable", *BLOCK_COLUMNS]  # fmt: skip
    rows, notes = [], []
    totals = [0] * (len(head) - 2)
    for r in reports:
        nums = [
            r["sessions"],
            r["records_read"],
            r["turns"],
            sum(r["empty"].values()),
            sum(r["ignored"].values()),
            sum(r["unexplained"].values()),
            sum(r["skipped"].values()),
            *(r["blocks"].get(b, 0) for b in BLOCK_COLUMNS),
        ]
        totals = [a + b for a, b in zip(totals, nums, strict=True)]
        rows.append([_short(r["path"]), r["harness"] or "-", *map(str, nums)])
        notes.extend(_notes(r))
    n = len(reports)
    rows.append([f"total ({n} file{'' if n == 1 else 's'})", "", *map(str, totals)])
    widths = [max(len(x[i]) for x in [head, *rows]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.ljust(widths[1]) if i == 1 else c.rjust(widths[i]) for i, c in enumerate(cells)]
        return "  ".join([first, *rest[1:]]).rstrip()

    out = [line(head), *(line(r) for r in rows[:-1]), line(["-" * widths[0]]), line(rows[-1])]
    unexplained = totals[5]
    out.append("")
    out.append(
        "read = records (lines, rows, messages) read; turns = records kept as turns; empty = "
        "kept but no content; ignored = not content by design; UNEXPLAINED = ignored kinds "
        "that might hold content; unreadable = bad lines/elements skipped"
    )
    if notes:
        out.append("")
        out.extend(notes)
    out.append("")
    out.append(
        f"{unexplained} unexplained record{'' if unexplained == 1 else 's'}, {totals[6]} unreadable"
    )
    return "\n".join(out) + "\n"


def _notes(r: dict[str, Any]) -> list[str]:
    lines = []

    def kinds(c: dict[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))

    if r["error"]:
        lines.append(f"  FAILED: {r['error']}")
    if r.get("no_turns"):
        lines.append(f"  NO TURNS: {r['no_turns']}")
    if r["unexplained"]:
        lines.append(f"  UNEXPLAINED (not read, might hold content): {kinds(r['unexplained'])}")
    if r["skipped"]:
        where = ", ".join(f"line {n} {why}" for n, why in r["skipped_lines"])
        lines.append(f"  unreadable: {kinds(r['skipped'])} ({where})")
    if r["repaired"]:
        where = ", ".join(f"line {n}" if n else "file name" for n, _ in r["repaired_lines"])
        lines.append(f"  repaired (read anyway): {kinds(r['repaired'])} ({where})")
        lines.extend(f"    {k}: {REPAIRS[k]}" for k in sorted(r["repaired"]) if k in REPAIRS)
    big = r.get("oversized") or {}
    if big.get("blocks"):
        n = big["blocks"]
        lines.append(
            f"  oversized: {n} block{'' if n == 1 else 's'} ({big['chars']:,} characters) — "
            f"the first {_embedded_splits()} pieces of each are embedded, the whole text is stored "
            "and searchable by words"
        )
    if r["ignored"]:
        lines.append(f"  ignored (not content): {kinds(r['ignored'])}")
    if r["empty"]:
        lines.append(f"  empty (no text after normalising): {kinds(r['empty'])}")
    return [f"{r['path']}:", *lines] if lines else []


REPAIRS = {
    "concatenated_records": "records written back to back without a newline, each read",
    "lone_surrogate": "half of an emoji (a lone UTF-16 surrogate) read as U+FFFD",
    "missing_uuid": "a turn without a usable id got one from its line and turn number",
    "file_name_not_utf8": "a file name that is not UTF-8, its bad bytes shown as U+FFFD",
}


def _short(path: str) -> str:
    """The file name (full paths head the notes), its middle elided when long."""
    name = Path(path).name or path
    return name if len(name) <= 44 else f"{name[:20]}…{name[-23:]}"


def _embedded_splits() -> int:
    # lazy: the chunker and its hashlib (3.0 ms of CPU to import) stay off funes-parse's start;
    # only a report with an oversized block reads this
    from funes.chunking import EMBEDDED_SPLITS

    return EMBEDDED_SPLITS
