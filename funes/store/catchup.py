"""Keeping the lexical index in step with the table: what it may see of new rows (their text
with secrets masked, :func:`lexical_texts`), and the rows it lacks or holds past the table,
found and indexed in bounded memory (:func:`catch_up`) — in memory by a reader, on disk by a
writer."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from funes.records import Chunk
from funes.store import redaction
from funes.store.lexical import LexicalIndex
from funes.store.table import sql_in

if TYPE_CHECKING:
    from funes.store.memory import Memory


def lexical_texts(chunks: Sequence[Chunk], redacted: bool = False) -> list[str]:
    """What the lexical index may see of ``chunks``: their text with every secret the built-in
    detectors find masked, block by block (a secret cut by a split is found whole), so no
    term hash is ever computed from a secret — whoever wrote the rows.

    ``redacted``: the caller vouches that each block's text was redacted by those detectors
    before it was split (`funes index`). A prose block's stored pieces are then exactly that
    redacted text, in which redaction finds nothing more (it is idempotent), so they are taken
    as they are: scanning them again was 18 % of a first index's CPU. A tool block's pieces
    carry a label with the tool's name, which was not redacted, so they are masked all the same.
    """
    out: list[str | None] = [
        c.text or "" if redacted and c.block_type in _PROSE else None for c in chunks
    ]
    todo = [i for i, t in enumerate(out) if t is None]
    if todo:
        rows = [
            {"session_id": c.session_id, "turn_uuid": c.turn_uuid, "block_idx": c.block_idx,
             "split_idx": c.split_idx, "text": c.text}
            for c in (chunks[i] for i in todo)
        ]  # fmt: skip
        for i, text in zip(todo, _masked(rows), strict=True):
            out[i] = text
    return [t or "" for t in out]


# Block types whose stored text is the block's text itself (chunking.render adds no label).
_PROSE = frozenset(("text", "thinking"))


def _masked(rows: list[dict[str, Any]]) -> list[str]:
    redaction.mask_rows(rows)
    return [r["text"] or "" for r in rows]


def catch_up(memory: Memory, lex: LexicalIndex, persist: bool) -> tuple[int, int]:
    """Index table rows the lexical index lacks; mask index entries the table lost.

    In bounded memory whatever the table's size: the two id sets are compared as Arrow
    arrays (no Python string per id), and the missing rows are read, masked and indexed
    :data:`CATCH_UP_ROWS` at a time (read whole, a rebuild of a 100k-chunk index held every
    row's text as Python objects: 1.3 GB)."""
    # lazy: pyarrow stays off fast commands' start-up
    import pyarrow as pa
    import pyarrow.compute as pc

    table_ids = memory._scan(["id"]).column("id")
    lex_ids = pa.array(lex.ids()).cast(pa.utf8())  # bytes → str without a Python object each
    missing = pc.filter(table_ids, pc.invert(pc.is_in(table_ids, value_set=lex_ids)))
    extra = pc.filter(lex_ids, pc.invert(pc.is_in(lex_ids, value_set=table_ids)))
    del table_ids, lex_ids
    if len(extra):
        lex.delete(extra.to_pylist(), persist=persist)
    if len(missing):
        for ids, texts in _rows_to_index(memory, missing):
            if persist:
                lex.append(ids, texts)
            else:
                lex.add_pending(ids, texts)
    return len(missing), len(extra)


# Rows a catch-up reads, masks and indexes at a time.
CATCH_UP_ROWS = 4096


def _rows_to_index(memory: Memory, want: Any) -> Iterator[tuple[list[str], list[str]]]:
    """(ids, masked texts) of the rows of ``want`` (an Arrow array of ids), in table order,
    about :data:`CATCH_UP_ROWS` at a time; the pieces of a block are masked together (a batch
    ends at a block's end)."""
    # lazy: pyarrow stays off fast commands' start-up
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = ["id", "session_id", "turn_uuid", "block_idx", "split_idx", "text"]
    if len(want) <= 1000:
        batches: Iterable[Any] = memory._scan(cols, sql_in("id", want.to_pylist())).to_batches()
    else:
        value_set = pa.array(want, pa.utf8())
        batches = (
            b.filter(pc.is_in(b.column("id"), value_set=value_set))
            for b in memory._ds.to_batches(columns=cols, batch_size=CATCH_UP_ROWS)
        )
    held: list[dict[str, Any]] = []
    for b in batches:
        held += b.to_pylist()
        if len(held) < CATCH_UP_ROWS:
            continue
        # the last block may go on in the next batch: it waits for it
        last = _block_key(held[-1])
        cut = len(held)
        while cut > 0 and _block_key(held[cut - 1]) == last:
            cut -= 1
        if cut == 0:
            continue
        rows, held = held[:cut], held[cut:]
        yield [str(r["id"]) for r in rows], _masked(rows)
    if held:
        yield [str(r["id"]) for r in held], _masked(held)


def _block_key(r: dict[str, Any]) -> tuple[Any, Any, Any]:
    return (r.get("session_id"), r.get("turn_uuid"), r.get("block_idx"))
