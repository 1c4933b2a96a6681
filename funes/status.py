"""What `funes status` and the MCP `status` tool answer for a memory spec: one function for both.

A local memory's state comes from the counts its writers keep (no table opened when they describe
it) or from the table; a Hub memory's from this machine's cached copy of it, labelled as such,
with what this machine has not pushed to it (:mod:`funes.hub.status`). The text is
:mod:`funes.render.status`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from funes.hub.remote import load_state
from funes.hub.spec import MemorySpec, parse, parse_one
from funes.hub.status import remote_status
from funes.models import EMBEDDER_PIN
from funes.render.status import (
    CachedCopy,
    remote_status_json,
    remote_status_text,
    status_json,
    status_text,
)
from funes.store.table import require_table


def status(
    spec: str | None, as_json: bool = False, on_open: Callable[[], None] | None = None
) -> str:
    """The status of the one memory ``spec`` names, as text (or one JSON line). ``on_open`` is
    called before the table is opened (the counts did not describe it, or it is a remote).
    Raises MemoryMissing when there is no memory there."""
    # lazy: funes.ingest.pending and funes.models.reranker stay off fast commands' start-up
    from funes.ingest.pending import pending_sources
    from funes.store.status import cached_status

    one = parse_one(spec)
    # A local memory's counts come from the counts.json its writers keep, without opening the
    # table (0.3 s of CPU less at 20k chunks, measured: Lance, pyarrow and numpy).
    path = None if one.remote else one.path
    st = None if path is None else cached_status(path)
    note = ""
    if st is None:
        if path is not None:
            require_table(path)  # no memory yet: said before anything heavy loads
        if on_open is not None:
            on_open()
        # lazy: Lance, pyarrow and numpy, only when the table must be read (and numpy when
        # there is none: the store says so)
        from funes.memories import open_one
        from funes.store.status import memory_status

        mem = open_one(spec)
        if mem.origin.uri is not None:
            remote = parse(mem.origin.uri)
            rs = remote_status(remote, mem)
            copy = cached_copy(remote)
            return remote_status_json(rs, copy) if as_json else remote_status_text(rs, copy)
        note = mem.note if not as_json else ""
        st = memory_status(mem)
        path = mem.path
    assert path is not None
    st.pending_sources = pending_sources(path)
    models = models_in_use()
    return status_json(st, models) if as_json else note + status_text(st, models)


def cached_copy(spec: MemorySpec) -> CachedCopy:
    """Which commit of the remote this machine's copy holds, and when the Hub was last asked."""
    doc = load_state(spec)
    checked = doc.get("checked")
    when = datetime.fromtimestamp(float(checked), UTC) if checked else None
    return CachedCopy(str(doc.get("commit") or ""), when)


def models_in_use() -> dict[str, str | None]:
    """The ``embedder``, ``pair`` model and ``reranker`` recall uses on this machine."""
    # lazy: funes.models.pair and funes.models.reranker stay off fast commands' start-up
    from funes.models.pair import pair_summary
    from funes.models.reranker import find_reranker

    rr = find_reranker()
    return {"embedder": EMBEDDER_PIN.name, "pair": pair_summary(),
            "reranker": rr.name if rr else None}  # fmt: skip
