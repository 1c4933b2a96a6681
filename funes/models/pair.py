"""funes' own pair model: (question, passage) → one relevance logit, read together.

SPLADE-tiny (a BERT of 2 layers × 128, Apache-2.0) fine-tuned on pairs mined from coding-agent
transcripts and on labelled recall questions (bench/pair/, MODEL_CARD.md beside the files). It
keeps SPLADE's sparse scoring: a text's weight for a vocabulary term is the max over its tokens
of log(1 + relu(MLM logit)); the score is the dot product of the question's and the passage's
weights. Two int8 ONNX graphs ship in the package (``funes/models/data/pair/``):

- ``query.onnx``: question tokens → its top 64 terms and their weights (once per question);
- ``passage.onnx``: passage tokens and those terms → the score (once per passage).

Each passage runs alone and unpadded, like the embedder's sequences: int8 dynamic quantisation
picks one activation scale per tensor, so a padded batch would make a passage's logit depend on
its batch-mates. A logit is a function of the (question, passage) pair alone; passages are
spread over the shared worker pool (:mod:`funes.models._runtime`).

Every file is sha256-checked against :data:`funes.models.pins.PAIR_PIN` on first load;
``$FUNES_PAIR_MODEL`` may point at a directory holding a copy of the same files.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes.models.pins import DATA_DIR, ENV_PAIR_MODEL, PAIR_PIN, ModelError, sha256_file

if TYPE_CHECKING:
    import numpy as np

MAX_TEXT_CHARS = 4096  # characters the tokenizer sees (the model reads PAIR_PIN.max_length)

_loaded: dict[Path, PairModel] = {}
_load_lock = threading.Lock()


class PairModel:
    """Scores passages against a question. Thread-safe; deterministic for a given pair."""

    def __init__(
        self, query: Any, passage: Any, tokenizer: Any, *, name: str, max_length: int,
        query_length: int, path: Path | None = None,
    ) -> None:  # fmt: skip
        self.name = name
        self.path = path
        self.max_length = max_length
        self.query_length = query_length
        self._query = query
        self._passage = passage
        self._tok = tokenizer

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """float32 logit per passage, in input order (higher: more likely to answer)."""
        # lazy: numpy and onnxruntime stay off fast commands' start-up
        import numpy as np

        from funes.models import _runtime

        out = np.zeros(len(passages), dtype=np.float32)
        if not passages or not query.strip():
            return out
        q = _cut(self._tok.encode(query[:MAX_TEXT_CHARS]).ids, self.query_length)
        terms, weights = self._run_query(q)
        if not float(weights.max(initial=0.0)) > 0.0:
            return out  # no term of the question carries weight: nothing to tell apart
        encs = self._tok.encode_batch([p[:MAX_TEXT_CHARS] for p in passages])
        ids = [_cut(e.ids, self.max_length) for e in encs]
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))

        def one(i: int) -> float:
            return self._run_passage(ids[i], terms, weights)

        results = map(one, order) if len(order) == 1 else _runtime.pool().map(one, order)
        for i, s in zip(order, results, strict=True):
            out[i] = s
        return out

    def _run_query(self, ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
        # lazy: numpy stays off fast commands' start-up
        import numpy as np

        feed = {"input_ids": np.asarray(ids, dtype=np.int64)[None, :]}
        try:
            terms, weights = self._query.run(["terms", "weights"], feed)
        except Exception as e:  # onnxruntime's errors are untyped
            raise self._failed("query", e) from None
        return np.asarray(terms, dtype=np.int64), np.asarray(weights, dtype=np.float32)

    def _run_passage(self, ids: list[int], terms: np.ndarray, weights: np.ndarray) -> float:
        # lazy: numpy stays off fast commands' start-up
        import numpy as np

        feed = {
            "input_ids": np.asarray(ids, dtype=np.int64)[None, :],
            "terms": terms,
            "weights": weights,
        }
        try:
            return float(self._passage.run(["score"], feed)[0].reshape(-1)[0])
        except Exception as e:  # onnxruntime's errors are untyped
            raise self._failed("passage", e) from None

    def _failed(self, graph: str, e: Exception) -> ModelError:
        where = f" ({self.path})" if self.path else ""
        return ModelError(
            f"the pair model's {graph} graph{where} failed to run "
            f"({str(e).splitlines()[0][:200]}); reinstall funes (pip install --force-reinstall funes)"
        )


def _cut(ids: list[int], n: int) -> list[int]:
    """The first ``n`` tokens, keeping the closing [SEP] (what the tokenizer's own truncation
    does, and what training saw)."""
    return ids if len(ids) <= n else [*ids[: n - 1], ids[-1]]


def model_dir() -> tuple[Path, str]:
    """Where the pair model's files are, and where that came from (for messages)."""
    env = os.environ.get(ENV_PAIR_MODEL)
    if env:
        return Path(env).expanduser(), f"${ENV_PAIR_MODEL}"
    return DATA_DIR / PAIR_PIN.dir, "the funes package"


def verified_dir() -> Path:
    """The pair model's directory, after checking every file's sha256 against the pin."""
    d, origin = model_dir()
    fix = (
        f"point {ENV_PAIR_MODEL} at an intact copy or unset it"
        if origin.startswith("$")
        else "reinstall funes (pip install --force-reinstall funes)"
    )
    for name, pinned in PAIR_PIN.files:
        path = d / name
        try:
            actual = sha256_file(path)
        except OSError as e:
            raise ModelError(
                f"the pair model file {path} cannot be read ({e.strerror or 'missing'}); {fix}"
            ) from None
        if actual != pinned:
            raise ModelError(
                f"the pair model file {path} does not match its pinned sha256 (expected "
                f"{pinned[:12]}…, got {actual[:12]}…): it is damaged or not this funes' "
                f"version; {fix}"
            )
    return d


def pair_summary() -> str:
    """One line naming the pair model for `funes status`: name, pinned sha256s, size on disk
    (stat only, no hashing: status stays cheap; `funes models` checks the files)."""
    d, origin = model_dir()
    size = 0
    for name, _ in PAIR_PIN.files:
        try:
            size += (d / name).stat().st_size
        except OSError:
            return f"{PAIR_PIN.name} (files missing in {d}; reinstall funes)"
    shas = ", ".join(f"{n} {s[:12]}" for n, s in PAIR_PIN.files if n.endswith(".onnx"))
    where = f", {origin}" if origin.startswith("$") else ""
    return f"{PAIR_PIN.name} ({shas}; {size / 1e6:.1f} MB{where})"


def load_pair_model() -> PairModel:
    """The shipped pair model, sha256-checked on first load (then the same object)."""
    d, _ = model_dir()
    with _load_lock:
        if d not in _loaded:
            _loaded[d] = open_pair_model(verified_dir(), name=PAIR_PIN.name)
        return _loaded[d]


def open_pair_model(
    d: Path, *, name: str | None = None, max_length: int | None = None
) -> PairModel:
    """A pair model from a directory holding query.onnx, passage.onnx and tokenizer.json, without
    a pin check (bench/ loads its cross-validation models this way)."""
    # lazy: tokenizers and onnxruntime stay off fast commands' start-up
    from tokenizers import Tokenizer

    from funes.models import _runtime

    tok_path = d / "tokenizer.json"
    try:
        tok = Tokenizer.from_file(str(tok_path))
    except Exception as e:  # tokenizers raises its own untyped Exception
        raise ModelError(f"cannot read the pair model tokenizer {tok_path}: {e}") from None
    tok.no_truncation()
    tok.no_padding()
    query = _runtime.session(d / "query.onnx", "pair query")
    passage = _runtime.session(d / "passage.onnx", "pair passage")
    return PairModel(
        query, passage, tok, name=name or f"local:{d.name}", path=d,
        max_length=max_length or PAIR_PIN.max_length, query_length=PAIR_PIN.query_length,
    )  # fmt: skip
