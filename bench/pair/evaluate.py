"""How the pair model reorders funes' top N, cross-validated by repository.

    .venv/bin/python -m bench.pair.evaluate [--n 10,20,30] [--variant zero-shot] [--root DIR]

Reads bench/work/pair/pools-<set>.jsonl (bench/pair/pools.py: every question's pool in funes'
own cross-validated order) and scores each question's top N with the pair model that never saw
its repository (bench/pair/features.py: fold K's model for a labelled question of fold K, the
full model for the frozen fold and eval-dev). Reports, per set (labelled CV, frozen fold,
eval-dev) and N, hit@1 / hit@5 / MRR@10 of

- ``funes``: funes' order alone (the learned stage, cross-validated);
- ``pair``: the top N reordered by the pair model's logit alone (ties: funes' order);
- ``rrf``: reciprocal-rank fusion (k = 60) of funes' rank and the pair model's rank.

Answerable questions only (absent ones have nothing to rank); a question whose answer is not in
the top N counts as a miss for every system. Writes bench/work/pair/eval-<variant>.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.pair.features import WORK, pair_logits  # noqa: E402
from bench.quality import summarize  # noqa: E402
from funes.ranker import rrf_scores  # noqa: E402


def first_hit(order: list[int], y: list[bool]) -> int | None:
    for r, i in enumerate(order[:10]):
        if y[i]:
            return r
    return None


def rank_all(q: dict[str, Any], n: int, logits: np.ndarray) -> dict[str, int | None]:
    top = q["top"][:n]
    y = [t["y"] for t in top]
    funes = list(range(len(top)))
    pair = sorted(funes, key=lambda i: (-float(logits[i]), i))
    prank = {i: r for r, i in enumerate(pair)}
    fused = rrf_scores([((i, i) for i in funes), prank.items()])
    rrf = sorted(funes, key=lambda i: (-fused[i], i))
    return {"funes": first_hit(funes, y), "pair": first_hit(pair, y), "rrf": first_hit(rrf, y)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default="10,20,30")
    ap.add_argument("--variant", default="", help="'zero-shot': the base model for every fold")
    ap.add_argument("--root", type=Path, default=WORK, help="where fold-K/ and full/ are")
    ap.add_argument("--sets", default="labelled,eval-dev")
    ap.add_argument("--max-length", type=int, default=None)
    ap.add_argument("--groups", default="cv,frozen,eval-dev", help="which questions to score")
    ap.add_argument("--only-fold", type=int, default=None, help="cv: only fold K's questions")
    ap.add_argument("--pools", type=Path, default=WORK, help="where pools-<set>.jsonl are")
    ap.add_argument("--out", type=Path, default=None, help="default bench/work/pair/eval-….json")
    a = ap.parse_args(argv)
    ns = [int(x) for x in a.n.split(",")]
    report: dict[str, Any] = {"variant": a.variant or str(a.root), "n": ns}
    t0 = time.process_time()
    for name in a.sets.split(","):
        f = a.pools / f"pools-{name}.jsonl"
        if not f.exists():
            print(f"{f} missing: run .venv/bin/python -m bench.pair.pools", file=sys.stderr)
            continue
        qs = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
        qs = [q for q in qs if q["kind"] != "absent"]
        if a.only_fold is not None:
            qs = [q for q in qs if q["fold"] == a.only_fold]
        groups: dict[str, list[dict[str, Any]]] = {}
        for q in qs:
            g = {"eval-dev": "eval-dev", "frozen": "frozen"}.get(str(q["fold"]), "cv")
            groups.setdefault(f"{name}:{g}", []).append(q)
        for gname, gq in groups.items():
            if gname.split(":")[1] not in a.groups.split(","):
                continue
            ranks: dict[int, dict[str, list[int | None]]] = {
                n: {"funes": [], "pair": [], "rrf": []} for n in ns
            }
            for q in gq:
                fold = "zero-shot" if a.variant == "zero-shot" else q["fold"]
                texts = [t["text"] for t in q["top"][: max(ns)]]
                logits = (pair_logits(q["query"], texts, fold, root=a.root,
                                      max_length=a.max_length)
                          if texts else np.zeros(0))  # fmt: skip
                for n in ns:
                    for k, r in rank_all(q, n, logits).items():
                        ranks[n][k].append(r)
            report[gname] = {
                str(n): {k: {m: round(v, 4) for m, v in summarize(r).items()}
                         for k, r in ranks[n].items()}
                for n in ns
            }  # fmt: skip
            for n in ns:
                line = "  ".join(
                    f"{k} {v['hit@1']:.3f}/{v['hit@5']:.3f}/{v['mrr@10']:.3f}"
                    for k, v in report[gname][str(n)].items()
                )
                print(f"{gname} (n={len(gq)}) top {n}: {line}", flush=True)
    report["cpu_s"] = round(time.process_time() - t0, 1)
    tag = "" if a.groups == "cv,frozen,eval-dev" else "-" + a.groups.replace(",", "+")
    out = a.out or WORK / f"eval-{a.variant or a.root.name}{tag}.json"
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
