"""`funes-query [QUERY…]`: queries → hit/miss JSONL, from arguments or from JSONL on stdin.

Each stdin line is `{"query": "…", "k": 8, "id": …, <filters>}`; one warm process answers
them all, each with its group of hit lines (or one miss line) carrying the query and id.
"""

from __future__ import annotations

import argparse
import io
import sys
from typing import TYPE_CHECKING, Any

from funes import validate
from funes.cli._args import Parser
from funes.cli._pipe import BadLines, run
from funes.cli._search_args import add_search_options, search_values
from funes.errors import FunesError, UsageError
from funes.records import QueryLine, RecordError, dumps
from funes.search import open_searcher

if TYPE_CHECKING:
    from funes.results import Query

PROG = "funes-query"


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog=PROG,
        description="Answer queries from the memory as hit records (JSONL). Give a query as "
        'arguments, or pipe {"query": …} lines on stdin.',
        epilog="Exit status: 0 all queries answered, 1 some lines skipped, 2 bad arguments.",
    )
    p.add_argument("query", nargs="*", help="a query (words joined by spaces)")
    add_search_options(p)
    p.add_argument("--strict", action="store_true", help="stop at the first bad input line")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    base = search_values(args)
    if args.query:
        first: Query | None = validate.query(" ".join(args.query), base)
    else:
        first = None
        validate.query("-", base)  # the options every line inherits, checked once up front
        if sys.stdin.isatty():
            raise UsageError("no query — give one as arguments, or pipe JSONL query lines on stdin")
    memory = validate.text("memory", args.memory) if args.memory else None
    searcher = open_searcher(memory)
    out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", write_through=False)
    bad = BadLines(PROG, args.strict)

    def answer(q: Query) -> None:
        for rec in searcher.search(q).records():
            out.write(dumps(rec) + "\n")

    try:
        if first is not None:
            answer(first)
            return 0
        for lineno, raw in enumerate(sys.stdin.buffer, 1):
            if not raw.strip():
                continue
            try:
                q = query_line(raw, base)
            except (RecordError, UsageError) as e:
                bad.skip("<stdin>", lineno, str(e))
                continue
            try:
                answer(q)
            except FunesError:
                raise  # the memory or the models failed: every later line would fail too
            except Exception as e:  # this line's request, not the stream, is at fault
                bad.skip("<stdin>", lineno, f"could not be answered ({type(e).__name__})")
                continue
            out.flush()
    finally:
        out.flush()
    bad.summary()
    return 1 if bad.count else 0


def query_line(raw: bytes, base: dict[str, Any]) -> Query:
    """One stdin line → a checked Query; the line's keys override the command's options."""
    line = QueryLine.parse(raw)
    return validate.query(line.query, {**base, **line.options()}, style="json", id=line.id)


if __name__ == "__main__":
    sys.exit(main())
