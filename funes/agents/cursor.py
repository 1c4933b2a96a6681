"""Cursor: funes' MCP server in ``~/.cursor/mcp.json`` (``mcpServers.funes``), read by the IDE
and the CLI agent alike, and the index hook on ``stop`` (each finished agent turn) in
``~/.cursor/hooks.json``. The payload names the chat (``conversation_id``) and, not always, its
transcript (``transcript_path``); without one the hook looks for the chat's transcript under
``projects/*/agent-transcripts/``. ``CURSOR_CONFIG_DIR`` moves ``~/.cursor``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from funes.agents._common import Context
from funes.agents._mcp_json import Hooks, env_dir, mcp_json_agent
from funes.agents._registry import Asker
from funes.agents.ask import cursor_event

# `funes ask cursor`: the CLI agent's print mode, the prompt on stdin
ASK = Asker(("cursor-agent", "-p", "--output-format", "stream-json"), cursor_event)


def home(ctx: Context) -> Path:
    return env_dir("CURSOR_CONFIG_DIR", ctx.home / ".cursor")


def config(ctx: Context) -> Path:
    return home(ctx) / "mcp.json"


def hooks_file(ctx: Context) -> Path:
    return home(ctx) / "hooks.json"


def hook(command: str, event: str) -> dict[str, Any]:
    return {"command": command, "timeout": 15}


AGENT = mcp_json_agent(
    "cursor",
    config,
    hooks=Hooks(hooks_file, ("stop",), hook, skeleton={"version": 1}),
    hook_transcript='"${CURSOR_CONFIG_DIR:-$HOME/.cursor}"/projects/*/agent-transcripts/"$session".jsonl',
    ask=ASK,
)
