"""The scalar index on ``session_id`` that `funes get` and recall's neighbours read through:
built once a memory is large enough, rows written after it still found, the counts and the
lexical index kept in step, and a kill during the build losing nothing."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli, write_jsonl

from funes.cli import index as index_cli
from funes.records import Chunk
from funes.store import counts, maintenance
from funes.store.memory import SESSION_INDEX_ROWS, open_memory

PER_SESSION = 50


def chunk(session: str, seq: int, text: str, block_idx: int = 0) -> Chunk:
    return Chunk(
        id=f"{session}-{seq}-{block_idx}", text=text, session_id=session,
        turn_uuid=f"{session}-t{seq}", parent_uuid=None, seq=seq, ts="2026-11-01T00:00:00Z",
        role="user" if seq % 2 == 0 else "assistant", block_type="text", block_idx=block_idx,
        split_idx=0, tool_name=None, harness="claude_code", workdir="-w", repo="",
        source_path=f"/{session}.jsonl", vector=None,
    )  # fmt: skip


def bulk(n_sessions: int) -> list[Chunk]:
    """``n_sessions`` sessions of PER_SESSION turns, two blocks a turn."""
    return [
        chunk(f"s{s:04d}", q, f"session {s} turn {q} block {b} filler words", b)
        for s in range(n_sessions)
        for q in range(PER_SESSION // 2)
        for b in (0, 1)
    ]


def late_session() -> list[Chunk]:
    words = ["amber", "basalt", "cobalt", "dahlia", "ember", "fjord", "garnet", "heron", "iris"]
    return [chunk("late", q, f"late turn {q}: the {w} step of the migration") for q, w in
            enumerate(words)]  # fmt: skip


def write(path: Path, chunks: list[Chunk]) -> None:
    mem = open_memory(path, create=True)
    with mem.writer(interactive=False) as w:
        for i in range(0, len(chunks), 2000):  # several fragments, as indexing leaves them
            w.append(chunks[i : i + 2000], redacted=True)


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A memory just past the threshold, without the index yet."""
    path = tmp_path_factory.mktemp("sidx") / "m"
    n = SESSION_INDEX_ROWS // PER_SESSION + 2
    write(path, bulk(n))
    assert open_memory(path).count() > SESSION_INDEX_ROWS
    assert not open_memory(path).has_session_index()
    return path


def status_json(path: Path) -> dict:
    r = run_cli("funes", "status", "--memory", path, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.slow
def test_rows_written_after_the_index_are_found_by_get_and_by_neighbours(
    big: Path, tmp_path: Path
) -> None:
    path = tmp_path / "m"
    shutil.copytree(big, path)
    before = status_json(path)  # counts the table and leaves counts.json for writers
    assert counts.read(path) is not None
    with open_memory(path).writer(interactive=False) as w:
        assert w.index_sessions()
        assert not w.index_sessions(), "built once"
        # after the build: a new session, and vectors for one old session's rows (a rewrite)
        w.append(late_session(), redacted=True)
        old = open_memory(path).session_rows("s0003")
        w.set_vectors([r["id"] for r in old], np.eye(len(old), 384, dtype=np.float32))
    mem = open_memory(path)
    assert mem.has_session_index()
    assert mem.lexical.lance_version == mem.version, "no catch-up scan on the next open"

    # funes get: the new session's window, each turn once
    r = run_cli("funes", "get", "late", "late-t4", "--window", "2", "--json", "--memory", path)
    assert r.returncode == 0, r.stderr
    got = [json.loads(x) for x in r.stdout.decode().splitlines()]
    assert [(c["seq"], c["text"]) for c in got] == [
        (c.seq, c.text) for c in late_session() if 2 <= c.seq <= 6
    ]
    # the rewritten session: every row once, in order
    rows = mem.session_rows("s0003", 10, 12)
    assert [(x["seq"], x["block_idx"]) for x in rows] == [
        (q, b) for q in (10, 11, 12) for b in (0, 1)
    ]

    # recall's neighbours of a hit in the new session
    r = run_cli("funes-query", "garnet step", "--memory", path, "-k", "1", "--neighbors", "2")
    assert r.returncode == 0, r.stderr
    hit = json.loads(r.stdout.decode().splitlines()[0])
    assert "garnet" in hit["text"] and hit["seq"] == 6
    assert sorted(n["seq"] for n in hit["neighbors"]) == [4, 5, 7, 8]
    assert any("ember" in n["text"] for n in hit["neighbors"])

    # the counts still describe the table: status reads them, and they are right
    after = status_json(path)
    assert counts.read(path) is not None, "the writer kept counts.json current"
    assert after["chunks"] == before["chunks"] + len(late_session())
    assert after["sessions"] == before["sessions"] + 1


def test_optimize_builds_the_index_only_past_the_threshold(tmp_path: Path) -> None:
    small = tmp_path / "small"
    write(small, bulk(4))
    with open_memory(small).writer(interactive=False) as w:
        assert w.optimize(ann=False)["session_index"] is False
    assert not open_memory(small).has_session_index()
    large = tmp_path / "large"
    write(large, bulk(SESSION_INDEX_ROWS // PER_SESSION + 1))
    with open_memory(large).writer(interactive=False) as w:
        report = w.optimize(ann=False)
    assert report["session_index"] is True and report["ann"] is False
    mem = open_memory(large)
    assert mem.has_session_index() and not mem.has_ann_index()
    assert [x["seq"] for x in mem.session_rows("s0002", 3, 4)] == [3, 3, 4, 4]


def claude_session(root: Path, sid: str, turns: int) -> Path:
    recs = []
    for i in range(turns):
        recs.append(
            {
                "type": "user" if i % 2 == 0 else "assistant",
                "uuid": f"{sid}-u{i}",
                "parentUuid": f"{sid}-u{i - 1}" if i else None,
                "sessionId": sid,
                "timestamp": "2026-10-20T10:00:00.000Z",
                "cwd": "/home/ana/app",
                "message": {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": f"{sid} turn {i} about the importer",
                },
            }
        )
    recs.insert(3, '{"type": "user", "uuid": "cut-off", "message": {"con')  # truncated line
    return write_jsonl(root / f"{sid}.jsonl", recs)


def test_funes_index_builds_it_when_a_run_takes_the_memory_past_the_threshold(
    private_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = private_home / ".claude" / "projects" / "-home-ana-app"
    mem = private_home / "memory"
    monkeypatch.setattr(maintenance, "SESSION_INDEX_ROWS", 30)
    claude_session(root, "first", 12)
    assert (
        index_cli.main([str(root / "first.jsonl"), "--yes", "--no-embed", "--memory", str(mem)])
        == 0
    )
    assert open_memory(mem).count() < 30
    assert not open_memory(mem).has_session_index()
    claude_session(root, "second", 30)
    assert index_cli.main([str(root), "--yes", "--no-embed", "--memory", str(mem)]) == 0
    m = open_memory(mem)
    assert m.count() >= 30 and m.has_session_index()
    version = m.version
    # a run with nothing new writes no version (and builds nothing)
    assert index_cli.main([str(root), "--yes", "--no-embed", "--memory", str(mem)]) == 0
    assert open_memory(mem).version == version
    assert [r["seq"] for r in open_memory(mem).session_rows("second", 28, 40)] == [28, 29]
    capsys.readouterr()


KILLED_BUILD = """
import sys
from funes.store.memory import open_memory
m = open_memory(sys.argv[1])
with m.writer(interactive=False) as w:
    print("building", flush=True)
    w.index_sessions(min_rows=0)
    print("built", flush=True)
"""


@pytest.mark.slow
def test_a_kill_during_the_build_loses_nothing_and_the_next_writer_builds_it(
    big: Path, tmp_path: Path
) -> None:
    want = {
        s: [(r["seq"], r["block_idx"], r["text"]) for r in open_memory(big).session_rows(s)]
        for s in ("s0000", "s0050", f"s{SESSION_INDEX_ROWS // PER_SESSION + 1:04d}")
    }
    total = open_memory(big).count()
    for delay in (0.0, 0.005, 0.02, 0.05, 0.1):
        path = tmp_path / f"m{delay}"
        shutil.copytree(big, path)
        p = subprocess.Popen(
            [sys.executable, "-c", KILLED_BUILD, str(path)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert p.stdout is not None and p.stdout.readline() == "building\n"
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        mem = open_memory(path)
        assert mem.count() == total
        for s, rows in want.items():
            got = [(r["seq"], r["block_idx"], r["text"]) for r in mem.session_rows(s)]
            assert got == rows, f"killed after {delay} s"
        assert status_json(path)["chunks"] == total
        with mem.writer(interactive=False) as w:
            w.index_sessions()
        mem = open_memory(path)
        assert mem.has_session_index()
        for s, rows in want.items():
            assert [(r["seq"], r["block_idx"], r["text"]) for r in mem.session_rows(s)] == rows
