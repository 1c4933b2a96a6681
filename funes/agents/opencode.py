"""OpenCode: funes' MCP server in ``~/.config/opencode/opencode.json`` (``mcp.funes``, a local
server whose ``command`` is the whole argv) and a plugin of funes' own in OpenCode's global
plugin folder, ``~/.config/opencode/plugins/funes.js``, that runs the index hook when a session
goes idle. OpenCode keeps its sessions in one database, which the hook indexes (the payload
names the session, not a file). ``XDG_CONFIG_HOME`` moves ``~/.config``, ``XDG_DATA_HOME``
``~/.local/share``. A config written as JSONC (with comments) is not rewritten: funes says so
and leaves it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from funes.agents._common import Context, mcp_args, packaged
from funes.agents._files import written_args
from funes.agents._mcp_json import Plugin, env_dir, mcp_json_agent
from funes.agents._registry import Asker
from funes.agents.ask import opencode_event

PLUGIN = "opencode_plugin/funes.js"
MARK = b"/* funes: hook */ []"
# `funes ask opencode`: `run` with no message reads it from stdin; JSON events out
ASK = Asker(("opencode", "run", "--format", "json"), opencode_event)


def config_dir(ctx: Context) -> Path:
    return env_dir("XDG_CONFIG_HOME", ctx.home / ".config") / "opencode"


def config(ctx: Context) -> Path:
    return config_dir(ctx) / "opencode.json"


def entry(ctx: Context) -> dict[str, Any]:
    return {"type": "local", "command": [ctx.funes_bin, *mcp_args(ctx.memory)], "enabled": True}


def plugin_files(ctx: Context, hook_args: list[str]) -> dict[Path, bytes]:
    """The plugin with the hook script's argv written in (a JSON array is a JS literal)."""
    js = packaged(PLUGIN).replace(MARK, json.dumps(hook_args).encode())
    return {config_dir(ctx) / "plugins" / "funes.js": js}


def installed_args(js: bytes) -> list[str] | None:
    """The hook script's argv as :func:`plugin_files` wrote it into the plugin."""
    return written_args(js, b"const HOOK = ")


AGENT = mcp_json_agent(
    "opencode",
    config,
    entry,
    key="mcp",
    http_entry=lambda url: {"type": "remote", "url": url, "enabled": True},
    plugin=Plugin(plugin_files, ("session.idle",), installed_args),
    hook_transcript='"${XDG_DATA_HOME:-$HOME/.local/share}/opencode/opencode.db"',
    ask=ASK,
)
