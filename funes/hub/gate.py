"""The publish gate: nothing leaves this machine unscanned.

The rows to send are grouped into their blocks (session, turn, block index); each block is
rebuilt whole from *all* its stored pieces (so a key split across two chunks is seen whole),
then scanned by the built-in detectors and by the external scanner, in one scanner run. A block
with any finding is held back entirely — every one of its rows, sent or not. No scanner → a
:class:`~funes.secrets.scanner.ScannerError` (fail closed: nothing is pushed).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from funes.store.memory import Memory

BlockKey = tuple[str, str, int]
# Rows of text read and scanned at a time (one scanner run each): about 15 MB of text.
GATE_ROWS = 10_000
SESSION_SCAN_ROWS = 65_536  # rows of (id, session id) read at a time to find the sessions


@dataclass
class GateResult:
    clean: list[str]  # ids that may go, in the order given
    held: list[str]  # ids held back
    detectors: Counter[str] = field(default_factory=Counter)  # one per (block, detector)
    blocks_held: int = 0

    def summary(self) -> str:
        """`Det×n, …` sorted by detector name (never a value)."""
        return ", ".join(f"{d}×{n}" for d, n in sorted(self.detectors.items()))


def scan(memory: Memory, ids: Sequence[str], batch_rows: int = GATE_ROWS) -> GateResult:
    """Gate ``ids``: their sessions are read and scanned ``batch_rows`` rows at a time (whole
    sessions, so every block is whole), one scanner run per batch — the memory held is one
    batch's, however many rows are pushed."""
    # lazy: funes.chunking, the detectors' patterns, funes.secrets.scanner, pyarrow and numpy
    # (under the IdSet) stay off fast commands' start-up
    import pyarrow as pa
    import pyarrow.compute as pc

    from funes.chunking import reassemble
    from funes.secrets import find
    from funes.secrets.scanner import scan_texts
    from funes.store.idset import IdSet

    if not ids:
        return GateResult([], [])
    # The ids 8 bytes each and the sessions found a batch at a time: a million ids pushed held
    # ~300 MB here as a set of str, the table's two columns and their Python strings.
    want = IdSet([ids])
    value_set = pa.array(ids, pa.utf8())
    sessions: set[str] = set()
    for b in memory.scan_batches(("id", "session_id"), SESSION_SCAN_ROWS):
        mine = b.column("session_id").filter(pc.is_in(b.column("id"), value_set=value_set))
        sessions.update(pc.unique(mine.fill_null("")).to_pylist())
    del value_set
    res = GateResult([], [])
    held: set[str] = set()
    cols = ("id", "session_id", "turn_uuid", "block_idx", "split_idx", "text")
    for t in memory.by_sessions(cols, batch_rows, sessions):
        pieces: dict[BlockKey, list[tuple[int, str]]] = {}
        members: dict[BlockKey, list[str]] = {}
        for r in t.to_pylist():
            k = _key(r)
            pieces.setdefault(k, []).append((r["split_idx"] or 0, r["text"] or ""))
            if r["id"] in want:
                members.setdefault(k, []).append(r["id"])
        del t
        keys = list(members)  # the blocks of rows to push, whole
        texts = {str(n): reassemble([x for _, x in sorted(pieces[k])]) for n, k in enumerate(keys)}
        del pieces
        found: dict[BlockKey, set[str]] = {}
        for n, k in enumerate(keys):
            for builtin in find(texts[str(n)]):
                found.setdefault(k, set()).add(builtin.detector)
        for scanned in scan_texts(texts, workdir=memory.path):
            found.setdefault(keys[int(scanned.key)], set()).add(scanned.detector)
        for k, detectors in found.items():
            held.update(members[k])
            res.blocks_held += 1
            res.detectors.update(detectors)
    for cid in ids:
        (res.held if cid in held else res.clean).append(cid)
    return res


def _key(r: dict) -> BlockKey:
    return (r["session_id"] or "", r["turn_uuid"] or "", int(r["block_idx"] or 0))
