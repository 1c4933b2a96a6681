"""What `funes doctor` prints: each agent's wiring and its hook's last run, the memory's pending
work, the MCP HTTP server and the privacy of funes' files."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any


def _ago(ts: str | None, now: datetime) -> str:
    if not ts:
        return ""
    try:
        secs = (now - datetime.fromisoformat(ts)).total_seconds()
    except (ValueError, TypeError):
        return ""
    if secs < 90:
        return f" ({secs:.0f} s ago)"
    if secs < 90 * 60:
        return f" ({secs / 60:.0f} min ago)"
    if secs < 36 * 3600:
        return f" ({secs / 3600:.1f} h ago)"
    return f" ({secs / 86400:.0f} days ago)"


def unwired(a: dict[str, Any]) -> bool:
    """Nothing of funes on this agent: no hook, no MCP registration, no hook or push run, no
    note but the one saying it has no hook."""
    return not (
        a["hooks"]
        or a["mcp"]
        or a["last_start"]
        or a["last_end"]
        or a.get("push_hooks")
        or a.get("last_push")
        or any(not n.startswith("no hook:") for n in a["notes"])
    )


def doctor_text(rep: dict[str, Any], every: bool = True) -> str:
    """The report of :func:`funes.agents.doctor.report` as text. ``every`` (no agent named): the agents funes is not wired to are
    named on one line rather than four lines each, so the ones wired stand out."""
    now = datetime.now().astimezone()
    out: list[str] = []
    idle = [a["agent"] for a in rep["agents"] if every and unwired(a)]
    for a in rep["agents"]:
        if a["agent"] not in idle:
            out += _agent_lines(a, now)
    if idle:
        out.append(
            f"not wired: {', '.join(idle)} — `funes add AGENT` wires one, "
            "`funes doctor AGENT` shows one in full"
        )
    out += _memory_lines(rep["memory"])
    out += _http_lines(rep.get("mcp_http"))
    out.append(f"hook log: {rep['log']}")
    out += _files_lines(rep.get("open_files") or {"count": 0, "paths": []})
    return "\n".join(out) + "\n"


def _agent_lines(a: dict[str, Any], now: datetime) -> list[str]:
    """One agent's part of the report: its hooks, MCP registration, last hook run and push."""
    out = [a["agent"]]
    if a["hooks"]:
        out.append(f"  hooks: installed ({', '.join(a['hooks'])}) in {a['hooks_file']}")
    else:
        out.append("  hooks: not installed")
    mcp = {True: "registered", False: "not registered", None: "unknown"}[a["mcp"]]
    if a["mcp"] is None:
        mcp += f" ({a['agent']} is not on PATH)"
    out.append(f"  mcp: {mcp}")
    if a["last_start"] or a["last_end"]:
        ended = a["last_outcome"] or "still running, or never finished"
        when = a["last_end"] or a["last_start"]
        out.append(f"  last hook run: {when}{_ago(when, now)}: {ended}")
        out += [f"    {line}" for line in a["last_detail"]]
    else:
        out.append("  last hook run: never")
    if a.get("push_hooks"):
        out.append(f"  push hooks: {', '.join(a['push_hooks'])}")
    if a.get("last_push"):
        when = a["last_push"]
        out.append(f"  last push: {when}{_ago(when, now)}: {a['last_push_outcome']}")
        out += [f"    {line}" for line in a["last_push_detail"]]
    out += [f"  note: {n}" for n in a["notes"]]
    return out


def _memory_lines(mem: dict[str, Any] | None) -> list[str]:
    """What the local memory holds, and what doctor found wrong in it."""
    if mem is None:
        return ["memory: none yet (run `funes index` or let a hook run)"]
    line = f"memory: {mem['memory']} — {mem['chunks']} chunks, {mem['sessions']} sessions"
    if mem["without_vectors"]:
        line += f"; vectors pending for {mem['without_vectors']} (`funes index --backfill`)"
    out = [line]
    if mem.get("duplicate_rows"):
        out.append(
            f"  {mem['duplicate_rows']} duplicate rows: chunk ids stored more than once "
            "(two writers raced); recall shows each passage once"
        )
    if mem.get("stale_state_entries"):
        out.append(
            f"  {mem['stale_state_entries']} indexed transcript files no longer exist (their "
            "sessions stay in the memory), e.g. " + ", ".join(mem["stale_examples"][:1])
        )
    return out


def _http_lines(http: dict[str, Any] | None) -> list[str]:
    """Whether the machine's `funes mcp --http` server answers (when agents are wired to it)."""
    if not http:
        return []
    if http["answers"]:
        return [f"mcp http: {http['url']} answers"]
    return [
        f"mcp http: nothing answers at {http['url']} — the agents registered with "
        "`funes add --mcp-http` reach funes there; start it with `funes mcp --http`"
    ]


def _files_lines(wide: dict[str, Any]) -> list[str]:
    """Whether funes' files are private, and the first few that are not."""
    if not wide["count"]:
        return ["files: private (readable by you alone)"]
    out = [
        f"files: {wide['count']} readable by other users — funes keeps memories private "
        "(0700 directories, 0600 files); `funes doctor --fix` makes them so"
    ]
    out += [f"  {p}" for p in wide["paths"][:5]]
    if wide["count"] > 5:
        out.append(f"  … and {wide['count'] - 5} more")
    return out


def fixed_text(failed: Sequence[tuple[Path, str]], done: int) -> str:
    """What `funes doctor --fix` did: the files it could not make private (the first ten, and
    why), then how many it made private."""
    out = [f"funes: cannot make {p} private: {why}\n" for p, why in failed[:10]]
    out.append(f"made {done} file{'' if done == 1 else 's'} private\n")
    return "".join(out)
