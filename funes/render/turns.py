"""The turns of a session window, as `get` shows them: rows read from a memory, each block's
splits stitched back together."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from funes.chunking import reassemble
from funes.errors import FunesError
from funes.results import GET_COMMAND, get_args
from funes.store import redaction
from funes.store.table import sql_str

if TYPE_CHECKING:
    from funes.store.memory import Memory


@dataclass
class TurnView:
    seq: int
    turn_uuid: str
    ts: str
    role: str
    blocks: list[tuple[str, str]]  # (block_type, reassembled rendered text)


def group_turns(rows: Sequence[dict[str, Any]]) -> list[TurnView]:
    """Rows of a session window → turns, each block's splits stitched back together."""
    turns: dict[tuple[int, str], TurnView] = {}
    pieces: dict[tuple[int, str, int], tuple[str, list[str]]] = {}
    for r in sorted(rows, key=lambda r: (r["seq"], r["turn_uuid"], r["block_idx"], r["split_idx"])):
        key = (r["seq"], r["turn_uuid"])
        if key not in turns:
            turns[key] = TurnView(r["seq"], r["turn_uuid"], r["ts"] or "", r["role"] or "", [])
        pieces.setdefault((*key, r["block_idx"]), (r["block_type"], []))[1].append(r["text"])
    for (seq, uuid, _), (btype, texts) in sorted(pieces.items()):
        turns[(seq, uuid)].blocks.append((btype, reassemble(texts)))
    return [turns[k] for k in sorted(turns)]


# The columns a window's turns are rendered from.
WINDOW_COLUMNS = ("turn_uuid", "seq", "ts", "role", "text", "block_type", "block_idx", "split_idx")


def window(mem: Memory, session_id: str, turn_uuid: str, width: int) -> list[TurnView]:
    """The turns within ``width`` seq of the named turn; FunesError when it is not stored."""
    return group_turns(window_rows(mem, session_id, turn_uuid, width))


def window_rows(
    mem: Memory,
    session_id: str,
    turn_uuid: str,
    width: int,
    columns: tuple[str, ...] = WINDOW_COLUMNS,
) -> list[dict[str, Any]]:
    """The stored pieces (``columns``, text masked for serving) of the turns within ``width``
    seq of the named turn; FunesError when it is not stored."""
    return mem.retrying(lambda: _window(mem, session_id, turn_uuid, width, columns))


def _window(
    mem: Memory, session_id: str, turn_uuid: str, width: int, columns: tuple[str, ...]
) -> list[dict[str, Any]]:
    found = (
        mem.rows(
            f"session_id = {sql_str(session_id)} AND turn_uuid = {sql_str(turn_uuid)}",
            columns=("seq",),
        )
        .column("seq")
        .to_pylist()
    )
    if not found:
        if not mem.count(f"session_id = {sql_str(session_id)}"):
            # lazy: funes.store.sessions imports numpy through the store
            from funes.store.sessions import no_such_session

            raise no_such_session(mem, session_id)
        again = f"{GET_COMMAND} {get_args(session_id, seq_from=0, memory=mem.label)}"
        raise FunesError(
            f"turn {turn_uuid} not found in session {session_id} ({mem.label}) — `{again}` reads "
            "its turns from the first"
        )
    centre = min(found)
    rows = mem.session_rows(session_id, centre - width, centre + width, columns=columns)
    redaction.mask_for_serving(mem, rows, whole_blocks=True)
    return rows
