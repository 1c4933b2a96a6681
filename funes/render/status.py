"""What `funes status` (and the MCP `status` tool) prints: a local memory's state, a remote
memory's state and what this host has not pushed to it, and how long ago something happened."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from funes.errors import counted
from funes.render.text import neutralise, one_line

if TYPE_CHECKING:
    from funes.hub.status import RemoteStatus
    from funes.store.status import Status


def status_text(st: Status, models: dict[str, str | None]) -> str:
    """A local memory's status; ``models`` names the ``embedder``, ``pair`` model and
    ``reranker`` in use."""
    lines = [f"memory: {one_line(st.label)}", f"chunks: {st.chunks}", f"sessions: {st.sessions}"]
    for h, c in st.by_agent.items():  # harness names come from the rows: someone else's, maybe
        lines.append(
            f"  {one_line(h)}: {c['sessions']} session{'s' if c['sessions'] != 1 else ''}, "
            f"{c['chunks']} chunks"
        )
    if st.without_vectors and st.backfill_pid is not None:
        pid = f" (pid {st.backfill_pid})" if st.backfill_pid else ""
        lines.append(
            f"awaiting vectors: {st.without_vectors} chunks (searchable by words now; a "
            f"backfill is running{pid} and embeds them)"
        )
    elif st.without_vectors:
        lines.append(
            f"awaiting vectors: {st.without_vectors} chunks (searchable by words now; "
            "`funes index --backfill` embeds them)"
        )
    if st.tool_results == "head":
        lines.append(
            "tool results: only each one's first piece gets a vector, by choice (the rest is "
            "searchable by words; `funes index --embed-tool-results all` embeds it all)"
        )
    if st.pending_sources:
        s = "s" if st.pending_sources != 1 else ""
        lines.append(
            f"pending indexing: {st.pending_sources} source session{s} — run `funes index`"
        )
    if st.last_indexed:
        lines.append(f"last indexed: {st.last_indexed:%Y-%m-%d %H:%M} UTC ({age(st.last_indexed)})")
    lines.append(f"embedding model: {st.model or models['embedder']}")
    if models.get("pair"):
        lines.append(f"pair model: {models['pair']}")
    rr = models["reranker"]
    lines.append(
        f"reranking: on ({rr})"
        if rr
        else "reranking: off (no cross-encoder installed; ranked by the learned second stage)"
    )
    lines.append(f"vector search: {'ANN index' if st.ann_index else 'exact (flat)'}")
    lines.append(f"disk: {st.disk_bytes / 1e6:.1f} MB")
    return neutralise("\n".join(lines) + "\n")  # a model name comes from the memory's stamp


def status_json(st: Status, models: dict[str, str | None]) -> str:
    """A local memory's status as one JSON object (`funes status --json`)."""
    doc: dict[str, Any] = {
        **st.__dict__,
        "last_indexed": st.last_indexed.isoformat() if st.last_indexed else None,
    }
    doc["models"] = models
    return json.dumps(doc, ensure_ascii=False) + "\n"


@dataclass
class CachedCopy:
    """The copy of a remote memory this machine reads: the commit it holds and when the Hub was
    last asked for its head (None: never recorded)."""

    commit: str
    checked: datetime | None


def remote_status_text(rs: RemoteStatus, copy: CachedCopy | None = None) -> str:
    """A remote memory's status, read from this machine's cached ``copy`` of it (said so), and
    the push state of the local memory towards it."""
    lines = [rs.note.rstrip("\n")] if rs.note else []
    lines.append(f"memory: {rs.label}")
    if copy is not None:
        lines.append(f"cached copy: {_copy(copy)}")
    lines += [f"chunks: {rs.chunks}", f"sessions: {rs.sessions}"]
    if rs.last_push:
        lines.append(f"last push: {rs.last_push:%Y-%m-%d %H:%M} UTC ({age(rs.last_push)})")
    if rs.local_label is not None:
        lines += ["", f"local index: {rs.local_label}"]
        if not rs.pending_sessions:
            lines.append(f"local push: up to date ({counted(rs.local_sessions, 'session')})")
        else:
            lines.append(
                f"local push: {rs.pending_sessions} of {counted(rs.local_sessions, 'session')} "
                f"pending ({rs.pending_rows} chunks) — run `funes push {rs.label}`"
            )
            if rs.held_rows:
                lines.append(
                    f"  {counted(rs.held_rows, 'pending row')} hold{'s' if rs.held_rows == 1 else ''} secrets "
                    f"({rs.held_summary}) "
                    "— run `funes scrub` first; push would hold them back"
                )
            elif rs.scan_error:
                lines.append(f"  secret check of pending rows skipped: {rs.scan_error}")
        if rs.project:
            lines.append(f"project: {rs.project} (only reviewed sessions are pushed)")
        if rs.pending_review:
            lines.append(
                f"pending review: {counted(rs.pending_review, 'session')} — run "
                f"`funes curate {rs.label}`"
            )
    return neutralise("\n".join(lines) + "\n")  # a remote's state comes from the Hub


def _copy(copy: CachedCopy) -> str:
    commit = f"commit {copy.commit[:8]}" if copy.commit else "commit unknown"
    if copy.checked is None:
        return f"{commit} (read from this machine, not the Hub)"
    return (
        f"{commit} (read from this machine, not the Hub; the Hub was last asked "
        f"{copy.checked:%Y-%m-%d %H:%M} UTC, {age(copy.checked)})"
    )


def remote_status_json(rs: RemoteStatus, copy: CachedCopy | None = None) -> str:
    """A remote memory's status as one JSON object, with its ``cached_copy``."""
    doc: dict[str, Any] = {
        **rs.__dict__,
        "last_push": rs.last_push.isoformat() if rs.last_push else None,
    }
    if copy is not None:
        doc["cached_copy"] = {
            "commit": copy.commit or None,
            "checked": copy.checked.isoformat() if copy.checked else None,
        }
    return json.dumps(doc, ensure_ascii=False) + "\n"


def age(t: datetime, now: datetime | None = None) -> str:
    """How long before ``now`` (default: this moment) ``t`` was, in words: "3 hours ago"."""
    mins = int(((now or datetime.now(UTC)) - t).total_seconds() // 60)
    if mins < 1:
        return "just now"
    if mins < 60:
        return f"{mins} minute{'s' if mins != 1 else ''} ago"
    if mins < 2880:
        h = mins // 60
        return f"{h} hour{'s' if h != 1 else ''} ago"
    d = mins // 1440
    return f"{d} day{'s' if d != 1 else ''} ago"
