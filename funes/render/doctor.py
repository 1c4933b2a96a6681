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
        if a["agent"] in idle:
            continue
        out.append(a["agent"])
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
    if idle:
        out.append(
            f"not wired: {', '.join(idle)} — `funes add AGENT` wires one, "
            "`funes doctor AGENT` shows one in full"
        )
    mem = rep["memory"]
    if mem is None:
        out.append("memory: none yet (run `funes index` or let a hook run)")
    else:
        line = f"memory: {mem['memory']} — {mem['chunks']} chunks, {mem['sessions']} sessions"
        if mem["without_vectors"]:
            line += f"; vectors pending for {mem['without_vectors']} (`funes index --backfill`)"
        out.append(line)
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
    http = rep.get("mcp_http")
    if http:
        if http["answers"]:
            out.append(f"mcp http: {http['url']} answers")
        else:
            out.append(
                f"mcp http: nothing answers at {http['url']} — the agents registered with "
                "`funes add --mcp-http` reach funes there; start it with `funes mcp --http`"
            )
    out.append(f"hook log: {rep['log']}")
    wide = rep.get("open_files") or {"count": 0, "paths": []}
    if wide["count"]:
        out.append(
            f"files: {wide['count']} readable by other users — funes keeps memories private "
            "(0700 directories, 0600 files); `funes doctor --fix` makes them so"
        )
        out += [f"  {p}" for p in wide["paths"][:5]]
        if wide["count"] > 5:
            out.append(f"  … and {wide['count'] - 5} more")
    else:
        out.append("files: private (readable by you alone)")
    return "\n".join(out) + "\n"


def fixed_text(failed: Sequence[tuple[Path, str]], done: int) -> str:
    """What `funes doctor --fix` did: the files it could not make private (the first ten, and
    why), then how many it made private."""
    out = [f"funes: cannot make {p} private: {why}\n" for p, why in failed[:10]]
    out.append(f"made {done} file{'' if done == 1 else 's'} private\n")
    return "".join(out)
