"""bench/quality.py: the scoring rule, and that re-running the scoring gives identical numbers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import EVAL_DEV, REPO

sys.path.insert(0, str(REPO))  # the bench package lives at the repository root

from bench import quality


def test_a_passage_answers_by_collapsed_substring_escapes_or_a_60_char_run() -> None:
    assert quality.answers("the  lock\n\twas   fixed by a file lock", "lock was fixed")
    assert quality.answers('{"cmd":"echo \\"hi\\"\\nls"}', 'echo "hi" ls')
    quote = "x" * 10 + "a shared run of exactly sixty characters, spaces included!!!" + "y" * 10
    assert quality.answers(
        "zz a shared run of exactly sixty characters, spaces included!!! zz", quote
    )
    assert not quality.answers("a shared run of exactly sixty characters, spaces included!", quote)
    assert quality.score(["nothing", "lock was fixed here"], "lock was fixed") == 1
    assert quality.score(["nothing"], "lock was fixed") is None
    s = quality.summarize([0, 2, None, 7])
    assert (s["hit@1"], s["hit@5"], s["mrr@10"]) == (0.25, 0.5, (1 + 1 / 3 + 1 / 8) / 4)


def load_queries() -> list[dict[str, object]]:
    lines = (EVAL_DEV / "queries.jsonl").read_text().splitlines()
    return [json.loads(x) for x in lines if x.strip()]


@pytest.mark.skipif(not EVAL_DEV.is_dir(), reason="needs ../shared/eval-dev")
def test_grep_baseline_scores_identically_twice() -> None:
    qs = load_queries()[:12]
    files = sorted((EVAL_DEV / "corpus").rglob("*.jsonl"))
    first = quality.evaluate({"grep": quality.grep_system(files)}, qs)
    again = quality.evaluate({"grep": quality.grep_system(list(reversed(files)))}, qs)
    assert first == again


@pytest.mark.skipif(not EVAL_DEV.is_dir(), reason="needs ../shared/eval-dev")
def test_funes_systems_score_identically_twice(tmp_path: Path) -> None:
    """Every system, run twice over one real eval-dev session indexed here, scores the same."""
    from conftest import run_cli

    from bench.baselines import Baseline
    from funes.models import load_embedder
    from funes.retrieval import Searcher
    from funes.store import open_memory

    every = load_queries()
    qs = [q for q in every if q["agent"] == "codex"][:4] + [
        q for q in every if q["kind"] == "absent"
    ][:2]
    session = EVAL_DEV / "corpus" / "codex" / "CryptoSodi_Battle-Cities__codex-session.jsonl"
    mem_dir = tmp_path / "memory"
    assert run_cli("funes", "index", session, "--yes", "--memory", mem_dir).returncode == 0
    mem = open_memory(mem_dir)
    emb = load_embedder()

    def systems() -> dict[str, Searcher | Baseline]:
        return {
            "bm25": Baseline(mem, None, None, mode="lexical", recency="off"),
            "vector": Baseline(mem, emb, None, mode="vector", recency="off"),
            "funes": Searcher(mem, emb, None),
            "funes, reference recency": Baseline(mem, emb, None, recency="reference"),
        }

    first = quality.evaluate(systems(), qs)
    assert first == quality.evaluate(systems(), qs)
    assert first["funes"]["weak_on_absent"] is not None
