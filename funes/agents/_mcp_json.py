"""Agents wired through one JSON config file that lists MCP servers (Gemini CLI, Qwen Code,
Copilot CLI, Cursor, OpenCode): `funes add` writes funes' entry into the agent's own file,
`funes remove` takes it out and, when nothing else changed, puts back the user's exact bytes
(``Originals``); `funes doctor` reads the entry back.

These agents' sessions reach the memory through `funes index` (a bare run sweeps them all):
`funes add` says so, and how to schedule one, instead of installing a hook.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from funes.agents._common import (
    ConfigError,
    Context,
    Result,
    load_json_object,
    mcp_args,
    restore_json_user_file,
    same,
    write_json_user_file,
)
from funes.agents._registry import Agent

SERVER = "funes"
SCHEDULE = "its sessions are indexed by `funes index` (no hook): run it, or schedule it — e.g. `crontab -e` → `*/15 * * * * {bin} index -q`"


def env_dir(name: str, default: Path) -> Path:
    """The directory an agent's environment variable names (``~`` expanded), else ``default``."""
    value = os.environ.get(name, "").strip()
    return Path(os.path.expanduser(value)) if value else default


def stdio_entry(ctx: Context) -> dict[str, Any]:
    """The common ``mcpServers`` shape: ``{"command", "args"}``."""
    return {"command": ctx.funes_bin, "args": mcp_args(ctx.memory)}


def url_entry(url: str) -> dict[str, Any]:
    """The common shape of an HTTP server (`funes add --mcp-http`): ``{"url"}``."""
    return {"url": url}


def mcp_json_agent(
    name: str,
    config: Callable[[Context], Path],
    entry: Callable[[Context], dict[str, Any]] = stdio_entry,
    key: str = "mcpServers",
    http_entry: Callable[[str], dict[str, Any]] = url_entry,
) -> Agent:
    """An :class:`Agent` whose wiring is ``<key>.funes`` in the JSON file ``config(ctx)``:
    ``entry(ctx)``, or ``http_entry(url)`` when ``ctx.mcp_url`` names the machine's
    `funes mcp --http` server."""

    def wanted(ctx: Context) -> dict[str, Any]:
        return http_entry(ctx.mcp_url) if ctx.mcp_url else entry(ctx)

    def add(ctx: Context, res: Result) -> None:
        path = config(ctx)
        try:
            doc, raw = load_json_object(path)
        except ConfigError as e:
            res.problem(f"{e}; left untouched — add the MCP server `{SERVER}` by hand")
            return
        assert doc is not None
        servers = doc.get(key)
        if servers is not None and not isinstance(servers, dict):
            res.problem(f"{ctx.show(path)}: its {key!r} is not an object; left untouched")
            return
        want = wanted(ctx)
        pristine = not (isinstance(servers, dict) and SERVER in servers)
        new = copy.deepcopy(doc)
        new.setdefault(key, {})[SERVER] = want
        if write_json_user_file(ctx, path, doc, raw, new, pristine):
            res.did(f"MCP server {SERVER} in {ctx.show(path)} ({key}.{SERVER})")
        else:
            res.did(f"MCP server {SERVER} already in {ctx.show(path)}", False)
        res.did(SCHEDULE.format(bin=ctx.funes_bin), False)

    def remove(ctx: Context, res: Result) -> None:
        path = config(ctx)
        try:
            doc, raw = load_json_object(path)
        except ConfigError as e:
            res.problem(f"{e}; left untouched — remove the MCP server `{SERVER}` by hand")
            return
        assert doc is not None
        servers = doc.get(key)
        if raw is None or not isinstance(servers, dict) or SERVER not in servers:
            res.did(f"no MCP server {SERVER} in {ctx.show(path)}", False)
            return
        stripped = copy.deepcopy(doc)
        del stripped[key][SERVER]
        if restore_json_user_file(ctx, path, stripped, raw, key):
            res.did(f"removed MCP server {SERVER} from {ctx.show(path)}")

    def status(ctx: Context) -> dict[str, Any]:
        path = config(ctx)
        mcp: bool | None
        try:
            doc, _ = load_json_object(path)
            servers = (doc or {}).get(key)
            mcp = isinstance(servers, dict) and same(servers.get(SERVER), wanted(ctx))
            if isinstance(servers, dict) and SERVER in servers and not mcp:
                mcp = True  # registered, with another binary or memory
        except ConfigError:
            mcp = None
        return {
            "hooks": [],
            "hooks_file": str(path),
            "script": None,
            "script_current": False,
            "commands": [],
            "mcp": mcp,
            "mcp_source": f"{ctx.show(path)} {key}.{SERVER}",
            "note": "no hook: sessions are indexed by `funes index`",
        }

    return Agent(name, add, remove, status, hooked=False)
