"""The pair stage reads each distinct passage of the head once: copies of one text (a tool's
output repeated, a message quoted again) get the logit the pair model gives that text, and the
hits are those of scoring every head passage on its own."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from test_ann_behind import rows

from funes.models import LazyEmbedder
from funes.models.pair import load_pair_model
from funes.ranker import PAIR_FEATURES
from funes.retrieval import Query, Searcher
from funes.store import open_memory

QUESTIONS = ("token leak lock parser", "where does the token leak come from", "parser retry note12")


class Spy:
    """The shipped pair model, recording the passages it is given."""

    def __init__(self) -> None:
        self.model = load_pair_model()
        self.given: list[list[str]] = []

    def score(self, query: str, passages: list[str]) -> Any:
        self.given.append(list(passages))
        return self.model.score(query, passages)


def test_the_pair_stage_scores_each_distinct_head_text_once(tmp_path: Path) -> None:
    made = rows(0, 240, seed=5)
    for i, c in enumerate(made):  # every third chunk repeats one of a few texts
        if i % 3 == 0:
            c.text = f"the token leak comes from the lock parser retry {i % 4} note12 item5"
    path = tmp_path / "mem"
    with open_memory(path, create=True).writer(interactive=False) as w:
        w.append(made)
    d = json.loads(resources.files("funes").joinpath("data", "ranker.json").read_text())
    k = len(PAIR_FEATURES)
    d["pair"] = {"head": 20, "features": list(PAIR_FEATURES), "mean": [0.0] * k,
                 "scale": [1.0] * k, "w": [0.5, 0.0, -0.2, 1.0, -0.3, -0.1], "b": 0.0}  # fmt: skip
    weights = tmp_path / "weights.json"
    weights.write_text(json.dumps(d))
    spy, embedder = Spy(), LazyEmbedder()
    copies = 0
    for text in QUESTIONS:
        s = Searcher(open_memory(path), embedder, weights=str(weights), pair=spy)
        got = s.search(Query(text))
        passages = spy.given[-1]
        assert got.hits and len(passages) == len(set(passages)) < 20  # a head of 20
        for h in got.hits:
            if h.scores["pair"] is not None:  # the logit of its text, scored alone
                alone = spy.model.score(text, [h.row["text"]])[0]
                assert h.scores["pair"] == round(float(alone), 6)
        copies += sum(len(h.duplicates) for h in got.hits)
    assert copies
