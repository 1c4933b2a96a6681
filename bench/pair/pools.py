"""Each question's candidate pool in funes' own cross-validated order, for the pair model.

    .venv/bin/python -m bench.pair.pools [--top 50]

For the labelled set and eval-dev (whatever bench/train_ranker.py can open: their memories under
bench/work/ are indexed there once and reused), recall's own ``Searcher.gather`` builds each
question's pool; the learned stage orders it with weights trained without the question's
repository (5 folds by repository, bench/labelled/folds.py; frozen-fold questions and eval-dev
with weights trained on every non-frozen labelled question). Writes
bench/work/pair/pools-<set>.jsonl, one line per question::

    {"id", "set", "repo", "kind", "query", "fold": 0-4 | "frozen" | "eval-dev",
     "in_pool": bool, "top": [{"text", "y", "role", "block_type", "funes_rank"}]}

``top`` is funes' top ``--top`` in its order; ``y`` says whether the text answers (the scoring
rule of bench/quality.py). These files stay under bench/work/ (eval-dev's texts never enter the
repository).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import quality, train_ranker  # noqa: E402
from bench.labelled.folds import FOLDS, fold_of, frozen  # noqa: E402

OUT = ROOT / "bench" / "work" / "pair"
SHARED_EVAL = Path("/work/shared/eval-dev")


def fold_label(s: Any) -> int | str:
    if s.q["set"] == "eval-dev":
        return "eval-dev"
    repo = s.q["repo"]
    return "frozen" if frozen(repo) else fold_of(repo)


def open_set(qs: Any) -> Any:
    """The set's memory as bench/train_ranker.py indexed it, opened read-only: never indexed
    from here (that is the lead's job, and a worktree's corpus path differs from main's)."""
    from funes.models import load_embedder
    from funes.retrieval import Searcher
    from funes.store import open_memory

    prefix = "labelled-" if qs.name == "labelled" else f"{qs.name}-"
    mems = sorted((d for d in train_ranker.WORK.glob(prefix + "*") if not d.name.endswith(".partial")),
                  key=lambda d: d.stat().st_mtime)  # fmt: skip
    if not mems:
        raise SystemExit(
            f"no {qs.name} memory under {train_ranker.WORK}: run bench/train_ranker.py"
        )
    return Searcher(open_memory(mems[-1]), load_embedder(), None)


def logits_of(s: Any, cand: dict[str, Any]) -> np.ndarray:
    """The first stage's logits of a pool, as recall scores them."""
    return train_ranker.stage1(s, {"cand": cand})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=50)
    ap.add_argument("--sets", default="labelled,eval-dev")
    ap.add_argument("--samples", type=Path, default=None,
                    help="a pickle of bench/train_ranker.py Samples to reuse instead of gathering")  # fmt: skip
    a = ap.parse_args(argv)
    if not quality.EVAL.exists() and SHARED_EVAL.exists():  # a worktree under /work/wt
        quality.EVAL = train_ranker.EVAL = SHARED_EVAL
    every = []
    if a.samples is not None:
        import pickle

        with a.samples.open("rb") as fh:
            every = [s for s in pickle.load(fh) if s.q["set"] in a.sets.split(",")]
    for qs in (train_ranker.labelled(), train_ranker.eval_dev()) if not every else ():
        if qs.name not in a.sets.split(",") or not qs.questions:
            continue
        searcher = open_set(qs)
        train_ranker.drop_unindexed(qs, searcher.memory)
        ss = train_ranker.samples(qs, searcher)
        print(f"{qs.name}: {len(ss)} questions", flush=True)
        every += ss
    folds = [fold_label(s) for s in every]
    trainable = [s for s, f in zip(every, folds, strict=True) if isinstance(f, int)]
    models = {}
    for k in range(FOLDS):
        models[k] = train_ranker.fit_candidates([s for s in trainable if fold_of(s.q["repo"]) != k])
    models_all = train_ranker.fit_candidates(trainable)
    OUT.mkdir(parents=True, exist_ok=True)
    outs: dict[str, list[str]] = {}
    for s, f in zip(every, folds, strict=True):
        cand = models[f] if isinstance(f, int) else models_all
        top = []
        if s.pool is not None:
            rows = s.pool.rows
            order = train_ranker.ordered(s, logits_of(s, cand))
            for r, i in enumerate(order[: a.top]):
                row = rows[i]
                top.append({"text": row["text"] or "", "y": bool(s.y[i]), "role": row["role"],
                            "block_type": row["block_type"], "funes_rank": r})  # fmt: skip
        doc = {"id": s.q["id"], "set": s.q["set"], "repo": s.q["repo"], "kind": s.q["kind"],
               "query": s.q["query"], "fold": f, "in_pool": bool(len(s.y) and s.y.any()),
               "top": top}  # fmt: skip
        outs.setdefault(s.q["set"], []).append(json.dumps(doc, ensure_ascii=False))
    for name, lines in outs.items():
        p = OUT / f"pools-{name}.jsonl"
        p.write_text("\n".join(lines) + "\n")
        print(f"written {p} ({len(lines)} questions)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
