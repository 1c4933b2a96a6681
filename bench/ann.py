"""Where an ANN index beats a flat scan here, and when a refresh pays: the numbers behind
``funes.store.ann`` (ANN_THRESHOLD, ANN_REFRESH_ROWS).

    .venv/bin/python bench/ann.py [--sizes 20000,50000,100000] [--queries 40] [--appended 5000,10000,20000]

For each size: a memory of that many rows with **random unit vectors** (384-d; vector search
costs the same on any vectors, and embedding 100k chunks here would take over an hour) and a
two-word text; recall's vector leg (``Memory.vector_search``, k = 100, the pool of one leg) timed
flat, then the IVF_HNSW_SQ index built as the background build does (``funes.store.ann.build``,
wall and CPU seconds), the leg timed again with the index, recall@10 and @100 of the ANN answer
against the exact one (queries: stored vectors plus noise, so each has true near neighbours),
then rows appended after the build (searched flat beside the index) and the leg timed again,
and the refresh (the index rebuilt over everything) timed. Medians of ``--queries`` queries,
wall and CPU (process) milliseconds. Results: bench/results/ann-<date>.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # `python bench/ann.py`: import as the bench package
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from datetime import date
from typing import Any

import numpy as np

from funes.records import Chunk
from funes.store import ann, open_memory

RESULTS = Path(__file__).resolve().parent / "results"
K = 100  # recall's pool per leg (funes.retrieval.POOL_PER_LEG)


def rows(start: int, n: int, rng: np.random.Generator) -> tuple[list[Chunk], np.ndarray]:
    v = rng.standard_normal((n, 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    out = []
    for j in range(n):
        i = start + j
        out.append(
            Chunk(
                id=f"{i:016x}", text=f"row{i} word{i % 997}", session_id=f"s{i // 100}",
                turn_uuid=f"t{i}", parent_uuid=None, seq=i % 100,
                ts="2026-01-01T00:00:00.000Z", role="assistant", block_type="text",
                block_idx=0, split_idx=0, tool_name=None, harness="claude",
                workdir=f"/w/{i % 100}", repo="r", source_path="x", vector=v[j].tolist(),
            )
        )  # fmt: skip
    return out, v


def build_memory(path: Path, n: int, rng: np.random.Generator) -> np.ndarray:
    mem = open_memory(path, create=True)
    vecs = []
    with mem.writer(interactive=False) as w:
        for s in range(0, n, 10_000):
            chunks, v = rows(s, min(10_000, n - s), rng)
            w.append(chunks)
            vecs.append(v)
        w.optimize(ann=False)
    return np.concatenate(vecs)


def timed(path: Path, qs: np.ndarray) -> tuple[dict[str, float], list[list[str]]]:
    mem = open_memory(path)
    mem.vector_search(qs[0], K)  # warm: files in the page cache, the index loaded
    wall, cpu, found = [], [], []
    for q in qs:
        t, c = time.perf_counter(), time.process_time()
        hits = mem.vector_search(q, K)
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        found.append([i for i, _ in hits])
    return {
        "wall_ms_p50": round(statistics.median(wall), 1),
        "cpu_ms_p50": round(statistics.median(cpu), 1),
    }, found


def recall_at(exact: list[list[str]], approx: list[list[str]], k: int) -> float:
    return round(
        float(
            np.mean([len(set(a[:k]) & set(e[:k])) / k for a, e in zip(approx, exact, strict=True)])
        ),
        3,
    )


def flat_ids(path: Path, qs: np.ndarray) -> list[list[str]]:
    mem = open_memory(path)
    return [[i for i, _ in mem.vector_search(q, K, exact=True)] for q in qs]


def one_size(tmp: Path, n: int, n_queries: int, appended: list[int]) -> dict[str, Any]:
    rng = np.random.default_rng(n)
    path = tmp / f"mem-{n}"
    t0 = time.monotonic()
    vecs = build_memory(path, n, rng)
    print(f"[{n}] memory built in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    pick = rng.integers(0, n, n_queries)
    qs = vecs[pick] + 0.6 * rng.standard_normal((n_queries, 384)).astype(np.float32) / np.sqrt(384)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    res: dict[str, Any] = {"rows": n}
    res["flat"], exact = timed(path, qs)
    print(f"[{n}] flat {res['flat']}", file=sys.stderr)
    t, c = time.monotonic(), _cpu()
    built = ann.build(path)
    res["build"] = {"wall_s": round(time.monotonic() - t, 1), "cpu_s": round(_cpu() - c, 1),
                    "built": built}  # fmt: skip
    res["ann"], approx = timed(path, qs)
    res["ann"]["recall10"] = recall_at(exact, approx, 10)
    res["ann"]["recall100"] = recall_at(exact, approx, 100)
    print(f"[{n}] build {res['build']} ann {res['ann']}", file=sys.stderr)
    done = 0
    res["appended"] = []
    for extra in appended:
        mem = open_memory(path)
        with mem.writer(interactive=False) as w:
            chunks, _ = rows(n + done, extra - done, rng)
            w.append(chunks)
        done = extra
        lat, _ = timed(path, qs)
        res["appended"].append({"unindexed": extra, **lat})
        print(f"[{n}] +{extra} unindexed: {lat}", file=sys.stderr)
    if appended:
        t, c = time.monotonic(), _cpu()
        ann.build(path)
        res["refresh"] = {"unindexed": done, "wall_s": round(time.monotonic() - t, 1),
                          "cpu_s": round(_cpu() - c, 1)}  # fmt: skip
        res["after_refresh"], _ = timed(path, qs)
        print(f"[{n}] refresh {res['refresh']} then {res['after_refresh']}", file=sys.stderr)
    shutil.rmtree(path, ignore_errors=True)
    return res


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="20000,50000,100000")
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--appended", default="5000,10000,20000")
    args = ap.parse_args()
    os.environ[ann.THRESHOLD_ENV] = "1"  # ann.build builds and refreshes at any size here
    os.environ[ann.REFRESH_ENV] = "1"
    out: dict[str, Any] = {"load_before": os.getloadavg()[0], "sizes": []}
    with tempfile.TemporaryDirectory() as d:
        for n in [int(x) for x in args.sizes.split(",")]:
            appended = [int(x) for x in args.appended.split(",") if x]
            out["sizes"].append(one_size(Path(d), n, args.queries, appended))
    out["load_after"] = os.getloadavg()[0]
    RESULTS.mkdir(exist_ok=True)
    dest = RESULTS / f"ann-{date.today().isoformat()}.json"
    dest.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
