"""The memory store on this machine: indexing, appends, lexical latency, size, ANN threshold.

Two suites of `python -m bench` live here — ``index`` (:func:`run_index`) and ``storage``
(:func:`run_storage`); run as a script, it keeps its original stages:

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

if __package__ in (None, ""):  # `python bench/store.py`: import as the bench package
    sys.path[0] = str(Path(__file__).resolve().parents[1])

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
import warnings
from datetime import date, timedelta
from typing import Any

import numpy as np

from bench._common import BIN, EVAL_DEV, ROOT, Context, du, log, rmtree
from funes.records import Chunk
from funes.store.memory import open_memory

REPO = ROOT


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
    m = open_memory(tmp / "a-end_to_end")
    with m.writer(interactive=False) as w:
        w.optimize(ann=False, cleanup_older_than=timedelta(0))
    res["d_eval_dev_bytes_per_chunk"] = round(du(tmp / "a-end_to_end") / m.count())


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
    opens, appends = time_appends(path, base, rows, 5)
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


# ---------------------------------------------------------------------------- suites

QUICK_CORPUS = (
    "claude-code/bastion-agentique_bastion__claude-session.jsonl",
    "codex/CryptoSodi_Battle-Cities__codex-session.jsonl",
    "pi/castai_kimchi-dev__statsuline.jsonl",
)


def index_run(corpus: Path, mem: Path, *extra: str) -> dict[str, Any]:
    """One `funes index` process: wall and CPU time (user + system), chunks/s, and its peak RSS
    (read from ``os.wait4``: the process's own high-water mark, not this one's)."""
    t0 = time.monotonic()
    with tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(
            [str(BIN / "funes"), "index", str(corpus), "--memory", str(mem), "--yes", "--json",
             *extra],
            stdout=subprocess.PIPE, stderr=err, text=True, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert p.stdout is not None
        stdout = p.stdout.read()
        _, status, ru = os.wait4(p.pid, 0)  # not p.wait(): it would reap the child's rusage
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - t0
        if p.returncode:
            err.seek(0)
            raise subprocess.CalledProcessError(p.returncode, p.args, stdout, err.read())
    out = json.loads(stdout.strip().splitlines()[-1])
    return {"wall_s": round(wall, 1), "cpu_s": round(ru.ru_utime + ru.ru_stime, 1),
            "peak_rss_mb": round(ru.ru_maxrss / 1024), "chunks": out["chunks"],
            "chunks_per_s": round(out["chunks"] / wall, 1), "embedded": out["embedded"]}  # fmt: skip


def first_answer(ctx: Context, sessions: int) -> dict[str, Any]:
    """Seconds from the start of a first `funes index` (the no-path sweep a new user runs, with
    embedding, as is) over a synth history until (1) a lexical query first returns a hit and
    (2) every session's text is lexically searchable — polled by a separate reader. The index
    process is stopped once (2) is reached (what follows is tool tiers and embedding)."""
    from bench import synth
    from funes.sources import parse

    home = ctx.tmp / f"fa-home-{sessions}"
    t = time.monotonic()
    info = synth.build(home, sessions, seed=1)
    gen_s = time.monotonic() - t
    roots = [home / ".claude/projects", home / ".codex/sessions", home / ".pi/agent/sessions",
             home / ".hermes/state.db"]  # fmt: skip
    expect = {
        turn.session_id
        for turn in parse([r for r in roots if r.exists()])
        if any(b.type in ("text", "thinking") for b in turn.blocks)
    }
    fh = ctx.tmp / f"fa-funes-{sessions}"
    env = {**os.environ, "HOME": str(home), "FUNES_HOME": str(fh)}
    t0 = time.monotonic()
    p = subprocess.Popen(
        [str(BIN / "funes"), "index", "--json"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    mem_path = fh / "memory"
    first = reached = None
    n = 0
    while reached is None and p.poll() is None and time.monotonic() - t0 < 240:
        time.sleep(0.25)
        try:
            mem = open_memory(mem_path)
            if first is None and mem.lexical_search("error", 1):
                first = time.monotonic() - t0
            n = mem.session_count()
        except Exception:
            continue
        if n >= len(expect):
            reached = time.monotonic() - t0
    if p.poll() is None:
        p.terminate()
    p.wait(timeout=60)
    return {
        "sessions": sessions,
        "sessions_with_text": len(expect),
        "history_mb": round(info["bytes"] / 1e6, 1),
        "by_agent": info["by_agent"],
        "generate_s": round(gen_s, 1),
        "first_hit_s": None if first is None else round(first, 1),
        "all_sessions_searchable_s": None if reached is None else round(reached, 1),
        "sessions_searchable_at_stop": n,
    }


def time_appends(path: Path, base: Any, start: int, reps: int) -> tuple[list[float], list[float]]:
    """Seconds to open the writer and to append one new 200-chunk session, ``reps`` times."""
    opens, appends = [], []
    for rep in range(reps):
        session = synthetic(base, 200, start=start + 1000 * rep, session_size=200)
        t = time.monotonic()
        m = open_memory(path)
        with m.writer(interactive=False) as w:
            _ = w.ids
            t1 = time.monotonic()
            assert w.append(session) == 200
            t2 = time.monotonic()
        opens.append(t1 - t)
        appends.append(t2 - t1)
    return opens, appends


def append_cost(ctx: Context, rows: int, reps: int) -> dict[str, Any]:
    """Writer open + append of one 200-chunk session (vectors given) into a memory of ``rows``
    synth chunks (a copy of the recall suite's)."""
    from bench.recall import synth_memory

    src = synth_memory(ctx, rows)
    path = ctx.tmp / f"append-{rows}"
    rmtree(path)
    shutil.copytree(src, path)
    base = eval_dev_chunks()
    opens, appends = time_appends(path, base, 10_000_000, reps)
    rmtree(path)
    return {
        "rows": rows,
        "reps": reps,
        "open_s": round(statistics.median(opens), 3),
        "write_s": round(statistics.median(appends), 3),
        "total_s": round(float(statistics.median(np.add(opens, appends))), 3),
    }


def run_index(ctx: Context) -> dict[str, Any]:
    res: dict[str, Any] = {}
    corpus = EVAL_DEV / "corpus"
    if ctx.quick:
        corpus = ctx.tmp / "quick-corpus"
        for rel in QUICK_CORPUS:
            (corpus / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(EVAL_DEV / "corpus" / rel, corpus / rel)
    res["corpus"] = "eval-dev (3 small sessions)" if ctx.quick else "eval-dev (all 13 sessions)"
    for name, extra in (("lexical_only", ["--no-embed"]), ("end_to_end", [])):
        res[name] = index_run(corpus, ctx.tmp / f"index-{name}", *extra)
        log(f"index {name}: {res[name]}")
    if not ctx.quick:
        ctx.shared["eval_dev_memory"] = ctx.tmp / "index-end_to_end"
    res["first_answer"] = first_answer(ctx, 300 if ctx.quick else 2000)
    log(f"first lexical answer: {res['first_answer']}")
    rows = 20_000 if ctx.quick else 100_000
    res["append_200"] = append_cost(ctx, rows, 3 if ctx.quick else 5)
    log(f"append 200 into {rows}: {res['append_200']}")
    return res


def bytes_per_chunk(src: Path, tmp: Path) -> dict[str, Any]:
    path = tmp / (src.name + "-size")
    rmtree(path)
    shutil.copytree(src, path)
    mem = open_memory(path)
    with mem.writer(interactive=False) as w, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reaping every old version: nobody else reads this copy
        w.optimize(ann=False, cleanup_older_than=timedelta(0))
    mem = open_memory(path)
    n = mem.count()
    out = {
        "chunks": n,
        "bytes_per_chunk": round(du(path) / n),
        "table_bytes_per_chunk": round(du(path / "chunks.lance") / n),
        "lexical_bytes_per_chunk": round(du(path / "lexical") / n),
        "text_chars_per_chunk": round(
            sum(len(t) for t in mem.rows(columns=["text"]).column("text").to_pylist()) / n
        ),
    }
    rmtree(path)
    return out


def run_storage(ctx: Context) -> dict[str, Any]:
    from bench.quality import memory_dir
    from bench.recall import synth_memory

    res: dict[str, Any] = {}
    real = ctx.shared.get("eval_dev_memory")
    if real is None:
        cached, _ = memory_dir(rebuild=False, build=False)
        real = cached if cached.exists() else None
    if real is not None:
        res["eval_dev"] = {"vectors": "real (all-MiniLM-L6-v2)", **bytes_per_chunk(real, ctx.tmp)}
        log(f"storage eval-dev: {res['eval_dev']}")
    n = 20_000 if ctx.quick else 100_000
    res[f"synth_{n}"] = {"vectors": "random unit", **bytes_per_chunk(synth_memory(ctx, n), ctx.tmp)}
    log(f"storage synth {n}: {res[f'synth_{n}']}")
    return res


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
