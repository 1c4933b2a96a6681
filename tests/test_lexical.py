"""The lexical index: code-aware tokens, exact BM25 across segments, deletions, compaction."""

from __future__ import annotations

import random
from pathlib import Path

import bm25s
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from funes.store import lexical
from funes.store.lexical import LexicalIndex, Segment, merge, merge_to
from funes.store.tokenize import query_tokens, tokenize

WORDS = (
    "lock writer append segment table vector chunk session parse index query merge "
    "flush commit retry budget tier tool result error path store memory thinking"
).split()


def corpus(n: int, seed: int = 0) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 40))]
        if i % 7 == 0:
            words.append(f"src/mod{i % 5}/file_{i % 3}.py")
        if i % 11 == 0:
            words.append(f"HandlerClass{i % 4}.runJob")
        docs.append((f"{i:016x}", " ".join(words)))
    return docs


def test_snake_case_identifier_is_whole_and_split() -> None:
    assert tokenize("parse_unit_stats") == ["parse_unit_stats", "parse", "unit", "stats"]


def test_path_is_findable_whole_by_segment_and_by_part() -> None:
    toks = tokenize("see src/store/lock.py")
    assert {"src/store/lock.py", "lock.py", "lock", "store", "py"} <= set(toks)


def test_camel_case_splits_into_words_but_codes_and_hashes_stay_whole() -> None:
    assert {"memorywriter", "memory", "writer"} <= set(tokenize("MemoryWriter"))
    assert tokenize("E0502 ENOENT 0x1f3a a1b2c3d4e5f6 3.14") == [
        "e0502", "enoent", "0x1f3a", "a1b2c3d4e5f6", "3.14",
    ]  # fmt: skip


def test_flag_is_findable_with_and_without_dashes() -> None:
    toks = tokenize("run with --no-thinking")
    assert "--no-thinking" in toks and "no-thinking" in toks and "thinking" in toks


def test_stop_words_are_dropped_only_as_bare_words() -> None:
    assert tokenize("the lock is held") == ["lock", "held"]
    assert query_tokens("lock lock LOCK") == ["lock"]


def bm25s_scores(docs: list[tuple[str, str]], query: str) -> dict[str, float]:
    """Scores of a bm25s index rebuilt from scratch over the same tokens (the reference)."""
    model = bm25s.BM25()  # lucene variant, k1=1.5, b=0.75: what our index computes
    model.index([tokenize(t) for _, t in docs], show_progress=False)
    toks = [t for t in query_tokens(query) if t in model.vocab_dict]
    if not toks:
        return {}
    scores = model.get_scores(toks)
    return {docs[i][0]: float(scores[i]) for i in np.flatnonzero(scores > 0)}


def build(root: Path, docs: list[tuple[str, str]], batches: int) -> LexicalIndex:
    idx = LexicalIndex.open(root)
    step = max(1, len(docs) // batches)
    for i in range(0, len(docs), step):
        part = docs[i : i + step]
        idx.append([d for d, _ in part], [t for _, t in part])
        idx.commit(i)
    return LexicalIndex.open(root)


@pytest.mark.parametrize("query", ["lock writer", "file_1.py", "src/mod2", "HandlerClass", "job"])
def test_segmented_scores_equal_a_bm25s_rebuild(tmp_path: Path, query: str) -> None:
    docs = corpus(600)
    idx = build(tmp_path / "lex", docs, batches=9)
    assert len(idx.segments) > 1  # really segmented
    got = dict(idx.search(query, k=len(docs)))
    want = bm25s_scores(docs, query)
    assert got.keys() == want.keys()
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-5)


def test_deletions_leave_scores_of_a_rebuild_without_them(tmp_path: Path) -> None:
    docs = corpus(400, seed=1)
    idx = build(tmp_path / "lex", docs, batches=5)
    gone = {d for d, _ in docs[::3]}
    assert idx.delete(gone) == len(gone)
    idx.commit(99)
    idx = LexicalIndex.open(tmp_path / "lex")
    live = [d for d in docs if d[0] not in gone]
    got = dict(idx.search("lock merge file_2.py", k=1000))
    want = bm25s_scores(live, "lock merge file_2.py")
    assert got.keys() == want.keys()
    assert all(got[k] == pytest.approx(v, rel=1e-5) for k, v in want.items())


def test_compaction_gives_the_results_of_a_full_rebuild(tmp_path: Path) -> None:
    docs = corpus(500, seed=2)
    idx = build(tmp_path / "a", docs, batches=12)
    idx.delete([d for d, _ in docs[5:40]])
    idx.commit(1)
    idx.compact()
    idx.commit(2)
    idx = LexicalIndex.open(tmp_path / "a")
    assert len(idx.segments) == 1
    live = docs[:5] + docs[40:]
    full = LexicalIndex.open(tmp_path / "b")
    full.append([d for d, _ in live], [t for _, t in live])
    full.commit(1)
    full = LexicalIndex.open(tmp_path / "b")
    a, b = idx.segments[0], full.segments[0]
    for key in ("terms", "indptr", "docs", "tfs", "dl", "ids"):
        assert np.array_equal(np.asarray(getattr(a, key)), np.asarray(getattr(b, key))), key
    for q in ("lock", "segment table", "file_0.py", "HandlerClass2.runJob"):
        assert idx.search(q, 30) == full.search(q, 30)


def test_appends_keep_few_segments(tmp_path: Path) -> None:
    idx = LexicalIndex.open(tmp_path)
    docs = corpus(2000, seed=3)
    for i in range(0, 2000, 20):
        idx.append([d for d, _ in docs[i : i + 20]], [t for _, t in docs[i : i + 20]])
    idx.commit(1)
    assert len(idx.segments) <= 12
    assert idx.n_docs() == 2000


def test_uncommitted_segments_are_invisible_and_collected(tmp_path: Path) -> None:
    idx = LexicalIndex.open(tmp_path)
    idx.append(["a" * 16], ["first commit"])
    idx.commit(1)
    idx.append(["b" * 16], ["never committed"])  # a writer killed before its manifest
    again = LexicalIndex.open(tmp_path)
    assert again.search("committed") == [] and again.search("first")
    again.commit(1)  # the next writer's commit removes the orphan segment
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 1


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    sizes=st.lists(st.integers(0, 60), min_size=1, max_size=5),
    step=st.integers(1, 50),
    seed=st.integers(0, 1000),
    drop=st.floats(0, 1),
)
def test_a_merge_written_range_by_range_is_the_merge_in_memory(
    tmp_path_factory: pytest.TempPathFactory, sizes: list[int], step: int, seed: int, drop: float
) -> None:
    """A merge bigger than MERGE_STEP postings is streamed to disk a range of term hashes at a
    time (bounded memory); it must give the very segment the in-memory merge gives — with
    deletions, empty segments, repeated terms (tf > 255) and any cut of the hash space."""
    rng = random.Random(seed)
    root = tmp_path_factory.mktemp("lex")
    segs, n = [], 0
    for size in sizes:
        docs = corpus(size, seed=rng.randrange(1000))
        ids = [f"{n + i:016x}" for i in range(size)]
        n += size
        toks = [tokenize(t) for _, t in docs]
        if toks and rng.random() < 0.3:
            toks[0] = toks[0] + ["lock"] * 300  # a tf past uint8
        seg = Segment.build(ids, toks)
        if size and rng.random() < 0.5:
            seg.deleted = np.array([rng.random() < drop for _ in range(size)])
        segs.append(seg)
    want = merge(segs)
    old = lexical.MERGE_STEP
    lexical.MERGE_STEP = step
    try:
        got = merge_to(segs, root, "s1")
    finally:
        lexical.MERGE_STEP = old
    assert got.n_docs == want.n_docs
    for key in ("terms", "indptr", "docs", "tfs", "dl", "ids"):
        a, b = np.asarray(getattr(got, key)), np.asarray(getattr(want, key))
        assert np.array_equal(a.astype(np.int64) if a.dtype.kind in "ui" else a,
                              b.astype(np.int64) if b.dtype.kind in "ui" else b), key  # fmt: skip
    assert not [p for p in root.iterdir() if p.name.startswith(".tmp")]


def test_empty_segment_merge_is_empty() -> None:
    seg = merge([Segment.build([], [])])
    assert seg.n_docs == 0


def test_questions_drop_bm25s_question_stop_words_but_never_everything() -> None:
    import bm25s.stopwords

    from funes.store.tokenize import QUESTION_STOPWORDS

    assert set(bm25s.stopwords.STOPWORDS_EN_PLUS) == QUESTION_STOPWORDS
    assert query_tokens("Why did we drop the file lock?") == ["drop", "file", "lock"]
    assert query_tokens("what did he") == ["what", "did", "he"]  # nothing else left: kept
    assert "--no-thinking" in query_tokens("why --no-thinking")
