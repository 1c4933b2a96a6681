"""The vector (ANN) index is built behind index runs without anyone asking, without the writer
lock, and atomically: an index run past the threshold starts it, a kill -9 at any moment of it
leaves a memory that recalls what it did, and hooks and recalls go on while it builds. Small
thresholds come from the environment (FUNES_ANN_THRESHOLD / FUNES_ANN_REFRESH)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli
from test_index import write_claude

from funes.models import LazyEmbedder
from funes.records import Chunk
from funes.retrieval import Filters, Query, Searcher
from funes.store import ann, open_memory
from funes.store.lexical import LexicalIndex
from funes.store.lock import WriterLock

WORDS = ("lock", "parser", "vector", "segment", "manifest", "backfill", "scrub", "hook",
         "recall", "session", "token", "schema")  # fmt: skip


def rows(start: int, n: int, seed: int, workdir: str = "/home/ana/proj") -> list[Chunk]:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    out = []
    for j in range(n):
        i = start + j
        text = f"{WORDS[i % len(WORDS)]} {WORDS[i // 7 % len(WORDS)]} note{i} about item{i % 97}"
        out.append(
            Chunk(
                id=f"{i:016x}", text=text, session_id=f"s{i // 40}", turn_uuid=f"t{i}",
                parent_uuid=None, seq=i % 40, ts="2026-03-02T10:00:00.000Z", role="assistant",
                block_type="text", block_idx=0, split_idx=0, tool_name=None, harness="claude",
                workdir=workdir, repo="ana/proj", source_path="x.jsonl", vector=v[j].tolist(),
            )
        )  # fmt: skip
    return out


def make_memory(path: Path, n: int) -> Path:
    mem = open_memory(path, create=True)
    with mem.writer(interactive=False) as w:
        w.append(rows(0, n, seed=n))
    return path


def log_lines(home: Path) -> list[str]:
    log = home / ".funes-home" / "logs" / "hooks.log"
    if not log.exists():
        return []
    return [line for line in log.read_text().splitlines() if " funes ann -: " in line]


def wait_for(cond: object, timeout: float = 180.0, every: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():  # type: ignore[operator]
            return True
        time.sleep(every)
    return False


def start_build(mem: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "funes.cli.optimize", "--behind", "--memory", str(mem)],
        env={**os.environ, **env}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip


QUESTIONS = ("why does the parser lock the manifest", "backfill of the vector segment",
             "hook token schema", "note1234 about item5")  # fmt: skip


def hits(searcher: Searcher) -> list[list[str]]:
    searcher.memory.reopen()
    return [[h.row["id"] for h in searcher.search(Query(q, k=8)).hits] for q in QUESTIONS]


def test_the_index_is_due_from_the_threshold_and_again_after_enough_new_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ann.THRESHOLD_ENV, "300")
    monkeypatch.setenv(ann.REFRESH_ENV, "100")
    mem = open_memory(make_memory(tmp_path / "m", 299))
    assert ann.due(ann.state(mem)) is None
    assert ann.build(mem.path) is None and not open_memory(mem.path).has_ann_index()
    with mem.writer(interactive=False) as w:
        w.append(rows(299, 1, seed=1))
    assert ann.due(ann.state(mem)) == "build"
    assert ann.build(mem.path) == "build"
    mem = open_memory(mem.path)
    assert mem.has_ann_index() and ann.due(ann.state(mem)) is None
    # Rows stored after the build are searched flat beside the index until there are enough.
    with mem.writer(interactive=False) as w:
        w.append(rows(300, 99, seed=2))
    assert (
        ann.state(mem) == ann.AnnState(399, True, 99, ann.INDEX_TYPE)
        and ann.due(ann.state(mem)) is None
    )
    with mem.writer(interactive=False) as w:
        w.append(rows(399, 1, seed=3))
    assert ann.due(ann.state(mem)) == "refresh"
    assert ann.build(mem.path) == "refresh"
    assert ann.state(open_memory(mem.path)).unindexed == 0


def test_an_index_of_the_old_type_is_replaced_by_the_next_refresh(tmp_path: Path) -> None:
    """A memory indexed before IVF_RQ (IVF_HNSW_SQ: 583 B a vector) is searched through its
    old index until the next background build, which replaces it in one commit."""
    mem = open_memory(make_memory(tmp_path / "m", 600))
    mem._ds.create_index("vector", "IVF_HNSW_SQ", name=ann.INDEX_NAME, num_partitions=2)
    mem = open_memory(mem.path)
    assert ann.state(mem) == ann.AnnState(600, True, 0, "IVF_HNSW_SQ")
    q = np.asarray(rows(0, 600, seed=600)[17].vector, dtype=np.float32)
    assert mem.vector_search(q, 5)[0][0] == f"{17:016x}"
    assert ann.due(ann.state(mem)) == "refresh"
    assert ann.build(mem.path) == "refresh"
    mem = open_memory(mem.path)
    assert mem.ann_index_type() == ann.INDEX_TYPE and ann.due(ann.state(mem)) is None
    assert mem.vector_search(q, 5)[0][0] == f"{17:016x}"


@pytest.mark.slow
def test_an_index_run_past_the_threshold_builds_the_vector_index_behind_itself(
    private_home: Path, tmp_path: Path
) -> None:
    mem = make_memory(tmp_path / "mem", 400)
    src = write_claude(private_home, "sess-ann", 6)
    env = {ann.THRESHOLD_ENV: "300"}
    r = run_cli("funes", "index", src, "--yes", "--memory", mem, env=env)
    assert r.returncode == 0, r.stderr
    assert "embedded=" in r.stdout.decode() and "embedded=0" not in r.stdout.decode()
    # The run returned; the build goes on in a process of its own and says so in the log.
    assert wait_for(lambda: open_memory(mem).has_ann_index()), log_lines(private_home)
    assert wait_for(lambda: any(" ok (build in " in line for line in log_lines(private_home)))
    started = [
        re.search(r"start: build of the vector index over (\d+) vectors", x)
        for x in log_lines(private_home)
    ]
    assert [int(m[1]) for m in started if m] == [
        400 + open_memory(mem).count("session_id = 'sess-ann'")
    ]
    # The build recorded its version: readers need no catch-up, status no recount.
    m = open_memory(mem)
    assert LexicalIndex.open(mem / "lexical").lance_version == m.version
    st = run_cli("funes", "status", "--memory", mem, "--json")
    assert b'"ann_index": true' in st.stdout.replace(b'":true', b'": true'), st.stdout
    # The indexed session is found by its words and its vector through the index.
    found = run_cli("funes", "recall", "MemoryWriter1 holds the lock", "--memory", mem, "--json")
    assert b"sess-ann" in found.stdout, found.stderr
    # A run that embeds nothing new starts nothing.
    r = run_cli("funes", "index", src, "--yes", "--memory", mem, env=env)
    assert r.returncode == 0
    time.sleep(1.0)
    assert len([line for line in log_lines(private_home) if "start:" in line]) == 1


def test_a_build_folds_the_rows_stored_since_into_the_id_index(tmp_path: Path) -> None:
    """Rows stored after the id index was built (appended, or rewritten by a stored vector)
    make a cold recall read every id to find its pool; the build folds them in, unless a
    writer holds the lock (then the build alone is committed, and the writer folds later)."""
    mem = open_memory(make_memory(tmp_path / "m", 1500))
    with mem.writer(interactive=False) as w:
        assert w.index_ids(min_rows=1)
        w.append(rows(1500, 700, seed=7))
    assert open_memory(mem.path).unindexed_rows("id") == 700
    assert ann.build(mem.path, force=True) == "build"
    mem = open_memory(mem.path)
    assert mem.has_ann_index() and mem.unindexed_rows("id") == 0
    # the fold's version was recorded: readers need no lexical catch-up, and find every row
    assert LexicalIndex.open(mem.path / "lexical").lance_version == mem.version
    want = rows(3, 1, seed=1500) + rows(1600, 1, seed=7)
    got = mem.fetch([c.id for c in want], ["id", "text"])
    assert [r["text"] for r in got] == [c.text for c in want]
    with mem.writer(interactive=False) as w:
        w.append(rows(2200, 300, seed=8))
    busy = WriterLock(mem.path)
    assert busy.try_acquire()
    try:
        assert ann.build(mem.path, force=True) == "refresh"
    finally:
        busy.release()
    mem = open_memory(mem.path)
    assert mem.ann_index_type() == ann.INDEX_TYPE and mem.unindexed_rows("id") == 300


@pytest.mark.slow
@pytest.mark.parametrize("old_index", [False, True], ids=["first-build", "replacing-an-old-index"])
def test_a_kill_during_the_build_leaves_a_memory_that_recalls_the_same_hits(
    private_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old_index: bool
) -> None:
    """A kill at any moment of a build, or of the refresh that replaces an index of an older
    type (IVF_HNSW_SQ), leaves the memory as readers saw it: the same hits, through the
    index it had. An IVF_RQ build of 4,000 vectors commits ~0.1 s after its start line, so
    the log is watched every 5 ms to kill it before that at least once."""
    mem = make_memory(tmp_path / "mem", 4000)
    if old_index:
        m = open_memory(mem)
        m._ds.create_index("vector", "IVF_HNSW_SQ", name=ann.INDEX_NAME, num_partitions=1)
    env = {ann.THRESHOLD_ENV: "1000"}
    monkeypatch.setenv(ann.THRESHOLD_ENV, "1000")
    searcher = Searcher(open_memory(mem), LazyEmbedder())
    before = hits(searcher)
    assert all(before)
    version = open_memory(mem).version
    old_type = open_memory(mem).ann_index_type()
    killed_before_commit = 0
    for delay in (0.0, 0.4, 1.2):
        started = len(log_lines(private_home))
        p = start_build(mem, env)
        assert wait_for(lambda n=started: len(log_lines(private_home)) > n, 60, every=0.005)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        m = open_memory(mem)  # it opens
        committed = m.ann_index_type() == ann.INDEX_TYPE
        if not committed:
            killed_before_commit += 1
            assert m.version == version and m.ann_index_type() == old_type
        assert hits(searcher) == before
        if committed:
            break
    assert killed_before_commit, "every build finished before it was killed"
    # The lock died with the process: the next build runs (nothing is due if the last killed
    # one had committed before its kill — a quiet machine builds 4,000 vectors in a fraction
    # of a second), and recall still says the same.
    done = open_memory(mem).ann_index_type() == ann.INDEX_TYPE
    assert ann.build(mem) == (None if done else "refresh" if old_index else "build")
    assert open_memory(mem).ann_index_type() == ann.INDEX_TYPE
    assert hits(searcher) == before


@pytest.mark.slow
def test_hooks_and_recalls_go_on_while_the_index_builds(private_home: Path, tmp_path: Path) -> None:
    mem = make_memory(tmp_path / "mem", 8000)
    waiting = rows(9000, 200, seed=8)
    vectors = np.asarray([c.vector for c in waiting], dtype=np.float32)
    for c in waiting:
        c.vector = None
    with open_memory(mem).writer(interactive=False) as w:
        w.append(waiting)
    searcher = Searcher(open_memory(mem), LazyEmbedder())
    assert all(hits(searcher))  # the embedder is loaded before the build starts
    src = write_claude(private_home, "sess-during", 9)
    p = start_build(mem, {ann.THRESHOLD_ENV: "1000"})
    assert wait_for(lambda: bool(log_lines(private_home)), 60)
    # The build has started; it is held where it is (SIGSTOP) so that what follows happens
    # during it however loaded the machine, and let go once the hook's run is done.
    os.kill(p.pid, signal.SIGSTOP)
    try:
        # While it builds: the writer lock is free, an append commits, a recall answers, and
        # a hook's index run starts and stores its session.
        lock = WriterLock(mem)
        assert lock.try_acquire()
        lock.release()
        m = open_memory(mem)
        with m.writer(interactive=False) as w:
            w.append(rows(8000, 20, seed=7))
            w.set_vectors([c.id for c in waiting], vectors, waited=True)  # a backfill's commit
            w.delete([f"{i:016x}" for i in range(10)])
        searcher.memory.reopen()
        found_now = searcher.search(Query("note8005 about item53", k=3)).hits
        assert found_now and found_now[0].row["id"] == f"{8005:016x}"
        assert p.poll() is None, "the build ended before the append and the recall ran"
        r = run_cli("funes", "index", src, "--no-embed", "--yes", "--memory", mem)
        assert r.returncode == 0, r.stderr
    finally:
        os.kill(p.pid, signal.SIGCONT)
    assert p.wait(timeout=300) == 0, p.stderr.read() if p.stderr else b""
    assert any(" ok (build in " in line for line in log_lines(private_home)), log_lines(
        private_home
    )
    m = open_memory(mem)
    assert m.has_ann_index()
    # Nothing written beside the build was lost, and the rows it did not cover are searched
    # flat beside it: each appended vector finds its own row first.
    during = m.count("session_id = 'sess-during'")
    assert during > 0 and m.count() == 8000 - 10 + 20 + 200 + during
    assert len(m.existing_ids()) == m.count()
    for c in rows(8000, 20, seed=7)[:5]:
        assert m.vector_search(np.asarray(c.vector), k=3)[0][0] == c.id
    for c, v in list(zip(waiting, vectors, strict=True))[:5]:
        assert m.vector_search(v, k=3)[0][0] == c.id
    for c in rows(0, 10, seed=8000)[:3]:  # deleted beside the build: never found again
        assert c.id not in {i for i, _ in m.vector_search(np.asarray(c.vector), k=5)}
    assert ann.state(m).unindexed >= 20
    found = run_cli("funes", "recall", "question 3 in sess-during", "--memory", mem, "--json")
    assert b"sess-during" in found.stdout, found.stderr


def test_a_filter_selecting_one_percent_still_returns_its_best_hits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "mem"
    mem = open_memory(path, create=True)
    rare = rows(5000, 50, seed=11, workdir="/home/ana/rare")
    with mem.writer(interactive=False) as w:
        w.append(rows(0, 5000, seed=10) + rare)
    monkeypatch.setenv(ann.THRESHOLD_ENV, "100")
    assert ann.build(path) == "build"
    mem = open_memory(path)
    assert mem.has_ann_index()
    where = Filters(workdir="/home/ana/rare").where()
    vecs = np.asarray([c.vector for c in rare], dtype=np.float32)
    rng = np.random.default_rng(12)
    for _ in range(5):
        q = rng.standard_normal(384).astype(np.float32)
        q /= np.linalg.norm(q)
        want = [rare[i].id for i in np.argsort(((vecs - q) ** 2).sum(axis=1))[:10]]
        assert [i for i, _ in mem.vector_search(q, k=10, where=where)] == want
    # The lexical leg: the rare rows holding the words, best first, none from elsewhere.
    got = mem.lexical_search("lock parser", k=10, where=where)
    rare_ids = {c.id for c in rare}
    assert got and {i for i, _ in got} <= rare_ids
    best = mem.lexical_search("lock parser", k=10_000)
    assert [i for i, _ in got] == [i for i, _ in best if i in rare_ids][:10]


def test_rows_waiting_for_a_vector_beside_the_index_never_take_a_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ann.THRESHOLD_ENV, "100")
    path = make_memory(tmp_path / "mem", 500)
    assert ann.build(path) == "build"
    waiting = rows(500, 300, seed=2)
    for c in waiting:
        c.vector = None
    fresh = rows(800, 20, seed=3)
    mem = open_memory(path)
    with mem.writer(interactive=False) as w:
        w.append(waiting)
        w.append(fresh)
    mem = open_memory(path)
    assert mem.has_ann_index() and ann.state(mem).unindexed == 320
    q = np.asarray(fresh[0].vector)
    got = mem.vector_search(q, k=50)
    assert len(got) == 50 and got[0][0] == fresh[0].id
    assert not {i for i, _ in got} & {c.id for c in waiting}


def test_whether_a_memory_has_vectors_is_told_by_its_counts_index_or_one_row(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mem"
    mem = open_memory(path, create=True)
    waiting = rows(0, 50, seed=1)
    for c in waiting:
        c.vector = None
    with mem.writer(interactive=False) as w:
        w.append(waiting)
    mem = open_memory(path)
    assert not mem.has_vectors()
    (path / "counts.json").unlink()  # no counts: it looks for one row with a vector
    assert not open_memory(path).has_vectors()
    with mem.writer(interactive=False) as w:
        w.set_vectors([waiting[3].id], np.asarray([rows(3, 1, seed=2)[0].vector]))
    assert open_memory(path).has_vectors()
    (path / "counts.json").unlink(missing_ok=True)
    assert open_memory(path).has_vectors()


def test_a_purge_waits_for_a_build_and_compact_leaves_the_index_to_it(tmp_path: Path) -> None:
    path = make_memory(tmp_path / "mem", 300)
    building = ann.AnnLock(path)
    assert building.acquire()  # a build running in the background holds it
    try:
        with open_memory(path).writer(interactive=False) as w:
            report = w.optimize(ann=True)
        assert report["ann_behind"] and not report["ann"]
        assert not open_memory(path).has_ann_index()
        purged = threading.Event()

        def purge() -> None:
            with open_memory(path).writer(interactive=False) as w:
                w.purge()
            purged.set()

        t = threading.Thread(target=purge)
        t.start()
        # It would delete the files the build has written and not yet committed: it waits.
        assert not purged.wait(1.5)
    finally:
        building.release()
    t.join(60)
    assert purged.is_set()
    with open_memory(path).writer(interactive=False) as w:
        assert w.optimize(ann=True)["ann"]


def test_a_search_through_the_index_probes_every_partition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memory of many partitions (a million chunks has 48) still finds what a flat scan
    finds: probing 20 of them lost a third of the true top 10 at 1M."""
    mem_path = make_memory(tmp_path / "mem", 4000)
    monkeypatch.setattr(ann, "PARTITION_ROWS", 100)  # 40 partitions, as a large memory has
    assert ann.build(mem_path, force=True) == "build"
    mem = open_memory(mem_path)
    assert mem.has_ann_index()
    rng = np.random.default_rng(11)
    overlap = []
    for _ in range(12):
        q = rng.standard_normal(mem.dim).astype(np.float32)
        q /= np.linalg.norm(q)
        exact = {i for i, _ in mem.vector_search(q, 10, exact=True)}
        found = {i for i, _ in mem.vector_search(q, 10)}
        overlap.append(len(exact & found) / 10)
    assert float(np.mean(overlap)) >= 0.85, overlap
