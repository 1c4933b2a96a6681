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


@dataclass
class GateResult:
    clean: list[str]  # ids that may go, in the order given
    held: list[str]  # ids held back
    detectors: Counter[str] = field(default_factory=Counter)  # one per (block, detector)
    blocks_held: int = 0

    def summary(self) -> str:
        """`Det×n, …` sorted by detector name (never a value)."""
        return ", ".join(f"{d}×{n}" for d, n in sorted(self.detectors.items()))


def scan(memory: Memory, ids: Sequence[str]) -> GateResult:
    # lazy: funes.chunking, the detectors' patterns, funes.secrets.scanner and numpy stay off fast commands' start-up
    from funes.chunking import reassemble
    from funes.secrets import find
    from funes.secrets.scanner import scan_texts
    from funes.store.memory import sql_in

    if not ids:
        return GateResult([], [])
    cols = ("id", "session_id", "turn_uuid", "block_idx", "split_idx", "text")
    want = memory.fetch(list(ids), cols)
    by_id = {r["id"]: _key(r) for r in want}
    sessions = sorted({k[0] for k in by_id.values()})
    wanted = set(by_id.values())
    pieces: dict[BlockKey, list[tuple[int, str]]] = {}
    for i in range(0, len(sessions), 500):
        t = memory.rows(sql_in("session_id", sessions[i : i + 500]), columns=cols)
        for r in t.to_pylist():
            k = _key(r)
            if k in wanted:
                pieces.setdefault(k, []).append((r["split_idx"] or 0, r["text"] or ""))
    blocks = {k: reassemble([t for _, t in sorted(v)]) for k, v in pieces.items()}
    keys = list(blocks)
    texts = {str(n): blocks[k] for n, k in enumerate(keys)}
    found: dict[BlockKey, set[str]] = {}
    for n, k in enumerate(keys):
        for builtin in find(texts[str(n)]):
            found.setdefault(k, set()).add(builtin.detector)
    for scanned in scan_texts(texts, workdir=memory.path):
        found.setdefault(keys[int(scanned.key)], set()).add(scanned.detector)
    res = GateResult([], [])
    for cid in ids:
        bk = by_id.get(cid)
        (res.held if bk is not None and bk in found else res.clean).append(cid)
    touched = {by_id[i] for i in res.held}
    res.blocks_held = len(touched)
    for k in touched:
        res.detectors.update(found[k])
    return res


def _key(r: dict) -> BlockKey:
    return (r["session_id"] or "", r["turn_uuid"] or "", int(r["block_idx"] or 0))
