"""Local models: the embedder and the optional cross-encoder reranker (onnxruntime + tokenizers).

Importing this package is cheap; onnxruntime, tokenizers and numpy load on first use.

    from funes.models import load_embedder, load_reranker, embed_chunks
    emb = load_embedder()            # ModelError (a FunesError) with what to do, if it cannot
    vecs = emb.embed(["some text"])  # float32 (n, 384), L2-normalised
    rr = load_reranker()             # Reranker, or None when none is installed
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from funes.models.pins import EMBEDDER_PIN, RERANKER_PIN, ModelError

# onnxruntime (1.2x+ on Linux) otherwise writes a device id and queues telemetry events under
# ~/.cache/Microsoft on its first session; it reads this when it is imported, and every module
# of this package that imports it is imported after this line. A value the user set is kept.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

if TYPE_CHECKING:
    from funes.models.embedder import Embedder, LazyEmbedder, embed_chunks, load_embedder
    from funes.models.reranker import Reranker, load_reranker

__all__ = [
    "EMBEDDER_PIN",
    "RERANKER_PIN",
    "Embedder",
    "LazyEmbedder",
    "ModelError",
    "Reranker",
    "embed_chunks",
    "load_embedder",
    "load_reranker",
]

_LAZY = {
    "Embedder": "funes.models.embedder",
    "LazyEmbedder": "funes.models.embedder",
    "embed_chunks": "funes.models.embedder",
    "load_embedder": "funes.models.embedder",
    "Reranker": "funes.models.reranker",
    "load_reranker": "funes.models.reranker",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'funes.models' has no attribute {name!r}")

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
