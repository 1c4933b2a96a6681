"""A/B of the ``session_id`` scalar index on one memory: the same memory with and without it.

    cp -r BIG /tmp/a && cp -r BIG /tmp/b   # then drop the index in one copy:
    .venv/bin/python -c "import lance; lance.dataset('/tmp/a/chunks.lance').drop_index('session_id_idx')"
    .venv/bin/python -m bench.session_index /tmp/a /tmp/b

Prints, for A then B: warm recall in one process (two Searchers, alternating per query; wall
and CPU p50 of 40 queries taken from the memory's own text), the CPU of `funes get`'s read
(``Memory.session_rows`` of a ±3-seq window, 40 windows) and of whole `funes get SESSION TURN`
processes (9 alternating pairs, user + system of the child), and whether A and B answered the
same. A memory without the index is first given a writer, so its lexical index records the
table's version (else every open would catch up).
"""

from __future__ import annotations

import random
import resource
import statistics as st
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from funes.models import load_embedder
from funes.retrieval import Query, Searcher
from funes.store import open_memory

FUNES = Path(sys.executable).with_name("funes")


def main(a: str, b: str) -> None:
    for p in (a, b):
        with open_memory(p).writer(interactive=False):
            pass
    ma, mb = open_memory(a), open_memory(b)
    print("session index:", ma.has_session_index(), mb.has_session_index(), "rows", ma.count())
    rows = ma.rows(None, ("text", "session_id", "seq", "turn_uuid")).to_pylist()
    rng = random.Random(7)
    long = [r for r in rows if len(r["text"].split()) > 8]
    qs = [" ".join(r["text"].split()[:8]) for r in rng.sample(long, 40)]
    emb = load_embedder()
    sa, sb = Searcher(ma, emb, None), Searcher(mb, emb, None)
    now = datetime(2026, 11, 30, tzinfo=UTC)
    for q in qs[:3]:
        sa.search(Query(q), now=now)
        sb.search(Query(q), now=now)
    wall: dict[str, list[float]] = {"A": [], "B": []}
    cpu: dict[str, list[float]] = {"A": [], "B": []}
    same = 0
    for i, q in enumerate(qs):
        out = {}
        for k, s in [("A", sa), ("B", sb)][:: 1 if i % 2 == 0 else -1]:
            w, c = time.perf_counter(), time.process_time()
            r = s.search(Query(q), now=now)
            wall[k].append(time.perf_counter() - w)
            cpu[k].append(time.process_time() - c)
            out[k] = [(h.row["id"], [n["text"] for n in h.neighbors]) for h in r.hits]
        same += out["A"] == out["B"]
    for k in "AB":
        print(
            f"recall warm {k}: wall p50 {st.median(wall[k]) * 1000:.0f} ms, "
            f"CPU p50 {st.median(cpu[k]) * 1000:.0f} ms"
        )
    print(f"same hits and neighbours: {same}/{len(qs)}")

    read: dict[str, list[float]] = {"A": [], "B": []}
    same = 0
    for r in rng.sample(rows, 40):
        got = {}
        for k, m in (("A", ma), ("B", mb)):
            c = time.process_time()
            got[k] = m.session_rows(r["session_id"], r["seq"] - 3, r["seq"] + 3)
            read[k].append(time.process_time() - c)
        same += got["A"] == got["B"]
    for k in "AB":
        print(f"session_rows {k}: CPU p50 {st.median(read[k]) * 1000:.1f} ms")
    print(f"same rows: {same}/40")

    proc: dict[str, list[float]] = {a: [], b: []}
    same = 0
    for i, r in enumerate(rng.sample([r for r in rows if r["turn_uuid"]], 9)):
        out = {}
        for m in (a, b)[:: 1 if i % 2 else -1]:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            p = subprocess.run(
                [str(FUNES), "get", r["session_id"], r["turn_uuid"], "--memory", m],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            proc[m].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            out[m] = p.stdout.replace(m, "")
        same += out[a] == out[b]
    for k, m in (("A", a), ("B", b)):
        print(f"funes get process {k}: CPU p50 {st.median(proc[m]):.3f} s")
    print(f"same output: {same}/9")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
