"""`funes mcp [--memory M]`: the MCP server on stdio (recall, get, status for agents)."""

from __future__ import annotations

import argparse
import os
import sys

from funes.cli._args import Parser
from funes.cli._pipe import run
from funes.errors import UsageError


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes mcp",
        description="Serve the `recall`, `get` and `status` tools over MCP on stdin/stdout, for "
        "an agent to start (see docs/mcp.md). Logs go to stderr.",
    )
    p.add_argument(
        "positional_memory",
        nargs="?",
        metavar="MEMORY",
        help="the same as --memory (the reference's spelling)",
    )
    p.add_argument(
        "--memory",
        metavar="M",
        help="the memory tools read when a call names none (default: your local memory)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    # lazy: funes.mcp_server stays off fast commands' start-up
    from funes.mcp_server import serve

    if args.positional_memory and args.memory and args.positional_memory != args.memory:
        raise UsageError("give the memory once: `funes mcp --memory M` (or `funes mcp M`)")
    serve(args.memory or args.positional_memory)
    # The client closed stdin: leave without interpreter shutdown. A warm-up or search thread
    # may still be inside onnxruntime or lance, whose native threads abort the process
    # ("terminate called without an active exception", exit 134) when torn down under them.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
