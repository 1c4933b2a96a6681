"""Warm latency of the pair model over the head of a pool, by N and truncation length.

    .venv/bin/python -m bench.pair.latency [--model DIR] [--n 10,20,30,50] [--lengths 128,192,256]

Questions and passages are real: the labelled set's pools (bench/work/pair/pools-labelled.jsonl,
funes' own top 50 per question, so the passages are as long as recall's). For each N and
length: one warm-up call, then ``--reps`` questions, each scoring its pool's top N once;
reports the median and p90 wall time of ``PairModel.score`` and its CPU time, on the worker
pool funes uses (FUNES_THREADS, default 2).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.pair.features import WORK  # noqa: E402
from funes.models.pair import load_pair_model, open_pair_model  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=None, help="default: the shipped model")
    ap.add_argument("--n", default="10,20,30,50")
    ap.add_argument("--lengths", default="128,192,256")
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args(argv)
    pools = [json.loads(x) for x in (WORK / "pools-labelled.jsonl").read_text().splitlines() if x]
    pools = [p for p in pools if len(p["top"]) >= 50][: a.reps]
    out = {}
    for length in map(int, a.lengths.split(",")):
        m = open_pair_model(a.model, max_length=length) if a.model else load_pair_model()
        m.max_length = length
        for n in map(int, a.n.split(",")):
            m.score(pools[0]["query"], [t["text"] for t in pools[0]["top"][:n]])
            walls, cpus = [], []
            for p in pools:
                texts = [t["text"] for t in p["top"][:n]]
                t0, c0 = time.perf_counter(), time.process_time()
                m.score(p["query"], texts)
                walls.append((time.perf_counter() - t0) * 1000)
                cpus.append((time.process_time() - c0) * 1000)
            walls.sort()
            r = {"p50_ms": round(statistics.median(walls), 1),
                 "p90_ms": round(walls[int(0.9 * (len(walls) - 1))], 1),
                 "cpu_ms": round(statistics.median(cpus), 1)}  # fmt: skip
            out[f"{length}/{n}"] = r
            print(f"max_length {length} N {n}: p50 {r['p50_ms']} ms, p90 {r['p90_ms']} ms, "
                  f"CPU {r['cpu_ms']} ms", flush=True)  # fmt: skip
    (WORK / "latency.json").write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
