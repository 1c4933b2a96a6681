"""The pair model's logit as a feature for bench code (bench/train_ranker.py, bench/quality.py).

    from bench.pair.features import pair_logits, model_for
    x = pair_logits(question_text, [row["text"] for row in head], fold)   # float32 (len,)

``fold`` picks the model that may score the question honestly:

- ``0``-``4``: the cross-validation model trained without that fold's repositories
  (bench/work/pair/fold-K, from ``bin/train --exclude-fold K``) — for a labelled question of
  fold K (``bench.labelled.folds.fold_of(repo)``);
- ``"frozen"``, ``"eval-dev"`` or ``None``: the model trained on every non-frozen labelled
  repository (bench/work/pair/full, ``bin/train``) — it never saw the frozen fold nor eval-dev;
- ``"shipped"``: the model in the package (funes/models/data/pair), sha256-checked;
- ``"zero-shot"``: the base checkpoint untouched (``bin/train --zero-shot``).

Models load once per process (onnxruntime only: no torch). ``root`` overrides bench/work/pair
(e.g. another training variant).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from funes.models.pair import PairModel, load_pair_model, open_pair_model

WORK = Path(__file__).resolve().parents[2] / "bench" / "work" / "pair"

_models: dict[tuple[str, int | None], PairModel] = {}


def model_dir(fold: int | str | None, root: Path = WORK) -> Path:
    if isinstance(fold, int):
        return root / f"fold-{fold}"
    if fold in (None, "frozen", "eval-dev", "full"):
        return root / "full"
    if fold == "zero-shot":
        return root / "zero-shot"
    raise ValueError(f"unknown fold {fold!r}")


def model_for(
    fold: int | str | None, root: Path = WORK, max_length: int | None = None
) -> PairModel:
    """The pair model that may score a question of ``fold`` (see the module docstring)."""
    key = (str(fold) + "@" + str(root), max_length)
    if key not in _models:
        if fold == "shipped":
            _models[key] = load_pair_model()
        else:
            d = model_dir(fold, root)
            if not (d / "passage.onnx").exists():
                raise FileNotFoundError(
                    f"no pair model in {d}: run bin/train"
                    + (f" --exclude-fold {fold}" if isinstance(fold, int) else "")
                )
            _models[key] = open_pair_model(d, max_length=max_length)
    return _models[key]


def pair_logits(
    question: str, texts: Sequence[str], fold: int | str | None, **kw: Any
) -> np.ndarray:
    """float32 logit per text (higher: more likely to answer ``question``)."""
    return model_for(fold, **kw).score(question, texts)
