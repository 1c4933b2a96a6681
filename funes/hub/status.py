"""`funes status OWNER/NAME`: what a remote memory holds and what this host has not pushed.

Counts come from the cached snapshot (see :mod:`funes.hub.remote`: no request while the head is
fresh). "Pending" sessions are local sessions with at least one chunk the remote lacks; the gate
is dry-run over their rows so the user learns what `funes push` would hold back before pushing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from funes.hub import receipt
from funes.hub.gate import scan as gate_scan
from funes.hub.spec import MemorySpec

if TYPE_CHECKING:
    from funes.store.memory import Memory


@dataclass
class RemoteStatus:
    label: str
    chunks: int
    sessions: int
    last_push: datetime | None
    note: str = ""
    local_label: str | None = None
    local_sessions: int = 0
    pending_sessions: int = 0
    pending_rows: int = 0
    held_rows: int = 0
    held_summary: str = ""
    scan_error: str = ""
    project: str = ""
    pending_review: int = 0
    extra: dict[str, str] = field(default_factory=dict)


def remote_status(spec: MemorySpec, remote: Memory, scan: bool = True) -> RemoteStatus:

    # lazy: funes.hub.remote and numpy stay off fast commands' start-up
    from funes.hub.remote import load_state
    from funes.store.memory import MemoryMissing, open_memory

    remote_ids = remote.existing_ids()
    doc = load_state(spec)
    last = None
    if doc.get("last_modified"):
        last = datetime.fromisoformat(str(doc["last_modified"]).replace("Z", "+00:00"))
        last = last if last.tzinfo else last.replace(tzinfo=UTC)
    st = RemoteStatus(spec.label, len(remote_ids), remote.session_count(), last, note=remote.note)
    try:
        local = open_memory(None)
    except MemoryMissing:
        return st
    if not remote.origin.remote:  # offline and fell back to the local memory
        return st
    st.local_label = local.label
    t = local.rows(columns=("id", "session_id"))
    have = remote_ids | (receipt.load(spec) or set())
    # lazy: funes.hub.curate stays off fast commands' start-up
    from funes.hub.curate import project_of_dir, selection_for

    selection = selection_for(spec, project_of_dir(remote.path), local)
    shipped: set[str] | None = None
    if selection is not None:  # a project memory: only curated sessions are its to push
        st.project = selection.project
        st.pending_review = len(selection.pending(have))
        shipped = set(selection.ship)
    pending: dict[str, list[str]] = {}
    sessions = set()
    for cid, sid in zip(
        t.column("id").to_pylist(), t.column("session_id").to_pylist(), strict=True
    ):
        sessions.add(sid)
        if cid not in have and (shipped is None or cid in shipped):
            pending.setdefault(sid, []).append(cid)
    st.local_sessions = len(sessions)
    st.pending_sessions = len(pending)
    ids = [i for v in pending.values() for i in v]
    st.pending_rows = len(ids)
    if scan and ids:
        # lazy: funes.secrets.scanner stays off fast commands' start-up
        from funes.secrets.scanner import ScannerError

        try:
            res = gate_scan(local, ids)
            st.held_rows, st.held_summary = len(res.held), res.summary()
        except ScannerError as e:
            st.scan_error = str(e)
    return st
