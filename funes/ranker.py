"""The learned second stage: features of a candidate pool and the model that orders it.

Recall gathers a pool (the union of the lexical and vector legs' top candidates) and this module
turns each candidate into a feature vector built from what only agent transcripts have — the
role and block type of the passage, how well the user prompt that preceded it matches the
question, how much of the pool comes from the same session and turn, where in its session it
sits, how many identical copies the pool holds — plus the legs' ranks and scores, the coverage of
the question's rarest terms, and cues of the text itself (length, code or prose, explanation
words). A logistic model over those features (weights in ``funes/data/ranker.json``, trained by
``bench/train_ranker.py``, cross-validated by repository) scores every candidate.

A second logistic model over query-level signals (the best score, its margin, the best cosine,
the share of the question's weight carried by terms the memory never saw, …) gives the
probability that the memory holds the answer at all; recall calls the evidence weak below a
threshold chosen on the cross-validated set.

Everything here is numpy over at most a few hundred candidates: deterministic (ties are broken
by the caller by pool order) and a few milliseconds a query.
"""

from __future__ import annotations

import bisect
import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, TypeVar

import numpy as np

from funes.errors import FunesError

WEIGHTS_VERSION = 1
RRF_K = 60  # reciprocal-rank fusion's k (rrf_scores)
_Id = TypeVar("_Id")
VERDICT_CLIP = 3.0

# Candidate features, in the order of the weight vector. Names are part of the weights file:
# a file listing other names is refused rather than misread.
FEATURES = (
    "lex_in",          # the lexical leg found it
    "lex_logrank",     # log(1 + rank) in the lexical leg (pool size + 1 when absent)
    "lex_norm",        # BM25 / best BM25 of the query
    "vec_in",
    "vec_logrank",
    "cos",             # cosine to the question
    "cos_gap",         # best cosine in the pool − this one
    "rrf",             # reciprocal-rank fusion score × 60
    "cov_idf",         # idf-weighted share of the question's terms in the passage
    "cov_rare",        # share of the two rarest question terms present
    "user_text",       # role / block one-hots (assistant tool_result etc. fall in "other")
    "assistant_text",
    "thinking",
    "tool_use",
    "tool_result",
    "other_role",
    "log_len",         # log(1 + characters)
    "code_share",      # share of characters that are code punctuation
    "explain",         # explanation words (because, instead, root cause, …), capped at 3, / 3
    "sess_count",      # log(1 + pool candidates from the same session)
    "sess_rrf",        # the session's summed fusion score / the best session's
    "sess_cos_gap",    # best cosine in the pool − best cosine of the session
    "turn_count",      # log(1 + pool candidates from the same turn)
    "position",        # seq / last seq of the session
    "prompt_cos",      # cosine of the latest user prompt of the pool at or before the passage
    "prompt_dist",     # log(1 + seq distance to that prompt)
    "prev_cos",        # best cosine among pool candidates 1–3 turns before it in its session
    "next_cos",        # … 1–3 turns after it
    "dup_count",       # log(1 + other pool candidates with the same normalised text)
    "no_vector",       # no cosine known (lexical-only memory)
    # Is it a finding, or the agent restating the task and announcing a step?
    "announces",       # opens with "I'll…", "Let me…", "Sure, …" (an announcement, not a result)
    "reports",         # result words: found, shows, turns out, passes, the culprit, …
    "tool_follows",    # tool calls/output follow it before the next assistant text or prompt
    "after_tool",      # the nearest earlier record (thinking aside) is tool output
    "since_prompt",    # log(1 + records since the session's latest user prompt)
    "echo_cos",        # cosine to the latest user prompt of the pool before it (a restatement)
    "tool_cos",        # best cosine to the pool's tool output 1–6 records before it
    # A user prompt close to the question is the question asked before, not its answer
    "user_echo",       # user_text × cos
    "user_cov",        # user_text × cov_idf
)  # fmt: skip

# Query-level signals of the verdict model.
VERDICT_FEATURES = (
    "top_score",       # the ranker's best logit
    "margin",          # best − second logit
    "best_cos",
    "best_cov",        # best idf coverage in the pool
    # share of the question's idf weight on terms the memory never saw, above a quarter: one
    # unseen word of four (a synonym, "dice" for a number picker) is no evidence of absence
    "unseen_excess",
    "n_terms",         # log(1 + distinct question terms)
    "top_session_share",  # share of the top 5 from the top hit's session
    "pair_best",       # the pair model's best logit over the head (0 without a pair stage)
    # (not the number of lexical candidates: it sits at the pool's cap in every trained memory,
    # so in a memory of a few sessions it extrapolated into "strong" for any question)
    "top_cov",         # idf coverage of the top hit
    "top_rare",        # share of the two rarest question terms in the top hit
    "top_cos",         # cosine of the top hit
    "best_rare",       # best share of the two rarest terms in the pool
    "lex_best",        # log(1 + best BM25 score): how strongly the rare terms match at all
)  # fmt: skip

UNSEEN_FREE = 0.25  # unseen_excess: the share of unseen idf weight that is not yet evidence

# Features of the pair stage, for each of the head candidates of the first stage: the question
# and the passage read together by funes' pair model (funes.models.pair), beside where the first
# stage put the passage.
PAIR_FEATURES = (
    "stage1",          # the first stage's logit
    "stage1_gap",      # the head's best first-stage logit − this one
    "stage1_logrank",  # log(1 + rank) in the first stage
    "pair",            # the pair model's logit
    "pair_gap",        # the head's best pair logit − this one
    "pair_logrank",    # log(1 + rank) by the pair model within the head
)  # fmt: skip

# Words that mark an explanation or a conclusion (the kind of passage a "why" question wants).
_EXPLAIN = (
    "because", "reason", "instead", "root cause", "caused", "so that", "decided", "decision",
    "fixed", "the fix", "the issue", "the problem", "turns out", "means", "should", "failed",
    "error",
)  # fmt: skip
# An opening that announces a step or restates the task ("I'll help you fix…", "Let me check…").
_ANNOUNCE = re.compile(
    r"\s*(?:(?:ok(?:ay)?|sure|alright|great|perfect|good|now|first|next|then|so)\b[,!.]?\s*)*"
    r"(?:i'll|i will|i'm going to|i am going to|let me|let's|let us|i need to|i should|"
    r"i want to|we need to|we should|to (?:fix|do|understand|answer|check|implement) this)\b",
    re.IGNORECASE,
)
# Words of a result (what was found, what happened), as opposed to a plan.
_REPORTS = (
    "found", "there's", "there is", "there are", "shows", "showed", "turns out", "turned out",
    "the culprit", "the cause", "is caused", "was caused", "because", "returns", "returned",
    "passes", "passed", "succeeded", "now works", "works now", "confirmed", "the output",
    "fails with", "failed with", "the error", "is set to", "was set to", "resolved", "✅", "✓",
)  # fmt: skip
# Code punctuation, counted one character at a time (str.count, in C): translating every
# passage's head to drop them cost ~5 ms of a 200-row pool
_CODE_CHARS = tuple("{}[]()<>;=_/\\|$#`*&%")


def rrf_scores(rankings: Iterable[Iterable[tuple[_Id, int]]], k: int = RRF_K) -> dict[_Id, float]:
    """Reciprocal-rank fusion, the one definition: each id's sum, over the rankings that hold
    it, of 1 / (k + its rank there). ``rankings`` give (id, rank) pairs."""
    score: dict[_Id, float] = {}
    for ranking in rankings:
        for cid, r in ranking:
            score[cid] = score.get(cid, 0.0) + 1.0 / (k + r)
    return score


def linear(x: np.ndarray, mean: np.ndarray, scale: np.ndarray, w: np.ndarray, b: float) -> Any:
    """A logistic model's logits: standardised features (rows of ``x``) times weights, plus
    the intercept. Recall and the training script (bench/train_ranker.py) both score by it."""
    return ((x - mean) / scale) @ w + b


def normalised(text: str) -> str:
    """The text two passages must share to count as duplicates: whitespace folded, trimmed
    (an oversized passage by its first 64 KiB and its length)."""
    if len(text) > 65536:
        return " ".join(text[:65536].split()) + f"\0{len(text)}"
    return " ".join(text.split())


@dataclass(frozen=True)
class Model:
    """Trained weights: standardisation, candidate weights, verdict weights and threshold."""

    mean: np.ndarray
    scale: np.ndarray
    w: np.ndarray
    b: float
    v_mean: np.ndarray
    v_scale: np.ndarray
    v_w: np.ndarray
    v_b: float
    threshold: float
    rerank_weight: float
    pair: PairStage | None = None
    # weights fit on pools with no cosine at all (a memory whose vectors are not filled in yet):
    # recall uses them for such a pool, since one linear model cannot serve both
    lexical: Model | None = None

    def score(self, x: np.ndarray) -> np.ndarray:
        """Candidate logits for a feature matrix (rows = candidates)."""
        return linear(x, self.mean, self.scale, self.w, self.b)

    def answerable(self, v: np.ndarray) -> float:
        """Probability that the memory holds the answer, from the verdict signals."""
        # Signals are clipped to ±VERDICT_CLIP standard deviations of the training questions: a
        # memory unlike any trained on (a handful of sessions, say) must not extrapolate one
        # signal into certainty.
        zv = np.clip((v - self.v_mean) / self.v_scale, -VERDICT_CLIP, VERDICT_CLIP)
        z = float(zv @ self.v_w + self.v_b)
        return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Model:
        if d.get("version") != WEIGHTS_VERSION:
            raise ValueError(f"version {d.get('version')!r}, this funes reads {WEIGHTS_VERSION}")
        if tuple(d["features"]) != FEATURES or tuple(d["verdict"]["features"]) != VERDICT_FEATURES:
            raise ValueError("its feature list does not match this funes")
        n, m = len(FEATURES), len(VERDICT_FEATURES)

        def vec(x: Any, k: int) -> np.ndarray:
            a = np.asarray(x, dtype=np.float64)
            if a.shape != (k,) or not np.isfinite(a).all():
                raise ValueError("a weight vector has the wrong shape or a non-finite value")
            return a

        v = d["verdict"]
        scale, v_scale = vec(d["scale"], n), vec(v["scale"], m)
        if (scale <= 0).any() or (v_scale <= 0).any():
            raise ValueError("a feature scale is not positive")
        pair = None
        if d.get("pair") is not None:
            p, k = d["pair"], len(PAIR_FEATURES)
            if tuple(p["features"]) != PAIR_FEATURES:
                raise ValueError("its pair-stage feature list does not match this funes")
            p_scale = vec(p["scale"], k)
            if (p_scale <= 0).any() or int(p["head"]) < 1:
                raise ValueError("its pair stage has a non-positive scale or head")
            pair = PairStage(int(p["head"]), vec(p["mean"], k), p_scale, vec(p["w"], k),
                             float(p["b"]))  # fmt: skip
        lexical = None
        if d.get("lexical") is not None:
            lexical = cls.from_dict({**d, **d["lexical"], "pair": None, "lexical": None})
        return cls(
            vec(d["mean"], n), scale, vec(d["w"], n), float(d["b"]),
            vec(v["mean"], m), v_scale, vec(v["w"], m), float(v["b"]),
            float(v["threshold"]), float(d.get("rerank_weight", 1.0)), pair, lexical,
        )  # fmt: skip


@dataclass(frozen=True)
class PairStage:
    """The second look: the first stage's ``head`` best candidates re-ordered by a logistic
    model over the first stage's verdict and the pair model's (:data:`PAIR_FEATURES`)."""

    head: int
    mean: np.ndarray
    scale: np.ndarray
    w: np.ndarray
    b: float

    def score(self, x: np.ndarray) -> np.ndarray:
        return linear(x, self.mean, self.scale, self.w, self.b)


def pair_features(stage1: np.ndarray, pair: np.ndarray) -> np.ndarray:
    """:data:`PAIR_FEATURES` of head candidates given in first-stage order (best first)."""
    n = len(stage1)
    x = np.zeros((n, len(PAIR_FEATURES)), dtype=np.float64)
    if not n:
        return x
    x[:, 0] = stage1
    x[:, 1] = stage1.max() - stage1
    x[:, 2] = np.log1p(np.arange(n))
    x[:, 3] = pair
    x[:, 4] = pair.max() - pair
    ranks = np.empty(n)
    ranks[np.argsort(-pair, kind="stable")] = np.arange(n)
    x[:, 5] = np.log1p(ranks)
    return x


def with_pair(
    stage1: np.ndarray, order: Sequence[int], stage: PairStage, pair: np.ndarray
) -> np.ndarray:
    """Final logits: the head (``order[:stage.head]``, whose pair logits are ``pair``) scored by
    the pair stage, every other candidate kept in first-stage order below the head."""
    head = np.asarray(order[: stage.head], dtype=np.int64)
    out = stage1.astype(np.float64, copy=True)
    if not len(head):
        return out
    s2 = stage.score(pair_features(stage1[head], pair.astype(np.float64)))
    tail = np.ones(len(out), dtype=bool)
    tail[head] = False
    if tail.any():
        # the tail keeps its order, just below the head
        out[tail] += min(s2.min() - out[tail].max() - 1e-3, 0.0)
    out[head] = s2
    return out


WEIGHTS_FILE = "ranker.json"


def load_model(path: str | None = None) -> Model:
    """The shipped weights, or ``path``, or ``$FUNES_RANKER_WEIGHTS``. A missing or corrupt
    file is a FunesError: recall never silently falls back to another ordering."""
    return _load(path or os.environ.get("FUNES_RANKER_WEIGHTS") or None)


@lru_cache(maxsize=8)
def _load(path: str | None) -> Model:
    try:
        if path is None:
            raw = resources.files("funes").joinpath("data", WEIGHTS_FILE).read_bytes()
            where = f"funes/data/{WEIGHTS_FILE}"
        else:
            where = path
            with open(path, "rb") as f:
                raw = f.read()
    except OSError as e:
        raise FunesError(
            f"the ranking weights {where} cannot be read ({e.strerror or e}); reinstall funes"
        ) from None
    try:
        return Model.from_dict(json.loads(raw))
    except (ValueError, KeyError, TypeError) as e:
        raise FunesError(
            f"the ranking weights {where} are damaged ({e}); reinstall funes"
        ) from None


# ---------------------------------------------------------------- features


@dataclass
class Context:
    """What the features need beyond the candidate rows."""

    lex_rank: dict[str, int]
    lex_score: dict[str, float]
    vec_rank: dict[str, int]
    cos: dict[str, float]
    coverage: dict[str, float]
    rare_coverage: dict[str, float]
    pool_size: int
    sessions: Sessions | PackedSessions
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # pool rows' embeddings


# Record kinds in a session's shape: user prompt, assistant text, thinking, tool call, tool
# output, anything else.
_KIND: dict[tuple[str | None, str | None], str] = {
    ("user", "text"): "u",
    ("assistant", "text"): "a",
}
_BLOCK_KIND = {"thinking": "t", "tool_use": "c", "tool_result": "r"}


def kind_of(role: str | None, block: str | None) -> str:
    """The kind letter of a record with this role and block type (:data:`_KIND`)."""
    return _KIND.get((role, block)) or _BLOCK_KIND.get(block or "", "o")


@dataclass
class Sessions:
    """Each session's shape: its last seq, and one kind letter per record seq (sorted)."""

    last_seq: dict[str, int]
    shape: dict[str, tuple[list[int], str]]

    @classmethod
    def build(
        cls,
        session_ids: Sequence[str],
        seqs: Sequence[int | None],
        roles: Sequence[str | None],
        blocks: Sequence[str | None],
    ) -> Sessions:
        return cls({}, {}).extend(session_ids, seqs, roles, blocks)

    def extend(
        self,
        session_ids: Sequence[str],
        seqs: Sequence[int | None],
        roles: Sequence[str | None],
        blocks: Sequence[str | None],
    ) -> Sessions:
        """These shapes with more records added (rows appended since they were read; a row
        read twice changes nothing). Returns a new object; this one is left as it was."""
        at: dict[str, dict[int, str]] = {}
        for sid in dict.fromkeys(session_ids):
            if sid in self.shape:
                keys, kinds = self.shape[sid]
                at[sid] = dict(zip(keys, kinds, strict=True))
        for sid, seq, role, block in zip(session_ids, seqs, roles, blocks, strict=True):
            k = kind_of(role, block)
            d = at.setdefault(sid, {})
            q = seq or 0
            # a record holding text and tool calls counts as its text: the text is what is read
            if d.get(q) not in ("a", "u"):
                d[q] = k
        shape = dict(self.shape)
        last = dict(self.last_seq)
        for sid, d in at.items():
            keys = sorted(d)
            shape[sid] = (keys, "".join(d[k] for k in keys))
            last[sid] = keys[-1]
        return Sessions(last, shape)

    def around(self, sid: str, seq: int) -> tuple[bool, bool, int]:
        """(tool activity follows before the next text or prompt, the nearest earlier record
        other than thinking is tool output, records since the latest user prompt)."""
        keys, kinds = self.shape.get(sid, ((), ""))
        return _around(keys, kinds, seq)


def _around(keys: Sequence[int], kinds: str, seq: int) -> tuple[bool, bool, int]:
    i = bisect.bisect_left(keys, seq)
    follows = False
    for k in kinds[i + 1 : i + 12]:
        if k in "au":
            break
        if k in "cr":
            follows = True
            break
    after = False
    for k in reversed(kinds[max(0, i - 12) : i]):
        if k == "t":
            continue
        after = k == "r"
        break
    j = kinds.rfind("u", 0, i)
    since = i - j if j >= 0 else i + 1
    return follows, after, since


class PackedSessions:
    """Every session's shape (as :class:`Sessions` holds them) packed into a few arrays, for a
    warm searcher that keeps the shape of every session of a memory: per record an int64 seq
    and one kind letter, sessions one after the other (≈ 9 bytes a record, ≈ 8 MB at a
    million chunks, against ≈ 40 bytes a record in :class:`Sessions`' lists). Sessions whose
    rows were appended since the pack are held apart, in :class:`Sessions`' form."""

    def __init__(
        self,
        names: list[str | None],
        starts: np.ndarray,
        seqs: np.ndarray,
        kinds: str,
        appended: Sessions | None = None,
    ) -> None:
        self._names = names
        self._at = {n: i for i, n in enumerate(names)}
        self._starts = starts  # len(names) + 1 offsets into seqs and kinds
        self._seqs = seqs
        self._kinds = kinds
        self.appended = appended or Sessions({}, {})
        self.last_seq: Mapping[Any, int] = _LastSeq(self)
        self.shape: Mapping[Any, tuple[list[int], str]] = _Shape(self)

    @classmethod
    def pack(
        cls, names: list[str | None], codes: np.ndarray, seqs: np.ndarray, kinds: np.ndarray
    ) -> PackedSessions:
        """The shapes of rows given in table order: each row's session as an index into
        ``names``, its seq (0 for none) and kind letter (uint8). Several rows at one seq count
        as :meth:`Sessions.extend` counts them: the first text or prompt among them, else the
        last row."""
        n = len(codes)
        order = np.lexsort((seqs, codes))  # stable: rows of one seq stay in table order
        c, q, k = codes[order], seqs[order], kinds[order]
        new = np.ones(n, dtype=bool)
        if n:
            new[1:] = (c[1:] != c[:-1]) | (q[1:] != q[:-1])
        first = np.flatnonzero(new)
        last = np.append(first[1:], n) - 1
        told = (k == ord("a")) | (k == ord("u"))
        text_at = np.minimum.reduceat(np.where(told, np.arange(n), n), first) if n else first
        pick = np.where(text_at < n, text_at, last)
        c, q = c[pick], q[pick].astype(np.int64)
        starts = np.searchsorted(c, np.arange(len(names) + 1))
        return cls(names, starts, q, k[pick].tobytes().decode("ascii"))

    def _packed(self, sid: Any) -> tuple[list[int], str] | None:
        i = self._at.get(sid)
        if i is None:
            return None
        a, b = int(self._starts[i]), int(self._starts[i + 1])
        if a == b:
            return None
        return self._seqs[a:b].tolist(), self._kinds[a:b]

    def get(self, sid: Any) -> tuple[list[int], str] | None:
        """One session's shape: (its record seqs, sorted; their kind letters)."""
        return self.appended.shape.get(sid) or self._packed(sid)

    def last(self, sid: Any) -> int:
        """One session's last seq (KeyError when it holds none)."""
        if sid in self.appended.last_seq:
            return self.appended.last_seq[sid]
        i = self._at[sid]
        a, b = int(self._starts[i]), int(self._starts[i + 1])
        if a == b:
            raise KeyError(sid)
        return int(self._seqs[b - 1])

    def names(self) -> Iterator[Any]:
        yield from self.appended.shape
        for i, n in enumerate(self._names):
            if n not in self.appended.shape and self._starts[i] < self._starts[i + 1]:
                yield n

    def around(self, sid: str, seq: int) -> tuple[bool, bool, int]:
        """As :meth:`Sessions.around`."""
        keys, kinds = self.get(sid) or ((), "")
        return _around(keys, kinds, seq)

    def extend(
        self,
        session_ids: Sequence[str],
        seqs: Sequence[int | None],
        roles: Sequence[str | None],
        blocks: Sequence[str | None],
    ) -> PackedSessions:
        """As :meth:`Sessions.extend`: the sessions the rows touch are held apart."""
        touched = {s: shape for s in dict.fromkeys(session_ids) if (shape := self.get(s))}
        last = {s: shape[0][-1] for s, shape in touched.items()}
        more = Sessions(last, touched).extend(session_ids, seqs, roles, blocks)
        appended = Sessions(
            {**self.appended.last_seq, **more.last_seq}, {**self.appended.shape, **more.shape}
        )
        return PackedSessions(self._names, self._starts, self._seqs, self._kinds, appended)

    def crowded(self) -> bool:
        """Whether the sessions held apart hold more records than an eighth of the pack (and
        more than 65,536): time to pack them all again."""
        apart = sum(len(k) for k, _ in self.appended.shape.values())
        return apart > max(65_536, len(self._seqs) // 8)


class _Shape(Mapping[Any, tuple[list[int], str]]):
    def __init__(self, packed: PackedSessions) -> None:
        self._p = packed

    def __getitem__(self, sid: Any) -> tuple[list[int], str]:
        got = self._p.get(sid)
        if got is None:
            raise KeyError(sid)
        return got

    def __iter__(self) -> Iterator[Any]:
        return self._p.names()

    def __len__(self) -> int:
        return sum(1 for _ in self._p.names())


class _LastSeq(Mapping[Any, int]):
    def __init__(self, packed: PackedSessions) -> None:
        self._p = packed

    def __getitem__(self, sid: Any) -> int:
        return self._p.last(sid)

    def __iter__(self) -> Iterator[Any]:
        return self._p.names()

    def __len__(self) -> int:
        return sum(1 for _ in self._p.names())


_COL = {name: i for i, name in enumerate(FEATURES)}


def candidate_features(rows: Sequence[dict[str, Any]], ctx: Context) -> np.ndarray:
    """One feature row per candidate, columns in :data:`FEATURES` order."""
    n = len(rows)
    x = np.zeros((n, len(FEATURES)), dtype=np.float64)
    if not n:
        return x
    pool = _pool_facts(rows, ctx)
    for i, r in enumerate(rows):
        row = x[i]
        _leg_features(row, r["id"], ctx, pool)
        _kind_features(row, r.get("role"), r.get("block_type"))
        _text_features(row, r["text"] or "")
        _session_features(row, i, r, ctx, pool)
        _nearby_features(row, r, ctx, pool)
    return x


@dataclass
class _PoolFacts:
    """What the features of one candidate read of the whole pool."""

    absent: float  # the log rank of a candidate a leg did not find
    bmax: float  # the best BM25 score (1.0 when none)
    best_cos: float
    rrf: dict[str, float]  # fusion score × 60, by id
    by_session: dict[str, list[int]]  # row indexes of each session
    by_turn: Counter[str]  # rows of each turn
    norm: list[str]  # each row's normalised text
    dups: Counter[str]  # rows of each normalised text
    sess_rrf: dict[str, float]
    best_sess_rrf: float
    sess_cos: dict[str, float]  # best cosine of each session
    # per session: the user prompts among the candidates, by seq, and their best cosine
    prompts: dict[str, tuple[list[int], list[float]]]
    # per session: the distinct seqs of its candidates and the best cosine at each
    near: dict[str, tuple[list[int], list[float]]]
    prompt_vec: dict[tuple[str, int], np.ndarray]  # a prompt's vector by (session, seq)
    tool_vecs: dict[str, list[tuple[int, np.ndarray]]]  # tool outputs' (seq, vector)


def _pool_facts(rows: Sequence[dict[str, Any]], ctx: Context) -> _PoolFacts:
    # the legs' ranks count from 1 here (the fused order counts them from 0): the weights
    # were fit on this feature as it is
    fused = rrf_scores([ctx.lex_rank.items(), ctx.vec_rank.items()])
    rrf = {r["id"]: fused.get(r["id"], 0.0) * RRF_K for r in rows}
    by_session: dict[str, list[int]] = {}
    by_turn: Counter[str] = Counter()
    dups: Counter[str] = Counter()
    norm = [normalised(r["text"] or "") for r in rows]
    for i, r in enumerate(rows):
        by_session.setdefault(r["session_id"], []).append(i)
        by_turn[r["turn_uuid"]] += 1
        dups[norm[i]] += 1
    sess_rrf = {s: sum(rrf[rows[i]["id"]] for i in ix) for s, ix in by_session.items()}
    sess_cos = {
        s: max((ctx.cos.get(rows[i]["id"], 0.0) for i in ix), default=0.0)
        for s, ix in by_session.items()
    }
    prompt_vec, tool_vecs = _pool_vectors(rows, ctx)
    return _PoolFacts(
        absent=math.log1p(ctx.pool_size + 1),
        bmax=max(ctx.lex_score.values(), default=0.0) or 1.0,
        best_cos=max(ctx.cos.values(), default=0.0),
        rrf=rrf,
        by_session=by_session,
        by_turn=by_turn,
        norm=norm,
        dups=dups,
        sess_rrf=sess_rrf,
        best_sess_rrf=max(sess_rrf.values(), default=0.0) or 1.0,
        sess_cos=sess_cos,
        prompts=_session_prompts(rows, by_session, ctx),
        near=_session_cosines(rows, by_session, ctx),
        prompt_vec=prompt_vec,
        tool_vecs=tool_vecs,
    )


def _session_prompts(
    rows: Sequence[dict[str, Any]], by_session: dict[str, list[int]], ctx: Context
) -> dict[str, tuple[list[int], list[float]]]:
    """Per session: the user prompts among the candidates (a prompt that matches the question
    well is in the pool; one that does not would add nothing), by seq, with their cosine."""
    prompts: dict[str, tuple[list[int], list[float]]] = {}
    for sid, ix in by_session.items():
        at: dict[int, float] = {}
        for i in ix:
            if rows[i].get("role") == "user" and rows[i].get("block_type") == "text":
                q = rows[i].get("seq") or 0
                at[q] = max(at.get(q, 0.0), ctx.cos.get(rows[i]["id"], 0.0))
        if at:
            keys = sorted(at)
            prompts[sid] = (keys, [at[k] for k in keys])
    return prompts


def _session_cosines(
    rows: Sequence[dict[str, Any]], by_session: dict[str, list[int]], ctx: Context
) -> dict[str, tuple[list[int], list[float]]]:
    """Per session: the distinct seqs of its pool candidates and the best cosine at each."""
    near: dict[str, tuple[list[int], list[float]]] = {}
    for sid, ix in by_session.items():
        best_at: dict[int, float] = {}
        for i in ix:
            q = rows[i].get("seq") or 0
            best_at[q] = max(best_at.get(q, 0.0), ctx.cos.get(rows[i]["id"], 0.0))
        keys = sorted(best_at)
        near[sid] = (keys, [best_at[k] for k in keys])
    return near


def _pool_vectors(
    rows: Sequence[dict[str, Any]], ctx: Context
) -> tuple[dict[tuple[str, int], np.ndarray], dict[str, list[tuple[int, np.ndarray]]]]:
    """The vectors of the pool's user prompts, by (session, seq), and of its tool outputs,
    (seq, vector) by session."""
    prompt_vec: dict[tuple[str, int], np.ndarray] = {}
    tool_vecs: dict[str, list[tuple[int, np.ndarray]]] = {}
    for r in rows:
        v = ctx.vectors.get(r["id"])
        if v is None:
            continue
        if r.get("role") == "user" and r.get("block_type") == "text":
            prompt_vec.setdefault((r["session_id"], r.get("seq") or 0), v)
        elif r.get("block_type") == "tool_result":
            tool_vecs.setdefault(r["session_id"], []).append((r.get("seq") or 0, v))
    return prompt_vec, tool_vecs


def _leg_features(row: np.ndarray, cid: str, ctx: Context, pool: _PoolFacts) -> None:
    """Where the legs put the candidate: ranks, scores, cosine, fusion and term coverage."""
    col = _COL
    lr = ctx.lex_rank.get(cid)
    vr = ctx.vec_rank.get(cid)
    row[col["lex_in"]] = lr is not None
    row[col["lex_logrank"]] = math.log1p(lr) if lr is not None else pool.absent
    row[col["lex_norm"]] = ctx.lex_score.get(cid, 0.0) / pool.bmax
    row[col["vec_in"]] = vr is not None
    row[col["vec_logrank"]] = math.log1p(vr) if vr is not None else pool.absent
    c = ctx.cos.get(cid)
    row[col["cos"]] = c if c is not None else 0.0
    row[col["cos_gap"]] = pool.best_cos - c if c is not None else 1.0
    row[col["no_vector"]] = c is None
    row[col["rrf"]] = pool.rrf[cid]
    row[col["cov_idf"]] = ctx.coverage.get(cid, 0.0)
    row[col["cov_rare"]] = ctx.rare_coverage.get(cid, 0.0)


def _kind_features(row: np.ndarray, role: str | None, block: str | None) -> None:
    """The record's role and block type; a user prompt's cosine and coverage apart (read after
    :func:`_leg_features`)."""
    col = _COL
    if role == "user" and block == "text":
        row[col["user_text"]] = 1
        row[col["user_echo"]] = row[col["cos"]]
        row[col["user_cov"]] = row[col["cov_idf"]]
    elif role == "assistant" and block == "text":
        row[col["assistant_text"]] = 1
    elif block == "thinking":
        row[col["thinking"]] = 1
    elif block == "tool_use":
        row[col["tool_use"]] = 1
    elif block == "tool_result":
        row[col["tool_result"]] = 1
    else:
        row[col["other_role"]] = 1


def _text_features(row: np.ndarray, text: str) -> None:
    """Cues of the text itself: length, code, explanation, announcement and result words."""
    col = _COL
    row[col["log_len"]] = math.log1p(len(text))
    if text:
        head = text[:4000]
        code = sum(map(head.count, _CODE_CHARS))
        row[col["code_share"]] = 1.0 - (len(head) - code) / len(head)
    low = text[:4000].lower()
    row[col["explain"]] = min(sum(map(low.__contains__, _EXPLAIN)), 3) / 3
    row[col["announces"]] = _ANNOUNCE.match(text[:200]) is not None
    row[col["reports"]] = min(sum(map(low.__contains__, _REPORTS)), 3) / 3


def _session_features(
    row: np.ndarray, i: int, r: dict[str, Any], ctx: Context, pool: _PoolFacts
) -> None:
    """Where the candidate sits in its session and turn, and how much of the pool they hold."""
    col = _COL
    sid = r["session_id"]
    row[col["sess_count"]] = math.log1p(len(pool.by_session[sid]) - 1)
    row[col["sess_rrf"]] = pool.sess_rrf[sid] / pool.best_sess_rrf
    row[col["sess_cos_gap"]] = pool.best_cos - pool.sess_cos[sid]
    row[col["turn_count"]] = math.log1p(pool.by_turn[r["turn_uuid"]] - 1)
    seq = r.get("seq") or 0
    last = ctx.sessions.last_seq.get(sid) or 0
    row[col["position"]] = seq / last if last > 0 else 0.0
    row[col["dup_count"]] = math.log1p(pool.dups[pool.norm[i]] - 1)
    follows, after, since = ctx.sessions.around(sid, seq)
    row[col["tool_follows"]] = follows
    row[col["after_tool"]] = after
    row[col["since_prompt"]] = math.log1p(since)


def _nearby_features(row: np.ndarray, r: dict[str, Any], ctx: Context, pool: _PoolFacts) -> None:
    """How the pool's records around the candidate in its session match the question: the
    preceding user prompt, the turns just before and after, the tool output it follows."""
    col = _COL
    cid, sid = r["id"], r["session_id"]
    seq = r.get("seq") or 0
    pseqs, pcos = pool.prompts.get(sid, ((), ()))
    k = bisect.bisect_right(pseqs, seq) - 1
    if k >= 0:
        row[col["prompt_cos"]] = pcos[k]
        row[col["prompt_dist"]] = math.log1p(seq - pseqs[k])
    else:
        row[col["prompt_dist"]] = math.log1p(50)
    seqs, best = pool.near[sid]
    lo, hi = bisect.bisect_left(seqs, seq - 3), bisect.bisect_right(seqs, seq + 3)
    prev = nxt = 0.0
    for s2, c2 in zip(seqs[lo:hi], best[lo:hi], strict=True):
        if s2 < seq:
            prev = max(prev, c2)
        elif s2 > seq:
            nxt = max(nxt, c2)
    row[col["prev_cos"]] = prev
    row[col["next_cos"]] = nxt
    v = ctx.vectors.get(cid)
    if v is not None:
        if k >= 0:
            p = pool.prompt_vec.get((sid, pseqs[k]))
            if p is not None and pseqs[k] != seq:
                row[col["echo_cos"]] = float(v @ p)
        tools = pool.tool_vecs.get(sid)
        if tools:
            near_tools = [t for s2, t in tools if seq - 6 <= s2 < seq]
            if near_tools:
                row[col["tool_cos"]] = float(np.max(np.asarray(near_tools) @ v))


def verdict_features(
    logits: np.ndarray,
    rows: Sequence[dict[str, Any]],
    order: Sequence[int],
    ctx: Context,
    unseen_share: float,
    n_terms: int,
    pair_best: float = 0.0,
) -> np.ndarray:
    """The query-level signals of :data:`VERDICT_FEATURES`, given the pool in final order."""
    top = [logits[i] for i in order[:2]]
    head = [rows[i]["session_id"] for i in order[:5]]
    first = rows[order[0]]["id"] if order else None
    f = {
        "top_score": top[0] if top else -10.0,
        "margin": top[0] - top[1] if len(top) > 1 else 0.0,
        "best_cos": max(ctx.cos.values(), default=0.0),
        "best_cov": max(ctx.coverage.values(), default=0.0),
        "unseen_excess": max(unseen_share - UNSEEN_FREE, 0.0),
        "n_terms": math.log1p(n_terms),
        "top_session_share": head.count(head[0]) / len(head) if head else 0.0,
        "pair_best": pair_best,
        "top_cov": ctx.coverage.get(first, 0.0) if first else 0.0,
        "top_rare": ctx.rare_coverage.get(first, 0.0) if first else 0.0,
        "top_cos": ctx.cos.get(first, 0.0) if first else 0.0,
        "best_rare": max(ctx.rare_coverage.values(), default=0.0),
        "lex_best": math.log1p(max(ctx.lex_score.values(), default=0.0)),
    }
    v = np.array([f[name] for name in VERDICT_FEATURES], dtype=np.float64)
    return v
