"""What `funes curate` prints off a terminal: the sessions of a project awaiting review."""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes.errors import counted

if TYPE_CHECKING:
    from funes.hub.curate import Session


def pending_text(
    sessions: dict[str, Session],
    pending: list[str],
    firsts: dict[str, list[str]],
    project: str,
    short: str,
) -> str:
    """One line per session pending review (oldest first, with its first prompt from
    ``firsts``), what was skipped, and how to decide; ``short`` names the memory."""
    out = []
    for sid in sorted(pending, key=lambda s: sessions[s].first_ts):
        s = sessions[sid]
        first = " ".join(((firsts.get(sid) or [""])[0]).split())[:80]
        out.append(f"  {s.date} {sid[:8]}  {s.workdir}  chunks={len(s.ids)}  {first}\n")
    other = sum(
        1 for s in sessions.values() if not s.subagent and s.repo and not s.belongs(project)
    )
    unknown = sum(1 for s in sessions.values() if not s.subagent and not s.repo)
    out.append(
        f"{counted(len(pending), 'session')} of {project} pending review; skipped {other} of other "
        f"repos and {unknown} with no repo\n"
    )
    if pending:
        out.append(f"decide with `funes curate {short} --include S… --exclude S…` (id or prefix)\n")
    return "".join(out)
