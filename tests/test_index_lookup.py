"""A hook's index run asks the table about its own chunks instead of loading every stored id
(issue 25): at a million chunks, loading them cost a one-session `funes index` about 2 s of
CPU and 110 MB. A run that meets many ids loads them once, as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_index import claude_records

from funes.ingest.indexer import index
from funes.ingest.plan import IndexOptions
from funes.records import Chunk
from funes.store import memory as memory_mod
from funes.store import open_memory
from funes.store import writer as writer_mod


def stored_memory(path: Path, n: int) -> Path:
    """A memory of ``n`` chunks of other sessions (written directly)."""
    chunks = [
        Chunk(id=f"{i:016x}", text=f"note{i} about item{i % 97} in the scheduler",
              session_id=f"old{i // 50}", turn_uuid=f"t{i}", parent_uuid=None, seq=i % 50,
              ts="2026-01-02T10:00:00.000Z", role="assistant", block_type="text", block_idx=0,
              split_idx=0, tool_name=None, harness="claude", workdir="/home/ana/proj",
              repo=None, source_path="old.jsonl")
        for i in range(n)
    ]  # fmt: skip
    with open_memory(path, create=True).writer(interactive=False) as w:
        for i in range(0, n, 5000):
            w.append(chunks[i : i + 5000], redacted=True)
    return path


def session(path: Path, sid: str, turns: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r) + "\n" for r in claude_records(sid, turns)]
    path.write_text("".join(lines) + '{"type": "user", "mess')  # and a cut-off last line
    return path


def run(path: Path, mem: Path) -> int:
    report = index(IndexOptions(paths=[str(path)], memory=str(mem), yes=True, embed=False))
    assert not report.failed
    return report.chunks


def count_loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times an index run loads every stored id (one item per load)."""
    loads: list[int] = []
    real = memory_mod.Memory.id_batches

    def id_batches(self: memory_mod.Memory, batch: int = 65_536):  # type: ignore[no-untyped-def]
        loads.append(1)
        yield from real(self, batch)

    monkeypatch.setattr(memory_mod.Memory, "id_batches", id_batches)
    return loads


def test_a_hook_into_a_large_memory_stores_a_grown_sessions_new_chunks_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_home: Path
) -> None:
    mem = stored_memory(tmp_path / "mem", 20_000)
    loads = count_loads(monkeypatch)
    path = session(private_home / "proj" / "sess-hook.jsonl", "sess-hook", 9)
    first = run(path, mem)
    assert first > 9
    # the session grows by three turns; the hook indexes the file again
    session(path, "sess-hook", 12)
    second = run(path, mem)
    m = open_memory(mem)
    rows = m.rows("session_id = 'sess-hook'", ["id", "seq"]).to_pylist()
    assert len(rows) == first + second == len({r["id"] for r in rows})
    assert second and {r["seq"] for r in rows} == set(range(12))
    assert m.count() == 20_000 + first + second == m.lexical.n_docs()
    assert [i for i, _ in m.lexical_search("parse_unit_9 E0509", 1)] == [
        r["id"] for r in rows if r["seq"] == 9
    ]
    assert loads == []  # never every stored id


def test_a_run_meeting_many_ids_loads_the_stored_ids_once_and_still_dedupes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_home: Path
) -> None:
    mem = stored_memory(tmp_path / "mem", 300)
    path = session(private_home / "proj" / "sess-big.jsonl", "sess-big", 30)
    first = run(path, mem)
    monkeypatch.setattr(writer_mod, "LOOKUP_IDS", 10)  # a large run, in small
    loads = count_loads(monkeypatch)
    session(path, "sess-big", 45)
    second = run(path, mem)
    rows = open_memory(mem).rows("session_id = 'sess-big'", ["id", "seq"]).to_pylist()
    assert len(rows) == first + second == len({r["id"] for r in rows})
    assert {r["seq"] for r in rows} == set(range(45))
    assert loads == [1]
