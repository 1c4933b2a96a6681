"""Roo Code (the VS Code extension): funes' MCP server in its ``mcp_settings.json``
(``mcpServers.funes``). Roo Code runs no hook funes can install: its tasks are indexed by
`funes index`."""

from __future__ import annotations

from funes.agents._vscode import vscode_agent

AGENT = vscode_agent("roo", "mcp_settings.json", "streamable-http")
