"""Qwen Code: funes' MCP server in ``~/.qwen/settings.json`` (``mcpServers.funes``). Sessions
are indexed by `funes index`."""

from __future__ import annotations

from pathlib import Path

from funes.agents._common import Context
from funes.agents._mcp_json import mcp_json_agent


def config(ctx: Context) -> Path:
    return ctx.home / ".qwen" / "settings.json"


AGENT = mcp_json_agent("qwen", config, http_entry=lambda url: {"httpUrl": url})
