"""Options shared by `funes recall` and `funes-query`.

Values are kept as typed: funes.validate checks them (and says what is accepted), the same
way it checks a `funes-query` JSON line or an MCP call.
"""

from __future__ import annotations

import argparse
from typing import Any

from funes.cli._args import harness_option
from funes.records import QUERY_OPTIONS
from funes.retrieval import DEFAULT_HALF_LIFE


def add_search_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-k", "--k", metavar="N", default=8, help="hits to return (default 8)")
    p.add_argument("--candidates", metavar="N", default=100, help="pool per leg (default 100)")
    p.add_argument("--neighbors", metavar="N", default=1, help="±seq window of context (default 1)")
    p.add_argument(
        "--half-life",
        metavar="DAYS",
        default=DEFAULT_HALF_LIFE,
        help=f"recency half-life in days, 0 = off (default {DEFAULT_HALF_LIFE:g})",
    )
    p.add_argument(
        "--type", dest="block_type", metavar="T", help="text, thinking, tool_use, tool_result"
    )
    harness_option(
        p,
        metavar="H",
        action="append",
        help="an agent: %(agents)s (claude_code = claude); several: claude,codex "
        "or --harness twice",
    )
    p.add_argument(
        "--role",
        metavar="R",
        action="append",
        help="turns of this role: user, assistant, tool, system (several: user,assistant)",
    )
    p.add_argument("--workdir", metavar="DIR", help="a working directory (path or munged)")
    p.add_argument("--repo", metavar="OWNER/NAME", help="a git remote")
    p.add_argument("--session", metavar="ID", help="one session (the agent's own session id)")
    p.add_argument("--since", metavar="WHEN", help="turns at or after: 2026-03-01, 7d, 12h")
    p.add_argument(
        "--until", metavar="WHEN", help="turns up to: 2026-03-01 (that whole day), 30d (ago)"
    )
    p.add_argument(
        "--memory",
        metavar="M",
        help="a memory: a directory, owner/name on the Hub, or several (local,owner/name); "
        "default: your local memory",
    )


def search_values(args: argparse.Namespace) -> dict[str, Any]:
    """The numbers and filters as typed, for funes.validate.query."""
    return {k: getattr(args, k) for k in QUERY_OPTIONS}
