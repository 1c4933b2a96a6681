"""`funes doctor`: for each agent, are its hooks and MCP installed, when did the hook last run
and how did it end; and what indexing work is pending in the memory.

Hooks are read from the files `funes add` writes; MCP is asked of the agent's CLI (None when
the CLI is not on PATH: unknown), except Hermes, whose registration is the config entry funes
writes itself.
"""

from __future__ import annotations

import json
import os
import shlex
import urllib.request
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from funes.agents import Context, get, hooklog, names
from funes.agents._common import COMMON_SCRIPT, Registrations, sources_common
from funes.hub.spec import parse_one
from funes.store.paths import TABLE
from funes.store.private import too_open
from funes.store.state import IndexState


@dataclass
class AgentReport:
    agent: str
    hooks: list[str]
    hooks_file: str
    script: str | None
    script_current: bool
    funes_bin: str | None
    funes_bin_ok: bool
    mcp: bool | None
    mcp_source: str
    last_start: str | None = None
    last_end: str | None = None
    last_outcome: str | None = None
    last_detail: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    push_hooks: list[str] = field(default_factory=list)
    last_push: str | None = None  # time of the last push hook ending
    last_push_outcome: str | None = None  # "ok (…)", "WARN — secrets held back; …", "FAILED …"
    last_push_detail: list[str] = field(default_factory=list)

    @property
    def installed(self) -> bool:
        return bool(self.hooks) or bool(self.mcp)


def _recorded_bin(commands: list[str]) -> str | None:
    for c in commands:
        try:
            words = shlex.split(c)
        except ValueError:
            continue
        if "--funes" in words[:-1]:
            return words[words.index("--funes") + 1]
    return None


def agent_report(agent: str, ctx: Context, entries: list[hooklog.Entry]) -> AgentReport:
    st: dict[str, Any] = get(agent).status(ctx)
    funes_bin = st.get("funes_bin") or _recorded_bin(st.get("commands", []))
    rep = AgentReport(
        agent=agent,
        hooks=st["hooks"],
        hooks_file=ctx.show(Path(st["hooks_file"])),
        script=ctx.show(Path(st["script"])) if st.get("script") else None,
        script_current=bool(st.get("script_current")),
        funes_bin=funes_bin,
        funes_bin_ok=bool(funes_bin) and os.access(str(funes_bin), os.X_OK),
        mcp=st.get("mcp"),
        mcp_source=st.get("mcp_source", f"{agent} mcp get funes"),
    )
    rep.push_hooks = list(st.get("push_hooks") or [])
    if st.get("note"):
        rep.notes.append(st["note"])
    if rep.hooks and rep.script is None:
        rep.notes.append(f"hook configured but its script is missing: rerun `funes add {agent}`")
    elif (
        st.get("script")
        and not (Path(st["script"]).parent / COMMON_SCRIPT).exists()
        and sources_common(Path(st["script"]))
    ):
        rep.notes.append(
            f"{COMMON_SCRIPT}, which the hook scripts source, is missing beside them (the hook "
            f"does nothing without it): rerun `funes add {agent}`"
        )
    elif rep.script and not rep.script_current:
        # An older, self-contained script (from before the common file) still runs.
        rep.notes.append(f"hook script is out of date: rerun `funes add {agent}` to update")
    if rep.push_hooks and "push_script" in st:
        if st["push_script"] is None:
            rep.notes.append(
                "push hook configured but its script is missing: rerun "
                f"`funes add {agent} --memory OWNER/NAME`"
            )
        elif not st.get("push_script_current"):
            rep.notes.append(f"push hook script is out of date: rerun `funes add {agent}`")
    if rep.hooks and funes_bin and not rep.funes_bin_ok:
        rep.notes.append(
            f"recorded funes executable {funes_bin} is gone: rerun `funes add {agent}`"
        )
    start, end = hooklog.last_run(agent, entries)
    if start:
        rep.last_start = start.ts
    if end:
        rep.last_end = end.ts
        rep.last_outcome = end.message
        rep.last_detail = end.detail[-5:]
    pushed = hooklog.last_push(agent, entries)
    if pushed:
        rep.last_push = pushed.ts
        rep.last_push_outcome = pushed.message[len("push: ") :]
        rep.last_push_detail = pushed.detail[-5:]
        if rep.last_push_outcome.startswith("WARN"):
            rep.notes.append("the last push held rows back (secrets): run `funes scrub`, then push")
    return rep


def pending(memory: str | None = None) -> dict[str, Any] | None:
    """Work the memory still owes (chunks stored without vectors) and what is wrong with it:
    chunk ids stored more than once (a raced write), indexing-state entries for transcript
    files that no longer exist. None when no memory opens."""
    try:
        one = parse_one(memory)
        if one.path is not None and not (one.path / f"{TABLE}.lance").is_dir():
            return None  # no local memory yet: nothing to read
        # lazy: numpy and pyarrow load only to read a memory's ids
        import pyarrow.compute as pc

        from funes.memories import open_one

        mem = open_one(memory)
        counts = mem.counts()
        ids = mem.rows(columns=("id",)).column("id")
        duplicates = len(ids) - pc.count_distinct(ids).as_py()
    # doctor reports what it can read: a memory it cannot is left out, never a traceback
    except Exception:
        return None
    state = IndexState.load(mem.path)
    stale = [k for k in state.entries if k.startswith("/") and not os.path.exists(k)]
    return {
        "memory": str(mem.path),
        "chunks": counts.chunks,
        "sessions": counts.sessions,
        "without_vectors": counts.without_vectors,
        "duplicate_rows": duplicates,
        "stale_state_entries": len(stale),
        "stale_examples": stale[:3],
    }


def report(
    ctx: Context, agents: tuple[str, ...] | None = None, memory: str | None = None
) -> dict[str, Any]:
    """The doctor's report on ``agents`` (default: every registered agent)."""
    # lazy: funes.hub.remote stays off fast commands' start-up
    from funes.hub.remote import private_roots

    entries = hooklog.read()
    wide = too_open(private_roots())
    url = Registrations(ctx).get("mcp-http")
    if isinstance(url, str) and url and not ctx.mcp_url:
        ctx = replace(ctx, mcp_url=url)  # agents were registered with the HTTP server's URL
    return {
        "checked": datetime.now(UTC).isoformat(timespec="seconds"),
        "log": str(hooklog.log_path()),
        "agents": [
            asdict(agent_report(a, ctx, entries)) for a in (names() if agents is None else agents)
        ],
        "memory": pending(memory),
        "open_files": {"count": len(wide), "paths": [str(p) for p in wide[:20]]},
        "mcp_http": {"url": ctx.mcp_url, "answers": http_answers(ctx.mcp_url)}
        if ctx.mcp_url
        else None,
    }


def http_answers(url: str, timeout: float = 3.0) -> bool:
    """Whether the MCP server at ``url`` (`funes mcp --http`) answers a JSON-RPC ping."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    req = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status == 200 and json.loads(r.read()).get("result") == {}
    except (OSError, ValueError):
        return False
