"""bench/train_ranker.py retrains the learned stage from the synthetic set of
bench/ranker_fixture.py alone: nothing from outside the repository is read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO))  # the bench package lives at the repository root


@pytest.mark.slow
def test_a_retrain_from_the_fixture_writes_weights_that_rank_answers_above_the_prompt(
    tmp_path: Path,
) -> None:
    from bench.quality import answers
    from funes import ranker
    from funes.models import load_embedder
    from funes.retrieval import Query, Searcher
    from funes.store import open_memory

    weights, work = tmp_path / "ranker.json", tmp_path / "work"
    r = subprocess.run(
        [sys.executable, str(REPO / "bench" / "train_ranker.py"), "--sets", "fixture",
         "--out", str(weights), "--work", str(work)],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert f"written {weights}" in r.stdout
    doc = json.loads(weights.read_text())
    assert doc["trained_on"]["repositories"] == 8
    assert isinstance(ranker.load_model(str(weights)), ranker.Model)

    # The session's opening prompt restates each question in its own words: the lexical leg
    # puts it first, and the retrained weights put the agent's answer above it.
    memory = open_memory(next(work.glob("fixture-*")))
    questions = [
        json.loads(x) for x in (work / "fixture" / "queries.jsonl").read_text().split("\n") if x
    ]
    searcher = Searcher(memory, load_embedder(), None, weights=str(weights))
    prompt_first, below = 0, []
    for q in questions:
        if q["kind"] == "absent":
            continue
        query = Query(q["query"], k=10)
        pool = searcher.gather(query)
        assert pool is not None
        answer = next(r for r in pool.rows if answers(r["text"] or "", q["answer_quote"]))
        is_prompt = [
            r for r in pool.rows
            if r["session_id"] == answer["session_id"] and r["role"] == "user" and r["seq"] == 0
        ]  # fmt: skip
        prompt = is_prompt[0]["id"]
        prompt_first += min(pool.ctx.lex_rank, key=pool.ctx.lex_rank.__getitem__) == prompt
        ids = [h.row["id"] for h in searcher.search(query).hits]
        assert answer["id"] in ids, q["query"]
        if prompt in ids and ids.index(prompt) < ids.index(answer["id"]):
            below.append(q["query"])
    assert prompt_first >= 10  # the prompt is a distractor: lexically the best match
    assert below == []
