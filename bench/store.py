# ruff: noqa: E402  (bench/ must leave sys.path before numpy is imported)
"""The memory store on this machine: indexing, appends, lexical latency, size, ANN threshold.

    .venv/bin/python bench/store.py [--only a,b,c,d,e,ann] [--rows 100000] [--sessions 2000]

(a) `funes index` over eval-dev end to end (a fresh process, embedding included): wall time
    and chunks/s, plus the lexical-only part (`--no-embed`);
(b) appending one 200-chunk session to a memory of --rows chunks (texts cycled from eval-dev,
    synthetic unit vectors): seconds for the writer open (lock + stored ids) and the append,
    embedding excluded;
(c) lexical top-30 latency at --rows chunks over eval-dev's questions (p50, p95);
(d) bytes per chunk on disk after `optimize` (table + lexical index);
(e) a generated history of --sessions Claude Code sessions: seconds from the start of a first
    `funes index` (a no-path sweep) until every session is lexically searchable, polled by a
    separate reader;
(ann) flat vs IVF_HNSW_SQ: query latency at 10k/50k/--rows vectors, build time, recall@10
    against flat on real MiniLM embeddings of eval-dev (queries = its questions) and on
    clustered synthetic vectors at --rows.

Medians over repetitions. Writes bench/results/store-<date>.json and prints a markdown table.
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/secret_detection.py would shadow the stdlib module numpy.random imports; drop bench/ from the path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from datetime import date, timedelta
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
EVAL_DEV = REPO.parent / "shared" / "eval-dev"
BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO))

from funes.records import Chunk
from funes.store.memory import open_memory


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def eval_dev_chunks() -> list[Chunk]:
    from funes.chunking import chunk_turns
    from funes.sources import parse

    return list(chunk_turns(parse([EVAL_DEV / "corpus"])))


def queries() -> list[str]:
    lines = (EVAL_DEV / "queries.jsonl").read_text().splitlines()
    return [json.loads(x)["query"] for x in lines if x.strip()]


def synthetic(base: list[Chunk], n: int, start: int = 0, session_size: int = 50) -> list[Chunk]:
    rng = np.random.default_rng(start)
    out = []
    vecs = rng.standard_normal((n, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    for j in range(n):
        i = start + j
        b = base[i % len(base)]
        out.append(
            Chunk(
                id=f"{i:016x}",
                text=b.text,
                session_id=f"syn-{i // session_size}",
                turn_uuid=f"t{i}",
                parent_uuid=None,
                seq=i % session_size,
                ts=b.ts,
                role=b.role,
                block_type=b.block_type,
                block_idx=0,
                split_idx=0,
                tool_name=b.tool_name,
                harness=b.harness,
                workdir=b.workdir,
                repo=b.repo,
                source_path=b.source_path,
                vector=vecs[j].tolist(),
            )
        )
    return out


def build_memory(path: Path, base: list[Chunk], rows: int) -> None:
    mem = open_memory(path, create=True)
    with mem.writer(interactive=False) as w:
        for s in range(0, rows, 10_000):
            w.append(synthetic(base, min(10_000, rows - s), start=s))
        w.optimize(ann=False, cleanup_older_than=timedelta(0))


# ---------------------------------------------------------------------------- stages


def stage_a(tmp: Path, res: dict[str, Any]) -> None:
    for name, extra in (("lexical_only", ["--no-embed"]), ("end_to_end", [])):
        mem = tmp / f"a-{name}"
        t0 = time.monotonic()
        r = subprocess.run(
            [str(BIN / "funes"), "index", str(EVAL_DEV / "corpus"), "--memory", str(mem),
             "--json", *extra],
            capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        wall = time.monotonic() - t0
        out = json.loads(r.stdout.strip().splitlines()[-1])
        res[f"a_{name}"] = {
            "wall_s": round(wall, 1),
            "chunks": out["chunks"],
            "chunks_per_s": round(out["chunks"] / wall, 1),
            "embedded": out["embedded"],
        }
        print(f"(a) {name}: {res[f'a_{name}']}", file=sys.stderr)
    mem = open_memory(tmp / "a-end_to_end")
    with mem.writer(interactive=False) as w:
        w.optimize(ann=False, cleanup_older_than=timedelta(0))
    res["d_eval_dev_bytes_per_chunk"] = round(du(tmp / "a-end_to_end") / mem.count())


def stage_bcd(tmp: Path, res: dict[str, Any], rows: int, base: list[Chunk]) -> None:
    path = tmp / "big"
    t0 = time.monotonic()
    build_memory(path, base, rows)
    res["build_s"] = round(time.monotonic() - t0, 1)
    mem = open_memory(path)
    res["d_bytes_per_chunk"] = round(du(path) / mem.count())
    res["d_table_bytes_per_chunk"] = round(du(path / "chunks.lance") / mem.count())
    res["d_lexical_bytes_per_chunk"] = round(du(path / "lexical") / mem.count())
    # (c) lexical latency
    qs = queries()
    mem.lexical_search(qs[0], 30)
    lat = []
    for q in qs * 2:
        t = time.perf_counter()
        mem.lexical_search(q, 30)
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    res["c_lexical_top30_ms_p50"] = round(statistics.median(lat), 1)
    res["c_lexical_top30_ms_p95"] = round(lat[int(len(lat) * 0.95)], 1)
    # (b) appends of one 200-chunk session each
    opens, appends = [], []
    for rep in range(5):
        session = synthetic(base, 200, start=rows + 1000 * rep, session_size=200)
        t = time.monotonic()
        m = open_memory(path)
        with m.writer(interactive=False) as w:
            _ = w.ids
            t1 = time.monotonic()
            assert w.append(session) == 200
            t2 = time.monotonic()
        opens.append(t1 - t)
        appends.append(t2 - t1)
    res["b_append200_open_s"] = round(statistics.median(opens), 3)
    res["b_append200_write_s"] = round(statistics.median(appends), 3)
    res["b_append200_total_s"] = round(statistics.median(np.add(opens, appends)), 3)
    print(f"(b,c,d) {json.dumps(res)}", file=sys.stderr)


def stage_e(tmp: Path, res: dict[str, Any], sessions: int) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from test_index import write_claude

    home = tmp / "e-home"
    rng = random.Random(0)
    for i in range(sessions):
        write_claude(home, f"hist-{i:05d}", rng.randint(6, 40), project=f"-proj-{i % 30}")
    env = {**os.environ, "HOME": str(home), "FUNES_HOME": str(tmp / "e-funes")}
    t0 = time.monotonic()
    p = subprocess.Popen(
        [str(BIN / "funes"), "index", "--no-embed", "--json"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    mem_path = tmp / "e-funes" / "memory"
    reached = None
    while reached is None and time.monotonic() - t0 < 300:
        time.sleep(0.5)
        if not (mem_path / "state.json").exists():
            continue
        try:
            n = open_memory(mem_path).session_count()
        except Exception:
            continue
        if n >= sessions:
            reached = time.monotonic() - t0
    out, _ = p.communicate(timeout=600)
    total = time.monotonic() - t0
    info = json.loads(out.decode().strip().splitlines()[-1])
    res["e_sessions"] = sessions
    res["e_chunks"] = info["chunks"]
    res["e_all_sessions_searchable_s"] = round(reached, 1) if reached else None
    res["e_index_run_s"] = round(total, 1)
    res["e_passes_left"] = info["passes_left"]
    print(f"(e) {res}", file=sys.stderr)


def recall_at_10(mem_path: Path, qv: np.ndarray) -> tuple[float, float, float]:
    """(recall@10 ANN vs flat, flat ms p50, ann ms p50) — builds the ANN index in between."""
    mem = open_memory(mem_path)
    flat, flat_ms = [], []
    for q in qv:
        t = time.perf_counter()
        flat.append({i for i, _ in mem.vector_search(q, 10)})
        flat_ms.append((time.perf_counter() - t) * 1000)
    with mem.writer(interactive=False) as w:
        t = time.monotonic()
        w.optimize(ann=True)
        build = time.monotonic() - t
    mem = open_memory(mem_path)
    hits, ann_ms = [], []
    for q, f in zip(qv, flat, strict=True):
        t = time.perf_counter()
        a = {i for i, _ in mem.vector_search(q, 10)}
        ann_ms.append((time.perf_counter() - t) * 1000)
        hits.append(len(a & f) / 10)
    print(f"  ann build {build:.1f}s", file=sys.stderr)
    return float(np.mean(hits)), statistics.median(flat_ms), statistics.median(ann_ms)


def stage_ann(tmp: Path, res: dict[str, Any], rows: int, base: list[Chunk]) -> None:
    from funes.models import load_embedder

    emb = load_embedder()
    # Real embeddings: eval-dev's chunks, queried with eval-dev's questions.
    path = tmp / "ann-real"
    if (tmp / "a-end_to_end").is_dir():  # already embedded by stage (a)
        shutil.copytree(tmp / "a-end_to_end", path)
    else:
        mem = open_memory(path, create=True)
        with mem.writer(interactive=False) as w:
            w.append(base)
            w.backfill(lambda texts: emb.embed(texts))
    qv = emb.embed(queries())
    r, f_ms, a_ms = recall_at_10(path, qv)
    res["ann_real_rows"] = open_memory(path).count()
    res["ann_real_recall10"] = round(r, 3)
    # Synthetic clustered vectors at 10k, 50k and `rows`: latency flat vs ANN, recall.
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((200, 384)).astype(np.float32)
    for n in sorted({10_000, 50_000, rows}):
        path = tmp / f"ann-{n}"
        mem = open_memory(path, create=True)
        with mem.writer(interactive=False) as w:
            for s in range(0, n, 10_000):
                chunk = synthetic(base, min(10_000, n - s), start=s)
                x = centers[rng.integers(0, 200, len(chunk))] + 0.7 * rng.standard_normal(
                    (len(chunk), 384)
                ).astype(np.float32)
                x /= np.linalg.norm(x, axis=1, keepdims=True)
                for c, v in zip(chunk, x, strict=True):
                    c.vector = v.tolist()
                w.append(chunk)
        q = centers[rng.integers(0, 200, 50)] + 0.7 * rng.standard_normal((50, 384)).astype(
            np.float32
        )
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        t = time.monotonic()
        r, f_ms, a_ms = recall_at_10(path, q)
        res[f"ann_{n}"] = {
            "flat_ms_p50": round(f_ms, 1),
            "ann_ms_p50": round(a_ms, 1),
            "recall10": round(r, 3),
            "build_s": round(time.monotonic() - t, 1),
        }
        print(f"  ann {n}: {res[f'ann_{n}']}", file=sys.stderr)
        shutil.rmtree(path, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="a,bcd,e,ann")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--sessions", type=int, default=2000)
    args = ap.parse_args()
    only = set(args.only.split(","))
    res: dict[str, Any] = {
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()} {os.cpu_count()} cores",
        "rows": args.rows,
    }
    base = eval_dev_chunks()
    with tempfile.TemporaryDirectory(prefix="funes-bench-store-") as d:
        tmp = Path(d)
        os.environ.setdefault("FUNES_HOME", str(tmp / "home"))
        if "a" in only:
            stage_a(tmp, res)
        if "bcd" in only:
            stage_bcd(tmp, res, args.rows, base)
        if "e" in only:
            stage_e(tmp, res, args.sessions)
        if "ann" in only:
            stage_ann(tmp, res, args.rows, base)
    out = REPO / "bench" / "results" / f"store-{res['date']}.json"
    out.parent.mkdir(exist_ok=True)
    prev = json.loads(out.read_text()) if out.exists() else {}
    prev.update(res)
    out.write_text(json.dumps(prev, indent=1) + "\n")
    print("| measure | value |\n|---|---|")
    for k, v in prev.items():
        print(f"| {k} | {v} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
