"""Embedding and reranking speed on this machine, over the real chunks of eval-dev.

    .venv/bin/python bench/embed.py [--sample 300] [--reps 3] [--eval-dev PATH]

Measures (medians over --reps runs; the machine is shared and noisy):
- embedding throughput (chunks/s) on a fixed sample of eval-dev's chunks, 1 vs 2 workers,
  with the other core idle and with it busy (a spinning process);
- model load time in a fresh process: cold (derives the int8 graph) and warm (cached);
- CPU per call at 32/64/128/256 tokens and chunks per CPU-second, the derived graph against
  the same graph without derive.fused (recipe 3, what funes ran before the attention and GELU
  were fused), the two in turn;
- cosine of the int8 graph to the exact fp32 computation, per chunk, and to recipe 3's graph;
- batches of texts of the same token count (no padding): each row's cosine to its vector
  alone, and CPU against one text per call (why funes runs one sequence per call);
- what `funes index --embed-tool-results head` leaves unembedded: the share of chunks and of
  tokens in tool-result pieces after the first;
- cross-encoder latency for 30 (query, passage) pairs at 128/256/512 tokens, for a
  MiniLM-L6-shaped cross-encoder (the embedder's encoder plus a random classification head;
  the architecture of cross-encoder/ms-marco-MiniLM-L-6-v2), fp32 and per-channel int8.

Writes bench/results/embed-<date>.json and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # `python bench/embed.py`: import as the bench package
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import numpy as np

from bench._common import standin_reranker

ROOT = Path(__file__).resolve().parent.parent
RECALL_BUDGET_MS = 300.0
RECALL_OTHER_MS = 60.0  # query embedding + lexical + vector + fusion, measured elsewhere


def run(ctx: Any) -> dict[str, Any]:
    """The `embed` suite of `python -m bench`: throughput with the other core as the machine
    has it (no spinner), load times, int8 vs fp32, the stand-in cross-encoder's latency."""
    quick = ctx.quick
    reps = 2 if quick else 3
    cache = ctx.tmp / "embed-cache"
    cache.mkdir(exist_ok=True)
    os.environ["FUNES_CACHE_DIR"] = str(cache)
    try:
        texts = eval_dev_chunks(ROOT.parent / "shared" / "eval-dev")
        sample = random.Random(0).sample(texts, 40 if quick else 120)
        res: dict[str, Any] = {"versions": versions(), "corpus": corpus_stats(texts, sample)}
        res["load"] = load_times(cache, reps, cold_runs=1)
        res["throughput"] = throughput(sample, reps, busy=(False,))
        res["per_length"] = per_length(texts, 7 if quick else 21)
        res["cpu_rate"] = cpu_rate(sample, reps)
        res["cosine_int8_vs_fp32"] = cosine_vs_fp32(sample[: 10 if quick else 40])
        res["same_length_batches"] = same_length_batches(sample)
        res["tool_results_head"] = head_share(ROOT.parent / "shared" / "eval-dev")
        res["reranker"] = rerank_latency(
            texts, reps, variants=("int8",) if quick else ("fp32", "int8"), lengths=(256,)
        )
    finally:
        os.environ.pop("FUNES_CACHE_DIR", None)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--eval-dev", default="/work/shared/eval-dev")
    ap.add_argument("--sample", type=int, default=300, help="chunks per throughput run")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument(
        "--cosine-all", action="store_true",
        help="cosine to fp32 on every chunk of eval-dev, not 100 (≈ 6 min of CPU more)",
    )  # fmt: skip
    args = ap.parse_args()

    cache = Path(tempfile.mkdtemp(prefix="funes-bench-cache-"))
    os.environ["FUNES_CACHE_DIR"] = str(cache)
    texts = eval_dev_chunks(Path(args.eval_dev))
    rng = random.Random(0)
    sample = rng.sample(texts, min(args.sample, len(texts)))
    result: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "loadavg_at_start": os.getloadavg(),
        },
        "versions": versions(),
        "corpus": corpus_stats(texts, sample),
    }

    result["load"] = load_times(cache, args.reps)
    result["throughput"] = throughput(sample, args.reps)
    result["per_length"] = per_length(texts, 21)
    result["cpu_rate"] = cpu_rate(sample, args.reps)
    result["cosine_int8_vs_fp32"] = cosine_vs_fp32(texts if args.cosine_all else sample[:100])
    result["same_length_batches"] = same_length_batches(sample)
    result["tool_results_head"] = head_share(Path(args.eval_dev))
    result["reranker"] = rerank_latency(texts, args.reps)
    result["recommendation"] = recommend(result)

    out = ROOT / "bench" / "results" / f"embed-{result['date']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(table(result))
    print(f"\n(written to {out.relative_to(ROOT)})")
    return 0


# --- corpus -----------------------------------------------------------------------------------


def eval_dev_chunks(root: Path) -> list[str]:
    """Texts of eval-dev's chunks, made by funes' own parse + chunk stages when present."""
    corpus = root / "corpus"
    try:
        from funes.chunking import chunk_turns
        from funes.sources import parse

        texts = [c.text for c in chunk_turns(parse([corpus]))]
        if texts:
            return texts
    except ImportError:
        pass
    return _stand_in_chunks(corpus)


def _stand_in_chunks(corpus: Path) -> list[str]:
    out: list[str] = []

    def walk(o: object) -> None:
        if isinstance(o, str) and o.strip():
            out.extend(o[i : i + 1200] for i in range(0, len(o), 1050))
        elif isinstance(o, dict):
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    for f in sorted(corpus.glob("*/*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            try:
                walk(json.loads(line))
            except ValueError:
                continue
    return out


def corpus_stats(texts: list[str], sample: list[str]) -> dict[str, Any]:
    from funes.models.embedder import load_tokenizer

    tok = load_tokenizer()
    tokens = [len(e.ids) for e in tok.encode_batch(sample)]
    chars = [len(t) for t in texts]
    return {
        "chunks": len(texts),
        "chars_p50_p90": [int(np.percentile(chars, 50)), int(np.percentile(chars, 90))],
        "sample": len(sample),
        "sample_tokens_p50_p90_mean": [
            int(np.percentile(tokens, 50)),
            int(np.percentile(tokens, 90)),
            round(float(np.mean(tokens)), 1),
        ],
        "sample_at_256_tokens": round(sum(t >= 256 for t in tokens) / len(tokens), 3),
    }


# --- measurements -----------------------------------------------------------------------------


def load_times(cache: Path, reps: int, cold_runs: int = 2) -> dict[str, Any]:
    code = (
        "import time; t = time.perf_counter(); from funes.models import load_embedder; "
        "e = load_embedder(); print(time.perf_counter() - t, e.graph)"
    )

    def once(cache_dir: Path) -> float:
        env = {**os.environ, "FUNES_CACHE_DIR": str(cache_dir)}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        return float(out.stdout.split()[0])

    cold = [
        once(Path(tempfile.mkdtemp(prefix="funes-bench-cold-")))
        for _ in range(min(cold_runs, reps))
    ]
    once(cache)  # make sure the shared cache holds a derived graph
    warm = [once(cache) for _ in range(reps)]
    return {
        "cold_s": round(statistics.median(cold), 2),
        "warm_s": round(statistics.median(warm), 3),
    }


def throughput(
    sample: list[str], reps: int, busy: tuple[bool, ...] = (False, True)
) -> dict[str, Any]:
    from funes.models import load_embedder

    emb = load_embedder()
    emb.embed(sample[:8])
    res: dict[str, Any] = {"graph": emb.graph}
    for b in busy:
        spinner = _spin() if b else None
        try:
            for n in (1, 2):
                os.environ["FUNES_THREADS"] = str(n)
                rates = [len(sample) / _timed(lambda: emb.embed(sample)) for _ in range(reps)]
                res[f"threads{n}_{'busy' if b else 'idle'}"] = round(statistics.median(rates), 1)
        finally:
            if spinner is not None:
                spinner.kill()
                spinner.wait()
    os.environ.pop("FUNES_THREADS", None)
    return res


def unfused_graph() -> Path:
    """The derived graph as recipe 3 made it (no derive.fused), built once per process: the
    A side of the A/B figures."""
    global _UNFUSED
    if _UNFUSED is None:
        from funes.models import derive
        from funes.models.embedder import verified_source

        d = Path(tempfile.mkdtemp(prefix="funes-bench-unfused-"))
        derive._quantised(verified_source(), d / "plain.onnx", d / "unfused.onnx", fuse=False)
        _UNFUSED = d / "unfused.onnx"
    return _UNFUSED


_UNFUSED: Path | None = None


def per_length(texts: list[str], reps: int) -> dict[str, Any]:
    """CPU of one call (this thread's, so another engineer's load counts little) at 32, 64, 128
    and 256 tokens: the derived graph as funes runs it against recipe 3's (no derive.fused),
    medians of ``reps`` calls, the two sessions in turn."""
    from funes.models import derive, embedder, load_embedder

    emb = load_embedder()
    assert emb.path is not None
    sessions = {"funes": emb._session, "unfused": derive.session(unfused_graph())}
    names = {i.name for i in emb._session.get_inputs()}
    by_len: dict[int, list[int]] = {}
    for e in emb._tok.encode_batch(texts):
        by_len.setdefault(len(e.ids), e.ids)
    out: dict[str, Any] = {"unfused": list(derive.UNFUSED), "loadavg": os.getloadavg()[0]}
    for n in (32, 64, 128, 256):
        ids = by_len.get(n) or next(v for k, v in sorted(by_len.items()) if k >= n)
        feed = embedder.feed(names, np.asarray(ids, dtype=np.int64)[None, :])
        times: dict[str, list[float]] = {k: [] for k in sessions}
        for s in sessions.values():
            s.run([emb._output], feed)
        for _ in range(reps):
            for k, s in sessions.items():
                c = time.thread_time()
                s.run([emb._output], feed)
                times[k].append(time.thread_time() - c)
        for k, ts in times.items():
            out[f"{k}_{len(ids)}_ms"] = round(statistics.median(ts) * 1000, 2)
        out[f"ratio_{len(ids)}"] = round(
            statistics.median(times["funes"]) / statistics.median(times["unfused"]), 3
        )
    return out


def cpu_rate(sample: list[str], reps: int) -> dict[str, Any]:
    """Chunks embedded per CPU-second (user + system of this process, the pool's workers
    included) on the sample, the derived graph against recipe 3's, in turn: the figure a
    shared machine does not distort much; two idle cores give at most twice it."""
    from funes.models import derive, load_embedder
    from funes.models.embedder import Embedder

    emb = load_embedder()
    base = Embedder(derive.session(unfused_graph()), emb._tok)
    runs: dict[str, list[float]] = {"funes": [], "unfused": []}
    for e in (emb, base):
        e.embed(sample[:8])
    load = os.getloadavg()[0]
    for _ in range(reps):
        for k, e in (("funes", emb), ("unfused", base)):
            c = time.process_time()
            e.embed(sample)
            runs[k].append(len(sample) / (time.process_time() - c))
    med = {k: statistics.median(v) for k, v in runs.items()}
    return {
        "chunks": len(sample),
        "funes_chunks_per_cpu_s": round(med["funes"], 1),
        "unfused_chunks_per_cpu_s": round(med["unfused"], 1),
        "ratio": round(med["funes"] / med["unfused"], 3),
        "loadavg": [round(load, 2), round(os.getloadavg()[0], 2)],
    }


def cosine_vs_fp32(texts: list[str]) -> dict[str, Any]:
    """Exact fp32 computation (the pinned graph, which dequantises its int8 storage and computes
    in fp32) against the derived per-channel int8 graph, on the same chunks."""
    from funes.models import _runtime, derive, load_embedder
    from funes.models.derive import MIN_COSINE
    from funes.models.embedder import Embedder, load_tokenizer, verified_source

    emb = load_embedder()
    fp32 = Embedder(_runtime.session(verified_source(), "embedder"), load_tokenizer())
    fp32.embed(texts[:1])  # warm
    t = time.perf_counter()
    exact = fp32.embed(texts)
    t_fp = time.perf_counter() - t
    got = emb.embed(texts)
    cos = np.sum(exact * got, axis=1)
    before = Embedder(derive.session(unfused_graph()), emb._tok).embed(texts)
    cos_before = np.sum(exact * before, axis=1)
    drift = np.sum(before * got, axis=1)
    return {
        "chunks": len(texts),
        "min": round(float(cos.min()), 4),
        "p1": round(float(np.percentile(cos, 1)), 4),
        "p5": round(float(np.percentile(cos, 5)), 4),
        "median": round(float(np.median(cos)), 4),
        "below_bound": int(np.sum(cos < MIN_COSINE)),
        "unfused_min_p1_median_below": [
            round(float(cos_before.min()), 4),
            round(float(np.percentile(cos_before, 1)), 4),
            round(float(np.median(cos_before)), 4),
            int(np.sum(cos_before < MIN_COSINE)),
        ],
        "vs_unfused_min_median": [round(float(drift.min()), 5), round(float(np.median(drift)), 5)],
        "fp32_chunks_per_s_2_workers": round(len(texts) / t_fp, 1),
    }


def same_length_batches(texts: list[str], size: int = 8) -> dict[str, Any]:
    """Texts grouped by token count and run as unpadded batches of up to ``size`` on the
    derived graph, against one text per call: each row's cosine to its single-text vector, and
    the CPU time of each way (this process, the pool's workers included)."""
    from funes.models import embedder, load_embedder

    emb = load_embedder()
    session, output = emb._session, emb._output
    encs = emb._tok.encode_batch(texts)
    groups: dict[int, list[int]] = {}
    for i, e in enumerate(encs):
        groups.setdefault(len(e.ids), []).append(i)
    batches = [g[k : k + size] for g in groups.values() for k in range(0, len(g), size)]
    names = {i.name for i in session.get_inputs()}

    def run(rows: list[int]) -> np.ndarray:
        ids = np.asarray([encs[i].ids for i in rows], dtype=np.int64)
        v = session.run([output], embedder.feed(names, ids))[0].mean(axis=1)
        return np.asarray(v / np.linalg.norm(v, axis=1, keepdims=True), dtype=np.float32)

    c0 = time.process_time()
    single = emb.embed(texts)
    cpu_single = time.process_time() - c0
    out = np.zeros_like(single)
    c0 = time.process_time()
    for rows in batches:
        out[rows] = run(rows)
    cpu_batched = time.process_time() - c0
    cos = np.sum(out * single, axis=1)
    multi = [i for b in batches if len(b) > 1 for i in b]
    return {
        "texts": len(texts),
        "in_batches_of_2_or_more": len(multi),
        "batch": size,
        "min_cosine_to_single": round(float(cos[multi].min()), 4) if multi else None,
        "cpu_ratio_batched_to_single": round(cpu_batched / max(cpu_single, 1e-9), 2),
    }


def head_share(root: Path) -> dict[str, Any]:
    """On all of eval-dev's chunks: how many, and how many of their tokens, lie in tool-result
    pieces after the first (what `--embed-tool-results head` leaves to words)."""
    from funes.chunking import chunk_turns
    from funes.models.embedder import MAX_TEXT_CHARS, load_tokenizer
    from funes.sources import parse
    from funes.store.embedding import skipped

    chunks = list(chunk_turns(parse([root / "corpus"])))
    tok = load_tokenizer()
    lengths = [len(e.ids) for e in tok.encode_batch([c.text[:MAX_TEXT_CHARS] for c in chunks])]
    left = [skipped("head", c.block_type, c.split_idx) for c in chunks]
    return {
        "chunks": len(chunks),
        "left_to_words": sum(left),
        "chunk_share": round(sum(left) / max(len(chunks), 1), 3),
        "token_share": round(
            sum(n for n, x in zip(lengths, left, strict=True) if x) / max(sum(lengths), 1), 3
        ),
    }


def rerank_latency(
    texts: list[str],
    reps: int,
    variants: tuple[str, ...] = ("fp32", "int8"),
    lengths: tuple[int, ...] = (128, 256, 512),
) -> dict[str, Any]:
    from funes.models import reranker as rr_mod

    long_texts = sorted(texts, key=len)[-60:]
    query = "why did the concurrent writers duplicate rows and how was the lock fixed"
    passages = [(t + " ") * 4 for t in long_texts[:30]]
    out: dict[str, Any] = {"pairs": 30, "threads": 2}
    os.environ["FUNES_THREADS"] = "2"
    for name in variants:
        os.environ["FUNES_RERANKER"] = str(standin_reranker(name))
        for length in lengths:
            rr_mod._loaded.clear()
            rr = rr_mod.load_reranker(max_length=length)
            assert rr is not None
            rr.score(query, passages[:4])
            times = []
            for _ in range(reps):
                t = time.perf_counter()
                rr.score(query, passages)
                times.append(time.perf_counter() - t)
            out[f"{name}_{length}_ms"] = round(statistics.median(times) * 1000)
    os.environ.pop("FUNES_RERANKER", None)
    os.environ.pop("FUNES_THREADS", None)
    rr_mod._loaded.clear()
    return out


def recommend(r: dict[str, Any]) -> dict[str, Any]:
    t = r["throughput"]
    default = 2 if t["threads2_busy"] >= t["threads1_busy"] else 1
    budget = RECALL_BUDGET_MS - RECALL_OTHER_MS
    rr = r["reranker"]
    pools = {}
    for variant in ("fp32", "int8"):
        for length in (128, 256, 512):
            per_pair = rr[f"{variant}_{length}_ms"] / rr["pairs"]
            pools[f"{variant}_{length}"] = int(budget // per_pair)
    return {
        "default_threads": default,
        "rerank_budget_ms": budget,
        "max_rerank_pool_within_budget": pools,
    }


# --- helpers ----------------------------------------------------------------------------------


def _timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _spin() -> subprocess.Popen[bytes]:
    """Keep one core busy, as another engineer's job would."""
    p = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    time.sleep(0.3)
    return p


def versions() -> dict[str, str]:
    import onnxruntime
    import tokenizers

    return {"onnxruntime": onnxruntime.__version__, "tokenizers": tokenizers.__version__}


def table(r: dict[str, Any]) -> str:
    t, ld, c, rr, rec = (
        r["throughput"],
        r["load"],
        r["cosine_int8_vs_fp32"],
        r["reranker"],
        r["recommendation"],
    )
    cs = r["corpus"]
    rows = [
        f"Embedding — {cs['sample']} of {cs['chunks']} eval-dev chunks (tokens p50 "
        f"{cs['sample_tokens_p50_p90_mean'][0]}, p90 {cs['sample_tokens_p50_p90_mean'][1]}, "
        f"mean {cs['sample_tokens_p50_p90_mean'][2]}), graph: {t['graph']}, medians of runs",
        "",
        "| workers | other core idle | other core busy |",
        "|---|---|---|",
        f"| 1 | {t['threads1_idle']} chunks/s | {t['threads1_busy']} chunks/s |",
        f"| 2 | {t['threads2_idle']} chunks/s | {t['threads2_busy']} chunks/s |",
        "",
        "| measure | value |",
        "|---|---|",
        f"| load, cold (derives the int8 graph) | {ld['cold_s']} s |",
        f"| load, warm (cached graph) | {ld['warm_s']} s |",
        f"| cosine int8 vs fp32, {c['chunks']} chunks: min / p5 / median | "
        f"{c['min']} / {c['p5']} / {c['median']} |",
        f"| fp32 graph throughput (2 workers) | {c['fp32_chunks_per_s_2_workers']} chunks/s |",
        f"| default workers chosen | {rec['default_threads']} |",
        "",
        "Derived graph (attention and GELU fused) against recipe 3's (unfused), in turn:",
        "",
        "| measure | unfused | derived | ratio |",
        "|---|---|---|---|",
    ]
    pl, cr = r["per_length"], r["cpu_rate"]
    for n in (32, 64, 128, 256):
        if f"ratio_{n}" in pl:
            rows.append(
                f"| one call, {n} tokens, CPU ms (median of runs) | {pl[f'unfused_{n}_ms']} | "
                f"{pl[f'funes_{n}_ms']} | {pl[f'ratio_{n}']} |"
            )
    rows += [
        f"| {cr['chunks']} chunks per CPU-second | {cr['unfused_chunks_per_cpu_s']} | "
        f"{cr['funes_chunks_per_cpu_s']} | {cr['ratio']} |",
        f"| cosine to fp32: min / median, chunks < bound | "
        f"{c['unfused_min_p1_median_below'][0]} / {c['unfused_min_p1_median_below'][2]}, "
        f"{c['unfused_min_p1_median_below'][3]} | {c['min']} / {c['median']}, "
        f"{c['below_bound']} | |",
        f"| cosine derived to unfused: min / median | | "
        f"{c['vs_unfused_min_median'][0]} / {c['vs_unfused_min_median'][1]} | |",
        "",
        f"Cross-encoder (MiniLM-L6-shaped), {rr['pairs']} pairs, {rr['threads']} workers, "
        f"max pool within a {rec['rerank_budget_ms']:.0f} ms rerank budget",
        "",
        "| tokens | fp32 | int8 | pool ≤ budget fp32 / int8 |",
        "|---|---|---|---|",
    ]
    for n in (128, 256, 512):
        pools = rec["max_rerank_pool_within_budget"]
        rows.append(
            f"| {n} | {rr[f'fp32_{n}_ms']} ms | {rr[f'int8_{n}_ms']} ms | "
            f"{pools[f'fp32_{n}']} / {pools[f'int8_{n}']} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
