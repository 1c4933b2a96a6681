"""What `funes push` (and `funes curate`, when it pushes) prints about a push."""

from __future__ import annotations

from funes.errors import counted
from funes.hub.push import PushReport


def push_text(report: PushReport) -> str:
    """What a push did: the chunks sent (or that there was nothing new), the dataset card,
    notes, sessions awaiting review and the rows the secret gate held back."""
    out = []
    if report.created_repo:
        out.append(f"created {report.label} (private)\n")
    if report.up_to_date:
        out.append(f"{report.label}: already up to date ({report.local_chunks} chunks)\n")
    else:
        out.append(f"{report.label}: pushed {report.pushed} chunks (commit {report.commit})\n")
    if report.card:
        out.append(f"  dataset card {report.card}\n")
    out.extend(f"  note: {n}\n" for n in report.notes)
    if report.pending_review:
        out.append(
            f"  {counted(report.pending_review, 'session')} on this machine pending review — "
            f"run `funes curate {report.label}`\n"
        )
    if report.held is not None and report.held.held:
        out.append(
            f"⚠ held back {counted(len(report.held.held), 'row')} containing secrets "
            f"({report.held.summary()}) — run `funes scrub` to redact them, then push again\n"
        )
    return "".join(out)
