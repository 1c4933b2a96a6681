"""A searcher over the memories a spec names, with the installed models: what `funes recall`,
`funes-query` and `funes ask` search with.

It stands above :mod:`funes.memories` (which opens memories, a remote's cached copy too) and
:mod:`funes.retrieval` (which ranks what it is handed), so ranking does not depend on the Hub.
"""

from __future__ import annotations

from funes.retrieval import RERANK_TOKENS, MultiSearcher, Searcher


def open_searcher(memory: str | None = None, rerank: bool = True) -> Searcher | MultiSearcher:
    """A Searcher over a memory (local, remote, or several: ``local,owner/team``) with the
    installed models loaded (once per process)."""
    # lazy: numpy and funes.models.derive stay off fast commands' start-up
    from funes.memories import open_all
    from funes.models import LazyEmbedder, load_reranker

    mems = open_all(memory)
    for m in mems:
        # a first question reads lean: a `funes recall` asks no other (a searcher asked again
        # keeps Lance's caches from then on)
        m.read_lean()
    embedder = LazyEmbedder()  # onnxruntime loads only when a question must be embedded
    reranker = load_reranker(max_length=RERANK_TOKENS) if rerank else None
    if len(mems) == 1:
        return Searcher(mems[0], embedder, reranker)
    return MultiSearcher([Searcher(m, embedder, reranker) for m in mems])
