"""Turns → chunks: elide `data:` payloads, render, split, id; and `stitch` to reassemble.

All lengths are in Unicode code points. Ids depend only on coordinates —
sha1(`session:turn:block_idx:split_idx`)[:16] — never on text, so re-chunking the same
transcript, or a grown one, reproduces every old id.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator

from funes.records import Block, Chunk, Turn

MAX_CHARS = 1200
OVERLAP = 150
_HALF = MAX_CHARS // 2
# Of a block split into more pieces than this (≈ 130,000 characters: a huge tool output, a
# pasted log), only the head is embedded. Every piece is stored and searchable by words, and
# `get` shows the whole block; the pieces past the head never wait for a vector. This bounds
# what one block costs the embedder (a 50 MB block would otherwise be ~45,000 model calls).
EMBEDDED_SPLITS = 128


def embedded(split_idx: int) -> bool:
    """Whether a piece of a block is in the embedded head (see :data:`EMBEDDED_SPLITS`)."""
    return split_idx < EMBEDDED_SPLITS


TIERS = ("text", "tool_use", "tool_result")

# Rust's `char::is_whitespace` (Unicode White_Space) — what the reference trims. Python's
# str.strip() would also eat U+001C..U+001F, which would shift pieces against the reference.
_WS = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

_B64_MARK = ";base64,"
_B64_PAYLOAD = re.compile(r";base64,([A-Za-z0-9+/=]+)")
_HEAD_FORBIDDEN = re.compile(r"[\s,\"']")


def tier_of(block_type: str) -> str:
    """`tool_use` and `tool_result` are their own tiers; text, thinking and unknown are `text`."""
    return block_type if block_type in ("tool_use", "tool_result") else "text"


def elide_data_uris(text: str) -> str:
    """Replace inline `data:…;base64,<payload>` payloads with `[elided]`."""
    if _B64_MARK not in text:
        return text
    out: list[str] = []
    pos = 0
    for m in _B64_PAYLOAD.finditer(text):
        if _is_data_uri_head(text, m.start()):
            out.append(text[pos : m.start(1)])
            out.append("[elided]")
            pos = m.end(1)
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _is_data_uri_head(text: str, marker: int) -> bool:
    start = text.rfind("data:", 0, marker)
    if start < 0:
        return False
    if start > 0:
        prev = text[start - 1]
        if (prev.isascii() and prev.isalnum()) or prev in "+-.":
            return False
    return not _HEAD_FORBIDDEN.search(text, start + 5, marker)


def render(block: Block) -> str:
    """The stored text of a block: tool blocks get their `[tool_use <name>]` label."""
    if block.type == "tool_use":
        return f"[tool_use {block.tool_name}] {block.text}".strip(_WS)
    if block.type == "tool_result":
        label = f"[tool_result {block.tool_name}]" if block.tool_name else "[tool_result]"
        return f"{label} {block.text}".strip(_WS)
    return block.text


def split(rendered: str) -> list[str]:
    """≤1200-char pieces overlapping by 150, preferring to break at a newline, then a space."""
    chars = rendered.strip(_WS)
    n = len(chars)
    if n == 0:
        return []
    if n <= MAX_CHARS:
        return [chars]
    pieces = []
    start = 0
    while True:
        end = min(start + MAX_CHARS, n)
        if end < n:
            brk = chars.rfind("\n", start, end)
            if brk <= start + _HALF:
                brk = chars.rfind(" ", start, end)
            if brk > start + _HALF:
                end = brk
        piece = chars[start:end].strip(_WS)
        if piece:
            pieces.append(piece)
        if end >= n:
            break
        start = max(end - OVERLAP, start + 1)
    return pieces


def oversized(block: Block) -> bool:
    """Whether ``block`` splits into more pieces than the embedded head holds."""
    if len(block.text) <= EMBEDDED_SPLITS * (_HALF - OVERLAP):  # pieces advance ≥ 450 chars
        return False
    text = elide_data_uris(block.text)
    return len(split(render(Block(block.type, text, block.tool_name)))) > EMBEDDED_SPLITS


def chunk_id(session_id: str, turn_uuid: str, block_idx: int, split_idx: int) -> str:
    key = f"{session_id}:{turn_uuid}:{block_idx}:{split_idx}"
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


Redactor = Callable[[str], str]


def block_pieces(
    turn: Turn,
    tiers: Iterable[str] = TIERS,
    thinking: bool = True,
    redact: Redactor | None = None,
) -> Iterator[tuple[int, Block, list[str]]]:
    """(block_idx, block, its pieces) for each block of ``turn`` the tiers select: the pieces
    are its text elided, redacted, rendered and split. ``block_idx`` counts every block."""
    wanted = frozenset(tiers)
    for block_idx, block in enumerate(turn.blocks):
        if tier_of(block.type) not in wanted or (block.type == "thinking" and not thinking):
            continue
        text = elide_data_uris(block.text)
        if redact is not None:
            text = redact(text)
        rendered = render(Block(block.type, text, block.tool_name, block.tool_use_id))
        del text  # a block can be tens of megabytes: keep one copy, not three
        yield block_idx, block, split(rendered)


def chunk_turn(
    turn: Turn,
    tiers: Iterable[str] = TIERS,
    thinking: bool = True,
    redact: Redactor | None = None,
) -> Iterator[Chunk]:
    """The chunks of one turn. ``block_idx`` counts every block, selected or not."""
    for block_idx, block, pieces in block_pieces(turn, tiers, thinking, redact):
        extra = {**turn.extra, **block.extra} if block.extra else turn.extra
        for split_idx, piece in enumerate(pieces):
            yield Chunk(
                id=chunk_id(turn.session_id, turn.turn_uuid, block_idx, split_idx),
                text=piece,
                session_id=turn.session_id,
                turn_uuid=turn.turn_uuid,
                parent_uuid=turn.parent_uuid,
                seq=turn.seq,
                ts=turn.ts,
                role=turn.role,
                block_type=block.type,
                block_idx=block_idx,
                split_idx=split_idx,
                tool_name=block.tool_name,
                harness=turn.harness,
                workdir=turn.workdir,
                repo=turn.repo,
                source_path=turn.source_path,
                extra=dict(extra),
            )


def chunk_turns(
    turns: Iterable[Turn],
    tiers: Iterable[str] = TIERS,
    thinking: bool = True,
    redact: Redactor | None = None,
) -> Iterator[Chunk]:
    """The chunk stage: every turn's chunks, in order."""
    tiers = tuple(tiers)
    for turn in turns:
        yield from chunk_turn(turn, tiers, thinking, redact)


def stitch(a: str, b: str) -> str:
    """Join two consecutive pieces, dropping the overlap where `a`'s tail equals `b`'s head."""
    for k in range(min(len(a), len(b), OVERLAP), 0, -1):
        if a.endswith(b[:k]):
            return a + b[k:]
    return a + b


def reassemble(pieces: Iterable[str]) -> str:
    """A block's rendered text from its pieces in `split_idx` order."""
    it = iter(pieces)
    out = next(it, "")
    for p in it:
        out = stitch(out, p)
    return out
