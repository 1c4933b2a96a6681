"""The query pipeline: lexical + vector legs → fusion → second-stage ordering → recency →
top k → neighbours → hits with a verdict.

Both legs are pre-filtered and limited to the candidate pool. Their union is ordered by
reciprocal-rank fusion (k = 60, ties by id) and then re-scored:

- with a cross-encoder installed, relevance is its sigmoid score (design §3.2);
- without one, relevance = cosine(query, chunk) + 0.2 · BM25/BM25max + a small prior by
  block: +0.05 for assistant prose (where answers to "why/what did we…" questions live),
  −0.06 for tool calls (JSON commands rarely are the evidence). Measured on
  ../shared/eval-dev (bench/quality.py) this beats plain RRF on hit@1 and hit@5. Tried and
  dropped: mixing the preceding user prompt's vector into each chunk's (hit@5 fell).

Recency is a gentle prior (design §3.3): a relevance is multiplied by
``1 − α·(1 − 0.5^(age/half_life))``, so the oldest evidence loses at most α (10 %) — enough
to put the newer of two equal passages first, never enough to bury an exact old answer under
a loosely related fresh one.

The verdict (design §3.4) is `weak` when neither leg found convincing evidence: the best
cosine in the pool is below the embedder's calibrated threshold and the best lexical hit
covers little of the query's (idf-weighted) terms.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from funes.errors import UsageError
from funes.store import redaction

if TYPE_CHECKING:
    from funes.store.memory import Memory

RRF_K = 60
RERANK_POOL = 10  # candidates a cross-encoder re-orders (latency: see bench/README.md)
RERANK_TOKENS = 256
POOL_CAP = 60  # the second stage scores the union of both legs (≤ 2 × candidates)
LEXICAL_WEIGHT = 0.2
PROSE_PRIOR = 0.05
TOOL_CALL_PRIOR = -0.06  # tool calls (JSON commands) are rarely the evidence a question asks for
RECENCY_ALPHA = 0.1
DEFAULT_HALF_LIFE = 90.0  # days
# Calibrated on ../shared/eval-dev with all-MiniLM-L6-v2: the best pool cosine of questions
# whose answer is absent stayed ≤ 0.40, of answerable ones ≥ 0.46.
STRONG_COSINE = 0.43
STRONG_COVERAGE = 0.6
MAX_QUERY_CHARS = 4096  # a question, or an error message pasted whole; not a document
NEIGHBOR_CHARS = 160  # of the neighbour's text, whitespace runs folded so it stays one line

HIT_FIELDS = (
    "id", "text", "session_id", "turn_uuid", "parent_uuid", "seq", "ts", "role", "block_type",
    "block_idx", "split_idx", "tool_name", "harness", "workdir", "repo", "source_path",
)  # fmt: skip


@dataclass
class Filters:
    """Pre-filters of both legs. Every field narrows; None means any."""

    block_type: str | None = None
    harness: str | None = None
    workdir: str | None = None
    repo: str | None = None
    session: str | None = None
    since: str | None = None
    until: str | None = None

    def where(self, now: datetime | None = None) -> str | None:
        from funes import sources
        from funes.store.memory import sql_str

        conds = []
        if self.block_type:
            conds.append(f"block_type = {sql_str(self.block_type)}")
        if self.harness:
            conds.append(f"harness = {sql_str(sources.get_source(self.harness).harness)}")
        if self.workdir:
            munged = sources.munge_workdir(self.workdir) or self.workdir
            conds.append(f"(workdir = {sql_str(munged)} OR workdir = {sql_str(self.workdir)})")
        if self.repo:
            conds.append(f"repo LIKE {sql_str('%' + _like_escape(self.repo) + '%')} ESCAPE '\\'")
        if self.session:
            conds.append(f"session_id = {sql_str(self.session)}")
        if self.since:
            conds.append(f"ts >= {sql_str(parse_when(self.since, now))}")
        if self.until:
            conds.append(f"ts < {sql_str(parse_when(self.until, now, end=True))}")
        return " AND ".join(conds) or None


def _like_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


_RELATIVE = re.compile(r"^(\d+)\s*([hdwmy])$")


def _block_prior() -> dict[tuple[str, str], float]:
    return {("assistant", "text"): PROSE_PRIOR, ("assistant", "tool_use"): TOOL_CALL_PRIOR}


BLOCK_PRIOR = _block_prior()


def parse_when(value: str, now: datetime | None = None, end: bool = False) -> str:
    """An ISO-8601 UTC bound from `2026-03-01`, `2026-03-01T10:00`, or `7d`/`12h`/`2w`/`6m`/`1y` ago.

    A bare date as an upper bound means the end of that day (``--until 2026-03-01`` includes
    the 1st). Stored timestamps are ISO strings, so bounds compare as strings.
    """
    v = value.strip()
    now = now or datetime.now(UTC)
    if m := _RELATIVE.match(v):
        n, unit = int(m[1]), m[2]
        days = {"h": n / 24, "d": n, "w": 7 * n, "m": 30 * n, "y": 365 * n}[unit]
        return _iso(now - timedelta(days=days))
    try:
        t = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"cannot read the time {value!r} — use 2026-03-01, 2026-03-01T10:00 or 7d/12h/2w"
        ) from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    if end and len(v) == 10:
        t += timedelta(days=1)
    return _iso(t)


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


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


def reference_recency(ts: str | None, now: datetime, half_life: float = 30.0) -> float:
    """The reference's halving, 0.5^(age/30 d) — kept to compare against (bench/quality)."""
    t = parse_ts(ts)
    if t is None or half_life <= 0:
        return 1.0
    age = max((now - t).total_seconds(), 0.0) / 86400
    return float(0.5 ** (age / half_life))


def rrf(lists: Sequence[Sequence[str]], k: int = RRF_K) -> list[str]:
    """Reciprocal-rank fusion of ranked id lists; ties by best rank, then id (deterministic)."""
    score: dict[str, float] = {}
    best: dict[str, int] = {}
    for ranked in lists:
        for r, cid in enumerate(ranked):
            score[cid] = score.get(cid, 0.0) + 1.0 / (k + r)
            best[cid] = min(best.get(cid, r), r)
    return sorted(score, key=lambda c: (-score[c], best[c], c))


@dataclass
class Query:
    text: str
    k: int = 8
    candidates: int = 30
    neighbors: int = 1
    half_life: float = DEFAULT_HALF_LIFE
    filters: Filters = field(default_factory=Filters)
    id: Any = None

    def __post_init__(self) -> None:
        if len(self.text) > MAX_QUERY_CHARS:
            raise UsageError(
                f"the query is {len(self.text):,} characters; funes reads at most "
                f"{MAX_QUERY_CHARS:,} — ask with the distinctive words (names, errors, options)"
            )


@dataclass
class Hit:
    rank: int
    score: float
    row: dict[str, Any]
    scores: dict[str, Any]
    neighbors: list[dict[str, Any]] = field(default_factory=list)
    memory: str | None = None  # label of the memory this hit came from
    trusted: bool = True  # False: from a shared memory, someone else's words


@dataclass
class Result:
    query: Query
    hits: list[Hit]
    verdict: str  # "strong" | "weak"
    memory: str  # label of the memory read
    reranked: bool = False
    signals: dict[str, float] = field(default_factory=dict)
    note: str = ""  # one-line notices for the output (a remote read from cache, offline, …)

    def records(self) -> list[dict[str, Any]]:
        """Hit records (design §2), or one miss record when there are no hits."""
        if not self.hits:
            miss: dict[str, Any] = {"kind": "miss", "v": 1, "memory": self.memory}
            miss.update(verdict="weak", query=self.query.text)
            if self.query.id is not None:
                miss["query_id"] = self.query.id
            return [miss]
        out = []
        for h in self.hits:
            rec: dict[str, Any] = {
                "kind": "hit",
                "v": 1,
                "rank": h.rank,
                "score": round(h.score, 6),
                "scores": h.scores,
                "memory": h.memory or self.memory,
            }
            rec.update({f: h.row.get(f) for f in HIT_FIELDS})
            rec["neighbors"] = h.neighbors
            if not h.trusted:
                rec["trusted"] = False
            rec["verdict"] = self.verdict
            rec["query"] = self.query.text
            if self.query.id is not None:
                rec["query_id"] = self.query.id
            out.append(rec)
        return out


class Searcher:
    """One memory plus the models, kept warm across queries (MCP, `funes-query` batches)."""

    # Ways to rank, for measuring each piece against the others (bench/quality.py):
    # "funes" (the default), "rrf" (fusion only), "lexical" or "vector" (one leg).
    MODES = ("funes", "rrf", "lexical", "vector")
    # Recency priors: ours, the reference's halving, or none.
    RECENCY = ("gentle", "reference", "off")

    def __init__(
        self,
        memory: Memory,
        embedder: Any = None,
        reranker: Any = None,
        mode: str = "funes",
        recency: str = "gentle",
    ) -> None:
        self.memory = memory
        self.embedder = embedder
        self.reranker = reranker
        self.mode = mode
        self.recency = recency

    def search(self, q: Query, now: datetime | None = None) -> Result:
        """The hits for ``q``. A scrub or optimize that removes files under a warm reader
        makes it reopen the memory and search once more."""
        return self.memory.retrying(lambda: self._search(q, now))

    def _search(self, q: Query, now: datetime | None = None) -> Result:
        import numpy as np

        now = now or datetime.now(UTC)
        mem = self.memory
        where = q.filters.where(now)
        pool_n = max(q.candidates, q.k)
        lexical = [] if self.mode == "vector" else mem.lexical_search(q.text, k=pool_n, where=where)
        lex_rank = {cid: r for r, (cid, _) in enumerate(lexical, 1)}
        lex_score = dict(lexical)
        qv = None
        vector: list[tuple[str, float]] = []
        use_vectors = self.mode != "lexical" and self.embedder is not None
        if use_vectors and mem.count() > mem.count_without_vectors():
            qv = self.embedder.embed([q.text])[0]
            vector = mem.vector_search(qv, k=pool_n, where=where)
        vec_rank = {cid: r for r, (cid, _) in enumerate(vector, 1)}
        pool = rrf([[c for c, _ in lexical], [c for c, _ in vector]])[:POOL_CAP]
        if not pool:
            return Result(q, [], "weak", mem.label, note=mem.note)
        rows = mem.fetch(pool, columns=[*HIT_FIELDS, "vector"])
        cos: dict[str, float] = {}
        if qv is not None:
            missing = [r for r in rows if r.get("vector") is None]
            if missing:  # half-embedded memory: embed the few pool rows still waiting
                for r, v in zip(
                    missing, self.embedder.embed([r["text"] for r in missing]), strict=True
                ):
                    r["vector"] = v
            mat = np.asarray([r["vector"] for r in rows], dtype=np.float32)
            cos = dict(zip((r["id"] for r in rows), (mat @ qv).tolist(), strict=True))
        bmax = max(lex_score.values(), default=0.0) or 1.0
        coverage = self._coverage(q.text, rows)
        fused = {cid: 1.0 - i / len(pool) for i, cid in enumerate(pool)}

        def features(r: dict[str, Any]) -> float:
            prose = BLOCK_PRIOR.get((r["role"], r["block_type"]), 0.0)
            base = cos.get(r["id"], 0.0) if cos else 0.5 * coverage.get(r["id"], 0.0)
            return base + LEXICAL_WEIGHT * lex_score.get(r["id"], 0.0) / bmax + prose

        rerank: dict[str, float] = {}
        if self.reranker is not None and self.mode == "funes":
            # A cross-encoder costs ~25-70 ms a pair here: it re-orders only the head of the
            # feature ranking, and the rest of the pool drops out.
            rows = sorted(rows, key=lambda r: -features(r))[: max(RERANK_POOL, q.k)]
            scores = self.reranker.score(q.text, [r["text"] for r in rows])
            rerank = dict(zip((r["id"] for r in rows), map(float, scores), strict=True))

        def relevance(r: dict[str, Any]) -> float:
            if self.mode != "funes":
                return fused[r["id"]]
            return rerank[r["id"]] if rerank else features(r)

        scored = []
        for r in rows:
            rel = relevance(r)
            if self.recency == "reference":
                w = reference_recency(r.get("ts"), now)
            elif self.recency == "off":
                w = 1.0
            else:
                w = recency_weight(r.get("ts"), now, q.half_life)
            scored.append((rel * w, rel, w, r))
        order = {cid: i for i, cid in enumerate(pool)}
        scored.sort(key=lambda s: (-s[0], order[s[3]["id"]]))
        top = scored[: q.k]

        best_cos = max(cos.values(), default=0.0)
        best_lex_cov = coverage.get(lexical[0][0], 0.0) if lexical else 0.0
        strong = (bool(cos) and best_cos >= STRONG_COSINE) or best_lex_cov >= STRONG_COVERAGE
        if rerank:
            strong = strong or max(rerank.values()) >= 0.5
        hits = []
        for i, (final, rel, w, r) in enumerate(top, 1):
            r.pop("vector", None)
            scores_d = {
                "lexical_rank": lex_rank.get(r["id"]),
                "vector_rank": vec_rank.get(r["id"]),
                "rerank": rerank.get(r["id"]),
                "relevance": round(rel, 6),
                "recency": round(w, 6),
            }
            hits.append(Hit(i, final, r, scores_d, memory=mem.label, trusted=mem.trusted))
        redaction.mask_for_serving(mem, [h.row for h in hits])
        if q.neighbors > 0:
            self._attach_neighbors(hits, q.neighbors)
        signals = {"best_cosine": best_cos, "best_lexical_coverage": best_lex_cov}
        return Result(
            q, hits, "strong" if strong else "weak", mem.label, bool(rerank), signals, mem.note
        )

    def _coverage(self, query: str, rows: list[dict[str, Any]]) -> dict[str, float]:
        """Share of the query's idf mass whose terms occur in each row's text."""
        from funes.store.lexical import MAX_DOC_CHARS
        from funes.store.tokenize import query_tokens, tokenize

        terms = query_tokens(query)
        if not terms:
            return {}
        idf = _idf(self.memory, terms)
        total = sum(idf.values()) or 1.0
        out = {}
        for r in rows:
            have = set(tokenize(r["text"][:MAX_DOC_CHARS]))
            out[r["id"]] = sum(v for t, v in idf.items() if t in have) / total
        return out

    def _attach_neighbors(self, hits: list[Hit], window: int) -> None:
        by_session: dict[str, list[Hit]] = {}
        for h in hits:
            by_session.setdefault(h.row["session_id"], []).append(h)
        for sid, hs in by_session.items():
            lo = min(h.row["seq"] for h in hs) - window
            hi = max(h.row["seq"] for h in hs) + window
            rows = self.memory.session_rows(
                sid, lo, hi, columns=("turn_uuid", "seq", "role", "block_type", "text")
            )
            redaction.mask_for_serving(self.memory, rows, whole_blocks=True)
            for h in hs:
                h.neighbors = [
                    {
                        "seq": r["seq"],
                        "role": r["role"],
                        "block_type": r["block_type"],
                        "text": " ".join(r["text"][: 8 * NEIGHBOR_CHARS].split())[:NEIGHBOR_CHARS],
                    }
                    for r in rows
                    if abs(r["seq"] - h.row["seq"]) <= window
                    and r["turn_uuid"] != h.row["turn_uuid"]
                ]


def _idf(memory: Memory, terms: Sequence[str]) -> dict[str, float]:
    """BM25 idf of each query term over the memory's lexical segments (absent terms too)."""
    import numpy as np

    from funes.store.lexical import term_hash

    segs = [s for s in memory.lexical.all_segments() if s.n_docs]
    n = sum(s.n_live() for s in segs)
    out = {}
    for t in terms:
        h = np.uint64(term_hash(t))
        df = sum(len(s.postings(h)[0]) for s in segs)
        # A term the memory never saw weighs most: it is what the memory cannot answer.
        out[t] = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return out


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


def open_searcher(memory: str | None = None, rerank: bool = True) -> Searcher | MultiSearcher:
    """A Searcher over a memory (local, remote, or several: ``local,owner/team``) with the
    installed models loaded (once per process)."""
    from funes.models import LazyEmbedder, load_reranker
    from funes.store import open_memory

    specs: list[str | None] = [memory]
    if memory is not None:
        from funes.hub.spec import parse_many

        specs = [str(s.path) if s.path is not None else s.uri for s in parse_many(memory)]
    mems = [open_memory(s) for s in specs]
    embedder = LazyEmbedder()  # onnxruntime loads only when a question must be embedded
    reranker = load_reranker(max_length=RERANK_TOKENS) if rerank else None
    if len(mems) == 1:
        return Searcher(mems[0], embedder, reranker)
    return MultiSearcher([Searcher(m, embedder, reranker) for m in mems])
