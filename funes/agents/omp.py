"""omp (Oh My Pi): pi's extension, in omp's user extension folder
``~/.omp/agent/extensions/funes/`` (``OMP_CODING_AGENT_DIR`` moves ``~/.omp/agent``), which omp
loads by itself — no install command. It gives omp the ``recall`` and ``get`` tools (a bridge to
``funes mcp``) and runs the index hook on ``agent_end`` with the session's file, as for pi; with
a Hub memory bound it publishes it on ``session_shutdown``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from funes.agents._common import (
    INDEX_SCRIPT,
    PUSH_SCRIPT,
    Context,
    Result,
    prune_dirs,
    push_script_status,
    remove_tree,
    scripts_current,
)
from funes.agents._mcp_json import env_dir
from funes.agents._registry import Agent
from funes.agents.pi import read_beside, sync_extension

NAME = "omp"


def root(ctx: Context) -> Path:
    return env_dir("OMP_CODING_AGENT_DIR", ctx.home / ".omp" / "agent") / "extensions" / "funes"


def add(ctx: Context, res: Result) -> None:
    if ctx.mcp_url:
        res.did(
            "omp reaches funes through its extension (a bridge to `funes mcp`), not an MCP URL: "
            "--mcp-http changes nothing for omp",
            False,
        )
    changed = sync_extension(ctx, root(ctx), NAME)
    pushes = f"; push of {ctx.push_memory} on session_shutdown" if ctx.push_memory else ""
    res.did(
        f"extension in {ctx.show(root(ctx))} (tools recall, get; indexing on agent_end{pushes}; "
        "omp loads it at its next start)" + ("" if changed else ", unchanged"),
        changed,
    )


def remove(ctx: Context, res: Result) -> None:
    if remove_tree(root(ctx)):
        res.did(f"deleted {ctx.show(root(ctx))}")
        prune_dirs(root(ctx).parent, ctx.home)


def status(ctx: Context) -> dict[str, Any]:
    r = root(ctx)
    script = r / "scripts" / INDEX_SCRIPT
    present = (r / "index.ts").exists()
    return {
        "hooks": ["agent_end"] if present else [],
        "push_hooks": ["session_shutdown"] if present and (r / "push-memory").exists() else [],
        "hooks_file": str(r / "index.ts"),
        "script": str(script) if script.exists() else None,
        "script_current": scripts_current(script),
        **push_script_status(r / "scripts" / PUSH_SCRIPT),
        "commands": [],
        "funes_bin": read_beside(r / "funes-bin"),
        "mcp": present,
        "mcp_source": f"{ctx.show(r)} (the extension is omp's recall/get bridge)",
    }


AGENT = Agent(NAME, add, remove, status)
