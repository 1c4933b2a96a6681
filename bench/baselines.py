"""Recall's pools ranked other ways, to measure recall against (bench/quality.py).

A :class:`Baseline` answers like :class:`funes.retrieval.Searcher` — the same pool, the same
collapsing, masking and neighbours — but orders the pool by one of :data:`MODES` and weighs
it by one of :data:`RECENCY`:

- ``funes``: recall's own learned ranking and verdict (the default, what `funes recall` does);
- ``rrf``: the fused order alone; ``lexical`` or ``vector``: one leg's order, its pool gathered
  from that leg alone;
- ``hand-tuned``: the fixed-constant stage the learned one replaced;

and recency ``gentle`` (recall's prior), ``reference`` (the reference implementation's
halving, 0.5^(age/30 d)) or ``off``. The orderings other than ``funes`` call the evidence
strong by the old fixed rule (:data:`STRONG_COSINE`, :data:`STRONG_COVERAGE`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np

from funes.retrieval import (
    SHIPPED,
    Pool,
    Query,
    Result,
    Searcher,
    parse_ts,
    rank_pool,
    recency_weight,
    relevance,
    verdict,
)

MODES = ("funes", "rrf", "lexical", "vector", "hand-tuned")
RECENCY = ("gentle", "reference", "off")
# The baselines' verdict: strong when the best pool cosine or lexical coverage is high.
STRONG_COSINE = 0.43
STRONG_COVERAGE = 0.6


def reference_recency(ts: str | None, now: datetime, half_life: float = 30.0) -> float:
    """The reference's halving, 0.5^(age/30 d)."""
    t = parse_ts(ts)
    if t is None or half_life <= 0:
        return 1.0
    age = max((now - t).total_seconds(), 0.0) / 86400
    return float(0.5 ** (age / half_life))


def hand_tuned(r: dict[str, Any], ctx: Any) -> float:
    """The second stage before the learned one: cosine + 0.2·BM25/max + a block prior (+0.05
    assistant prose, −0.06 tool calls), constants tuned on eval-dev."""
    bmax = max(ctx.lex_score.values(), default=0.0) or 1.0
    prior = {("assistant", "text"): 0.05, ("assistant", "tool_use"): -0.06}
    base = ctx.cos.get(r["id"], 0.0) if ctx.cos else 0.5 * ctx.coverage.get(r["id"], 0.0)
    return (
        base
        + 0.2 * ctx.lex_score.get(r["id"], 0.0) / bmax
        + prior.get((r["role"], r["block_type"]), 0.0)
    )


class _OneLeg(Searcher):
    """A searcher whose pools come from the legs named (``lexical``, ``vector``) only."""

    def __init__(self, *args: Any, legs: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.legs = legs

    def _lexical_leg(self, q: Query, where: str | None, pool_n: int) -> list[tuple[str, float]]:
        if "lexical" not in self.legs:
            return []
        return super()._lexical_leg(q, where, pool_n)

    def _vector_leg(
        self, q: Query, where: str | None, pool_n: int
    ) -> tuple[Any, list[tuple[str, float]]]:
        if "vector" not in self.legs:
            return None, []
        return super()._vector_leg(q, where, pool_n)


class Baseline:
    """A searcher ranking its pools by ``mode`` and weighing them by ``recency``."""

    def __init__(
        self,
        memory: Any,
        embedder: Any = None,
        reranker: Any = None,
        mode: str = "funes",
        recency: str = "gentle",
        weights: str | None = None,
        pair: Any = SHIPPED,
    ) -> None:
        if mode not in MODES or recency not in RECENCY:
            raise ValueError(f"mode {mode!r} or recency {recency!r} unknown")
        legs = {"lexical": ("lexical",), "vector": ("vector",)}.get(mode, ("lexical", "vector"))
        self.searcher = _OneLeg(memory, embedder, reranker, weights, pair, legs=legs)
        self.mode = mode
        self.recency = recency

    @property
    def memory(self) -> Any:
        return self.searcher.memory

    def search(self, q: Query, now: datetime | None = None, pool: Pool | None = None) -> Result:
        """As :meth:`Searcher.search`; ``pool`` reuses a pool gathered for ``q``."""
        return self.memory.retrying(lambda: self._search(q, now, pool))

    def _search(self, q: Query, now: datetime | None, given: Pool | None) -> Result:
        s = self.searcher
        now = now or datetime.now(UTC)
        pool = given if given is not None else s.gather(q, now)
        if pool is None:
            return Result(q, [], "weak", s.memory.label, note=s.memory.note)
        rows = pool.rows if given is None else [dict(r) for r in pool.rows]
        p_answer: float | None = None
        if self.mode == "funes":
            model = s.model_for(pool)
            ranking = s.rank(q, pool, model)
            p_answer, strong = verdict(model, pool, ranking)
        else:
            ranking = rank_pool(pool, self._logits(pool))
            strong = self._strong(pool)
        scored: list[tuple[float, float, float, dict[str, Any]]] = []
        for i in ranking.order:
            r = rows[i]
            if self.mode in ("funes", "hand-tuned"):
                rel = relevance(ranking.logits[i])
            else:
                rel = 1.0 - len(scored) / len(rows)
            if self.recency == "reference":
                w = reference_recency(r.get("ts"), now)
            elif self.recency == "off":
                w = 1.0
            else:
                w = recency_weight(r.get("ts"), now, q.half_life)
            scored.append((rel * w * (p_answer if p_answer is not None else 1.0), rel, w, r))
        return s.assemble(q, pool, scored, ranking, p_answer, strong)

    def _logits(self, pool: Pool) -> np.ndarray:
        ctx = pool.ctx
        if self.mode == "hand-tuned":
            return np.array([hand_tuned(r, ctx) for r in pool.rows])
        # the fused order, or one leg's own order
        pos = {cid: i for i, cid in enumerate(pool.order)}
        leg = {"lexical": ctx.lex_rank, "vector": ctx.vec_rank}.get(self.mode)
        return np.array([
            -float(pos[r["id"]]) if leg is None else -float(leg.get(r["id"], 10**6))
            for r in pool.rows
        ])  # fmt: skip

    def _strong(self, pool: Pool) -> bool:
        """The old fixed rule: the best cosine or the best lexical coverage is high."""
        ctx = pool.ctx
        best_cos = max(ctx.cos.values(), default=0.0)
        best_cov = max(ctx.coverage.values(), default=0.0)
        by_cos = self.mode != "lexical" and bool(ctx.cos) and best_cos >= STRONG_COSINE
        return by_cos or (self.mode != "vector" and best_cov >= STRONG_COVERAGE)
