"""Qwen Code: funes' MCP server and the index hook, both in ``~/.qwen/settings.json``
(``mcpServers.funes``; ``hooks.Stop`` each turn, ``hooks.SessionEnd``). Qwen Code's hooks take
Claude Code's shape and payload (``session_id``, ``transcript_path``); they are on unless
``disableAllHooks`` is set, which `funes doctor` reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from funes.agents._common import PUSH_SCRIPT, Context
from funes.agents._mcp_json import HOOK_STATUS, PUSH_STATUS, Hooks, mcp_json_agent
from funes.agents._registry import Asker
from funes.agents.ask import claude_event
from funes.agents.gemini import NO_MCP

HOOK_NAME = "funes-index"
PUSH_NAME = "funes-push"
# `funes ask qwen`: headless off a terminal, the prompt on stdin; its stream-json is Claude
# Code's (``assistant`` messages, one ``result``); MCP limited as for Gemini CLI, its origin
ASK = Asker(
    ("qwen", "--output-format", "stream-json", "--allowed-mcp-server-names", NO_MCP), claude_event
)


def config(ctx: Context) -> Path:
    return ctx.home / ".qwen" / "settings.json"


def hook(command: str, event: str) -> dict[str, Any]:
    # timeout in milliseconds; the script returns at once, the work is detached
    push = PUSH_SCRIPT in command
    return {
        "type": "command",
        "command": command,
        "name": PUSH_NAME if push else HOOK_NAME,
        "timeout": 15000,
        "statusMessage": PUSH_STATUS if push else HOOK_STATUS,
    }


def off(doc: dict[str, Any]) -> str | None:
    if doc.get("disableAllHooks") is True:
        return "hooks are switched off in settings.json (disableAllHooks = true)"
    return None


AGENT = mcp_json_agent(
    "qwen",
    config,
    http_entry=lambda url: {"httpUrl": url},
    hooks=Hooks(
        config, ("Stop", "SessionEnd"), hook, grouped=True, off=off, push_events=("SessionEnd",)
    ),
    ask=ASK,
)
