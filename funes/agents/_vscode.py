"""The VS Code extensions funes wires (Cline, Roo Code, Kilo Code): each keeps its MCP servers in
``<host>/User/globalStorage/<extension>/settings/<file>``, for whichever VS Code host it is
installed in (VS Code, Insiders, VSCodium, Cursor, Windsurf; Linux and macOS). They run no hook
funes can install, so their sessions reach the memory through `funes index`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from funes.agents._common import Context
from funes.agents._mcp_json import mcp_json_agent, stdio_entry
from funes.agents._registry import Agent
from funes.sources.cline import EXTENSIONS, task_dirs


def settings_file(ctx: Context, agent: str, name: str) -> Path:
    """The extension's MCP settings file in the first host where the extension keeps its
    storage, else in VS Code's (created on `funes add`)."""
    storages = [d.parent for d in task_dirs(ctx.home, EXTENSIONS[agent])]
    found = next((s for s in storages if s.is_dir()), None)
    if found is None:
        base = "Library/Application Support" if sys.platform == "darwin" else ".config"
        found = ctx.home / base / "Code/User/globalStorage" / EXTENSIONS[agent]
    return found / "settings" / name


def vscode_agent(agent: str, name: str, http_type: str) -> Agent:
    """``agent``'s MCP server ``funes`` in its settings file ``name``; an HTTP server is
    ``{"type": http_type, "url"}``."""

    def entry(ctx: Context) -> dict[str, Any]:
        return {**stdio_entry(ctx), "disabled": False}

    return mcp_json_agent(
        agent,
        lambda ctx: settings_file(ctx, agent, name),
        entry,
        http_entry=lambda url: {"type": http_type, "url": url, "disabled": False},
    )
