"""Gemini CLI: funes' MCP server and the index hook, both in ``~/.gemini/settings.json``
(``mcpServers.funes``; ``hooks.AfterAgent`` each turn, ``hooks.SessionEnd``). The hook's
payload names the session's transcript. ``GEMINI_CLI_HOME`` moves the home ``.gemini`` is in.

Gemini CLI runs hooks only with its hooks system on (``hooksConfig.enabled``; older releases
``tools.enableHooks`` and ``hooks.enabled``); funes does not flip the user's switch, `funes
doctor` says when it is off.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from funes.agents._common import PUSH_SCRIPT, Context
from funes.agents._mcp_json import HOOK_STATUS, PUSH_STATUS, Hooks, env_dir, mcp_json_agent
from funes.agents._registry import Asker
from funes.agents.ask import gemini_event

HOOK_NAME = "funes-index"
PUSH_NAME = "funes-push"
# `funes ask gemini`: headless off a terminal, the prompt on stdin; MCP servers are limited to
# one no server is called, so none is started
NO_MCP = "funes-ask-allows-no-mcp-server"
ASK = Asker(
    ("gemini", "--output-format", "stream-json", "--allowed-mcp-server-names", NO_MCP),
    gemini_event,
)


def config(ctx: Context) -> Path:
    return env_dir("GEMINI_CLI_HOME", ctx.home) / ".gemini" / "settings.json"


def hook(command: str, event: str) -> dict[str, Any]:
    # timeout in milliseconds; the script returns at once, the work is detached
    push = PUSH_SCRIPT in command
    return {
        "name": PUSH_NAME if push else HOOK_NAME,
        "type": "command",
        "command": command,
        "timeout": 15000,
        "description": PUSH_STATUS if push else HOOK_STATUS,
    }


def off(doc: dict[str, Any]) -> str | None:
    """Why Gemini CLI will not run the hook, from its settings."""
    for path in (("hooksConfig", "enabled"), ("hooks", "enabled"), ("tools", "enableHooks")):
        section = doc.get(path[0])
        if isinstance(section, dict) and section.get(path[1]) is False:
            return f"hooks are switched off in settings.json ({'.'.join(path)} = false)"
    for section in (doc.get("hooksConfig"), doc.get("hooks")):
        disabled = section.get("disabled") if isinstance(section, dict) else None
        if isinstance(disabled, list) and HOOK_NAME in disabled:
            return (
                f"the hook {HOOK_NAME} is disabled in settings.json (`/hooks enable {HOOK_NAME}`)"
            )
    return None


AGENT = mcp_json_agent(
    "gemini",
    config,
    http_entry=lambda url: {"httpUrl": url},
    hooks=Hooks(
        config,
        ("AfterAgent", "SessionEnd"),
        hook,
        grouped=True,
        off=off,
        push_events=("SessionEnd",),
    ),
    ask=ASK,
)
