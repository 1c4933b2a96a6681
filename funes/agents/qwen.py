"""Qwen Code: funes' MCP server and the index hook, both in ``~/.qwen/settings.json``
(``mcpServers.funes``; ``hooks.Stop`` each turn, ``hooks.SessionEnd``). Qwen Code's hooks take
Claude Code's shape and payload (``session_id``, ``transcript_path``); they are on unless
``disableAllHooks`` is set, which `funes doctor` reports."""

from __future__ import annotations

from pathlib import Path

from funes.agents._common import Context
from funes.agents._mcp_json import Hooks, hooks_off, mcp_json_agent, settings_hook
from funes.agents._registry import Asker
from funes.agents.ask import claude_event
from funes.agents.gemini import NO_MCP

# `funes ask qwen`: headless off a terminal, the prompt on stdin; its stream-json is Claude
# Code's (``assistant`` messages, one ``result``); MCP limited as for Gemini CLI, its origin
ASK = Asker(
    ("qwen", "--output-format", "stream-json", "--allowed-mcp-server-names", NO_MCP), claude_event
)


def config(ctx: Context) -> Path:
    return ctx.home / ".qwen" / "settings.json"


HOOKS = Hooks(
    config,
    ("Stop", "SessionEnd"),
    settings_hook(("type", "command", "name", "timeout", "statusMessage")),
    grouped=True,
    off=hooks_off(((("disableAllHooks",), True),)),
    push_events=("SessionEnd",),
)
AGENT = mcp_json_agent(
    "qwen", config, http_entry=lambda url: {"httpUrl": url}, hooks=HOOKS, ask=ASK
)
