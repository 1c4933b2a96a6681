"""`funes remove AGENT`: unwire an agent (any the `funes.agents` registry holds).

Removes funes' hooks, scripts and registrations and nothing else: the user's own entries come
back byte for byte, and memories, transcripts and logs are kept. Idempotent. See docs/agents.md.
"""

from __future__ import annotations

import argparse

from funes import agents
from funes.cli._args import Parser
from funes.cli._pipe import run
from funes.cli.add import context, print_result


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes remove",
        example="funes remove codex",
        description="Unwire a coding agent: funes' hooks, scripts and registrations go, "
        "everything of yours stays. Never deletes memories or transcripts; idempotent.",
        epilog="Exit status: 0 removed (or nothing to remove; manual commands are printed "
        "when the agent's CLI is missing), 1 a config file could not be edited safely (left "
        "untouched) or an agent command failed, 2 bad arguments.",
    )
    p.add_argument(
        "agent",
        metavar="AGENT",
        choices=agents.names(),
        help="one of: " + ", ".join(agents.names()),
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args.agent))


def _main(agent: str) -> int:
    res = agents.remove(agent, context(None))
    if not res.done and not res.manual and not res.problems:
        res.did("nothing of funes was installed", False)
    return print_result("remove", res)
