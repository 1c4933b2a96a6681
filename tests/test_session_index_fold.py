"""Rows a hook appends after the session index was built are folded into it once they are a
tenth of the table, so `funes get` keeps looking a session up instead of scanning every row
written since; what it prints, and what the counts say, do not change."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli
from test_store_id_index import fake_embed
from test_store_session_index import big, chunk, status_json  # noqa: F401

from funes.ingest.backfill import embed_unlocked
from funes.store import counts, maintenance
from funes.store.memory import INDEX_STALE, open_memory


def get_json(path: Path, session: str, turn: str) -> list[dict]:
    r = run_cli("funes", "get", session, turn, "--window", "2", "--json", "--memory", path)
    assert r.returncode == 0, r.stderr
    return [json.loads(x) for x in r.stdout.decode().splitlines()]


def test_rows_appended_after_the_build_are_folded_in_once_they_are_many(
    big: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the floor of rows worth an index update, below this small memory's tenth
    monkeypatch.setattr(maintenance, "SESSION_INDEX_ROWS", 30)
    path = tmp_path / "m"
    shutil.copytree(big, path)
    with open_memory(path).writer(interactive=False) as w:
        assert w.index_sessions()
    mem = open_memory(path)
    rows = mem.count()
    assert mem.unindexed_rows("session_id") == 0
    before = {s: get_json(path, s, f"{s}-t4") for s in ("s0001", "s0050")}

    # A few sessions appended (as hooks do): read by a scan, not worth an index update yet.
    few = [chunk(f"n{s}", q, f"new session {s} turn {q}") for s in range(2) for q in range(10)]
    with open_memory(path).writer(interactive=False) as w:
        w.append(few, redacted=True)
        assert not w.index_sessions()
    assert open_memory(path).unindexed_rows("session_id") == len(few)

    # Past a tenth of the table: folded into the index, counts and lexical index in step.
    many = [chunk(f"m{s:03d}", q, f"later session {s} turn {q}") for s in range(60)
            for q in range(int(2 * INDEX_STALE * rows) // 60)]  # fmt: skip
    status_json(path)  # leaves counts.json describing the table for the writer
    with open_memory(path).writer(interactive=False) as w:
        w.append(many, redacted=True)
        assert w.index_sessions()
        assert not w.index_sessions(), "nothing left to fold in"
    mem = open_memory(path)
    assert mem.unindexed_rows("session_id") == 0
    assert mem.has_session_index()
    assert mem.lexical.lance_version == mem.version, "no catch-up scan on the next open"
    assert counts.read(path) is not None and counts.read(path)[1].version == mem.version
    assert status_json(path)["chunks"] == rows + len(few) + len(many)

    # funes get answers as before, old sessions and new ones alike
    assert {s: get_json(path, s, f"{s}-t4") for s in before} == before
    got = get_json(path, "m007", "m007-t3")
    assert [(c["seq"], c["text"]) for c in got] == [
        (q, f"later session 7 turn {q}") for q in range(1, 6)
    ]


def test_ids_rewritten_by_stored_vectors_are_folded_into_the_id_index(
    big: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    path = tmp_path / "m"
    shutil.copytree(big, path)
    mem = open_memory(path)
    ids = [r["id"] for r in mem.rows(None, ("id",)).to_pylist()]
    done, left = embed_unlocked(mem, fake_embed, lambda: mem.writer(interactive=False), batch=1700)
    assert (done, left) == (len(ids), 0)
    mem = open_memory(path)
    # storing a vector rewrites its row's id: the index built at the first batch covers none
    assert mem.has_id_index() and mem.unindexed_rows("id") == len(ids)
    sample = ids[::37]
    want = mem.fetch(sample, ["text", "vector", "session_id", "seq"])
    with mem.writer(interactive=False) as w:
        assert w.index_ids()
        assert not w.index_ids(), "nothing left to fold in"
    mem = open_memory(path)
    assert mem.unindexed_rows("id") == 0
    assert mem.lexical.lance_version == mem.version
    got = mem.fetch(sample, ["text", "vector", "session_id", "seq"])
    assert [(r["id"], r["text"], r["seq"]) for r in got] == [
        (r["id"], r["text"], r["seq"]) for r in want
    ]
    assert all(np.array_equal(a["vector"], b["vector"]) for a, b in zip(got, want, strict=True))
