"""What `funes ask` prints and what it hands the agent: the recalled passages cut to the
prompt's size, the answer (a rule above it and its `Sessions:` line dimmed on a terminal), the
sessions it cites that recall did not return, and what a failed agent printed."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from funes.render.formats import one_line, recall_agent
from funes.results import Result


def passages_text(result: Result, limit: int) -> str:
    """The recalled passages in recall's agent format, within ``limit`` bytes (the prompt's
    size limit): each chunk is at most 1,200 characters, but a turn next to a hit may have many
    blocks, so neighbour lines are dropped (farthest first) until the passages fit."""
    text = recall_agent(result)
    keep = max((len(h.neighbors) for h in result.hits), default=0)
    while len(text.encode()) > limit and keep > 0:
        keep //= 2
        for h in result.hits:
            h.neighbors = sorted(h.neighbors, key=lambda n: abs(n["seq"] - h.row["seq"]))[:keep]
            h.neighbors.sort(key=lambda n: n["seq"])
        text = recall_agent(result)
    return text


def answer_text(answer: str, width: int, color: bool) -> str:
    """The answer as printed: on a terminal that takes colour, a dim rule ``width`` wide above
    it and its last line (the sessions used) dimmed under the prose; else the answer alone."""
    if not color:
        return answer + "\n"
    dim, off = "\x1b[2m", "\x1b[0m"
    body, _, last = answer.rpartition("\n")
    out = f"{dim}{'─' * width}{off}\n"
    if body:  # the last line names the sessions used: dimmed under the prose
        return out + f"{body}\n{dim}{last}{off}\n"
    return out + f"{last}\n"


def unrecalled_text(sessions: Iterable[str]) -> str:
    """One `funes: …` line (for stderr) per session the answer cites that recall did not return."""
    return "".join(
        f"funes: the answer cites session {one_line(sid)}, which is not among the recalled "
        "passages — that part is not grounded in your memory\n"
        for sid in sessions
    )


def replay_text(stdout: Sequence[str], stderr: str) -> str:
    """What a failed or silent agent printed (its stdout lines as received, then its stderr),
    each stream ending its last line; "" when it printed nothing."""
    out = ""
    for text in ("".join(stdout), stderr or ""):
        if text:
            out += text if text.endswith("\n") else text + "\n"
    return out
