"""GitHub Copilot CLI: funes' MCP server in ``~/.copilot/mcp-config.json`` (``mcpServers.funes``,
a local server with every tool allowed) and the index hook in a user-level hooks file of funes'
own, ``~/.copilot/hooks/funes.json`` (``Stop`` each turn, ``SessionEnd``). The events are
spelled in PascalCase so the payload is the snake_case one (``session_id``,
``transcript_path``); ``SessionEnd``'s names no transcript, so the hook finds it under
``session-state/<session_id>/``. ``COPILOT_HOME`` moves ``~/.copilot``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from funes.agents._common import Context
from funes.agents._mcp_json import Hooks, env_dir, mcp_json_agent, stdio_entry
from funes.agents._registry import Asker
from funes.agents.ask import copilot_event

# `funes ask copilot`: a prompt piped to `copilot` runs it non-interactively; JSON events out;
# no built-in MCP server, not funes', no repository instructions, no question back
ASK = Asker(
    ("copilot", "--output-format", "json", "--disable-builtin-mcps", "--disable-mcp-server",
     "funes", "--no-custom-instructions", "--no-ask-user", "--no-color"),
    copilot_event,
)  # fmt: skip


def home(ctx: Context) -> Path:
    return env_dir("COPILOT_HOME", ctx.home / ".copilot")


def config(ctx: Context) -> Path:
    return home(ctx) / "mcp-config.json"


def hooks_file(ctx: Context) -> Path:
    return home(ctx) / "hooks" / "funes.json"


def entry(ctx: Context) -> dict[str, Any]:
    return {"type": "local", **stdio_entry(ctx), "tools": ["*"]}


def hook(command: str, event: str) -> dict[str, Any]:
    return {"type": "command", "bash": command, "timeoutSec": 15}


AGENT = mcp_json_agent(
    "copilot",
    config,
    entry,
    http_entry=lambda url: {"type": "http", "url": url, "tools": ["*"]},
    hooks=Hooks(
        hooks_file,
        ("Stop", "SessionEnd"),
        hook,
        skeleton={"version": 1},
        push_events=("SessionEnd",),
    ),
    hook_transcript='"${COPILOT_HOME:-$HOME/.copilot}/session-state/$session/events.jsonl"',
    ask=ASK,
)
