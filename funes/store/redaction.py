"""Whether a memory's text is known to be redacted, and masking at serve time when it is not.

A memory carries a small stamp, ``<memory>/redaction.json``, when this install can vouch for
its text: ``funes index`` built it (every block went through the built-in redaction), or
``funes scrub`` scanned it. Each part of the stamp records the version of the detector rules
that did the work (``rules``, :data:`funes.secrets.RULES_VERSION`); a stamp made with other
rules (an older funes, or a fingerprint stamped before rules had a version) vouches for
nothing, so an upgrade that learns new kinds of secret masks them at serve time until the
next ``funes scrub``. Any other write of new rows (``funes-write`` of chunks made with
``funes-chunk --no-redact``, a copy of someone else's table) removes the stamp, because the
new rows were not seen by us. Recall and get mask the built-in detectors' findings in the
text they serve from a memory without a stamp.

Masking works on whole blocks: a secret that straddles a split is found in the reassembled
block and masked in each piece that holds part of it, so no piece leaks a head or a tail.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import funes
from funes.chunking import stitch
from funes.secrets import RULES_VERSION
from funes.store.table import sql_str

if TYPE_CHECKING:
    from funes.store.memory import Memory

STAMP = "redaction.json"
FORMAT = 1


def read_stamp(memory: Path) -> dict[str, Any] | None:
    """The memory's redaction stamp, or None when it has none (or an unreadable one)."""
    try:
        data = json.loads((memory / STAMP).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    if not isinstance(data.get("ingest"), dict) and not isinstance(data.get("scrub"), dict):
        return None
    return data


def vouched(memory: Path) -> bool:
    """Whether every stored row was redacted at ingest or scanned with this install's rules."""
    stamp = read_stamp(memory)
    if stamp is None:
        return False
    return any(
        isinstance(part := stamp.get(name), dict) and part.get("rules") == RULES_VERSION
        for name in ("ingest", "scrub")
    )


def write_stamp(memory: Path, **parts: dict[str, Any]) -> None:
    """Record ``ingest`` and/or ``scrub`` facts (merged into the existing stamp). Call under
    the writer lock."""
    data = read_stamp(memory) or {"format": FORMAT}
    now = datetime.now(UTC).isoformat(timespec="seconds")
    for name, info in parts.items():
        data[name] = {**info, "at": now, "funes": funes.__version__, "rules": RULES_VERSION}
    tmp = memory / f"{STAMP}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, memory / STAMP)


def invalidate(memory: Path) -> None:
    """Forget the stamp: rows were written that nobody here redacted or scanned."""
    (memory / STAMP).unlink(missing_ok=True)


# ---------------------------------------------------------------------------- masking


def mask_pieces(pieces: Sequence[str]) -> list[str]:
    """A block's pieces (in split order) with every built-in finding masked.

    The block is reassembled (the same stitch `get` uses), scanned once, and each finding is
    replaced by ``[REDACTED:<detector>]`` in every piece that holds any part of it.
    """
    if not pieces:
        return []
    block = pieces[0]
    offsets = [0]
    for p in pieces[1:]:
        block = stitch(block, p)
        offsets.append(len(block) - len(p))
    # lazy: compiling the detectors' patterns stays off fast commands' start-up
    from funes.secrets import find

    found = find(block)
    if not found:
        return list(pieces)
    out = []
    for p, off in zip(pieces, offsets, strict=True):
        end = off + len(p)
        parts, pos = [], 0
        for f in found:
            if f.end <= off or f.start >= end:
                continue
            s, e = max(f.start, off) - off, min(f.end, end) - off
            parts.append(p[pos:s])
            parts.append(f"[REDACTED:{f.detector}]")
            pos = e
        parts.append(p[pos:])
        out.append("".join(parts))
    return out


BlockKey = tuple[Any, Any, Any]


def mask_rows(rows: Iterable[dict[str, Any]], siblings: Iterable[dict[str, Any]] = ()) -> None:
    """Mask the ``text`` of ``rows`` in place, block by block.

    Rows need ``session_id``/``turn_uuid``/``block_idx``/``split_idx``/``text`` (``session_id``
    may be missing when all rows share one session). ``siblings`` are other pieces of the same
    blocks (not modified): a row is masked against its whole block.
    """
    rows = list(rows)
    blocks: dict[BlockKey, dict[int, str]] = {}
    for r in (*siblings, *rows):
        blocks.setdefault(_block(r), {})[int(r.get("split_idx") or 0)] = r.get("text") or ""
    masked: dict[BlockKey, dict[int, str]] = {}
    for r in rows:
        key = _block(r)
        if key not in masked:
            order = sorted(blocks[key])
            texts = mask_pieces([blocks[key][i] for i in order])
            masked[key] = dict(zip(order, texts, strict=True))
        r["text"] = masked[key][int(r.get("split_idx") or 0)]


def _block(r: dict[str, Any]) -> BlockKey:
    return (r.get("session_id"), r.get("turn_uuid"), r.get("block_idx"))


def mask_for_serving(
    memory: Memory, rows: list[dict[str, Any]], whole_blocks: bool = False
) -> None:
    """Mask the text of ``rows`` about to be printed, unless this install vouches for the
    memory (then nothing happens: one small file read).

    ``whole_blocks`` says the rows already hold every piece of their blocks (a session window);
    otherwise the other pieces are fetched, so a secret cut by a split is still found whole.
    """
    if not rows or vouched(memory.path):
        return
    siblings: list[dict[str, Any]] = []
    if not whole_blocks:
        keys = {_block(r) for r in rows}
        where = " OR ".join(
            f"(session_id = {sql_str(s)} AND turn_uuid = {sql_str(t)} AND block_idx = {int(b)})"
            for s, t, b in keys
            if s is not None and t is not None and b is not None
        )
        if where:
            cols = ("session_id", "turn_uuid", "block_idx", "split_idx", "text")
            siblings = memory.rows(where, cols).to_pylist()
    mask_rows(rows, siblings)
