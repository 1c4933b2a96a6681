"""Recall quality on ../shared/eval-dev, system by system, in one deterministic run.

    .venv/bin/python bench/quality.py [--rebuild]

Indexes the eval-dev corpus once into bench/work/ (reused while the corpus, funes' version and
the embedding model are unchanged), then answers every labelled question with each system:

- grep — what a user does without funes: rank sessions by how many query words `grep -i`
  finds in them, return the best-matching lines of the best sessions;
- BM25 only, vector only, hybrid (RRF of both legs), funes (hybrid + second-stage scoring),
  funes + rerank (only when a cross-encoder is installed);
- funes with the reference's recency (0.5^(age/30 d)) and with no recency, against ours.

Scoring (eval-dev README): a returned passage answers when its text, whitespace collapsed and
JSON string escapes undone, contains the collapsed answer quote or shares a 60-character run
with it. Reports hit@1, hit@5, MRR@10 by kind and by agent; for `absent` questions the share
flagged weak, for the others the share wrongly flagged; and tokens returned per query (≈ chars/4
of what an agent would read). "Now" is fixed, so re-runs give identical numbers.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import re
import statistics
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EVAL = ROOT.parent / "shared" / "eval-dev"
WORK = ROOT / "bench" / "work"
NOW = dt.datetime(2026, 11, 30, tzinfo=dt.UTC)

_WS = re.compile(r"\s+")
_ESC = re.compile(r'\\(["\\/bfnrt]|u[0-9a-fA-F]{4})')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def unescape(s: str) -> str:
    return _ESC.sub(lambda m: _ESCAPES.get(m[1]) or chr(int(m[1][1:], 16)), s)


def collapse(s: str) -> str:
    return _WS.sub(" ", s).strip()


def answers(text: str, quote: str) -> bool:
    q = collapse(quote)
    for t in (collapse(text), collapse(unescape(text))):
        if q in t:
            return True
        if len(q) > 60 and any(q[i : i + 60] in t for i in range(len(q) - 59)):
            return True
    return False


def memory_dir(rebuild: bool, build: bool = True) -> tuple[Path, float | None]:
    """The eval-dev memory, built on first use; returns (path, index seconds if built now).
    With ``build=False`` only says where it would be."""
    import funes
    from funes.models import EMBEDDER_PIN

    manifest = (EVAL / "corpus" / "manifest.json").read_bytes()
    key = hashlib.sha256(manifest + funes.__version__.encode() + EMBEDDER_PIN.name.encode())
    mem = WORK / f"eval-dev-{key.hexdigest()[:12]}"
    if (mem.exists() and not rebuild) or not build:
        return mem, None
    subprocess.run(["rm", "-rf", str(mem)], check=True)
    t = dt.datetime.now()
    subprocess.run(
        [str(Path(sys.executable).parent / "funes"), "index", str(EVAL / "corpus"), "--yes",
         "--memory", str(mem)],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return mem, (dt.datetime.now() - t).total_seconds()


# ---------------------------------------------------------------- the grep baseline

_QWORD = re.compile(r"[A-Za-z0-9_.\-/#]{3,}")
_STOP = {"the", "and", "for", "was", "why", "what", "did", "does", "how", "when", "which", "with",
         "that", "this", "from", "were", "are", "our", "its", "not", "but", "into", "get", "got"}  # fmt: skip


def grep_system(files: list[Path]) -> Callable[[str], list[str]]:
    texts = {f: f.read_text(encoding="utf-8", errors="replace") for f in files}
    lowered = {f: t.lower() for f, t in texts.items()}

    def search(query: str) -> list[str]:
        words = [w for w in dict.fromkeys(w.lower().strip(".-/") for w in _QWORD.findall(query))
                 if w and w not in _STOP]  # fmt: skip
        ranked = sorted(files, key=lambda f: (-sum(w in lowered[f] for w in words), str(f)))
        lines: list[tuple[int, str]] = []
        for f in ranked[:3]:
            for line in texts[f].splitlines():
                low = line.lower()
                n = sum(w in low for w in words)
                if n:
                    lines.append((n, line))
        lines.sort(key=lambda x: -x[0])
        return [line for _, line in lines[:10]]

    return search


# ---------------------------------------------------------------- scoring


def score(ranked: list[str], quote: str) -> int | None:
    for r, text in enumerate(ranked[:10]):
        if answers(text, quote):
            return r
    return None


def summarize(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {
        "n": len(ranks),
        "hit@1": sum(r == 0 for r in ranks) / n,
        "hit@5": sum(r is not None and r < 5 for r in ranks) / n,
        "mrr@10": sum(0 if r is None else 1 / (r + 1) for r in ranks) / n,
    }


def evaluate(systems: dict[str, Any], queries: list[dict[str, Any]]) -> dict[str, Any]:
    """Every system on every question: ranks, verdicts and tokens, summarised (deterministic:
    "now" is fixed and every tie is broken by id)."""
    from funes.render.formats import recall_agent
    from funes.retrieval import Query

    out: dict[str, Any] = {}
    for name, system in systems.items():
        by_kind: dict[str, list[int | None]] = defaultdict(list)
        by_agent: dict[str, list[int | None]] = defaultdict(list)
        weak = {"absent": [], "answerable": []}  # type: dict[str, list[bool]]
        tokens = []
        for q in queries:
            if name == "grep":
                texts = system(q["query"])
                verdict = None
                tokens.append(sum(len(t) for t in texts) / 4)
            else:
                res = system.search(Query(q["query"], id=q["id"]), now=NOW)
                texts = [h.row["text"] for h in res.hits]
                verdict = res.verdict
                tokens.append(len(recall_agent(res)) / 4)
            if q["kind"] == "absent":
                weak["absent"].append(verdict == "weak")
                continue
            weak["answerable"].append(verdict == "weak")
            r = score(texts, q["answer_quote"])
            by_kind[q["kind"]].append(r)
            by_agent[q["agent"]].append(r)
        all_ranks = [r for v in by_kind.values() for r in v]
        out[name] = {
            "all": summarize(all_ranks),
            "by_kind": {k: summarize(v) for k, v in sorted(by_kind.items())},
            "by_agent": {k: summarize(v) for k, v in sorted(by_agent.items())},
            "weak_on_absent": None if name == "grep" else _share(weak["absent"]),
            "weak_on_answerable": None if name == "grep" else _share(weak["answerable"]),
            "tokens_per_query": statistics.median(tokens),
        }
    return out


def _share(flags: list[bool]) -> float | None:
    return statistics.fmean(flags) if flags else None


class Pooled:
    """A Searcher answering from the pools gathered once per question (the same candidates,
    ranked each way a system ranks them — gathering is most of a search's cost)."""

    def __init__(self, searcher: Any, pools: dict[str, Any]) -> None:
        self.searcher = searcher
        self.pools = pools

    def search(self, q: Any, now: dt.datetime | None = None) -> Any:
        pool = self.pools.get(q.id)
        if pool is None:
            return self.searcher.search(q, now)
        return self.searcher.search(q, now, pool=pool)


class FoldSearcher:
    """The learned stage as cross-validation scores it: each question is answered by the
    weights trained without its repository's fold (bench/train_ranker.py)."""

    def __init__(self, by_fold: dict[int, Any], fold_of_id: dict[str, int]) -> None:
        self.by_fold = by_fold
        self.fold_of_id = fold_of_id

    def search(self, q: Any, now: dt.datetime | None = None) -> Any:
        return self.by_fold[self.fold_of_id[q.id]].search(q, now)


FOLDS = 5


def fold_pair(f: int) -> Any:
    """The pair model that may score a question of weights fold ``f`` (fold ``FOLDS`` is the
    frozen fold): one that never saw that fold's repositories (bench/pair/features.py); None
    when no such model was trained (the weights' pair stage is then skipped)."""
    try:
        from bench.pair import features

        return features.model_for("frozen" if f == FOLDS else f)
    except (ImportError, FileNotFoundError):
        return None


def run(rebuild: bool = False) -> dict[str, Any]:
    """Every system on eval-dev and on the labelled set (whatever of it is restored), the
    learned stage cross-validated by repository over both sets together."""
    from bench import train_ranker as tr
    from bench.baselines import Baseline
    from funes.models import load_embedder, load_reranker
    from funes.retrieval import Searcher
    from funes.store import open_memory

    if rebuild:
        subprocess.run(["rm", "-rf", *map(str, WORK.glob("*-*"))], check=True)
    emb = load_embedder()
    rr = load_reranker()
    sets = [qs for qs in (tr.eval_dev(), tr.labelled()) if qs.questions]
    mems, samples, unindexed = {}, {}, {}
    every = []  # trained on as the shipped weights are: with the training-only copies
    for qs in sets:
        mems[qs.name] = open_memory(tr.memory_for(qs))
        unindexed[qs.name] = tr.drop_unindexed(qs, mems[qs.name])
        samples[qs.name], extras = tr.training_set(qs, Searcher(mems[qs.name], emb, None))
        every += samples[qs.name] + extras
    cv_dir = WORK / "cv"
    fold_files = tr.cross_validate(every, FOLDS, cv_dir)
    out: dict[str, Any] = {"suite": "quality", "now": NOW.isoformat(), "folds": FOLDS,
                           "reranker": rr.name if rr else None, "sets": {}}  # fmt: skip
    for qs in sets:
        mem = mems[qs.name]
        fold_of_id = {q["id"]: tr.fold_index({**q, "set": qs.name}, FOLDS)
                      for q in qs.questions}  # fmt: skip

        pools = {s.q["id"]: s.pool for s in samples[qs.name] if s.pool is not None}

        def cv(
            recency: str = "gentle",
            rerank: Any = None,
            m: Any = mem,
            folds: Any = fold_of_id,
            p: Any = pools,
        ) -> FoldSearcher:
            by_fold = {
                f: Pooled(
                    Baseline(m, emb, rerank, recency=recency, weights=str(path), pair=fold_pair(f)),
                    p,
                )
                for f, path in enumerate(fold_files)
            }
            return FoldSearcher(by_fold, folds)

        def base(mode: str, m: Any = mem, p: Any = pools) -> Pooled:
            recency = "gentle" if mode == "hand-tuned" else "off"
            return Pooled(Baseline(m, emb, None, mode=mode, recency=recency), p)

        files = sorted(p for p in qs.corpus.rglob("*") if p.is_file() and p.suffix == ".jsonl")
        systems: dict[str, Any] = {
            "grep": grep_system(files),
            "bm25": base("lexical"),
            "vector": base("vector"),
            "hybrid (rrf)": base("rrf"),
            "hand-tuned stage (before)": base("hand-tuned"),
            "funes (learned, cross-validated)": cv(),
            "funes, reference recency": cv("reference"),
            "funes, no recency": cv("off"),
        }
        if rr is not None:
            systems["funes + rerank"] = cv(rerank=rr)
        frozen = {q["id"] for q in qs.questions if fold_of_id[q["id"]] == FOLDS}
        parts = [(qs.name, [q for q in qs.questions if q["id"] not in frozen])]
        if frozen:  # scored by weights trained on every other question, reported apart
            parts.append(
                (f"{qs.name}, frozen fold", [q for q in qs.questions if q["id"] in frozen])
            )
        for name, questions in parts:
            ids = {q["id"] for q in questions}
            out["sets"][name] = {
                "questions": len(questions),
                "repositories": len({q["repo"] for q in questions if q["kind"] != "absent"}),
                "memory_chunks": mem.count(),
                "pool_ceiling": round(
                    tr.pool_ceiling([s for s in samples[qs.name] if s.q["id"] in ids]), 4
                ),
                "not_indexed": unindexed[qs.name],
                "systems": evaluate(systems, questions),
            }
    return out


def run_suite(ctx: Any) -> dict[str, Any]:
    """The `quality` suite of `python -m bench`: reuses the eval-dev memory the `index` suite
    just embedded when the cache is cold, so one run embeds eval-dev once."""
    import shutil

    path, _ = memory_dir(rebuild=False, build=False)
    fresh = ctx.shared.get("eval_dev_memory")
    if not path.exists() and fresh is not None:
        shutil.copytree(fresh, path)
    if not path.exists() and ctx.quick:
        return {"skipped": "no cached eval-dev memory in bench/work (the full run builds it)"}
    from funes.models import reranker

    reranker._loaded.clear()  # only a reranker installed for real, never a suite's stand-in
    return run()


def table(doc: dict[str, Any]) -> str:
    rows: list[str] = []
    for set_name, st in doc["sets"].items():
        rows += [f"**{set_name}**: {st['questions']} questions over {st['repositories']} "
                 f"repositories, {st['memory_chunks']:,} chunks; pool ceiling (answer anywhere "
                 f"in the candidate pool) {st['pool_ceiling']:.2f}."
                 + (f" Not indexed, their questions left out: {', '.join(st['not_indexed'])}."
                    if st.get("not_indexed") else ""), "",
                 "| system | hit@1 | hit@5 | MRR@10 | weak on absent | weak on answerable "
                 "| tokens/query |", "|---|---|---|---|---|---|---|"]  # fmt: skip
        for name, s in st["systems"].items():
            a = s["all"]
            wa = "—" if s["weak_on_absent"] is None else f"{s['weak_on_absent']:.0%}"
            wn = "—" if s["weak_on_answerable"] is None else f"{s['weak_on_answerable']:.0%}"
            rows.append(f"| {name} | {a['hit@1']:.3f} | {a['hit@5']:.3f} | {a['mrr@10']:.3f} "
                        f"| {wa} | {wn} | {s['tokens_per_query']:.0f} |")  # fmt: skip
        kinds = sorted({k for s in st["systems"].values() for k in s["by_kind"]})
        agents = sorted({a for s in st["systems"].values() for a in s["by_agent"]})
        rows += ["", "hit@1 / hit@5 / MRR@10 by kind and agent:", "",
                 "| system | " + " | ".join(kinds + agents) + " |",
                 "|---" * (len(kinds) + len(agents) + 1) + "|"]  # fmt: skip
        for name, s in st["systems"].items():
            cells = []
            for group, key in [("by_kind", k) for k in kinds] + [("by_agent", a) for a in agents]:
                m = s[group].get(key)
                cells.append("—" if m is None else
                             f"{m['hit@1']:.2f} / {m['hit@5']:.2f} / {m['mrr@10']:.2f}")  # fmt: skip
            rows.append(f"| {name} | " + " | ".join(cells) + " |")
        rows.append("")
    return "\n".join(rows).rstrip()


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rebuild", action="store_true", help="re-index eval-dev even if cached")
    args = ap.parse_args()
    doc = run(args.rebuild)
    out = ROOT / "bench" / "results" / f"quality-{dt.date.today().isoformat()}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(table(doc))
    print(f"\nwritten {out}")


if __name__ == "__main__":
    main()
