"""Wiring coding agents to funes: hook scripts, config merges, MCP registration.

One module per agent (``claude``, ``codex``, ``gemini``, …: ``names()``), each exposing an ``AGENT``
(an :class:`Agent`: ``add(ctx, result)``, ``remove(ctx, result)``, ``status(ctx)``) registered
under the entry-point group ``funes.agents``; nothing else in funes knows the agents' names.
What they share is in ``_common``. Everything an agent reads lives under ``$HOME`` (never
``$FUNES_HOME``); everything is idempotent and keeps every byte of the user's own configuration.

    from funes.agents import Context, add, remove, default_funes_bin
    res = add("codex", Context(home=Path.home(), funes_bin=default_funes_bin()))
    res.done, res.manual, res.problems

:mod:`funes.agents.ask` is the other direction: running an agent's own CLI on a question
grounded in recalled passages (`funes ask`).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from funes.agents._common import ConfigError, Context, Registrations, Result
from funes.agents._registry import Agent, get, names, registry

__all__ = [
    "Agent",
    "ConfigError",
    "Context",
    "Result",
    "add",
    "default_funes_bin",
    "get",
    "names",
    "registry",
    "remove",
]


def default_funes_bin() -> str:
    """``$FUNES_BIN``, else the absolute path of the running ``funes`` executable, so hooks work
    without PATH. A symlink is kept as is (a pipx or ~/.local/bin link outlives upgrades)."""
    env = os.environ.get("FUNES_BIN", "").strip()
    if env:
        return env
    argv0 = sys.argv[0] if sys.argv else ""
    if Path(argv0).name == "funes" and os.access(argv0, os.X_OK):
        return os.path.abspath(argv0)
    beside = Path(sys.executable).parent / "funes"
    if beside.exists():
        return str(beside)
    found = shutil.which("funes")
    return os.path.abspath(found) if found else "funes"


def add(agent: str, ctx: Context) -> Result:
    res = Result(agent)
    get(agent).add(ctx, res)
    if ctx.mcp_url and not res.problems:
        # `funes doctor` checks that the server behind this URL answers
        Registrations(ctx).set("mcp-http", ctx.mcp_url)
    return res


def remove(agent: str, ctx: Context) -> Result:
    res = Result(agent)
    get(agent).remove(ctx, res)
    return res
