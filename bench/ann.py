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

    .venv/bin/python bench/ann.py --compare MEMORY|SIZE [--vectors random|clustered]
        [--index IVF_RQ:num_bits=1 IVF_HNSW_SQ ...] [--candidates 500,1000] [--queries 40]

Index types and parameters side by side on one memory (an existing one — use a copy: the
index is rebuilt in it — or SIZE rows built as above, with random or clustered vectors): for
each ``--index`` (Lance index type, ``:``-separated build parameters) the build as the
background one runs it (``funes.store.ann.build``, in its own process: CPU, wall, peak RSS),
the index's bytes per vector (its files, from the manifest), then for each number of
``--candidates`` re-ranked on the stored vectors recall's vector leg (k = 100) timed warm, recall@10 and @100 against the exact answer,
and cold: a new process opening the memory and asking one question (CPU of the open and of
that first search, which reads the index, medians of 5). Clustered vectors: sessions of 100
rows around a topic (one per 2,000 rows), as embeddings of transcripts cluster; random
vectors are the worst case for IVF (a query's true neighbours are in every partition).
Results: bench/results/ann-compare-<date>.json.
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


def unit(rng: np.random.Generator, n: int, clustered: bool = False) -> np.ndarray:
    """``n`` 384-d unit vectors: random, or in sessions of 100 around topics (one topic per
    2,000 rows; within a session cosine ≈ 0.6, across topics ≈ 0)."""
    v = rng.standard_normal((n, 384)).astype(np.float32)
    if clustered:
        nt, ns = max(1, n // 2000), max(1, -(-n // 100))
        topics = rng.standard_normal((nt, 384)).astype(np.float32)
        sessions = topics[rng.integers(0, nt, ns)]
        sessions += 0.8 * rng.standard_normal((ns, 384)).astype(np.float32)
        v += sessions[np.arange(n) // 100]
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


def rows(
    start: int, n: int, rng: np.random.Generator, clustered: bool = False
) -> tuple[list[Chunk], np.ndarray]:
    v = unit(rng, n, clustered)
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


def build_memory(
    path: Path, n: int, rng: np.random.Generator, clustered: bool = False
) -> np.ndarray:
    mem = open_memory(path, create=True)
    vecs = []
    with mem.writer(interactive=False) as w:
        for s in range(0, n, 10_000):
            chunks, v = rows(s, min(10_000, n - s), rng, clustered)
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


def parse_index(spec: str) -> tuple[str, dict[str, int]]:
    """``IVF_RQ:num_bits=1`` → ("IVF_RQ", {"num_bits": 1})."""
    kind, *params = spec.split(":")
    return kind.upper(), {k: int(v) for k, v in (p.split("=") for p in params)}


BUILD = """
import json, sys
from pathlib import Path
from funes.store import ann
ann.INDEX_TYPE, ann.INDEX_PARAMS = sys.argv[1], json.loads(sys.argv[2])
print(json.dumps({"built": ann.build(Path(sys.argv[3]), force=True)}))
"""

COLD = """
import json, sys, time
import numpy as np
c0 = time.process_time()
from funes.store import ann, open_memory
ann.INDEX_TYPE, ann.CANDIDATES = sys.argv[2], int(sys.argv[3])
c1 = time.process_time()
mem = open_memory(sys.argv[1])
q = np.asarray(json.loads(sys.argv[4]), dtype=np.float32)
c2 = time.process_time()
mem.vector_search(q, 100)
c3 = time.process_time()
mem.vector_search(q, 100)
c4 = time.process_time()
print(json.dumps({"import_ms": (c1 - c0) * 1000, "open_ms": (c2 - c1) * 1000,
                  "first_search_ms": (c3 - c2) * 1000, "second_search_ms": (c4 - c3) * 1000}))
"""


def queries_of(path: Path, n_queries: int, seed: int = 7) -> np.ndarray:
    """Stored vectors plus noise (each query has true near neighbours), as :func:`one_size`."""
    mem = open_memory(path)
    rng = np.random.default_rng(seed)
    n = mem.count()
    picks = sorted({int(i) for i in rng.integers(0, n, n_queries * 2)})
    t = mem._ds.take(picks, columns=["vector"])
    vecs = [v for v in t.column("vector").to_pylist() if v is not None][:n_queries]
    base = np.asarray(vecs, dtype=np.float32)
    qs = base + 0.6 * rng.standard_normal(base.shape).astype(np.float32) / np.sqrt(384)
    return qs / np.linalg.norm(qs, axis=1, keepdims=True)


def compare(path: Path, specs: list[str], candidates: list[int], n_queries: int) -> dict[str, Any]:
    """Each index of ``specs`` built on the memory at ``path`` in turn, and searched with each
    number of candidates re-ranked of ``candidates``: see the module docstring."""
    from bench.scale import proc

    mem = open_memory(path)
    vectors = mem.count("vector IS NOT NULL")
    qs = queries_of(path, n_queries)
    t, c = time.monotonic(), _cpu()
    exact = flat_ids(path, qs)
    out: dict[str, Any] = {"memory": str(path), "vectors": vectors, "queries": len(qs),
                           "flat": {"cpu_ms_per_query": round((_cpu() - c) * 1000 / len(qs), 1),
                                    "wall_ms_per_query": round((time.monotonic() - t) * 1000
                                                               / len(qs), 1)},
                           "indices": []}  # fmt: skip
    print(f"flat {out['flat']}", file=sys.stderr)
    for spec in specs:
        kind, params = parse_index(spec)
        res: dict[str, Any] = {"index": kind, "params": params}
        built = proc(["python", "-c", BUILD, kind, json.dumps(params), str(path)],
                     dict(os.environ), 7200)  # fmt: skip
        res["build"] = {k: built.get(k) for k in ("cpu_s", "wall_s", "peak_rss_mb", "load_start",
                                                  "exit", "stderr")}  # fmt: skip
        mem = open_memory(path)
        size = sum(i.total_size_bytes for i in mem._ds.describe_indices()
                   if list(i.field_names) == ["vector"])  # fmt: skip
        res["bytes_per_vector"] = round(size / vectors, 1)
        res["index_type"] = mem.ann_index_type()
        print(f"{spec}: build {res['build']} {res['bytes_per_vector']} B/vector", file=sys.stderr)
        res["search"] = []
        for r in candidates:
            ann.INDEX_TYPE, ann.CANDIDATES = kind, r
            lat, approx = timed(path, qs)
            one: dict[str, Any] = {"candidates": r, **lat, "recall10": recall_at(exact, approx, 10),
                                   "recall100": recall_at(exact, approx, 100)}  # fmt: skip
            colds = []
            for i in range(5):
                cold = proc(["python", "-c", COLD, str(path), kind, str(r),
                             json.dumps(qs[i].tolist())], dict(os.environ), 600)  # fmt: skip
                colds.append(cold.get("report") or {})
            one["cold"] = {k: round(statistics.median(c[k] for c in colds), 1)
                           for k in colds[0]} if colds[0] else {}  # fmt: skip
            res["search"].append(one)
            print(f"  {r} candidates: {one}", file=sys.stderr)
        out["indices"].append(res)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--compare", help="a memory directory (a copy: its index is rebuilt) or a size")
    ap.add_argument("--vectors", choices=("random", "clustered"), default="random")
    ap.add_argument("--index", nargs="+", default=[f"{ann.INDEX_TYPE}:" + ":".join(
        f"{k}={v}" for k, v in ann.INDEX_PARAMS.items())])  # fmt: skip
    ap.add_argument("--candidates", default="", help="codes re-ranked, e.g. 500,1000")
    ap.add_argument("--sizes", default="20000,50000,100000")
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--appended", default="5000,10000,20000")
    args = ap.parse_args()
    os.environ[ann.THRESHOLD_ENV] = "1"  # ann.build builds and refreshes at any size here
    os.environ[ann.REFRESH_ENV] = "1"
    if args.compare:
        candidates = [int(x) for x in args.candidates.split(",") if x] or [ann.CANDIDATES]
        with tempfile.TemporaryDirectory() as d:
            if args.compare.isdigit():
                path = Path(d) / "mem"
                n = int(args.compare)
                build_memory(path, n, np.random.default_rng(n), args.vectors == "clustered")
            else:
                path = Path(args.compare)
            res = compare(path, args.index, candidates, args.queries)
        res.update(vectors_kind=args.vectors, load_after=os.getloadavg()[0])
        RESULTS.mkdir(exist_ok=True)
        dest = RESULTS / f"ann-compare-{date.today().isoformat()}.json"
        runs = json.loads(dest.read_text()) if dest.exists() else []
        dest.write_text(json.dumps([*runs, res], indent=1) + "\n")
        print(json.dumps(res, indent=1))
        return
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
