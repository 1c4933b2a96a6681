"""The agents funes can wire, found through the entry-point group ``funes.agents``.

Each agent is one module exposing an ``AGENT`` (an :class:`Agent`), registered in
``pyproject.toml`` (or a plug-in package's) as ``NAME = "package.module:AGENT"``; `funes add`,
`remove`, `doctor`, `funes --help` and the index hook script all read this registry, so a new
agent is one module and one entry point. Agents are listed in name order.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from funes import plugins
from funes.errors import FunesError, UsageError

if TYPE_CHECKING:
    from funes.agents._common import Context, Result

GROUP = plugins.AGENTS
# An agent's name is a word of the CLI and a pattern in the hook script's `case`.
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")


@dataclass(frozen=True)
class Asker:
    """How `funes ask` runs an agent's CLI on one question: ``argv`` is the non-interactive
    command line (the prompt goes on its standard input, never here, and every MCP server the
    CLI lets funes switch off is off); ``event`` reads one JSON line of its output stream into a
    :class:`funes.agents.ask.Event` (what it is doing, the answer or a piece of it)."""

    argv: tuple[str, ...]
    event: Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class Agent:
    """One coding agent: ``name`` is its CLI spelling (`funes add NAME`), also the hook
    scripts' first argument and the ``--harness`` their fallback indexes.

    ``add``/``remove`` wire and unwire it, recording what they did in the ``Result``; ``status``
    says what is installed, for `funes doctor` (keys ``hooks``, ``push_hooks``, ``hooks_file``,
    ``script``, ``script_current``, ``commands``, ``mcp``; optionally ``funes_bin``,
    ``mcp_source``, ``note``). ``hook_transcript`` is for an agent whose hook payload names no
    transcript: a shell word (expanded by the index hook, ``$HOME`` and the agent's environment
    at hand) naming the file to index instead.
    """

    name: str
    add: Callable[[Context, Result], None]
    remove: Callable[[Context, Result], None]
    status: Callable[[Context], dict[str, Any]]
    hook_transcript: str | None = None
    # False for an agent funes wires without a hook (its sessions are picked up by `funes index`)
    hooked: bool = True
    # set for an agent whose CLI answers `funes ask` (a prompt on stdin, a JSON stream out)
    ask: Asker | None = None


def names() -> list[str]:
    """The registered agents' names, in the order funes lists them (no agent module is
    imported)."""
    return plugins.names(GROUP)


@cache
def registry() -> dict[str, Agent]:
    """Every registered agent by name, in name order."""
    found: dict[str, Agent] = {}
    for name in names():
        value = plugins.entry_points(GROUP)[name]
        agent = plugins.load(value)
        if not isinstance(agent, Agent) or agent.name != name or not _NAME.fullmatch(name):
            raise FunesError(f"entry point {name} ({value}) is not a funes Agent named {name!r}")
        found[name] = agent
    if not found:
        raise FunesError("no agents are registered — is funes installed? (pip install -e .)")
    return found


def get(name: str) -> Agent:
    """The registered agent called ``name``."""
    if name not in names():
        raise UsageError(f"unknown agent {name!r}: choose one of {', '.join(names())}")
    return registry()[name]
