"""`funes compact [MEMORY]`: the reference's name for `funes optimize` — the same verb.

Merges the table's fragments and the lexical index's segments, builds the ANN vector index once
the memory holds enough vectors, and drops table versions older than ten minutes.
"""

from __future__ import annotations

import argparse
import sys

from funes.cli._args import Parser
from funes.cli._pipe import run
from funes.cli.optimize import optimize
from funes.errors import UsageError

EXAMPLE = """\
example:
  $ funes compact
  compacted /home/ana/.local/share/funes/memory: 20000 vectors, flat vector search

`funes compact` and `funes optimize` are one verb: the reference calls it compact.
"""


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes compact",
        description="Compact a local memory: merge fragments and index segments, build the "
        "vector index when it is large enough, drop versions older than ten minutes.",
        epilog=EXAMPLE,
    )
    p.add_argument("memory_pos", nargs="?", metavar="MEMORY", help="a memory directory")
    p.add_argument("--memory", metavar="DIR", help="the same as MEMORY")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--ann", action="store_true", default=None, help="build the ANN index now")
    g.add_argument("--no-ann", dest="ann", action="store_false", help="never build it")
    p.add_argument("--json", action="store_true", help="print what was done as one JSON line")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    if args.memory_pos and args.memory and args.memory_pos != args.memory:
        raise UsageError("give the memory once: `funes compact M` (or `--memory M`)")
    return optimize(args.memory or args.memory_pos, args.ann, args.json, "compacted")


if __name__ == "__main__":
    sys.exit(main())
