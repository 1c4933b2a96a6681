"""Gemini CLI: funes' MCP server in ``~/.gemini/settings.json`` (``mcpServers.funes``);
``GEMINI_CLI_HOME`` moves the home ``.gemini`` is in. Sessions are indexed by `funes index`."""

from __future__ import annotations

from pathlib import Path

from funes.agents._common import Context
from funes.agents._mcp_json import env_dir, mcp_json_agent


def config(ctx: Context) -> Path:
    return env_dir("GEMINI_CLI_HOME", ctx.home) / ".gemini" / "settings.json"


AGENT = mcp_json_agent("gemini", config, http_entry=lambda url: {"httpUrl": url})
