"""Cline (the VS Code extension): funes' MCP server in its ``cline_mcp_settings.json``
(``mcpServers.funes``). Cline runs no hook funes can install: its tasks are indexed by `funes
index`."""

from __future__ import annotations

from funes.agents._vscode import vscode_agent

AGENT = vscode_agent("cline", "cline_mcp_settings.json", "streamableHttp")
