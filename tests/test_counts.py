"""`funes status` answers from the counts its writers keep (`<memory>/counts.json`) without
opening the table, a status right after a write included — and those counts are never wrong:
whatever wrote the table (this funes, an older one that knows nothing of the file, a writer that
died between its commit and the file), the status says what a scan of the table says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_noop_runs import probe
from test_write import chunk_line

from funes.records import Chunk
from funes.store import counts
from funes.store.memory import open_memory
from funes.store.status import cached_status, memory_status


def status(mem: Path) -> tuple[dict[str, Any], list[str]]:
    """`funes status --json` in a fresh interpreter, and the heavy modules it loaded."""
    code, out, loaded = probe("status", "--memory", mem, "--json")
    assert code == 0, out
    return json.loads(out), loaded


def scanned(mem: Path) -> dict[str, Any]:
    """What a count of the table says, with no counts file to lean on."""
    (mem / counts.FILE).unlink(missing_ok=True)
    doc, loaded = status(mem)
    assert "lance" in loaded
    return doc


COUNTED = ("chunks", "sessions", "without_vectors", "by_agent", "model", "ann_index")


def test_a_status_right_after_a_write_reads_the_writers_counts_without_the_table(
    tmp_path: Path,
) -> None:
    mem = tmp_path / "mem"
    lines = [chunk_line(1, "alpha beta"), chunk_line(2, "gamma", vector=[0.05] * 384)]
    lines.append(chunk_line(3, "delta", session_id="s2", harness="codex"))
    r = run_cli("funes-write", "--memory", mem, input="\n".join(lines) + "\n")
    assert r.returncode == 0, r.stderr

    first, loaded = status(mem)
    assert loaded == []
    assert (first["chunks"], first["sessions"], first["without_vectors"]) == (3, 2, 2)
    assert first["by_agent"] == {
        "claude_code": {"sessions": 1, "chunks": 2},
        "codex": {"sessions": 1, "chunks": 1},
    }
    # One more session, written by another process: still no table opened, the new counts.
    more = chunk_line(4, "epsilon", session_id="s3", harness="pi") + "\n"
    assert run_cli("funes-write", "--memory", mem, input=more).returncode == 0
    after, loaded = status(mem)
    assert loaded == []
    assert (after["chunks"], after["sessions"], after["without_vectors"]) == (4, 3, 3)
    assert after["by_agent"]["pi"] == {"sessions": 1, "chunks": 1}
    text = run_cli("funes", "status", "--memory", mem).stdout.decode()
    assert "chunks: 4\n" in text and "sessions: 3\n" in text and "  pi: 1 session, 1 chunks" in text
    assert {k: after[k] for k in COUNTED} == {k: v for k, v in scanned(mem).items() if k in COUNTED}


def test_a_table_written_without_the_counts_is_counted_again_never_misreported(
    tmp_path: Path,
) -> None:
    """An older funes (or anything writing the table itself) leaves counts.json as it was: the
    table's new version no longer matches it, so status counts the table, and writes the counts
    that the next status and the next writer go on from."""
    mem = tmp_path / "mem"
    assert (
        run_cli("funes-write", "--memory", mem, input=chunk_line(1, "alpha") + "\n").returncode == 0
    )
    assert status(mem)[0]["chunks"] == 1

    import lance

    m = open_memory(mem)
    row = m.rows().slice(0, 1).to_pylist()[0]
    rows = [{**row, "id": f"older{i}", "session_id": f"old-{i}", "vector": None} for i in range(2)]
    lance.write_dataset(
        pa.Table.from_pylist(rows, schema=m.schema), str(mem / "chunks.lance"), mode="append"
    )
    doc, loaded = status(mem)
    assert "lance" in loaded
    assert (doc["chunks"], doc["sessions"], doc["without_vectors"]) == (3, 3, 3)
    again, loaded = status(mem)
    assert loaded == [] and again["chunks"] == 3
    assert again["last_indexed"] == doc["last_indexed"]  # one clock: the newest version's
    # The next writer goes on from the counts the status wrote.
    assert (
        run_cli("funes-write", "--memory", mem, input=chunk_line(9, "omega") + "\n").returncode == 0
    )
    doc, loaded = status(mem)
    assert loaded == [] and (doc["chunks"], doc["sessions"]) == (4, 3)


def test_counts_left_by_a_writer_that_died_before_updating_them_are_not_used(
    tmp_path: Path,
) -> None:
    mem = tmp_path / "mem"
    assert (
        run_cli("funes-write", "--memory", mem, input=chunk_line(1, "alpha") + "\n").returncode == 0
    )
    kept = (mem / counts.FILE).read_bytes()
    assert (
        run_cli("funes-write", "--memory", mem, input=chunk_line(2, "beta") + "\n").returncode == 0
    )
    (mem / counts.FILE).write_bytes(kept)  # as if the second writer died after its commit
    assert cached_status(mem) is None
    doc, loaded = status(mem)
    assert "lance" in loaded and doc["chunks"] == 2


def _chunk(i: int, session: str, harness: str | None, vector: bool, split: int = 0) -> Chunk:
    return Chunk(
        id=f"c{i:06d}", text=f"word{i} text", session_id=session, turn_uuid=f"t{i}",
        parent_uuid=None, seq=i, ts="2026-11-01T00:00:00Z", role="user", block_type="text",
        block_idx=0, split_idx=split, tool_name=None, harness=harness, workdir="/w", repo="",
        source_path="/x.jsonl", vector=[0.1] * 384 if vector else None,
    )  # fmt: skip


OPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("append"),
            st.lists(
                st.tuples(
                    st.sampled_from(["s1", "s2", "s3", "s4"]),
                    st.sampled_from(["claude_code", "codex", None]),
                    st.booleans(),
                    st.sampled_from([0, 1, 40]),
                ),
                min_size=1,
                max_size=6,
            ),
        ),
        st.tuples(st.just("backfill"), st.integers(1, 5)),
        st.tuples(st.just("delete"), st.integers(1, 3)),
        st.tuples(st.just("optimize"), st.just(0)),
        st.tuples(st.just("foreign"), st.integers(1, 2)),
    ),
    min_size=1,
    max_size=6,
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS)
def test_the_counts_a_status_reads_always_match_a_scan_of_the_table(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, Any]]
) -> None:
    """Any sequence of appends (with and without vectors, pieces past an oversized block's
    head), backfills, deletes, optimizes and writes that bypass the counts."""
    import lance

    path = tmp_path_factory.mktemp("mem") / "mem"
    mem = open_memory(path, create=True)
    n = 0
    known = True  # the counts describe the table: a status needs no scan
    for op, arg in ops:
        if op in ("foreign", "delete"):
            known = False
        if op == "foreign":
            row = {c: None for c in mem.schema.names}
            batch = [{**row, "id": f"f{n + i}", "session_id": "sf", "seq": 0} for i in range(arg)]
            n += arg
            lance.write_dataset(
                pa.Table.from_pylist(batch, schema=mem.schema), str(path / "chunks.lance"),
                mode="append",
            )  # fmt: skip
            continue
        with mem.writer(interactive=False) as w:
            if op == "append":
                w.append([_chunk(n + i, *spec) for i, spec in enumerate(arg)])
                n += len(arg)
            elif op == "backfill":
                w.backfill(lambda texts: np.full((len(texts), 384), 0.2, np.float32), batch=arg)
            elif op == "delete":
                w.delete(mem.ids_without_vectors(limit=arg) or [f"c{0:06d}"])
            else:
                w.optimize(ann=False)
        got = cached_status(path)
        mem.reload()
        truth = counts.count_table(mem)
        assert got is not None or not known
        if got is not None:
            assert (got.chunks, got.sessions, got.without_vectors, got.by_agent) == (
                truth.chunks,
                truth.session_count,
                truth.without_vectors,
                truth.by_agent(),
            )
    mem.reload()
    st_ = memory_status(mem)  # counted or read: the same answer, and written for the next one
    truth = counts.count_table(mem)
    assert (st_.chunks, st_.sessions, st_.without_vectors) == (
        truth.chunks,
        truth.session_count,
        truth.without_vectors,
    )
    got = cached_status(path)
    assert got is not None and (got.chunks, got.by_agent) == (truth.chunks, truth.by_agent())
