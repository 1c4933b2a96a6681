"""`funes recall "…"`: ranked passages with provenance, in the agent format (or --json).

On a terminal the same hits are rendered for a person (wrapped, coloured unless NO_COLOR);
piped, the output is the agent format, byte for byte.
"""

from __future__ import annotations

import argparse
import sys

from funes import validate
from funes.cli._args import Parser
from funes.cli._cold import start_short
from funes.cli._pipe import run
from funes.cli._search_args import add_search_options, search_values
from funes.cli._tty import spinner, tty_style
from funes.records import dumps
from funes.render.formats import recall_agent, recall_human
from funes.search import open_searcher


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes recall",
        example="funes recall 'why did the importer drop rows?' --since 30d -k 5",
        description="Search the memory for a question; print ranked passages with where they "
        "came from and the `get` command that shows the turns around each.",
    )
    p.add_argument("query", nargs="+", help="the question (words are joined by spaces)")
    add_search_options(p)
    p.add_argument("--json", action="store_true", help="hit records (JSONL) instead of text")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:

    # Every value is checked before any model loads or memory opens.
    q = validate.query(" ".join(args.query), search_values(args))
    memory = validate.text("memory", args.memory) if args.memory else None
    start_short()  # one question, and the process ends with its answer
    with spinner("searching"):
        result = open_searcher(memory).search(q)
    if args.json:
        for rec in result.records():
            sys.stdout.write(dumps(rec) + "\n")
        return 0
    style = tty_style(sys.stdout)
    if style is None:
        sys.stdout.write(recall_agent(result))
    else:
        sys.stdout.write(recall_human(result, style))
    return 0


if __name__ == "__main__":
    sys.exit(main())
