"""`funes add AGENT [--memory M] [--no-index] [--yes]`: wire an agent to funes (any agent the
`funes.agents` registry holds: `funes add --help` lists them).

Installs the agent's per-turn index hook and its recall tools (MCP, or pi's extension), keeping
every byte of the user's own configuration; running it again changes nothing. Then offers a
first, budgeted index of that agent's sessions. See docs/agents.md.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

from funes import agents
from funes.cli import index
from funes.cli._args import Parser
from funes.cli._pipe import run
from funes.cli._tty import confirm
from funes.errors import UsageError
from funes.mcp_server import http_url
from funes.store.paths import memory_dir

DEFAULT_URL = http_url()


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes add",
        example="funes add claude",
        description="Wire a coding agent to funes: a hook that indexes each turn, and the "
        "recall/get tools. Keeps everything of yours in the agent's config; idempotent.",
        epilog="Exit status: 0 installed (or left to the manual commands printed when the "
        "agent's CLI is missing), 1 a config file of yours could not be edited safely (left "
        "untouched; the block to merge by hand is printed) or an agent command failed, "
        "2 bad arguments. FUNES_BIN overrides the funes executable recorded in the hooks.",
    )
    p.add_argument(
        "agent",
        metavar="AGENT",
        choices=agents.names(),
        help="one of: " + ", ".join(agents.names()),
    )
    p.add_argument("--memory", metavar="M", help="memory the hooks and tools use (default: local)")
    p.add_argument("--no-index", action="store_true", help="skip the first index of its sessions")
    p.add_argument("-y", "--yes", action="store_true", help="run the first index without asking")
    p.add_argument(
        "--mcp-http",
        metavar="URL",
        nargs="?",
        const=DEFAULT_URL,
        help=f"register the machine's `funes mcp --http` server (default {DEFAULT_URL}) "
        "instead of a stdio server",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def memory_spec(spec: str | None) -> str | None:
    """A local path made absolute (hooks run from anywhere); ``local``/blank is the default."""
    if spec is None or spec.strip() in ("", "local"):
        return None
    spec = spec.strip()
    if spec.startswith(("~", ".", "/")) or os.path.exists(spec):
        return os.path.abspath(os.path.expanduser(spec))
    return spec


def context(memory: str | None, mcp_url: str | None = None) -> agents.Context:
    return agents.Context(
        home=Path.home(),
        funes_bin=agents.default_funes_bin(),
        memory=memory_spec(memory),
        mcp_url=mcp_url,
    )


def loopback_url(url: str) -> str:
    """A `funes mcp --http` URL: http on a loopback address, as the server listens."""
    u = url.strip()
    parts = urlsplit(u)
    if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise UsageError(
            f"--mcp-http must be the loopback URL `funes mcp --http` serves, such as "
            f"{DEFAULT_URL} (got {u!r})"
        )
    return u


def print_result(verb: str, res: agents.Result) -> int:
    print(f"funes {verb} {res.agent}:")
    for line in res.done:
        print(f"  {line}")
    if res.manual:
        print(f"{res.agent} is not on PATH; run these yourself where it is:")
        for cmd in res.manual:
            print(f"  {cmd}")
    for problem in res.problems:
        print(f"funes: {problem}", file=sys.stderr)
    return 1 if res.problems else 0


def _main(args: argparse.Namespace) -> int:
    url = loopback_url(args.mcp_http) if args.mcp_http is not None else None
    ctx = context(args.memory, url)
    res = agents.add(args.agent, ctx)
    status = print_result("add", res)
    if status == 0:
        first_index(args.agent, ctx.index_memory, skip=args.no_index, yes=args.yes)
    return status


def _hooked(agent: str) -> bool:
    return agents.get(agent).hooked


def first_index(agent: str, memory: str | None, skip: bool, yes: bool) -> None:
    """Offer the budgeted, text-first index of the agent's sessions."""
    # lazy: funes.sources stays off fast commands' start-up
    from funes.sources import known_roots

    cmd = f"funes index --harness {agent}" + (f" --memory {memory}" if memory else "")
    if skip:
        print(f"skipped the first index (--no-index); run `{cmd}` any time")
        return
    roots = [p for src, p in known_roots(Path.home()) if src.name == agent]
    keeps = "the hook keeps them current" if _hooked(agent) else f"`{cmd}` keeps them current"
    if not roots:
        later = "the hook indexes them as they happen" if _hooked(agent) else f"`{cmd}` reads them"
        print(f"no {agent} sessions on this machine yet; {later}")
        return
    # lazy: funes.ingest.pending stays off fast commands' start-up
    from funes.ingest.pending import pending_sources

    todo = pending_sources(memory_dir(memory), harness=agent)
    if not todo:
        print(f"your {agent} sessions are already indexed; {keeps}")
        return
    if not yes:
        if not sys.stdin.isatty():
            print(f"not a terminal: skipped the first index; run `{cmd}` (about a minute)")
            return
        s = "" if todo == 1 else "s"
        question = (
            f"funes will index your recent {agent} sessions ({todo} not indexed yet) so "
            f"recall works (about a minute, session{s} newest first). Proceed? [Y/n]"
        )
        if not confirm(question):
            print(f"skipped the first index; run `{cmd}` any time")
            return

    index_args = ["--harness", agent] + (["--memory", memory] if memory else [])
    if index.main(index_args) != 0:
        print(f"the first index did not finish; the hook catches up, or rerun `{cmd}`")
