"""The scalar index on ``id`` a writer keeps so storing vectors (a merge-insert on ``id``) does
not join the whole table: built by the first vectors stored into a large enough memory, and
every vector stored lands on its row — before and after the build, and for rows rewritten
since (which the index does not cover)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_store_session_index import bulk, write

from funes.ingest.backfill import embed_unlocked
from funes.store.memory import ID_INDEX_ROWS, open_memory


def fake_embed(texts: list[str]) -> np.ndarray:
    """A vector that names its text: component i = the byte sum of the text mod (i + 7)."""
    out = np.zeros((len(texts), 384), np.float32)
    for r, t in enumerate(texts):
        b = sum(t.encode())
        out[r] = [(b % (i + 7)) + 1 for i in range(384)]
    return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.mark.slow
def test_vectors_stored_into_a_large_memory_build_the_id_index_and_land_on_their_rows(
    tmp_path: Path,
) -> None:
    chunks = bulk(ID_INDEX_ROWS // 50 + 2)  # past the threshold
    assert len(chunks) >= ID_INDEX_ROWS
    write(tmp_path, chunks)
    mem = open_memory(tmp_path)
    assert not mem.has_id_index()
    done, left = embed_unlocked(mem, fake_embed, lambda: mem.writer(interactive=False), batch=700)
    assert (done, left) == (len(chunks), 0)
    mem.reload()
    assert mem.has_id_index()
    assert mem.count_without_vectors() == 0 == mem.count("vector IS NULL")
    rows = mem.fetch([c.id for c in chunks[::97]], ["text", "vector"])
    assert len(rows) == len(chunks[::97])
    for r in rows:
        assert np.allclose(r["vector"], fake_embed([r["text"]])[0], atol=1e-6), r["id"]


def test_a_small_memory_gets_no_id_index(tmp_path: Path) -> None:
    chunks = bulk(3)
    write(tmp_path, chunks)
    mem = open_memory(tmp_path)
    assert embed_unlocked(mem, fake_embed, lambda: mem.writer(interactive=False)) == (150, 0)
    mem.reload()
    assert not mem.has_id_index()
    assert mem.fetch([chunks[5].id], ["vector"])[0]["vector"] is not None
