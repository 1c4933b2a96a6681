"""`funes recall "…"`: ranked passages with provenance, in the agent format (or --json)."""

from __future__ import annotations

import argparse
import sys

from funes.cli._format import recall_agent
from funes.cli._pipe import run
from funes.cli._search_args import add_search_options, filters_from
from funes.errors import UsageError
from funes.records import dumps


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="funes recall",
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
    from funes.retrieval import Query, open_searcher

    text = " ".join(args.query).strip()
    if not text:
        raise UsageError("empty query — say what to look for")
    if args.k < 1 or args.candidates < 1 or args.neighbors < 0:
        raise UsageError("-k and --candidates must be ≥ 1, --neighbors ≥ 0")
    filters = filters_from(args)
    filters.where()  # bad --since/--harness fail before any model loads
    searcher = open_searcher(args.memory)
    q = Query(text, args.k, args.candidates, args.neighbors, args.half_life, filters)
    result = searcher.search(q)
    if args.json:
        for rec in result.records():
            sys.stdout.write(dumps(rec) + "\n")
    else:
        sys.stdout.write(recall_agent(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
