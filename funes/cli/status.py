"""`funes status [--memory M]`: what the memory holds and what is still pending."""

from __future__ import annotations

import argparse
import sys

from funes.cli._args import Parser
from funes.cli._cold import start_reading, start_short
from funes.cli._pipe import run
from funes.cli._tty import spinner
from funes.status import status


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes status", example="funes status --json", description="What the memory holds."
    )
    p.add_argument(
        "memory_pos", nargs="?", metavar="MEMORY", help="a memory dir or a Hub dataset OWNER/NAME"
    )
    p.add_argument("--memory", metavar="M", help="a memory directory (default: your local memory)")
    p.add_argument("--json", action="store_true", help="one JSON object")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    start_short()
    with spinner("reading the memory"):
        text = status(args.memory or args.memory_pos, args.json, on_open=start_reading)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
