"""`funes index --check PATH…`: the validation and ids an index run would produce, with
nothing written (no memory is opened).

Every file under the paths is read by its source exactly as `funes index` reads it — a
`.funes.jsonl` file validated whole (see ``funes.sources.funes_jsonl``) — and chunked with the
ingest redaction, so the chunk ids are those a run would store. Reported: files, turns, chunks,
duplicate ids (a turn id repeated within a session, a chunk id that occurs more than once), and
each refused file with its first bad line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from funes import sources
from funes.chunking import chunk_turns
from funes.secrets import redact
from funes.sources import FileStats


@dataclass
class CheckReport:
    files: int = 0
    turns: int = 0
    chunks: int = 0
    duplicate_ids: int = 0
    refused: list[str] = field(default_factory=list)  # one line per refused file

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "turns": self.turns,
            "chunks": self.chunks,
            "duplicate_ids": self.duplicate_ids,
            "refused": self.refused,
        }

    def summary(self) -> str:
        files = f"{self.files} file{'s' if self.files != 1 else ''}"
        return (
            f"checked {files}: {self.turns} turns, {self.chunks} chunks, "
            f"{self.duplicate_ids} duplicate ids, {len(self.refused)} refused — nothing written"
        )


def check(paths: Sequence[str], harness: str | None = None) -> CheckReport:
    report = CheckReport()
    for unit in sources.discover(paths, harness):
        got: list[FileStats] = []
        turns = list(sources.parse_units([unit], got.append))
        report.files += 1
        st = got[0]
        if st.error:
            report.refused.append(st.error)
            continue
        ids = Counter(c.id for c in chunk_turns(turns, redact=redact))
        report.turns += len(turns)
        report.chunks += sum(ids.values())
        # a turn id a session repeats is read as `<id>~<seq>` (counted as repaired), a chunk id
        # that still repeats would be dropped by the writer: both are duplicates to report
        report.duplicate_ids += sum(n - 1 for n in ids.values() if n > 1)
        report.duplicate_ids += st.repaired.get("duplicate_turn_id", 0)
    return report
