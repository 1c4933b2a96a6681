"""`funes doctor [AGENT…] [--memory M] [--json]`: is each agent wired, and is its hook working?

For each agent: hooks installed (from the files `funes add` writes), MCP registered (asked of the
agent's CLI; unknown without it), when the hook last ran and how it ended (hooks.log); then the
memory's pending work. See docs/agents.md.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from typing import Any

from funes import agents
from funes.agents import doctor
from funes.cli._args import Parser
from funes.cli._pipe import run
from funes.cli.add import context
from funes.render.doctor import doctor_text, fixed_text
from funes.store.private import make_private, too_open


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes doctor",
        example="funes doctor codex",
        description="Check each agent's funes wiring: hooks, MCP, the hook's last run.",
        epilog="Exit status: 0 (the report is informational), 2 bad arguments.",
    )
    names = ", ".join(agents.names())
    p.add_argument("agents", nargs="*", metavar="AGENT", help=f"any of {names}")
    p.add_argument("--memory", metavar="M", help="memory whose pending work to show")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument(
        "--fix",
        action="store_true",
        help="make funes' files private (remove group and other permissions) without asking",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    for a in args.agents:
        if a not in agents.names():
            near = difflib.get_close_matches(a, agents.names(), n=1, cutoff=0.7)
            hint = f" (did you mean {near[0]}?)" if near else ""
            p.error(f"unknown agent {a!r} (choose from {', '.join(agents.names())}){hint}")
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    rep = doctor.report(context(None), tuple(args.agents) or None, memory=args.memory)
    if args.json:
        print(json.dumps(rep))
    else:
        print(doctor_text(rep, every=not args.agents), end="")
    if rep["open_files"]["count"] and (args.fix or (not args.json and _ask_fix())):
        _fix(rep)
    return 0


def _ask_fix() -> bool:
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return False
    sys.stderr.write("Make them private now (chmod go-rwx)? [Y/n] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("", "y", "yes")


def _fix(rep: dict[str, Any]) -> None:
    # lazy: funes.hub.remote stays off fast commands' start-up
    from funes.hub.remote import private_roots

    wide = too_open(private_roots())
    failed = make_private(wide)
    sys.stderr.write(fixed_text(failed, len(wide) - len(failed)))
    rep["open_files"] = {"count": len(failed), "paths": [str(p) for p, _ in failed[:20]]}
