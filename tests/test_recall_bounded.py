"""What a warm recall reads does not grow with the memory: the lexical leg reads the postings of
common terms only for the candidates it already has, the second stage reads every pool row but
the chunk fields it needs only for the hits, and the pair model sees its head, however large
the memory. None of it changes a hit: each is checked against the full read it replaces."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_ann_behind import rows
from test_lexical import build

from funes import retrieval
from funes.models import LazyEmbedder
from funes.models.pair import load_pair_model
from funes.ranker import PAIR_FEATURES
from funes.records import CHUNK_FIELDS
from funes.retrieval import POOL_PER_LEG, Query, Searcher
from funes.store import open_memory
from funes.store.lexical import K1, B, LexicalIndex, term_hash
from funes.store.tokenize import query_tokens

COMMON = ("lock", "writer", "segment", "table", "vector", "chunk", "session", "parse", "index")
NOW = datetime(2026, 11, 30, tzinfo=UTC)  # recency weights the same in both runs compared
RARE = ("zanzibar", "quokka", "fjord", "xylem", "E0502", "src/store/lock.py")


Allow = Callable[[np.ndarray], np.ndarray] | None


def scan(idx: LexicalIndex, query: str, k: int, allow: Allow = None) -> list[tuple[str, float]]:
    return scan_tokens(idx, query_tokens(query), k, allow)


def scan_tokens(
    idx: LexicalIndex, tokens: Sequence[str], k: int, allow: Allow = None
) -> list[tuple[str, float]]:
    """The lexical leg as it was: every posting of every question term scored, in a score per
    document of each segment, the top ``k`` by score then id."""
    segs = [s for s in idx.all_segments() if s.n_docs]
    n = sum(s.n_live() for s in segs)
    if not tokens or n == 0 or k <= 0:
        return []
    avgdl = sum(s.live_length() for s in segs) / n
    hashes = [np.uint64(term_hash(t)) for t in dict.fromkeys(tokens)]
    posts = [[s.postings(h) for h in hashes] for s in segs]
    df = [sum(len(p[j][0]) for p in posts) for j in range(len(hashes))]
    idf = [float(np.log(1 + (n - d + 0.5) / (d + 0.5))) for d in df]
    scores_all, ids_all = [], []
    for seg, seg_posts in zip(segs, posts, strict=True):
        scores = np.zeros(seg.n_docs, dtype=np.float64)
        dl = np.asarray(seg.dl)
        for w, (docs, tf) in zip(idf, seg_posts, strict=True):
            if len(docs):
                tf = tf.astype(np.float64)
                scores[docs] += w * (tf / (tf + K1 * (1 - B + B * dl[docs] / avgdl)))
        hit = np.flatnonzero(scores > 0)
        if allow is not None and len(hit):
            hit = hit[allow(np.asarray(seg.ids)[hit])]
        scores_all.append(scores[hit])
        ids_all.append(np.asarray(seg.ids)[hit].astype("S64"))
    sc, ids = np.concatenate(scores_all), np.concatenate(ids_all)
    order = np.lexsort((ids, -sc))[:k]
    return [(ids[i].decode("utf-8"), float(sc[i])) for i in order]


def zipf_docs(n: int, seed: int) -> list[tuple[str, str]]:
    """Documents whose words follow a steep frequency curve: a few in most documents, rare ones
    in a handful, repeated within a document now and then."""
    rng = random.Random(seed)
    vocab = COMMON + RARE + tuple(f"w{i}" for i in range(40))
    weights = [1.0 / (r + 1) ** 1.1 for r in range(len(vocab))]
    docs = []
    for i in range(n):
        words = rng.choices(vocab, weights, k=rng.randint(1, 30))
        docs.append((f"{i:016x}", " ".join(words)))
    return docs


words = st.sampled_from(COMMON + RARE + ("w1", "w7", "w33", "absent"))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(1, 400),
    seed=st.integers(0, 10_000),
    batches=st.integers(1, 6),
    question=st.lists(words, min_size=1, max_size=7),
    k=st.sampled_from([1, 3, 10, 100, 1000]),
    delete_every=st.sampled_from([0, 3, 7]),
    filtered=st.booleans(),
)
def test_lexical_top_k_is_the_scan_of_every_posting(
    tmp_path_factory: pytest.TempPathFactory,
    n: int,
    seed: int,
    batches: int,
    question: list[str],
    k: int,
    delete_every: int,
    filtered: bool,
) -> None:
    docs = zipf_docs(n, seed)
    idx = build(tmp_path_factory.mktemp("lex"), docs, batches)
    if delete_every:
        idx.delete([d for d, _ in docs[::delete_every]], persist=False)
    allowed = np.array([d.encode() for d, _ in docs[1::2]])

    def allow(ids: np.ndarray) -> np.ndarray:
        return np.isin(ids, allowed.astype(ids.dtype))

    query = " ".join(question)
    got = idx.search(query, k, allow if filtered else None)
    # the very hits, in the very order, with the very scores (floats compared exactly)
    assert got == scan(idx, query, k, allow if filtered else None)


def rare_and_common(n: int, rare: int) -> list[tuple[str, str]]:
    """``n`` documents holding common words (each in about half of them); ``rare`` of them also
    say "zanzibar" three times."""
    rng = random.Random(n)
    docs = []
    for i in range(n):
        words = [w for w in COMMON if rng.random() < 0.5] or ["table"]
        step = n // rare
        if i % step == 0 and i // step < rare:
            words += ["zanzibar"] * 3
        rng.shuffle(words)
        docs.append((f"{i:016x}", " ".join(words)))
    return docs


def test_postings_read_whole_do_not_grow_with_the_memory(tmp_path: Path) -> None:
    question = "zanzibar lock writer"
    read = {}
    for n in (2_000, 20_000):
        docs = rare_and_common(n, rare=150)
        idx = build(tmp_path / f"lex-{n}", docs, batches=3)
        got = idx.search(question, POOL_PER_LEG)
        assert got == scan(idx, question, POOL_PER_LEG)
        assert len(got) == POOL_PER_LEG and all(
            "zanzibar" in dict(docs)[cid] for cid, _ in got
        )  # the rare word's holders come first
        common = sum(
            s.df(s.span(np.uint64(term_hash(t)))) for s in idx.segments for t in ("lock", "writer")
        )
        assert common > n // 2  # "lock" and "writer" are in about half the documents each
        read[n] = (idx.stats.read, idx.stats.looked_up)
    # ten times the documents read no more postings whole: the rare word's 150, while the
    # common words are only looked up for those 150 candidates (at 2,000 documents their
    # postings are few enough that one pass over them is cheaper than 150 binary searches)
    assert read[20_000] == (150, 300)
    assert read[20_000][0] <= read[2_000][0]


def pair_weights(dest: Path, head: int) -> Path:
    """The shipped ranker weights with a pair stage over the first ``head`` candidates (zero
    weights: the pair model runs, the order is the first stage's)."""
    d = json.loads(resources.files("funes").joinpath("data", "ranker.json").read_bytes())
    k = len(PAIR_FEATURES)
    d["pair"] = {"head": head, "features": list(PAIR_FEATURES), "mean": [0.0] * k,
                 "scale": [1.0] * k, "w": [0.0] * k, "b": 0.0}  # fmt: skip
    dest.write_text(json.dumps(d))
    return dest


class CountingPair:
    """The shipped pair model, recording how many passages each question gives it."""

    def __init__(self) -> None:
        self.model = load_pair_model()
        self.calls: list[int] = []

    def score(self, query: str, passages: list[str]) -> np.ndarray:
        self.calls.append(len(passages))
        return self.model.score(query, passages)


def memory_of(path: Path, n: int) -> Path:
    mem = open_memory(path, create=True)
    with mem.writer(interactive=False) as w:
        for start in range(0, n, 2_000):
            w.append(rows(start, min(2_000, n - start), seed=start))
    return path


@pytest.mark.slow
def test_the_pool_and_the_pair_head_do_not_grow_with_the_memory(tmp_path: Path) -> None:
    weights = pair_weights(tmp_path / "ranker-pair.json", head=12)
    embedder = LazyEmbedder()
    seen = {}
    for n in (600, 6_000):
        mem = open_memory(memory_of(tmp_path / f"mem-{n}", n))
        pair = CountingPair()
        s = Searcher(mem, embedder, weights=str(weights), pair=pair)
        pools, hits = [], []
        for question in ("lock parser note12", "vector manifest backfill", "scrub hook item5"):
            pool = s.gather(Query(question))
            assert pool is not None
            pools.append(len(pool.rows))
            res = s.search(Query(question, k=5))
            hits.append(len(res.hits))
            assert all(h.scores["pair"] is not None for h in res.hits)  # the pair model ran
        seen[n] = (max(pools), max(pair.calls), hits)
    # the memory grew tenfold; the pool stays within one leg's cap each, the pair model reads
    # its head of 12 and no more
    for pool_max, pair_max, hits in seen.values():
        assert pool_max <= 2 * POOL_PER_LEG
        assert pair_max == 12
        assert hits == [5, 5, 5]
    assert seen[6_000][0] > 100  # both legs filled the pool at the larger size


def test_hits_are_those_of_a_pool_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "mem"
    mem = open_memory(path, create=True)
    kinds = [("user", "text"), ("assistant", "thinking"), ("assistant", "text"),
             ("assistant", "tool_use"), ("user", "tool_result")]  # fmt: skip
    with mem.writer(interactive=False) as w:
        for start, seed in ((0, 1), (400, 2), (700, 3)):  # several segments and fragments
            chunks = rows(start, 300, seed=seed)
            for c in chunks:
                c.role, c.block_type = kinds[int(c.id, 16) % len(kinds)]
                c.tool_name = "Bash" if c.block_type == "tool_use" else None
                c.harness = ("claude", "codex")[int(c.id, 16) % 2]
            w.append(chunks)
        w.delete([f"{i:016x}" for i in range(410, 430)])
    questions = ("lock parser note12", "vector manifest item5 hook", "session token about",
                 "schema recall note719", "nothing known zzz")  # fmt: skip
    embedder = LazyEmbedder()

    def answers() -> list[list[dict]]:
        s = Searcher(open_memory(path), embedder)  # flat: far below the ANN threshold
        return [[r.to_dict() for r in s.search(Query(q, k=8), NOW).records()] for q in questions]

    now = answers()
    # as recall read before: every posting of every term scanned, every field of the pool read
    monkeypatch.setattr(retrieval, "POOL_FIELDS", CHUNK_FIELDS)
    monkeypatch.setattr(
        LexicalIndex,
        "search_tokens",
        lambda self, tokens, k=30, allow=None: scan_tokens(self, tokens, k, allow),
    )
    before = answers()
    assert now == before
    assert sum(len(a) for a in now) > 20
    stored = {r["id"]: r for r in open_memory(path).rows(None, CHUNK_FIELDS).to_pylist()}
    for group in now:
        for hit in group:
            if hit.get("kind") == "hit":
                assert {f: hit[f] for f in CHUNK_FIELDS} == stored[hit["id"]]  # every field


@pytest.mark.slow
def test_a_warm_searcher_finds_pool_rows_by_address_across_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A searcher that finds pool rows by the row addresses it keeps (the table's id index
    leaves many rows uncovered) answers as a fresh one filtering on ids does, after appends,
    deletions and vectors stored (rows rewritten into new fragments) between its questions."""
    path = tmp_path / "mem"
    mem = open_memory(path, create=True)
    with mem.writer(interactive=False) as w:
        w.append(rows(0, 500, seed=1))
        w.append(rows(500, 200, seed=2))
    questions = ("lock parser note12", "vector manifest item5 hook", "session token note640")
    embedder = LazyEmbedder()
    warm = Searcher(open_memory(path), embedder)

    def both() -> tuple[list[list[dict]], list[list[dict]]]:
        warm.memory = open_memory(path)  # the latest version, as the MCP server gives it
        monkeypatch.setattr(retrieval, "ADDRESS_ROWS", 0)  # always by address
        a = [[r.to_dict() for r in warm.search(Query(q), NOW).records()] for q in questions]
        monkeypatch.setattr(retrieval, "ADDRESS_ROWS", 10**9)  # always by a filter on ids
        fresh = Searcher(open_memory(path), embedder)
        b = [[r.to_dict() for r in fresh.search(Query(q), NOW).records()] for q in questions]
        return a, b

    a, b = both()
    assert a == b and sum(len(x) for x in a) == 24
    first = {h["id"] for h in a[0]}
    with open_memory(path).writer(interactive=False) as w:
        w.append(rows(700, 100, seed=3))  # a new fragment
        w.delete(sorted(first)[:3])  # rows of kept fragments deleted
    a, b = both()
    assert a == b and not set(sorted(first)[:3]) & {h["id"] for h in a[0]}
    rng = np.random.default_rng(4)
    moved = [f"{i:016x}" for i in range(0, 700, 5)]
    v = rng.standard_normal((len(moved), 384)).astype(np.float32)
    with open_memory(path).writer(interactive=False) as w:
        w.set_vectors(moved, v / np.linalg.norm(v, axis=1, keepdims=True))  # rows rewritten
    a, b = both()
    assert a == b
    assert warm._addresses.version == open_memory(path).version
