"""Cursor: funes' MCP server in ``~/.cursor/mcp.json`` (``mcpServers.funes``), read by the IDE
and the CLI agent alike; ``CURSOR_CONFIG_DIR`` moves ``~/.cursor``. Sessions are indexed by
`funes index`."""

from __future__ import annotations

from pathlib import Path

from funes.agents._common import Context
from funes.agents._mcp_json import env_dir, mcp_json_agent


def config(ctx: Context) -> Path:
    return env_dir("CURSOR_CONFIG_DIR", ctx.home / ".cursor") / "mcp.json"


AGENT = mcp_json_agent("cursor", config)
