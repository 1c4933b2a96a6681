"""The memory store: schema and model stamp, lexical-first writes, vectors, the writer lock,
self-healing after a crash between the table and the index, and the ANN path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from funes.records import Chunk
from funes.store import LockBusy, WriterLock
from funes.store import ann as ann_mod
from funes.store.memory import (
    COLUMNS,
    MemoryIncompatible,
    MemoryMissing,
    chunks_to_arrow,
    open_memory,
    schema,
)


def chunk(i: int, text: str, session: str = "s1", vector: list[float] | None = None) -> Chunk:
    return Chunk(
        id=f"{i:016x}", text=text, session_id=session, turn_uuid=f"t{i}", parent_uuid=None,
        seq=i, ts="2026-11-01T00:00:00Z", role="user", block_type="text", block_idx=0,
        split_idx=0, tool_name=None, harness="claude_code", workdir="-w", repo="",
        source_path="/x.jsonl", vector=vector,
    )  # fmt: skip


def fake_embed(texts: list[str]) -> np.ndarray:
    """A deterministic bag-of-letters embedding: similar texts land near each other."""
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for i, t in enumerate(texts):
        for ch in t.lower():
            out[i, ord(ch) % 384] += 1.0
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)
    return out


def test_table_has_the_reference_columns_in_order_and_the_model_stamp(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "m", create=True)
    tbl = lancedb.connect(str(tmp_path / "m")).open_table("chunks")
    assert tuple(tbl.schema.names) == COLUMNS
    assert all(f.nullable for f in tbl.schema)
    assert tbl.schema.field("vector").type == pa.list_(pa.float32(), 384)
    assert tbl.schema.metadata[b"embedding_model"] == b"sentence-transformers/all-MiniLM-L6-v2"
    assert mem.model == "sentence-transformers/all-MiniLM-L6-v2"
    assert (tmp_path / "m" / "chunks.lance").is_dir()


def test_missing_memory_is_reported_not_created(tmp_path: Path) -> None:
    with pytest.raises(MemoryMissing, match="no index found at"):
        open_memory(tmp_path / "nothing")
    assert not (tmp_path / "nothing").exists()


def test_memory_stamped_with_another_model_is_refused(tmp_path: Path) -> None:
    db = lancedb.connect(str(tmp_path / "m"))
    db.create_table("chunks", schema=schema("BAAI/bge-small-en-v1.5"))
    with pytest.raises(MemoryIncompatible, match=r"BAAI/bge-small-en-v1\.5"):
        open_memory(tmp_path / "m")


def test_memory_with_another_vector_width_is_refused(tmp_path: Path) -> None:
    db = lancedb.connect(str(tmp_path / "m"))
    db.create_table("chunks", schema=schema(dim=768))
    with pytest.raises(MemoryIncompatible, match="768-d"):
        open_memory(tmp_path / "m")


def test_chunk_without_vector_is_found_lexically_at_once_and_by_vector_after_backfill(
    tmp_path: Path,
) -> None:
    mem = open_memory(tmp_path / "m", create=True)
    texts = ["retry the flaky upload in sync_worker", "the cat sat on the mat", "zebra yak"]
    with mem.writer() as w:
        assert w.append([chunk(i, t) for i, t in enumerate(texts)]) == 3
    reader = open_memory(tmp_path / "m")
    assert reader.lexical_search("sync_worker")[0][0] == f"{0:016x}"
    assert reader.count_without_vectors() == 3
    assert reader.vector_search(fake_embed(["retry the flaky upload"])[0]) == []
    with reader.writer() as w:
        assert w.backfill(fake_embed) == 3
    reader = open_memory(tmp_path / "m")
    assert reader.count_without_vectors() == 0
    assert reader.vector_search(fake_embed(["retry the flaky upload in sync"])[0], k=1)[0][0] == (
        f"{0:016x}"
    )


def test_half_embedded_memory_answers_vector_queries_from_the_embedded_part(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "m", create=True)
    with mem.writer() as w:
        w.append([chunk(1, "alpha beta", vector=fake_embed(["alpha beta"])[0].tolist())])
        w.append([chunk(2, "alpha gamma")])
    mem = open_memory(tmp_path / "m")
    assert [i for i, _ in mem.vector_search(fake_embed(["alpha"])[0])] == [f"{1:016x}"]
    assert {i for i, _ in mem.lexical_search("alpha")} == {f"{1:016x}", f"{2:016x}"}
    assert mem.ids_without_vectors() == [f"{2:016x}"]


def test_appending_stored_ids_writes_nothing(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "m", create=True)
    with mem.writer() as w:
        assert w.append([chunk(1, "one"), chunk(2, "two"), chunk(1, "one again")]) == 2
    with mem.writer() as w:
        assert w.append([chunk(2, "two"), chunk(3, "three")]) == 1
    mem = open_memory(tmp_path / "m")
    assert mem.count() == 3
    assert [c.id for c in mem.filter_new([chunk(3, "x"), chunk(4, "y")])] == [f"{4:016x}"]


def test_vector_from_another_model_or_width_is_rejected(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "m", create=True)
    with mem.writer() as w:
        c = chunk(1, "x", vector=[0.0] * 3)
        assert "3 dimensions" in (w.check(c) or "")
        c = chunk(1, "x", vector=[0.0] * 384)
        c.model = "other/model"
        assert "other/model" in (w.check(c) or "")
        with pytest.raises(MemoryIncompatible):
            chunks_to_arrow([c], mem)
    assert open_memory(tmp_path / "m").count() == 0


def test_fetch_keeps_order_and_session_rows_are_ordered(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "m", create=True)
    with mem.writer() as w:
        w.append([chunk(i, f"text {i}", session="s1" if i < 5 else "s2") for i in range(8)])
    mem = open_memory(tmp_path / "m")
    ids = [f"{i:016x}" for i in (6, 1, 99, 3)]
    assert [r["id"] for r in mem.fetch(ids)] == [f"{i:016x}" for i in (6, 1, 3)]
    assert [r["seq"] for r in mem.session_rows("s1", 1, 3)] == [1, 2, 3]
    assert mem.counts().sessions == 2


def test_lexical_search_prefilter(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "m", create=True)
    with mem.writer() as w:
        w.append([chunk(i, "deploy script", session=f"s{i % 2}") for i in range(10)])
    mem = open_memory(tmp_path / "m")
    hits = mem.lexical_search("deploy", k=3, where="session_id = 's1'")
    assert len(hits) == 3
    assert all(int(i, 16) % 2 == 1 for i, _ in hits)


def test_delete_removes_from_table_and_lexical_index(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "m", create=True)
    with mem.writer() as w:
        w.append([chunk(i, f"token{i} shared") for i in range(5)])
        assert w.delete([f"{1:016x}", f"{3:016x}"]) == 2
    mem = open_memory(tmp_path / "m")
    assert mem.count() == 3
    assert {i for i, _ in mem.lexical_search("shared")} == {f"{i:016x}" for i in (0, 2, 4)}
    assert mem.lexical_search("token1") == []


def test_rows_appended_without_index_commit_are_searchable_and_healed(tmp_path: Path) -> None:
    """A writer killed between its table append and its index commit loses nothing."""
    mem = open_memory(tmp_path / "m", create=True)
    with mem.writer() as w:
        w.append([chunk(1, "committed normally")])
    tbl = lancedb.connect(str(tmp_path / "m")).open_table("chunks")
    tbl.add(chunks_to_arrow([chunk(2, "orphaned_by_crash row")], mem))  # table only
    reader = open_memory(tmp_path / "m")
    assert reader.lexical_search("orphaned_by_crash")[0][0] == f"{2:016x}"
    with reader.writer():
        pass  # a writer persists the catch-up
    healed = open_memory(tmp_path / "m")
    assert healed.lexical.lance_version == healed.version
    assert healed.lexical.n_docs() == 2


def test_a_deleted_lexical_index_is_rebuilt_from_the_table(tmp_path: Path) -> None:
    import shutil

    mem = open_memory(tmp_path / "m", create=True)
    with mem.writer() as w:
        w.append([chunk(i, f"word{i}") for i in range(20)])
    shutil.rmtree(tmp_path / "m" / "lexical")
    mem = open_memory(tmp_path / "m")
    assert mem.lexical_search("word7")[0][0] == f"{7:016x}"


def test_second_writer_fails_fast_with_a_clear_message(tmp_path: Path) -> None:
    mem = open_memory(tmp_path / "m", create=True)
    with mem.writer(interactive=False):
        with pytest.raises(LockBusy) as e, open_memory(tmp_path / "m").writer(interactive=False):
            pass
        assert str(e.value) == "another funes memory operation is in progress; retry in a moment"
    with mem.writer(interactive=False):
        pass  # released


def test_lock_held_by_another_process_blocks_and_is_freed_when_it_dies(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys,time; from pathlib import Path; from funes.store import WriterLock;"
         f"l=WriterLock(Path({str(tmp_path / 'm')!r})); l.acquire(interactive=False);"
         "print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
    lock = WriterLock(tmp_path / "m")
    assert not lock.try_acquire()
    notices: list[str] = []
    with pytest.raises(LockBusy):
        lock.acquire(interactive=True, retries=2, wait=0.01, notice=notices.append)
    assert len(notices) == 2 and "retrying" in notices[0]
    holder.kill()
    holder.wait()
    assert lock.try_acquire()
    lock.release()


def clustered(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((40, dim)).astype(np.float32)
    x = centers[rng.integers(0, 40, n)] + 0.6 * rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_ann_path_keeps_recall_against_flat_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index's codes, not the re-ranking, find the neighbours: 200 of the 3,000 rows are
    re-ranked here (the shipped 1,000 would nearly scan them all). A build is not
    deterministic (Lance draws the RaBitQ rotation and the k-means start, and takes no seed):
    over 20 builds of this memory recall@10 was 0.99 at worst (median 1.0) with 200 re-ranked,
    and 0.995 / 1.0 with 500 / 1,000; 1-bit codes gave 0.84-0.92 here, IVF_HNSW_SQ 0.945 once."""
    monkeypatch.setattr(ann_mod, "CANDIDATES", 200)
    vecs = clustered(3000)
    mem = open_memory(tmp_path / "m", create=True)
    with mem.writer() as w:
        w.append([chunk(i, f"c{i}", vector=vecs[i].tolist()) for i in range(len(vecs))])
    queries = clustered(20, seed=1)
    flat = [[i for i, _ in open_memory(tmp_path / "m").vector_search(q, 10)] for q in queries]
    with mem.writer() as w:
        report = w.optimize(ann=True)
    assert report["ann"]
    mem = open_memory(tmp_path / "m")
    assert mem.ann_index_type() == ann_mod.INDEX_TYPE
    ann = [[i for i, _ in mem.vector_search(q, 10)] for q in queries]
    recall = np.mean([len(set(a) & set(f)) / 10 for a, f in zip(ann, flat, strict=True)])
    assert recall >= 0.95
    # rows appended after the index was built are still found (Lance scans them flat)
    with mem.writer() as w:
        w.append([chunk(10_000, "late", vector=queries[0].tolist())])
    assert open_memory(tmp_path / "m").vector_search(queries[0], 1)[0][0] == f"{10_000:016x}"
