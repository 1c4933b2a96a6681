"""OpenCode: funes' MCP server in ``~/.config/opencode/opencode.json`` (``mcp.funes``, a local
server whose ``command`` is the whole argv); ``XDG_CONFIG_HOME`` moves ``~/.config``. A config
written as JSONC (with comments) is not rewritten: funes says so and leaves it. Sessions are
indexed by `funes index`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from funes.agents._common import Context, mcp_args
from funes.agents._mcp_json import env_dir, mcp_json_agent


def config(ctx: Context) -> Path:
    return env_dir("XDG_CONFIG_HOME", ctx.home / ".config") / "opencode" / "opencode.json"


def entry(ctx: Context) -> dict[str, Any]:
    return {"type": "local", "command": [ctx.funes_bin, *mcp_args(ctx.memory)], "enabled": True}


AGENT = mcp_json_agent(
    "opencode",
    config,
    entry,
    key="mcp",
    http_entry=lambda url: {"type": "remote", "url": url, "enabled": True},
)
