"""Train the learned second stage (funes/data/ranker.json) and cross-validate it by repository.

    .venv/bin/python bench/train_ranker.py [--write] [--folds 5]
    .venv/bin/python bench/train_ranker.py --sets fixture --out FILE   # nothing from outside

Questions come from ../shared/eval-dev and from the labelled set in bench/labelled/ (whatever of
its transcripts ``bench/labelled/restore.py`` could restore). Each set is indexed once into its
own memory under bench/work/ (cached while the corpus, funes' version and the embedder are
unchanged). For every question recall's own :meth:`funes.retrieval.Searcher.gather` builds the
candidate pool and its features; a candidate is positive when its text answers the question
(the scoring rule of bench/quality.py).

Two logistic models, fit by iteratively reweighted least squares with an L2 penalty on
standardised features (numpy only, deterministic):

- the candidate model, pointwise: each question weighs the same, its positives and negatives
  half each, so a question with 200 candidates does not outweigh one with 20;
- the verdict model: answerable (1) or absent (0) from query-level signals computed with the
  candidate model; its threshold is the largest that keeps answerable questions flagged weak
  at or below 10 % on the training questions.

Cross-validation: repositories are dealt into k folds (by a hash of the name, so the split is
stable as sets grow); a fold's questions are scored only by models trained on the other folds'
repositories. ``--write`` then trains on every question and writes the shipped weights
(``--out FILE``: writes them there instead). ``--sets fixture`` trains on the synthetic set
bench/ranker_fixture.py writes: a retrain, and its test, need nothing outside the repository.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.labelled import folds as labelled_folds  # noqa: E402
from bench.quality import EVAL, NOW, WORK, answers, summarize  # noqa: E402
from funes.ranker import VERDICT_CLIP  # noqa: E402

LABELLED = ROOT / "bench" / "labelled"
WEIGHTS = ROOT / "funes" / "data" / "ranker.json"
L2 = 1.0
VERDICT_L2 = 1.0  # the verdict model's penalty (each question weighing 1)
LEXICAL_EVERY = 3  # every third question also trains as a lexical-only pool (lexical_samples)
PAIR_HEAD = 0  # first-stage candidates the pair model reads (0: no pair stage; --pair-head)
MAX_FLAGGED_ANSWERABLE = 0.10


# ---------------------------------------------------------------- question sets


@dataclass
class QuestionSet:
    name: str
    questions: list[dict[str, Any]]
    corpus: Path  # what to index
    key: bytes  # changes when the corpus changes


def eval_dev() -> QuestionSet:
    manifest = json.loads((EVAL / "corpus" / "manifest.json").read_text())
    repo_of = {m["file"]: m["repo"] for m in manifest}
    qs = [json.loads(x) for x in (EVAL / "queries.jsonl").read_text().splitlines() if x.strip()]
    for q in qs:
        # absent questions belong to no file: each is its own group
        q["repo"] = repo_of.get(q["file"]) if q.get("file") else f"absent:{q['id']}"
    key = (EVAL / "corpus" / "manifest.json").read_bytes()
    return QuestionSet("eval-dev", qs, EVAL / "corpus", key)


def labelled() -> QuestionSet:
    """The labelled set, limited to questions whose transcript is present (absent questions
    only when at least one transcript is)."""
    present: set[str] = set()
    manifests = b""
    for f in sorted(LABELLED.glob("*/manifest*.jsonl")):
        for line in f.read_text().splitlines():
            if line.strip():
                m = json.loads(line)
                if (LABELLED / "corpus" / m["file"]).exists():
                    present.add(m["file"])
                    manifests += line.encode() + b"\n"
    qs = []
    for f in sorted(LABELLED.glob("*/queries*.jsonl")):
        for line in f.read_text().splitlines():
            if not line.strip():
                continue
            q = json.loads(line)
            if q["kind"] == "absent":
                if present:
                    q["repo"] = q.get("repo") or f"absent:{q['id']}"
                    qs.append(q)
            elif q["file"] in present:
                qs.append(q)
    return QuestionSet("labelled", qs, LABELLED / "corpus", manifests)


def fixture(root: Path) -> QuestionSet:
    """The synthetic set of bench/ranker_fixture.py, written under ``root``: a retrain that
    needs nothing from outside the repository."""
    from bench import ranker_fixture

    qs = ranker_fixture.write(root)
    for q in qs:
        q["repo"] = q.get("repo") or f"absent:{q['id']}"
    key = hashlib.sha256()
    for f in sorted((root / "corpus").rglob("*.jsonl")):
        key.update(f.name.encode() + b"\0" + f.read_bytes())
    return QuestionSet("fixture", qs, root / "corpus", key.digest())


def drop_unindexed(qs: QuestionSet, memory: Any) -> list[str]:
    """Leave out questions whose transcript the memory holds no passage of (a file funes did
    not route); returns those files, so the bench can say what it did not measure."""
    paths = memory.rows(None, ("source_path",)).column("source_path").to_pylist()
    held = {Path(p).name for p in set(paths) if p}
    files = sorted({q["file"] for q in qs.questions if q.get("file")})
    missing = [f for f in files if Path(f).name not in held]
    qs.questions = [q for q in qs.questions if q.get("file") not in missing]
    return missing


def memory_for(qs: QuestionSet) -> Path:
    """The set's memory under bench/work/, indexed on first use."""
    import funes
    from funes.models import EMBEDDER_PIN

    if qs.name == "labelled":
        # The labelled set grows while it is written: its memory is indexed incrementally
        # (only new transcripts are embedded), keyed by funes' version and the embedder only.
        h = hashlib.sha256(funes.__version__.encode() + EMBEDDER_PIN.name.encode())
        mem = WORK / f"labelled-{h.hexdigest()[:12]}"
        r = subprocess.run(
            [str(Path(sys.executable).parent / "funes"), "index", str(qs.corpus), "--yes",
             "--memory", str(mem)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        if r.returncode != 0:
            print(f"labelled memory not brought up to date: {r.stderr.strip()}", file=sys.stderr)
        return mem
    h = hashlib.sha256(qs.key + funes.__version__.encode() + EMBEDDER_PIN.name.encode())
    mem = WORK / f"{qs.name}-{h.hexdigest()[:12]}"
    if not mem.exists():
        tmp = mem.with_name(mem.name + ".partial")
        subprocess.run(["rm", "-rf", str(tmp)], check=True)
        subprocess.run(
            [str(Path(sys.executable).parent / "funes"), "index", str(qs.corpus), "--yes",
             "--memory", str(tmp)],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        tmp.rename(mem)
    return mem


# ---------------------------------------------------------------- pools


@dataclass
class Sample:
    """One question's pool: features, labels, and what the verdict model needs."""

    q: dict[str, Any]
    x: np.ndarray
    y: np.ndarray
    pool: Any  # funes.retrieval.Pool (None when the legs found nothing)
    # the pair model's logit of every pool candidate, from a model that never saw the
    # question's repository (attach_pair); None: no pair stage
    pair: np.ndarray | None = None


def samples(qs: QuestionSet, searcher: Any) -> list[Sample]:
    from funes.ranker import FEATURES
    from funes.retrieval import Query

    out = []
    for q in qs.questions:
        pool = searcher.gather(Query(q["query"], k=10), NOW)
        if pool is None:
            x = np.zeros((0, len(FEATURES)))
            y = np.zeros(0)
        else:
            x = pool.x
            quote = q.get("answer_quote")
            y = np.array([bool(quote) and answers(r["text"] or "", quote) for r in pool.rows],
                         dtype=np.float64)  # fmt: skip
        out.append(Sample({**q, "set": qs.name}, x, y, pool))
    return out


def training_set(qs: QuestionSet, searcher: Any) -> tuple[list[Sample], list[Sample]]:
    """The questions' samples, and the training-only copies the shipped weights are fit with
    besides them (echo_samples, lexical_samples): what --write trains on and what
    bench/quality.py cross-validates."""
    ss = samples(qs, searcher)
    echo = echo_samples(qs, searcher, ss)
    return ss, echo + lexical_samples(qs, searcher, echo=echo)


def pair_fold(q: dict[str, Any]) -> int | str:
    """Which pair model may score question ``q`` (bench/pair/features.py): one trained without
    its repository's fold, or, for eval-dev and the frozen fold, the one trained on every
    other labelled question."""
    if q.get("set") == "eval-dev":
        return "eval-dev"
    if labelled_folds.frozen(q["repo"]):
        return "frozen"
    return fold_of(q["repo"], labelled_folds.FOLDS)


def attach_pair(ss: Sequence[Sample], root: Path | None = None) -> None:
    """Every pool candidate's pair-model logit (cached in bench/work/pair-logits per model)."""
    import pickle

    from bench.pair import features

    by_fold: dict[Any, list[Sample]] = {}
    for s in ss:
        if s.pool is not None:
            by_fold.setdefault(pair_fold(s.q), []).append(s)
    for fold, group in by_fold.items():
        kw = {} if root is None else {"root": root}
        d = features.model_dir(fold, **kw)
        sha = hashlib.sha256((d / "passage.onnx").read_bytes()).hexdigest()[:12]
        cache_file = WORK / "pair-logits" / f"{fold}-{sha}.pkl"
        cache: dict[tuple[str, str], float] = {}
        if cache_file.exists():
            cache = pickle.loads(cache_file.read_bytes())
        for s in group:
            rows = s.pool.rows
            todo = [r for r in rows if (s.q["query"], r["id"]) not in cache]
            if todo:
                got = features.pair_logits(
                    s.q["query"], [r["text"] or "" for r in todo], fold, **kw
                )
                cache.update(
                    {(s.q["query"], r["id"]): float(v) for r, v in zip(todo, got, strict=True)}
                )
            s.pair = np.array([cache[(s.q["query"], r["id"])] for r in rows], dtype=np.float32)
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        cache_file.write_bytes(pickle.dumps(cache))


def pool_ceiling(ss: Sequence[Sample]) -> float:
    """Share of answerable questions whose answer is anywhere in the pool."""
    ans = [s for s in ss if s.q["kind"] != "absent"]
    return sum(bool(s.y.any()) for s in ans) / (len(ans) or 1)


# ---------------------------------------------------------------- fitting


def irls(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    """Weighted L2-penalised logistic regression (intercept unpenalised) by Newton steps."""
    n, d = x.shape
    a = np.hstack([x, np.ones((n, 1))])
    beta = np.zeros(d + 1)
    pen = np.full(d + 1, l2)
    pen[-1] = 0.0
    for _ in range(50):
        z = np.clip(a @ beta, -30, 30)
        p = 1 / (1 + np.exp(-z))
        g = a.T @ (w * (p - y)) + pen * beta
        h = (a * (w * p * (1 - p))[:, None]).T @ a + np.diag(pen + 1e-9)
        step = np.linalg.solve(h, g)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta[:-1], float(beta[-1])


def standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    return mean, scale


PAIRWISE = False  # measured option: logistic loss on (positive − negative) differences


def fit_candidates(ss: Sequence[Sample], l2: float = L2) -> dict[str, Any]:
    if PAIRWISE:
        return fit_pairwise(ss, l2)
    xs, ys, ws = [], [], []
    for s in ss:
        if not len(s.y) or not s.y.any():
            continue  # no positive in the pool: nothing to learn about ordering
        npos, nneg = s.y.sum(), len(s.y) - s.y.sum()
        xs.append(s.x)
        ys.append(s.y)
        ws.append(np.where(s.y > 0, 0.5 / npos, 0.5 / max(nneg, 1)))
    x, y, w = np.vstack(xs), np.concatenate(ys), np.concatenate(ws)
    mean, scale = standardise(x)
    coef, b = irls((x - mean) / scale, y, w, l2)
    return {"mean": mean, "scale": scale, "w": coef, "b": b}


def fit_pairwise(ss: Sequence[Sample], l2: float = L2) -> dict[str, Any]:
    """Pairwise logistic regression: every (positive, negative) pair of a question, each
    question's pairs weighing 1 in all; differences are symmetric, so no intercept."""
    allx = np.vstack([s.x for s in ss if len(s.y)])
    mean, scale = standardise(allx)
    ds, ws = [], []
    for s in ss:
        if not len(s.y) or not s.y.any() or s.y.all():
            continue
        z = (s.x - mean) / scale
        pos, neg = z[s.y > 0], z[s.y == 0]
        d = (pos[:, None, :] - neg[None, :, :]).reshape(-1, z.shape[1])
        ds.append(np.vstack([d, -d]))
        n = len(d)
        ws.append(np.full(2 * n, 0.5 / n))
    d, w = np.vstack(ds), np.concatenate(ws)
    y = np.concatenate([np.concatenate([np.ones(len(x) // 2), np.zeros(len(x) // 2)]) for x in ds])
    coef, _ = irls(d, y, w, l2)
    return {"mean": mean, "scale": scale, "w": coef, "b": 0.0}


def stage1(s: Sample, m: dict[str, Any]) -> np.ndarray:
    """The first stage's logits of a pool under candidate weights ``m["cand"]``, as recall
    scores them (funes.ranker.linear)."""
    from funes.ranker import linear

    c = m["cand"]
    return np.asarray(linear(s.x, c["mean"], c["scale"], c["w"], c["b"]))


def ordered(s: Sample, logits: np.ndarray) -> list[int]:
    """Pool indexes by logit, ties in fused order (recall's funes.retrieval.rank_pool)."""
    from funes.retrieval import rank_pool

    return rank_pool(s.pool, logits).order


def pair_stage(m: dict[str, Any]) -> Any:
    """The pair stage of models ``m`` as recall reads it (None without one)."""
    from funes.ranker import PairStage

    st = m.get("pair")
    if st is None:
        return None
    return PairStage(st["head"], np.asarray(st["mean"]), np.asarray(st["scale"]),
                     np.asarray(st["w"]), st["b"])  # fmt: skip


def ranking(s: Sample, m: dict[str, Any]) -> Any:
    """Recall's ranking of a pool (funes.retrieval.rank_pool) under models ``m``: the first
    stage, then the pair stage when ``m`` has one and the pool carries pair logits."""
    from funes.retrieval import rank_pool

    pair = s.pair
    stage = pair_stage(m) if pair is not None else None
    return rank_pool(s.pool, stage1(s, m), stage, lambda head: pair[head])


def final_logits(s: Sample, m: dict[str, Any]) -> tuple[np.ndarray, float]:
    """Recall's logits for a pool under models ``m`` (first stage, then the pair stage when
    ``m`` has one), and the pair model's best logit over the head (0.0 without)."""
    r = ranking(s, m)
    return r.logits, r.pair_best


def fit_pair(ss: Sequence[Sample], cand: dict[str, Any], l2: float = L2) -> dict[str, Any]:
    """The pair stage on the first stage's head of each pool (PAIR_HEAD candidates), each
    question with an answer in its head weighing the same."""
    from funes.ranker import PAIR_FEATURES, pair_features

    xs, ys, ws = [], [], []
    for s in ss:
        if s.pool is None or s.pair is None:
            continue
        logits = stage1(s, {"cand": cand})
        first = ordered(s, logits)[:PAIR_HEAD]
        y = s.y[first]
        if not y.any() or y.all():
            continue
        xs.append(pair_features(logits[first], s.pair[first].astype(np.float64)))
        ys.append(y)
        npos = y.sum()
        ws.append(np.where(y > 0, 0.5 / npos, 0.5 / max(len(y) - npos, 1)))
    x, y, w = np.vstack(xs), np.concatenate(ys), np.concatenate(ws)
    mean, scale = standardise(x)
    coef, b = irls((x - mean) / scale, y, w, l2)
    return {"head": PAIR_HEAD, "features": list(PAIR_FEATURES), "mean": mean, "scale": scale,
            "w": coef, "b": b}  # fmt: skip


def models(ss: Sequence[Sample], l2: float = L2, pair: bool = True) -> dict[str, Any]:
    """The candidate model, and the pair stage on top of it when the pools carry pair logits."""
    cand = fit_candidates(ss, l2)
    use_pair = pair and PAIR_HEAD > 0 and any(s.pair is not None for s in ss)
    return {"cand": cand, "pair": fit_pair(ss, cand, l2) if use_pair else None}


def verdict_rows(ss: Sequence[Sample], m: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    from funes.ranker import VERDICT_FEATURES

    vs, ys = [], []
    for s in ss:
        if s.pool is None:
            v = np.zeros(len(VERDICT_FEATURES))
            v[0] = -10.0
        else:
            v = ranking(s, m).signals
        vs.append(v)
        ys.append(0.0 if s.q["kind"] == "absent" else 1.0)
    return np.vstack(vs), np.array(ys)


def fit(ss: Sequence[Sample], l2: float = L2, inner: int = 5) -> dict[str, Any]:
    """The weights document: both models fit on the pools recall gathers with vectors, and,
    under ``"lexical"``, both fit again on the lexical-only copies (lexical_samples), which
    recall uses when a pool has no cosine at all (a memory whose vectors are not filled in)."""
    vec = [s for s in ss if not is_lexical(s)]
    lex = [s for s in ss if is_lexical(s)]
    doc = fit_regime(vec, l2, inner)
    if lex:
        sub = fit_regime(lex, l2, inner, pair=False)
        doc["lexical"] = {k: sub[k] for k in ("mean", "scale", "w", "b", "verdict")}
    return doc


def fit_regime(
    ss: Sequence[Sample], l2: float = L2, inner: int = 5, pair: bool = True
) -> dict[str, Any]:
    """Both models on ``ss``; returns the weights document.

    The verdict model and its threshold are chosen out of sample, by cross-validation inside
    ``ss`` (by repository, ``inner`` folds): each question's verdict signals come from a
    candidate model trained without its repository, the verdict model is fit on those, and the
    threshold on verdict probabilities from verdict models trained without its repository. So
    the shipped threshold was never chosen on the questions whose probabilities it cuts, and it
    flags as many answerable questions out of sample as it did when it was chosen."""
    from funes.ranker import FEATURES, VERDICT_FEATURES, WEIGHTS_VERSION

    m = models(ss, l2, pair)
    cand = m["cand"]
    ss = [s for s in ss if not is_echo(s)]  # they train the candidate model only
    fs = [fold_of(s.q["repo"], inner) for s in ss]
    v = np.zeros((len(ss), len(VERDICT_FEATURES)))
    vy = np.array([0.0 if s.q["kind"] == "absent" else 1.0 for s in ss])
    for f in range(inner):
        test = [i for i, g in enumerate(fs) if g == f]
        train = [ss[i] for i, g in enumerate(fs) if g != f]
        if not test or not train:
            continue
        v[test] = verdict_rows([ss[i] for i in test], models(train, l2, pair))[0]
    vmean, vscale = standardise(v)
    z = np.clip((v - vmean) / vscale, -VERDICT_CLIP, VERDICT_CLIP)  # as recall reads them
    vcoef, vb = _fit_verdict(z, vy, VERDICT_L2)
    p_oof = np.zeros(len(ss))
    for f in range(inner):
        test = np.array([g == f for g in fs])
        if not test.any() or test.all():
            continue
        cf, bf = _fit_verdict(z[~test], vy[~test], VERDICT_L2)
        p_oof[test] = 1 / (1 + np.exp(-np.clip(z[test] @ cf + bf, -50, 50)))
    threshold = choose_threshold(p_oof[vy == 1])
    return {
        "version": WEIGHTS_VERSION,
        "features": list(FEATURES),
        "mean": _r(cand["mean"]), "scale": _r(cand["scale"]), "w": _r(cand["w"]),
        "b": round(cand["b"], 6),
        "rerank_weight": 1.0,
        "pair": None if m["pair"] is None else {
            k: _r(v) if isinstance(v, np.ndarray) else v for k, v in m["pair"].items()},
        "verdict": {"features": list(VERDICT_FEATURES), "mean": _r(vmean), "scale": _r(vscale),
                    "w": _r(vcoef), "b": round(vb, 6), "threshold": round(threshold, 6),
                    "threshold_chosen": f"nested {inner}-fold cross-validation by repository"},
        "trained_on": {"questions": len(ss),
                       "repositories": len({s.q["repo"] for s in ss if s.q["kind"] != "absent"}),
                       "l2": l2},
    }  # fmt: skip


def _fit_verdict(z: np.ndarray, vy: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    """The verdict model on standardised signals, absent and answerable weighing half each."""
    # each question weighs 1 (absent and answerable half the total each), so the penalty is
    # that of the candidate model rather than one that drowns a loss summing to 1
    nabs, nans = (vy == 0).sum(), (vy == 1).sum()
    n = len(vy) / 2
    vw = np.where(vy == 0, n / max(nabs, 1), n / max(nans, 1))
    return irls(z, vy, vw, l2)


def choose_threshold(p_answerable: np.ndarray) -> float:
    """The largest threshold that flags at most 10 % of answerable questions weak."""
    if not len(p_answerable):
        return 0.5
    srt = np.sort(p_answerable)
    k = int(np.floor(MAX_FLAGGED_ANSWERABLE * len(srt)))
    return float(srt[k]) if k < len(srt) else float(srt[-1])


def _r(a: np.ndarray) -> list[float]:
    return [round(float(v), 6) for v in a]


# ---------------------------------------------------------------- cross-validation


def fold_of(repo: str, k: int) -> int:
    return labelled_folds.fold_of(repo, k)


def folds(questions: Sequence[dict[str, Any]], k: int) -> list[int]:
    """The fold of each question: all questions of one repository share a fold."""
    return [fold_of(q["repo"], k) for q in questions]


def is_frozen(s: Sample) -> bool:
    """A question of the frozen test fold: never trained, tuned or thresholded on."""
    return s.q.get("set", "labelled") == "labelled" and labelled_folds.frozen(s.q["repo"])


def cross_validate(ss: Sequence[Sample], k: int, work: Path, l2: float = L2) -> list[Path]:
    """Weights files, one per fold, each trained without that fold's repositories, then one
    trained on every question outside the frozen fold (which scores the frozen fold: index k)."""
    ss = [s for s in ss if not is_frozen(s)]
    fs = folds([s.q for s in ss], k)
    work.mkdir(parents=True, exist_ok=True)
    out = []
    for f in range(k):
        train = [s for s, g in zip(ss, fs, strict=True) if g != f]
        path = work / f"fold-{f}.json"
        path.write_text(json.dumps(fit(train, l2)) + "\n")
        out.append(path)
    path = work / "all.json"
    path.write_text(json.dumps(fit(ss, l2)) + "\n")
    return [*out, path]


def fold_index(q: dict[str, Any], k: int) -> int:
    """Which of :func:`cross_validate`'s weights files scores question ``q``."""
    if q.get("set", "labelled") == "labelled" and labelled_folds.frozen(q["repo"]):
        return k
    return fold_of(q["repo"], k)


def is_lexical(s: Sample) -> bool:
    return str(s.q.get("regime")).startswith("lexical")


def is_echo(s: Sample) -> bool:
    return "echo" in str(s.q.get("regime"))


def is_extra(s: Sample) -> bool:
    """A training-only copy (lexical_samples, echo_samples): never scored."""
    return s.q.get("regime") is not None


def echo_samples(qs: QuestionSet, searcher: Any, ss: Sequence[Sample]) -> list[Sample]:
    """The user asks the memory the very prompt they once gave the agent: for each answerable
    question outside the frozen fold whose answer (not itself a prompt) follows a user prompt in
    the pool, that prompt (whitespace collapsed, ≤ 300 characters) becomes a question with the
    same answer. Training rows for the candidate model only: the labelled questions are never
    near-copies of a prompt, so without them nothing teaches that a prompt echoing the question
    is the question asked before, not its answer."""
    out = []
    for s in ss:
        if s.q["set"] != qs.name or s.pool is None or not s.y.any() or is_frozen(s):
            continue
        rows = s.pool.rows
        ans = [rows[i] for i in range(len(rows)) if s.y[i] > 0 and rows[i]["role"] != "user"]
        if not ans:
            continue
        a = ans[0]
        prompts = [r for r in rows if r["session_id"] == a["session_id"] and r["role"] == "user"
                   and r["block_type"] == "text" and (r.get("seq") or 0) < (a.get("seq") or 0)
                   and len((r["text"] or "").strip()) >= 20]  # fmt: skip
        if not prompts:
            continue
        text = " ".join((max(prompts, key=lambda r: r.get("seq") or 0)["text"] or "").split())
        text = text[:300]
        if s.q.get("answer_quote") and s.q["answer_quote"] in text:
            continue
        out.append({**s.q, "query": text, "id": s.q["id"] + "~echo", "regime": "echo"})
    got = samples(QuestionSet(qs.name, out, qs.corpus, qs.key), searcher)
    for e in got:
        e.q["regime"] = "echo"
    return got


def lexical_samples(
    qs: QuestionSet, searcher: Any, every: int = LEXICAL_EVERY, echo: Sequence[Sample] = ()
) -> list[Sample]:
    """Every ``every``-th question's pool as recall gathers it from a memory with no vectors
    yet (an unattended first index, ``--no-embed``): training rows for the candidate model, so
    that it ranks lexical-only pools too. Never scored (cv_outcomes skips them)."""
    from funes.retrieval import Searcher

    lex = Searcher(searcher.memory, None, None)
    sub = QuestionSet(qs.name, qs.questions[::every], qs.corpus, qs.key)
    out = samples(sub, lex)
    for s in out:
        s.q = {**s.q, "regime": "lexical"}
    # and every echo question (echo_samples), as lexical-only pools too
    more = samples(QuestionSet(qs.name, [e.q for e in echo], qs.corpus, qs.key), lex)
    for s in more:
        s.q = {**s.q, "regime": "lexical+echo"}
    return out + more


def cv_outcomes(
    ss: Sequence[Sample], k: int, l2: float = L2
) -> list[tuple[Sample, int | None, bool]]:
    """Quick cross-validated outcomes straight from pool logits (no recency, no collapsing of
    duplicates — bench/quality.py measures the real recall path): per question, the rank of
    the first answering candidate (None beyond 10) and whether its fold's verdict is weak.
    Training-only copies (lexical, echo) are not scored."""
    fs = folds([s.q for s in ss], k)
    out: list[tuple[Sample, int | None, bool]] = []
    for f in range(k):
        train = [s for s, g in zip(ss, fs, strict=True) if g != f]
        test = [s for s, g in zip(ss, fs, strict=True) if g == f and not is_extra(s)]
        if test:
            out += outcomes_with(fit(train, l2), test)
    return out


def outcomes_with(
    doc: dict[str, Any], test: Sequence[Sample]
) -> list[tuple[Sample, int | None, bool]]:
    """Each test question's outcome under one weights document, ranked and judged as recall
    ranks and judges it (funes.retrieval: weights_for, rank_pool, verdict; a question with
    no pool is weak)."""
    from funes.ranker import Model
    from funes.retrieval import verdict, weights_for

    if not test:
        return []
    model = Model.from_dict(doc)
    out: list[tuple[Sample, int | None, bool]] = []
    for s in test:
        if s.pool is None:
            out.append((s, None, True))
            continue
        m = weights_for(model, s.pool)
        pair = s.pair
        r = rank_pool_of(s, m, pair)
        _, strong = verdict(m, s.pool, r)
        rank = None
        if s.y.any():
            first = next(k for k, i in enumerate(r.order) if s.y[i] > 0)
            rank = first if first < 10 else None
        out.append((s, rank, not strong))
    return out


def rank_pool_of(s: Sample, model: Any, pair: np.ndarray | None) -> Any:
    """Recall's ranking of a pool under loaded weights (funes.ranker.Model)."""
    from funes.retrieval import rank_pool

    stage = model.pair if pair is not None else None
    return rank_pool(s.pool, model.score(s.x), stage, lambda head: pair[head])


def summary(outcomes: Sequence[tuple[Sample, int | None, bool]]) -> dict[str, float]:
    ranks = [r for s, r, _ in outcomes if s.q["kind"] != "absent"]
    weak_abs = [w for s, _, w in outcomes if s.q["kind"] == "absent"]
    weak_ans = [w for s, _, w in outcomes if s.q["kind"] != "absent"]
    return {
        **summarize(ranks),
        "weak_on_absent": float(np.mean(weak_abs)) if weak_abs else float("nan"),
        "weak_on_answerable": float(np.mean(weak_ans)) if weak_ans else float("nan"),
    }


def open_set(qs: QuestionSet) -> Any:
    from funes.models import load_embedder
    from funes.retrieval import Searcher
    from funes.store import open_memory

    return Searcher(open_memory(memory_for(qs)), load_embedder(), None)


def main(argv: list[str] | None = None) -> int:
    global WORK
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--l2", type=float, default=L2)
    ap.add_argument("--sets", default="eval-dev,labelled", help="question sets to use")
    ap.add_argument("--pairwise", action="store_true", help="pairwise instead of pointwise")
    ap.add_argument("--write", action="store_true", help=f"write {WEIGHTS.relative_to(ROOT)}")
    ap.add_argument(
        "--pair-head", type=int, default=0, metavar="N",
        help="add the pair stage over the first stage's top N (pair logits from models that never "
        "saw the question's repository: bench/pair/features.py; 0: none)",
    )  # fmt: skip
    ap.add_argument(
        "--pair-root", type=Path, default=None, metavar="DIR",
        help="where the pair models fold-0 … fold-4 and full are (default bench/work/pair; "
        "bench/work/pair-zero-shot: the base checkpoint for every question)",
    )  # fmt: skip
    ap.add_argument(
        "--out", type=Path, default=None, metavar="FILE",
        help="write the weights to FILE (what --write does to the shipped file)",
    )  # fmt: skip
    ap.add_argument(
        "--work", type=Path, default=None, metavar="DIR",
        help=f"where the sets' memories are indexed (default {WORK.relative_to(ROOT)})",
    )  # fmt: skip
    a = ap.parse_args(argv)
    global PAIR_HEAD
    PAIR_HEAD = a.pair_head
    global PAIRWISE
    PAIRWISE = a.pairwise
    WORK = a.work or WORK
    makers = {"eval-dev": eval_dev, "labelled": labelled,
              "fixture": lambda: fixture(WORK / "fixture")}  # fmt: skip
    every: list[Sample] = []
    for name in a.sets.split(","):
        if name not in makers:
            print(f"train_ranker: unknown set {name!r} (one of {', '.join(makers)})",
                  file=sys.stderr)  # fmt: skip
            return 2
        qs = makers[name]()
        if not qs.questions:
            print(f"{qs.name}: no questions present")
            continue
        searcher = open_set(qs)
        for f in drop_unindexed(qs, searcher.memory):
            print(f"{qs.name}: not indexed, its questions left out: {f}", flush=True)
        ss, extras = training_set(qs, searcher)
        print(f"{qs.name}: {len(ss)} questions, pool ceiling {pool_ceiling(ss):.3f}", flush=True)
        every += ss + extras
    if PAIR_HEAD:
        attach_pair(every, a.pair_root)
    frozen = [s for s in every if is_frozen(s) and not is_extra(s)]
    every = [s for s in every if not is_frozen(s)]
    outcomes = cv_outcomes(every, a.folds, a.l2)
    for name in dict.fromkeys(s.q["set"] for s in every):
        r = summary([o for o in outcomes if o[0].q["set"] == name])
        print(f"{name}, cross-validated by repository: "
              + "  ".join(f"{k} {v:.3f}" for k, v in r.items()))  # fmt: skip
    doc = fit(every, a.l2)
    if frozen:
        r = summary(outcomes_with(doc, frozen))
        print(f"frozen fold ({len(frozen)} questions, {len({s.q['repo'] for s in frozen})} "
              "repositories), trained on every other question: "
              + "  ".join(f"{k} {v:.3f}" for k, v in r.items()))  # fmt: skip
    out = a.out or (WEIGHTS if a.write else None)
    if out is not None:
        doc["trained_on"]["date"] = dt.date.today().isoformat()
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
