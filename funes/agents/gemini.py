"""Gemini CLI: funes' MCP server and the index hook, both in ``~/.gemini/settings.json``
(``mcpServers.funes``; ``hooks.AfterAgent`` each turn, ``hooks.SessionEnd``). The hook's
payload names the session's transcript. ``GEMINI_CLI_HOME`` moves the home ``.gemini`` is in.

Gemini CLI runs hooks only with its hooks system on (``hooksConfig.enabled``; older releases
``tools.enableHooks`` and ``hooks.enabled``); funes does not flip the user's switch, `funes
doctor` says when it is off.
"""

from __future__ import annotations

from pathlib import Path

from funes.agents._common import Context
from funes.agents._mcp_json import Hooks, env_dir, hooks_off, mcp_json_agent, settings_hook
from funes.agents._registry import Asker
from funes.agents.ask import gemini_event

# `funes ask gemini`: headless off a terminal, the prompt on stdin; MCP servers are limited to
# one no server is called, so none is started
NO_MCP = "funes-ask-allows-no-mcp-server"
ASK = Asker(
    ("gemini", "--output-format", "stream-json", "--allowed-mcp-server-names", NO_MCP),
    gemini_event,
)


def config(ctx: Context) -> Path:
    return env_dir("GEMINI_CLI_HOME", ctx.home) / ".gemini" / "settings.json"


HOOKS = Hooks(
    config,
    ("AfterAgent", "SessionEnd"),
    settings_hook(("name", "type", "command", "timeout", "description")),
    grouped=True,
    # the switch of the hooks system, as releases spelled it; a hook the user disabled by name
    off=hooks_off(
        (
            (("hooksConfig", "enabled"), False),
            (("hooks", "enabled"), False),
            (("tools", "enableHooks"), False),
        ),
        disabled_in=("hooksConfig", "hooks"),
    ),
    push_events=("SessionEnd",),
)
AGENT = mcp_json_agent(
    "gemini", config, http_entry=lambda url: {"httpUrl": url}, hooks=HOOKS, ask=ASK
)
