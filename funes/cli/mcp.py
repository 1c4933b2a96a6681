"""`funes mcp [--memory M] [--http [--port N]]`: the MCP server for agents — on stdio (an agent
starts it), or one streamable HTTP server on loopback shared by every agent of the machine."""

from __future__ import annotations

import argparse
import os
import signal
import sys

from funes import validate
from funes.cli._args import Parser
from funes.cli._pipe import run
from funes.errors import UsageError


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes mcp",
        description="Serve the recall, sessions, scan, sketch, get and status tools over MCP: "
        "on stdin/stdout for an agent to start, or with --http on 127.0.0.1 for every agent "
        "of the machine, the models loaded once (see docs/mcp.md). Logs go to stderr.",
        epilog="examples:\n  funes mcp                    # an agent starts it (stdio)\n"
        "  funes mcp --http --port 8765 # one server for the machine: "
        "http://127.0.0.1:8765/mcp\n  funes add claude --mcp-http  # register that URL",
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
    p.add_argument(
        "--http",
        action="store_true",
        help="serve streamable HTTP on 127.0.0.1 (stateless, Host/Origin checked) until stopped",
    )
    p.add_argument("--port", metavar="N", help="the --http port (default 8765)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    # lazy: funes.mcp_server stays off fast commands' start-up
    from funes.mcp_server import serve

    if args.positional_memory and args.memory and args.positional_memory != args.memory:
        raise UsageError("give the memory once: `funes mcp --memory M` (or `funes mcp M`)")
    if args.port is not None and not args.http:
        raise UsageError("--port goes with --http (the stdio server has no port)")
    if args.http:
        # lazy: funes.mcp_server stays off fast commands' start-up
        from funes.mcp_server import DEFAULT_PORT, serve_http

        port = DEFAULT_PORT if args.port is None else validate.number("port", args.port)
        serve_http(args.memory or args.positional_memory, port)
    else:
        if sys.stdin.isatty():
            sys.stderr.write(
                "funes mcp: an MCP server on stdin/stdout — agents start it themselves (`funes "
                "add AGENT` registers it; see docs/mcp.md); Ctrl-C stops it\n"
            )
            sys.stderr.flush()
        # The stdio transport reads stdin in a worker thread that no KeyboardInterrupt reaches:
        # on Ctrl-C the event loop would stop and then wait on that read forever. Only when
        # SIGINT came at its default: a server started in the background by a script (`funes
        # mcp &`) has it ignored, and its parent's Ctrl-C is not meant for it.
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _interrupted)
        serve(args.memory or args.positional_memory)
    # The client closed stdin (or --http was stopped): leave without interpreter shutdown. A warm-up or search thread
    # may still be inside onnxruntime or lance, whose native threads abort the process
    # ("terminate called without an active exception", exit 134) when torn down under them.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _interrupted(signum: int, frame: object) -> None:
    sys.stderr.write("funes: interrupted\n")
    sys.stderr.flush()
    os._exit(130)  # as at the end of _main: native threads may be inside onnxruntime or lance


if __name__ == "__main__":
    sys.exit(main())
