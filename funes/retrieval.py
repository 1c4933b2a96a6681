"""The query pipeline: lexical + vector legs → fusion → second-stage ordering → recency →
top k → neighbours → hits with a verdict.

Both legs are pre-filtered and hand up to :data:`POOL_PER_LEG` candidates each. Their union is
ordered by a learned second stage (:mod:`funes.ranker`: a logistic model over transcript
structure, leg ranks and scores, term coverage and text cues, cross-validated by repository in
bench/); a cross-encoder, when installed, re-scores the head of that order as one more signal.
Passages with the same normalised text collapse into one hit that lists the other places.

Recency is a gentle prior: a relevance is multiplied by
``1 − α·(1 − 0.5^(age/half_life))``, so the oldest evidence loses at most α (10 %) — enough
to put the newer of two equal passages first, never enough to bury an exact old answer under
a loosely related fresh one.

The verdict comes from a second logistic model over query-level signals (the
best score and its margin, the best cosine, question terms the memory never saw, agreement of
the top sessions): its probability that the memory holds the answer is exposed as
``answerable``, and below the cross-validated threshold the evidence is called weak.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from funes.records import CHUNK_FIELDS

# The result types and what they are built from live below render (funes.results); importers
# of funes.retrieval keep finding them here.
from funes.results import DEFAULT_HALF_LIFE as DEFAULT_HALF_LIFE
from funes.results import MAX_QUERY_CHARS as MAX_QUERY_CHARS
from funes.results import POOL_PER_LEG as POOL_PER_LEG
from funes.results import Filters as Filters
from funes.results import Hit, Query, Result
from funes.results import parse_when as parse_when
from funes.store import redaction
from funes.store.tokenize import query_tokens

if TYPE_CHECKING:
    from pathlib import Path

    from funes import ranker as ranker_t
    from funes.store.memory import Memory

SHIPPED: Any = object()  # Searcher's default pair model: the one in the package
RERANK_POOL = 10  # candidates a cross-encoder re-orders (latency: see bench/README.md)
RERANK_TOKENS = 256
EMBED_AT_QUERY = 32  # pool rows still without a vector embedded at query time, best first
RECENCY_ALPHA = 0.1
NEIGHBOR_CHARS = 160  # of the neighbour's text, whitespace runs folded so it stays one line
NEIGHBOR_LINES = 3  # neighbour lines on each side of a hit, per seq of window
# What the second stage reads of every pool row (features, recency, collapsing, a hit's
# duplicates); the other chunk fields are read for the k hits (and the other chunks of their
# turns) only. Each column of a 200-row pool costs a random read per row — and, on a table of
# many small fragments, about 0.1 ms per fragment the pool touches (measured at 1M chunks).
POOL_FIELDS = ("id", "text", "session_id", "turn_uuid", "seq", "ts", "role", "block_type")
HIT_FIELDS = tuple(f for f in CHUNK_FIELDS if f not in POOL_FIELDS)
# From this many rows outside the id index (rows stored since it was built: a backfill rewrites
# every row it gives a vector) a warm searcher finds pool rows by the row addresses it keeps
# (_Addresses) instead of a filter on ids, which scans the id column of all of them: 136 ms of
# CPU a question at 1M chunks, against one scan of it for the searcher's life.
ADDRESS_ROWS = 20_000
# A searcher asked a second question is warm (MCP, `funes-query`, the bench): it reads the
# shape of every session once (one scan of four columns: ≈ 0.4 s of CPU at a million chunks,
# ≈ 8 MB kept) rather than its pool's sessions at every question (60–90 ms at 1M), up to
# this many rows; above, it keeps reading each pool's own.
SHAPES_EVERY_ROWS = 4_000_000
SHAPE_COLUMNS = ("session_id", "seq", "role", "block_type")


def parse_ts(ts: str | None) -> datetime | None:
    if not ts:
        return None
    try:
        t = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def recency_weight(ts: str | None, now: datetime, half_life: float) -> float:
    """Our gentle prior: 1 for now, falling to 1 − α for very old; 1 when unknown or off."""
    t = parse_ts(ts)
    if t is None or half_life <= 0:
        return 1.0
    age = max((now - t).total_seconds(), 0.0) / 86400
    return 1.0 - RECENCY_ALPHA * (1.0 - 0.5 ** (age / half_life))


def rrf(lists: Sequence[Sequence[str]], k: int | None = None) -> list[str]:
    """The fused order of ranked id lists: reciprocal-rank fusion (:func:`funes.ranker.rrf_scores`,
    ranks counted from 0, ``k`` its default); ties by best rank, then id (deterministic)."""
    # lazy: numpy stays off fast commands' start-up
    from funes.ranker import RRF_K, rrf_scores

    pairs = [[(cid, r) for r, cid in enumerate(ranked)] for ranked in lists]
    score = rrf_scores(pairs, RRF_K if k is None else k)
    best: dict[str, int] = {}
    for ranked in pairs:
        for cid, r in ranked:
            best[cid] = min(best.get(cid, r), r)
    return sorted(score, key=lambda c: (-score[c], best[c], c))


def relevance(logit: float) -> float:
    """A logit as a relevance in (0, 1)."""
    return 1.0 / (1.0 + math.exp(-max(min(float(logit), 50.0), -50.0)))


@dataclass
class Pool:
    """A query's candidates with their features (:mod:`funes.ranker`), in fused order."""

    query: Query
    rows: list[dict[str, Any]]
    x: Any  # numpy feature matrix, one row per candidate
    ctx: Any  # ranker.Context
    order: list[str]  # candidate ids by reciprocal-rank fusion
    unseen_share: float
    n_terms: int
    has_words: bool = True  # a term of three letters or more


@dataclass
class Ranking:
    """A pool in recall's order, and what its verdict reads."""

    logits: Any  # each pool row's final logit (numpy)
    order: list[int]  # pool row indexes, best first; ties in fused order
    fused: dict[str, int]  # each candidate's place in the fused order, by id
    signals: Any  # the verdict's query-level signals (ranker.VERDICT_FEATURES) of that order
    pair: dict[str, float] = field(default_factory=dict)  # the pair model's logit, head rows
    pair_best: float = 0.0
    rerank: dict[str, float] = field(default_factory=dict)  # the cross-encoder's score, head


def rank_pool(
    pool: Pool,
    logits: Any,
    pair: ranker_t.PairStage | None = None,
    pair_of: Callable[[list[int]], Any] | None = None,
    rerank_of: Callable[[list[int]], Sequence[float]] | None = None,
    rerank_weight: float = 1.0,
    rerank_head: int = RERANK_POOL,
) -> Ranking:
    """Recall's order of ``pool`` from its first-stage ``logits``: the pair stage over the
    first stage's head when there is one (``pair_of(head)`` gives the pair model's logit of
    each head row, as float32), a cross-encoder's scores of the head of that order added on
    the logit scale (``rerank_of(head)``; they are added to ``logits`` in place), and the
    verdict's signals of the final order.
    Training (bench/train_ranker.py) calls it with pair logits it computed ahead, so the
    verdict it is fit on is the one recall computes."""
    # lazy: numpy stays off fast commands' start-up
    from funes import ranker

    rows = pool.rows
    fused = {cid: i for i, cid in enumerate(pool.order)}
    pair_scores: dict[str, float] = {}
    pair_best = 0.0
    if pair is not None and pair_of is not None:
        # The pair model reads the question and each head passage together; the pair stage
        # re-orders the head from both stages' verdicts.
        first = _by_logit(logits, rows, fused)
        head = first[: pair.head]
        p = pair_of(head)
        pair_scores = {rows[i]["id"]: float(s) for i, s in zip(head, p, strict=True)}
        pair_best = float(p.max()) if len(p) else 0.0
        logits = ranker.with_pair(logits, first, pair, p)
    rerank: dict[str, float] = {}
    if rerank_of is not None:
        # A cross-encoder costs ~25-70 ms a pair here: it re-orders only the head of the
        # learned ranking, as one more signal added on the logit scale.
        head = _by_logit(logits, rows, fused)[:rerank_head]
        for i, s in zip(head, rerank_of(head), strict=True):
            prob = min(max(float(s), 1e-6), 1 - 1e-6)
            rerank[rows[i]["id"]] = float(s)
            logits[i] += rerank_weight * math.log(prob / (1 - prob))
    order = _by_logit(logits, rows, fused)
    signals = ranker.verdict_features(
        logits, rows, order, pool.ctx, pool.unseen_share, pool.n_terms, pair_best
    )
    return Ranking(logits, order, fused, signals, pair_scores, pair_best, rerank)


def verdict(model: ranker_t.Model, pool: Pool, ranking: Ranking) -> tuple[float, bool]:
    """The probability that the memory holds the answer, and whether the evidence is strong."""
    p_answer = model.answerable(ranking.signals)
    # a question with no word of three letters or more ("x", "a b") says too little for any
    # passage to be strong evidence of its answer, whatever the signals say
    return p_answer, p_answer >= model.threshold and pool.has_words


def weights_for(model: ranker_t.Model, pool: Pool) -> ranker_t.Model:
    """The weights that rank ``pool``: those fit on lexical-only pools when it has no
    cosine at all (a memory whose vectors are not filled in yet)."""
    if not pool.ctx.cos and model.lexical is not None:
        return model.lexical
    return model


# What one assistant step writes, record by record, in the order it writes them: thinking, then
# text, then tool calls (one or several). Two adjacent records belong to one step only when the
# second comes later in that order (or both are tool calls): two texts in a row, or a thinking
# after a text or a call, are two steps, each with its own hit.
_STEP = {"thinking": 0, "text": 1, "tool_use": 2}


def _turn_groups(rows: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Each pool row's turn: the chunks of one record (its split chunks, its blocks) and the
    consecutive records of one assistant step (thinking, text and tool calls written as
    separate records at adjacent seqs) share one. Returns the group's first id, by row id."""
    parent = {r["id"]: r["id"] for r in rows}

    def find(a: str) -> str:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    by_turn: dict[tuple[str, str], str] = {}
    steps: dict[tuple[str, int], tuple[str, int]] = {}
    for r in rows:
        key = (r["session_id"], r["turn_uuid"])
        if key in by_turn:
            union(by_turn[key], r["id"])
        else:
            by_turn[key] = r["id"]
        if r.get("role") == "assistant" and r.get("block_type") in _STEP:
            step = (r["id"], _STEP[r["block_type"]])
            steps.setdefault((r["session_id"], r.get("seq") or 0), step)
    for (sid, seq), (cid, order) in steps.items():
        nxt = steps.get((sid, seq + 1))
        if nxt is not None and (order < nxt[1] or order == nxt[1] == _STEP["tool_use"]):
            union(cid, nxt[0])
    return {cid: find(cid) for cid in parent}


def _collapse(
    scored: list[tuple[float, float, float, dict[str, Any]]], k: int
) -> tuple[
    list[tuple[float, float, float, dict[str, Any]]],
    dict[str, list[dict[str, Any]]],
    dict[str, list[dict[str, Any]]],
]:
    """The top ``k`` of ``scored`` (best first), one hit per turn: passages of the same
    normalised text collapse into the best-placed one (returned as duplicates by kept id), and
    so do the other chunks of the best-placed passage's turn (returned as its turn's other
    chunks, by kept id)."""
    # lazy: numpy stays off fast commands' start-up
    from funes.ranker import normalised

    group = _turn_groups([s[3] for s in scored])
    kept: list[tuple[float, float, float, dict[str, Any]]] = []
    first: dict[str, str] = {}
    shown: dict[str, str] = {}  # turn group → the kept id that shows it
    dups: dict[str, list[dict[str, Any]]] = {}
    same_turn: dict[str, list[dict[str, Any]]] = {}
    for s in scored:
        row = s[3]
        key = normalised(row["text"] or "")
        if key in first:
            dups.setdefault(first[key], []).append(row)
            continue
        g = group[row["id"]]
        if g in shown:
            first[key] = shown[g]
            same_turn.setdefault(shown[g], []).append(row)
            continue
        if len(kept) < k:
            first[key] = shown[g] = row["id"]
            kept.append(s)
    return kept, dups, same_turn


@dataclass
class _Shapes:
    """The session shapes a searcher has read (:meth:`Searcher._sessions`), whole sessions
    only, at one table version."""

    version: int
    shapes: ranker_t.Sessions | ranker_t.PackedSessions
    fragments: dict[int, int]  # the table's fragments then, and the rows each held
    every: bool = False  # every session's shape (a warm searcher's), packed

    def follow(self, mem: Memory, cols: tuple[str, ...]) -> _Shapes | None:
        """These shapes at ``mem``'s version, when that version only added fragments: their
        rows are read into the sessions kept (a session not kept may have older rows elsewhere:
        it is read whole when asked for). None when a fragment lost rows or went (a remove, a
        scrub, a compaction): what was kept may hold a deleted record; and, for every
        session's shapes, when the sessions appended to since they were packed hold more
        records than an eighth of the pack (they are packed again)."""
        # lazy: numpy stays off fast commands' start-up
        from funes import ranker

        frags = mem.fragments()
        if any(frags.get(f) != n for f, n in self.fragments.items()):
            return None
        shapes = self.shapes
        if new := [f for f in frags if f not in self.fragments]:
            t = mem.rows(None, cols, fragments=new).to_pydict()
            if self.every:
                shapes = shapes.extend(*(t[c] for c in cols))
            else:
                keep = [i for i, s in enumerate(t["session_id"]) if s in shapes.shape]
                shapes = shapes.extend(*([t[c][i] for i in keep] for c in cols))
        if isinstance(shapes, ranker.PackedSessions) and shapes.crowded():
            return None
        return _Shapes(mem.version, shapes, frags, self.every)


def _pack_every_session(mem: Memory) -> ranker_t.PackedSessions:
    """Every session's shape, from one scan of :data:`SHAPE_COLUMNS` in table order, a batch at
    a time (the scan's memory does not grow with the table's)."""
    return _pack(mem.scan_batches(SHAPE_COLUMNS, 65_536))


def _pack(batches: Iterable[Any]) -> ranker_t.PackedSessions:
    """The shapes of the rows of ``batches`` (Arrow record batches of :data:`SHAPE_COLUMNS`,
    in table order), as :meth:`ranker.Sessions.build` would count them."""
    # lazy: numpy and pyarrow stay off fast commands' start-up
    import numpy as np
    import pyarrow.compute as pc

    from funes import ranker

    at: dict[str | None, int] = {}
    codes, seqs, kinds = [], [], []
    for b in batches:
        sid, seq, role, block = (b.column(c) for c in SHAPE_COLUMNS)
        sid = pc.dictionary_encode(sid)
        names = sid.dictionary.to_pylist()
        remap = [at.setdefault(n, len(at)) for n in names]
        remap.append(at.setdefault(None, len(at)) if sid.null_count else -1)
        codes.append(np.asarray(remap, dtype=np.int64)[_indices(sid, len(names))])
        seqs.append(seq.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64))
        role, block = pc.dictionary_encode(role), pc.dictionary_encode(block)
        r_names = [*role.dictionary.to_pylist(), None]
        b_names = [*block.dictionary.to_pylist(), None]
        table = np.array(
            [[ord(ranker.kind_of(r, k)) for k in b_names] for r in r_names], dtype=np.uint8
        )
        r_ix = _indices(role, len(r_names) - 1)
        kinds.append(table[r_ix, _indices(block, len(b_names) - 1)])
    empty = np.empty(0, dtype=np.int64)
    return ranker.PackedSessions.pack(
        list(at),
        np.concatenate(codes) if codes else empty,
        np.concatenate(seqs) if seqs else empty,
        np.concatenate(kinds) if kinds else np.empty(0, dtype=np.uint8),
    )


def _indices(encoded: Any, null: int) -> Any:
    """A dictionary array's indices as numpy, ``null`` where the value is null."""
    return encoded.indices.fill_null(null).to_numpy(zero_copy_only=False)


class Searcher:
    """One memory plus the models, kept warm across queries (MCP, `funes-query` batches).

    bench/baselines.py ranks the pools it gathers other ways (one leg, fusion alone, other
    recency priors) to measure recall against, from :meth:`gather`, :meth:`rank` and
    :meth:`assemble`; its single-leg pools override :meth:`_lexical_leg` and
    :meth:`_vector_leg`."""

    def __init__(
        self,
        memory: Memory,
        embedder: Any = None,
        reranker: Any = None,
        weights: str | None = None,
        pair: Any = SHIPPED,
    ) -> None:
        self.weights = weights  # a ranker weights file instead of the shipped one
        self._shapes: _Shapes | None = None  # the session shapes read so far: see _sessions
        self._asked = 0  # questions gathered: from the second, every session's shape is kept
        self._caches: tuple[Path, Any] | None = None  # (memory path, Lance caches kept for it)
        self._vectors: tuple[int, bool] | None = None
        self._by_address: tuple[int, bool] | None = None  # (table version, use _addresses)
        self._addresses = _Addresses()
        self._sorted_ids: dict[tuple[Any, ...], Any] = {}  # lexical segments' ids, sorted
        self.memory = memory
        self.embedder = embedder
        self.reranker = reranker
        # funes' pair model (funes.models.pair) for weights with a pair stage: the shipped one,
        # loaded on first use, unless another is given (None: the first stage alone)
        self.pair = pair

    def search(self, q: Query, now: datetime | None = None, pool: Pool | None = None) -> Result:
        """The hits for ``q``. A scrub or optimize that removes files under a warm reader
        makes it reopen the memory and search once more. ``pool`` reuses a pool :meth:`gather`
        built for ``q`` (bench/quality.py ranks one pool every way it compares)."""
        return self.memory.retrying(lambda: self._search(q, now, pool))

    def gather(self, q: Query, now: datetime | None = None) -> Pool | None:
        """The candidate pool of ``q`` with every feature the second stage needs (None when
        neither leg finds anything). Shared by :meth:`search` and the training script, so the
        model is trained on exactly what recall computes."""
        from funes import ranker

        now = now or datetime.now(UTC)
        self._asked += 1
        if self._asked > 1:
            self._keep_caches()
        where = q.filters.where(now)
        pool_n = max(q.candidates, q.k)
        lexical = self._lexical_leg(q, where, pool_n)
        qv, vector = self._vector_leg(q, where, pool_n)
        lex_rank = {cid: r for r, (cid, _) in enumerate(lexical, 1)}
        vec_rank = {cid: r for r, (cid, _) in enumerate(vector, 1)}
        order = rrf([[c for c, _ in lexical], [c for c, _ in vector]])
        if not order:
            return None
        rows = self._fetch(order, [*POOL_FIELDS, "vector"])
        cos, vectors = self._cosines(rows, qv)
        terms, idf, unseen, present = self._terms(q.text, rows)
        coverage, rare = _coverage(terms, idf, rows, present)
        ctx = ranker.Context(
            lex_rank, dict(lexical), vec_rank, cos, coverage, rare, pool_n,
            self._sessions({r["session_id"] for r in rows}), vectors,
        )  # fmt: skip
        x = ranker.candidate_features(rows, ctx)
        has_words = any(len(t) >= 3 for t in terms)
        return Pool(q, rows, x, ctx, order, unseen, len(terms), has_words)

    def _lexical_leg(self, q: Query, where: str | None, pool_n: int) -> list[tuple[str, float]]:
        """The lexical leg's candidates, best first: (id, BM25 score)."""
        return self.memory.lexical_search(q.text, k=pool_n, where=where)

    def _vector_leg(
        self, q: Query, where: str | None, pool_n: int
    ) -> tuple[Any, list[tuple[str, float]]]:
        """The question's vector (None when this searcher reads none) and the vector leg's
        candidates, best first: (id, score)."""
        qv = None
        vector: list[tuple[str, float]] = []
        if self.embedder is not None and self._has_vectors():
            qv = self.embedder.embed([q.text])[0]
            vector = self.memory.vector_search(qv, k=pool_n, where=where)
        return qv, vector

    def _cosines(
        self, rows: list[dict[str, Any]], qv: Any
    ) -> tuple[dict[str, float], dict[str, Any]]:
        """Each pool row's cosine with the question and its vector, by id (none without a
        question vector); the rows' ``vector`` fields are dropped."""
        # lazy: numpy stays off fast commands' start-up
        import numpy as np

        cos: dict[str, float] = {}
        vectors: dict[str, Any] = {}
        if qv is not None:
            missing = [r for r in rows if r.get("vector") is None][:EMBED_AT_QUERY]
            if missing:  # half-embedded memory: embed the best pool rows still waiting
                for r, v in zip(
                    missing, self.embedder.embed([r["text"] for r in missing]), strict=True
                ):
                    r["vector"] = v
            have = [r for r in rows if r.get("vector") is not None]
            mat = np.asarray([r["vector"] for r in have], dtype=np.float32)
            # A non-finite stored vector (written before funes-write refused them) scores no
            # cosine at all, rather than nan for every hit of the query.
            cos = {
                r["id"]: c
                for r, c in zip(have, (mat @ qv).tolist(), strict=True)
                if math.isfinite(c)
            }
            vectors = {r["id"]: mat[i] for i, r in enumerate(have) if r["id"] in cos}
        for r in rows:
            r.pop("vector", None)
        return cos, vectors

    def _search(self, q: Query, now: datetime | None = None, given: Pool | None = None) -> Result:
        now = now or datetime.now(UTC)
        mem = self.memory
        pool = given if given is not None else self.gather(q, now)
        if pool is None:
            return Result(q, [], "weak", mem.label, note=mem.note)
        rows = pool.rows if given is None else [dict(r) for r in pool.rows]
        model = self.model_for(pool)
        ranking = self.rank(q, pool, model)
        p_answer, strong = verdict(model, pool, ranking)
        scored: list[tuple[float, float, float, dict[str, Any]]] = []
        for i in ranking.order:
            r = rows[i]
            rel = relevance(ranking.logits[i])
            w = recency_weight(r.get("ts"), now, q.half_life)
            # × the query's answerable probability (the same for every hit: the order stays):
            # a score says how good the evidence is, so weak evidence never prints score=0.9,
            # and hits of several memories merge by how well each memory answers
            scored.append((rel * w * p_answer, rel, w, r))
        return self.assemble(q, pool, scored, ranking, p_answer, strong)

    def model_for(self, pool: Pool) -> ranker_t.Model:
        """The weights that rank ``pool`` (:func:`weights_for`): the shipped ones, or this
        searcher's file."""
        # lazy: numpy stays off fast commands' start-up
        from funes import ranker

        return weights_for(ranker.load_model(self.weights), pool)

    def rank(self, q: Query, pool: Pool, model: ranker_t.Model) -> Ranking:
        """``pool`` in recall's order under ``model``: the first stage, then the pair stage
        (with this searcher's pair model, when the weights have one) and the cross-encoder
        (when one is installed) over the head."""
        # lazy: numpy stays off fast commands' start-up
        import numpy as np

        rows = pool.rows
        pair_of = None
        if model.pair is not None and self.pair is not None:
            if self.pair is SHIPPED:
                # lazy: onnxruntime and the pair model load on the first question
                from funes.models.pair import load_pair_model

                self.pair = load_pair_model()
            pair_model = self.pair

            def pair_of(head: list[int]) -> Any:
                # A passage's pair logit is a function of the pair alone (funes.models.pair):
                # the head's copies of one text (a quarter of eval-dev's heads at 100k chunks)
                # are read once.
                texts = [rows[i]["text"] or "" for i in head]
                distinct = list(dict.fromkeys(texts))
                scores = pair_model.score(q.text, distinct).tolist()
                once = dict(zip(distinct, scores, strict=True))
                return np.array([once[t] for t in texts], dtype=np.float32)

        rerank_of = None
        if self.reranker is not None:
            reranker = self.reranker

            def rerank_of(head: list[int]) -> Sequence[float]:
                return reranker.score(q.text, [rows[i]["text"] for i in head])

        return rank_pool(
            pool, model.score(pool.x), model.pair, pair_of, rerank_of, model.rerank_weight,
            max(RERANK_POOL, q.k),
        )  # fmt: skip

    def assemble(
        self,
        q: Query,
        pool: Pool,
        scored: list[tuple[float, float, float, dict[str, Any]]],
        ranking: Ranking,
        p_answer: float | None,
        strong: bool,
    ) -> Result:
        """The result of ``q``: the best of ``scored`` — (score, relevance, recency weight,
        row) of each pool row — one hit per turn, completed, masked, with their neighbours."""
        mem = self.memory
        scored.sort(key=lambda s: (-s[0], ranking.fused[s[3]["id"]]))
        kept, dups, same_turn = _collapse(scored, q.k)
        _complete(mem, [s[3] for s in kept] + [r for rs in same_turn.values() for r in rs])
        hits = _hits(mem, kept, dups, same_turn, pool.ctx, ranking.rerank, ranking.pair)
        _mask_hits(mem, [h.row for h in hits])
        if q.neighbors > 0:
            self._attach_neighbors(hits, q.neighbors)
        signals: dict[str, float] = {
            "best_cosine": max(pool.ctx.cos.values(), default=0.0),
            "best_lexical_coverage": max(pool.ctx.coverage.values(), default=0.0),
        }
        if p_answer is not None:
            signals["answerable"] = p_answer
        verdict = "strong" if strong else "weak"
        return Result(q, hits, verdict, mem.label, bool(ranking.rerank), signals, mem.note)

    def _terms(
        self, query: str, rows: list[dict[str, Any]]
    ) -> tuple[list[str], dict[str, float], float, dict[str, set[str]]]:
        """The question's distinct terms, their idf in this memory, the share of the idf mass
        carried by terms the memory never saw (what it cannot answer), and which pool rows hold
        each term — read from the lexical index's postings, so no passage is re-tokenized."""
        # lazy: numpy stays off fast commands' start-up
        import numpy as np

        from funes.store.lexical import term_hash

        terms = query_tokens(query)
        if not terms:
            return [], {}, 0.0, {}
        segs = [s for s in self.memory.lexical.all_segments() if s.n_docs]
        n = sum(s.n_live() for s in segs)
        pool_ids = np.array([r["id"].encode("utf-8") for r in rows])
        idf: dict[str, float] = {}
        present: dict[str, set[str]] = {}
        unseen_mass = 0.0
        # Each pool row's document in each segment, found once: a term's postings are then
        # searched for those few documents (docs are sorted within a term), instead of every
        # posting's id being compared with the pool (which grew with the memory).
        where = []
        sorted_ids: dict[tuple[Any, ...], Any] = {}
        for seg in segs:
            # a segment's ids never change: their sorted copy (an argsort of 870k ids at 1M
            # chunks, 0.22 s; a first lookup passes over them instead, 0.08 s) outlives the
            # Memory, which the MCP server opens anew per question
            key = (seg.name, seg.n_docs, bytes(seg.ids[0]), bytes(seg.ids[-1]))
            if seg.by_id is None and seg.name is not None and key in self._sorted_ids:
                seg.by_id = self._sorted_ids[key]
                seg.located = True  # asked before by this searcher: sorted now, and kept
            loc = seg.locate(pool_ids) if len(pool_ids) else np.empty(0, np.int64)
            if seg.name is not None:
                sorted_ids[key] = seg.by_id
            have = np.flatnonzero(loc >= 0)
            where.append((have, loc[have]))
        self._sorted_ids = sorted_ids
        for t in terms:
            h = np.uint64(term_hash(t))
            df = 0
            held: set[str] = set()
            for seg, (have, local) in zip(segs, where, strict=True):
                a, b = seg.span(h)
                df += seg.df((a, b))
                if b > a and len(local):
                    # searched in the postings' own dtype: a converted copy would read them all
                    docs = seg.docs[a:b]
                    q = local.astype(docs.dtype)
                    pos = np.minimum(np.searchsorted(docs, q), b - a - 1)
                    hit = have[np.asarray(docs[pos]) == q]
                    held.update(x.decode("utf-8") for x in pool_ids[hit])
            # A term the memory never saw weighs most: it is what the memory cannot answer.
            idf[t] = math.log(1 + (n - df + 0.5) / (df + 0.5))
            present[t] = held
            if df == 0:
                unseen_mass += idf[t]
        return terms, idf, unseen_mass / (sum(idf.values()) or 1.0), present

    def _fetch(self, ids: list[str], columns: list[str]) -> list[dict[str, Any]]:
        """The pool rows of ``ids`` in that order (ids not stored left out), vectors as numpy
        rows, each with its ``_rowaddr``: by the row addresses this searcher keeps when the id
        index leaves :data:`ADDRESS_ROWS` rows or more uncovered, else by a filter on ids."""
        mem = self.memory
        version = mem.version
        if self._by_address is None or self._by_address[0] != version:
            self._by_address = (version, mem.unindexed_rows("id") >= ADDRESS_ROWS)
        if not self._by_address[1]:
            return mem.fetch(ids, columns, arrays=True, addresses=True)
        found = self._addresses.find(mem, ids)
        have = [i for i in ids if i in found]
        # the ids and the facts kept are known: not read again
        known = [c for c in columns if c in _Addresses.FACTS]
        cols = [c for c in columns if c != "id" and c not in known]
        addrs = [found[i][0] for i in have]
        rows = mem.take(addrs, cols, arrays=True) if cols else [{} for _ in have]
        for r, cid in zip(rows, have, strict=True):
            addr, facts = found[cid]
            r["id"], r["_rowaddr"] = cid, addr
            r.update((c, facts[c]) for c in known)
        return rows

    def _keep_caches(self) -> None:
        """From its second question a searcher keeps what Lance reads: its memory's lean first
        read ends (Memory.read_lean), and a memory it is handed anew — the MCP server opens
        one per question, so hooks' appends are seen — reads through the caches the one
        before it filled (Memory.share_caches), instead of reading the vector index's
        partitions and the indices' pages again (at 1M chunks 487 ms of CPU a question
        against 178 ms for a searcher that kept its memory)."""
        mem = self.memory
        if mem.origin.remote:  # a cached copy may be replaced whole: nothing carried over
            mem.read_lean(False)
            return
        # lazy: lance stays off fast commands' start-up
        from funes.store.table import reader_session

        if self._caches is None or self._caches[0] != mem.path:
            self._caches = (mem.path, reader_session())
        mem.share_caches(self._caches[1])

    def _has_vectors(self) -> bool:
        """Whether any row has a vector yet, asked once per memory version (a hook's write
        makes a new one every turn: Memory.has_vectors reads no vector when it can help it)."""
        version = self.memory.version
        if self._vectors is None or self._vectors[0] != version:
            self._vectors = (version, self.memory.has_vectors())
        return self._vectors[1]

    def _sessions(self, sids: Iterable[str]) -> ranker_t.Sessions | ranker_t.PackedSessions:
        """The shapes (last seq, what kind of record sits at each seq) of the sessions
        ``sids``: the position and finding features of a pool read its own sessions' shapes
        only. A first question reads just those, in one scan filtered on ``session_id`` (the
        session index answers it): reading four columns of every row made a cold recall's
        CPU grow with the memory (bench/README.md, scale). What was read is kept across questions and table
        versions, brought up to date by reading only the fragments a new version adds (a
        hook's write every turn would otherwise make a warm searcher read its sessions again
        before its next answer); a version that removed rows drops it, so no deleted record
        stays in a shape. From a searcher's second question, it keeps every session's shape
        instead (:data:`SHAPES_EVERY_ROWS`), read once, followed the same way."""
        # lazy: numpy stays off fast commands' start-up
        from funes import ranker
        from funes.store.memory import sql_in

        mem = self.memory
        cols = SHAPE_COLUMNS
        kept = self._shapes
        if kept is not None and kept.version != mem.version:
            kept = kept.follow(mem, cols)
        if (kept is None or not kept.every) and self._asked > 1:
            frags = mem.fragments()
            if sum(frags.values()) <= SHAPES_EVERY_ROWS:
                kept = _Shapes(mem.version, _pack_every_session(mem), frags, every=True)
        if kept is None:
            kept = _Shapes(mem.version, ranker.Sessions({}, {}), mem.fragments())
        if not kept.every and (missing := sorted(set(sids) - kept.shapes.shape.keys())):
            t = mem.rows(sql_in("session_id", missing), cols).to_pydict()
            kept.shapes = kept.shapes.extend(*(t[c] for c in cols))
        self._shapes = kept
        return kept.shapes

    def _attach_neighbors(self, hits: list[Hit], window: int) -> None:
        """Each hit's neighbouring turns (±``window`` seq, its own turn excluded), read for
        all hits at once: the seqs of the hits' sessions (the session index answers), then the
        rows in the windows by row address. One filter on session and seq window together
        was a scan of two columns of every row: 187 ms of CPU at 1M chunks, 26 this way."""
        # lazy: numpy stays off fast commands' start-up
        from funes.store.memory import sql_in  # numpy: kept off this module's import

        spans: dict[str, tuple[int, int]] = {}
        for h in hits:
            sid, seq = h.row["session_id"], h.row["seq"]
            lo, hi = spans.get(sid, (seq, seq))
            spans[sid] = (min(lo, seq), max(hi, seq))
        if not spans:
            return
        mem = self.memory
        t = mem.rows(sql_in("session_id", sorted(spans)), ("session_id", "seq"), addresses=True)
        near_seq = [
            a
            for sid, q, a in zip(
                t.column("session_id").to_pylist(),
                t.column("seq").to_pylist(),
                t.column("_rowaddr").to_pylist(),
                strict=True,
            )
            if q is not None and spans[sid][0] - window <= q <= spans[sid][1] + window
        ]
        cols = ("id", "session_id", "turn_uuid", "seq", "role", "block_type", "block_idx",
                "split_idx", "text")  # fmt: skip
        rows = mem.take(near_seq, cols)
        rows.sort(key=lambda r: (r["seq"] or 0, r["block_idx"] or 0, r["split_idx"] or 0))
        redaction.mask_for_serving(self.memory, rows, whole_blocks=True)
        # one line per neighbouring block (its first split chunk), at most NEIGHBOR_LINES on
        # each side of the hit, nearest first: a turn of many tool calls or long outputs must
        # not bury the hit under its neighbours
        rows = [r for r in rows if not r["split_idx"]]
        for h in hits:
            sid, seq = h.row["session_id"], h.row["seq"]
            near = [
                r
                for r in rows
                if r["session_id"] == sid
                and abs(r["seq"] - seq) <= window
                and r["turn_uuid"] != h.row["turn_uuid"]
            ]
            before = [r for r in near if r["seq"] <= seq][-NEIGHBOR_LINES * window :]
            after = [r for r in near if r["seq"] > seq][: NEIGHBOR_LINES * window]
            h.neighbors = [
                {
                    "seq": r["seq"],
                    "role": r["role"],
                    "block_type": r["block_type"],
                    "text": " ".join(r["text"][: 8 * NEIGHBOR_CHARS].split())[:NEIGHBOR_CHARS],
                }
                for r in before + after
            ]


class _Addresses:
    """Where each stored chunk id sits in the table (its row address), and the row's
    :data:`FACTS`, for a warm searcher: one scan of those columns, then per table version only
    the fragments it adds (appends, rows rewritten by a backfill, a fragment whose rows were
    deleted is read again), and the entries of fragments gone dropped. Kept as a few parts of
    ids sorted with their addresses and facts (a session, role or block type as an index into
    the names seen; 16 bytes a row beside the id); the small ones are merged once there are
    more than :data:`MAX_PARTS`. A pool's rows then take only the other columns from the
    table: each column of a take costs about 0.1 ms per fragment it touches at 1M chunks."""

    MAX_PARTS = 8
    FACTS = ("session_id", "seq", "role", "block_type")
    NO_SEQ = -(2**63)  # a null seq

    def __init__(self) -> None:
        self.version: int | None = None
        self.keys: set[tuple[int, str]] = set()
        # (ids sorted, their addresses, their facts as codes), largest first
        self.parts: list[tuple[Any, Any, dict[str, Any]]] = []
        self.names: dict[str, list[Any]] = {f: [] for f in self.FACTS if f != "seq"}
        self._at: dict[str, dict[Any, int]] = {f: {} for f in self.names}

    def refresh(self, mem: Memory) -> None:
        # lazy: numpy stays off fast commands' start-up
        import numpy as np

        if self.version == mem.version:
            return
        keys = mem.fragment_keys()
        gone = np.array(sorted({f for f, _ in self.keys - keys}), dtype=np.uint64)
        if len(gone):
            self.parts = [
                (ids[keep], addrs[keep], {f: a[keep] for f, a in facts.items()})
                for ids, addrs, facts in self.parts
                for keep in [~np.isin(addrs >> np.uint64(32), gone)]
            ]
        new = keys - self.keys
        read: list[tuple[Any, Any, dict[str, Any]]] = []
        for ids, addrs, b in mem.addresses((f for f, _ in new), self.FACTS):
            seq = b.column("seq").fill_null(self.NO_SEQ).to_numpy(zero_copy_only=False)
            facts = {
                "seq": seq.astype(np.int64),
                **{f: self._codes(f, b.column(f)) for f in self.names},
            }
            read.append((ids, addrs, facts))
        if read:
            width = max(r[0].dtype.itemsize for r in read)
            ids = np.concatenate([r[0].astype(f"S{width}") for r in read])
            order = np.argsort(ids, kind="stable")
            self.parts.append((
                ids[order],
                np.concatenate([r[1] for r in read])[order],
                {f: np.concatenate([r[2][f] for r in read])[order] for f in self.FACTS},
            ))  # fmt: skip
        self.parts = [p for p in self.parts if len(p[0])]
        self.parts.sort(key=lambda p: -len(p[0]))
        if len(self.parts) > self.MAX_PARTS:
            big, small = self.parts[0], self.parts[1:]
            width = max(p[0].dtype.itemsize for p in small)
            ids = np.concatenate([p[0].astype(f"S{width}") for p in small])
            order = np.argsort(ids, kind="stable")
            merged = (
                ids[order],
                np.concatenate([p[1] for p in small])[order],
                {f: np.concatenate([p[2][f] for p in small])[order] for f in self.FACTS},
            )
            self.parts = [big, merged]
        self.keys, self.version = keys, mem.version

    def _codes(self, field: str, column: Any) -> Any:
        """``column``'s values as indices into ``self.names[field]`` (added as first seen)."""
        # lazy: numpy and pyarrow stay off fast commands' start-up
        import numpy as np
        import pyarrow.compute as pc

        names, at = self.names[field], self._at[field]
        enc = pc.dictionary_encode(column)
        remap = [at.setdefault(n, len(at)) for n in enc.dictionary.to_pylist()]
        remap.append(at.setdefault(None, len(at)) if enc.null_count else -1)
        names.extend(list(at)[len(names) :])
        dtype = np.int32 if field == "session_id" else np.int16
        return np.asarray(remap, dtype=dtype)[_indices(enc, len(remap) - 1)]

    def find(self, mem: Memory, ids: Sequence[str]) -> dict[str, tuple[int, dict[str, Any]]]:
        """The row address and :data:`FACTS` of each of ``ids`` stored at the memory's
        version."""
        # lazy: numpy stays off fast commands' start-up
        import numpy as np

        self.refresh(mem)
        want = [i.encode("utf-8") for i in ids]
        out: dict[str, tuple[int, dict[str, Any]]] = {}
        if not want:
            return out
        q = np.array(want)
        sizes = np.array([len(w) for w in want])
        for sorted_ids, addrs, facts in self.parts:
            width = sorted_ids.dtype.itemsize
            # an id longer than this part's ids is not in it (cast, it would be cut short)
            probe = q.astype(f"S{width}")
            pos = np.minimum(np.searchsorted(sorted_ids, probe), len(sorted_ids) - 1)
            hit = np.flatnonzero((sorted_ids[pos] == probe) & (sizes <= width))
            at = pos[hit]
            got = {f: a[at].tolist() for f, a in facts.items()}
            for f, names in self.names.items():
                got[f] = [names[c] for c in got[f]]
            got["seq"] = [None if s == self.NO_SEQ else s for s in got["seq"]]
            for n, (j, a) in enumerate(zip(hit.tolist(), addrs[at].tolist(), strict=True)):
                out[ids[j]] = (a, {f: got[f][n] for f in self.FACTS})
        return out


def _by_logit(logits: Any, rows: Sequence[dict[str, Any]], pos: dict[str, int]) -> list[int]:
    """Row indexes by logit, ties in fused order."""
    return sorted(range(len(rows)), key=lambda i: (-logits[i], pos[rows[i]["id"]]))


def _hits(
    mem: Memory,
    kept: Sequence[tuple[float, float, float, dict[str, Any]]],
    dups: dict[str, list[dict[str, Any]]],
    same_turn: dict[str, list[dict[str, Any]]],
    ctx: Any,
    rerank: dict[str, float],
    pair_scores: dict[str, float],
) -> list[Hit]:
    """The kept rows as hits, ranked from 1, each with its per-stage scores, the other places
    its text was found and the other chunks of its turn."""
    hits = []
    for i, (final, rel, w, r) in enumerate(kept, 1):
        scores_d = {
            "lexical_rank": ctx.lex_rank.get(r["id"]),
            "vector_rank": ctx.vec_rank.get(r["id"]),
            "rerank": rerank.get(r["id"]),
            "pair": None if r["id"] not in pair_scores else round(pair_scores[r["id"]], 6),
            "relevance": round(rel, 6),
            "recency": round(w, 6),
        }
        hit = Hit(i, final, r, scores_d, memory=mem.label, trusted=mem.trusted)
        hit.duplicates = [
            {f: d.get(f) for f in ("session_id", "turn_uuid", "seq", "ts")}
            for d in dups.get(r["id"], [])
        ]
        hit.turn_chunks = [
            {f: d.get(f) for f in ("id", "seq", "block_type", "block_idx", "split_idx")}
            for d in same_turn.get(r["id"], [])
        ]
        hits.append(hit)
    return hits


def _mask_hits(mem: Memory, rows: list[dict[str, Any]]) -> None:
    """:func:`redaction.mask_for_serving` of the hits, the other pieces of their blocks found
    through the session index (their sessions' block keys, then the pieces by row address): its
    one filter on session, turn and block OR'ed over the hits scanned three columns of every
    row, 236 ms of CPU a question at 1M chunks, for a memory this install does not vouch for
    (any memory indexed before its detectors' rules last changed)."""
    if not rows or redaction.vouched(mem.path):
        return
    # lazy: numpy stays off fast commands' start-up
    from funes.store.memory import sql_in

    keys = {
        (r.get("session_id"), r.get("turn_uuid"), r.get("block_idx"))
        for r in rows
        if r.get("session_id") is not None
        and r.get("turn_uuid") is not None
        and r.get("block_idx") is not None
    }
    siblings: list[dict[str, Any]] = []
    if keys:
        cols = ("session_id", "turn_uuid", "block_idx")
        t = mem.rows(sql_in("session_id", sorted({str(k[0]) for k in keys})), cols, addresses=True)
        found = zip(*(t.column(c).to_pylist() for c in (*cols, "_rowaddr")), strict=True)
        addrs = [a for s, tu, b, a in found if (s, tu, b) in keys]
        siblings = mem.take(addrs, (*cols, "split_idx", "text"))
    redaction.mask_rows(rows, siblings)


def _complete(mem: Memory, rows: list[dict[str, Any]]) -> None:
    """The chunk fields the pool was not read with (:data:`HIT_FIELDS`), for the hits only:
    taken by row address (no second lookup of ids), by id where an address is not there or
    no longer holds that row."""
    todo = [r for r in rows if any(f not in r for f in HIT_FIELDS)]
    addrs = [r.pop("_rowaddr", None) for r in rows]
    if not todo:
        return
    by_id: dict[str, dict[str, Any]] = {}
    if all(a is not None for a in addrs):
        by_id = {g["id"]: g for g in mem.take(addrs, ["id", *HIT_FIELDS])}
    lost = [r["id"] for r in todo if r["id"] not in by_id]
    by_id.update((g["id"], g) for g in mem.fetch(lost, HIT_FIELDS))
    for r in todo:
        got = by_id.get(r["id"], {})
        r.update({f: got.get(f) for f in HIT_FIELDS})


def _coverage(
    terms: list[str],
    idf: dict[str, float],
    rows: list[dict[str, Any]],
    present: dict[str, set[str]],
) -> tuple[dict[str, float], dict[str, float]]:
    """Per row: the share of the question's idf mass whose terms it holds, and the share of
    the two rarest question terms it holds."""
    if not terms:
        return {}, {}
    total = sum(idf.values()) or 1.0
    rare = sorted(terms, key=lambda t: (-idf[t], t))[:2]
    cov, rcov = {}, {}
    for r in rows:
        cid = r["id"]
        cov[cid] = sum(v for t, v in idf.items() if cid in present[t]) / total
        rcov[cid] = sum(cid in present[t] for t in rare) / len(rare)
    return cov, rcov


class MultiSearcher:
    """Several memories answering one query (``--memory local,owner/team``): each is searched
    on its own, hits are merged by score, a chunk found in several is kept once (the first
    memory named wins a tie), and every hit names the memory it came from."""

    def __init__(self, searchers: Sequence[Searcher]) -> None:
        self.searchers = list(searchers)

    @property
    def memory(self) -> Memory:
        return self.searchers[0].memory

    def search(self, q: Query, now: datetime | None = None) -> Result:
        now = now or datetime.now(UTC)
        results = [s.search(q, now) for s in self.searchers]
        best: dict[str, tuple[float, int, Hit]] = {}
        for order, res in enumerate(results):
            for h in res.hits:
                cid = h.row["id"]
                if cid not in best or h.score > best[cid][0]:
                    best[cid] = (h.score, order, h)
        merged = sorted(best.values(), key=lambda t: (-t[0], t[1], t[2].rank))[: q.k]
        hits = []
        for i, (_, _, h) in enumerate(merged, 1):
            h.rank = i
            hits.append(h)
        verdict = "strong" if any(r.verdict == "strong" for r in results) else "weak"
        label = ",".join(r.memory for r in results)
        note = "".join(r.note for r in results)
        return Result(q, hits, verdict, label, any(r.reranked for r in results), note=note)
