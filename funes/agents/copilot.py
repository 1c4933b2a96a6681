"""GitHub Copilot CLI: funes' MCP server in ``~/.copilot/mcp-config.json``
(``mcpServers.funes``, a local server with every tool allowed); ``COPILOT_HOME`` moves
``~/.copilot``. Sessions are indexed by `funes index`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from funes.agents._common import Context
from funes.agents._mcp_json import env_dir, mcp_json_agent, stdio_entry


def config(ctx: Context) -> Path:
    return env_dir("COPILOT_HOME", ctx.home / ".copilot") / "mcp-config.json"


def entry(ctx: Context) -> dict[str, Any]:
    return {"type": "local", **stdio_entry(ctx), "tools": ["*"]}


AGENT = mcp_json_agent(
    "copilot", config, entry, http_entry=lambda url: {"type": "http", "url": url, "tools": ["*"]}
)
