"""`funes-query [QUERY…]`: queries → hit/miss JSONL, from arguments or from JSONL on stdin.

Each stdin line is `{"query": "…", "k": 8, "id": …, <filters>}`; one warm process answers
them all, each with its group of hit lines (or one miss line) carrying the query and id.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from typing import Any

from funes.cli._pipe import BadLines, run
from funes.cli._search_args import add_search_options, filters_from
from funes.errors import UsageError
from funes.records import RecordError, dumps

PROG = "funes-query"
FILTER_KEYS = ("block_type", "type", "harness", "workdir", "repo", "session", "since", "until")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
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
    from funes.retrieval import Query, open_searcher

    base = filters_from(args)
    base.where()
    if not args.query and sys.stdin.isatty():
        raise UsageError("no query — give one as arguments, or pipe JSONL query lines on stdin")
    searcher = open_searcher(args.memory)
    out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", write_through=False)
    bad = BadLines(PROG, args.strict)

    def answer(q: Query) -> None:
        for rec in searcher.search(q).records():
            out.write(dumps(rec) + "\n")

    try:
        if args.query:
            answer(Query(" ".join(args.query), args.k, args.candidates, args.neighbors,
                         args.half_life, base))  # fmt: skip
            return 0
        for lineno, raw in enumerate(sys.stdin.buffer, 1):
            if not raw.strip():
                continue
            try:
                q = _query_line(raw, args, base)
            except (RecordError, UsageError) as e:
                bad.skip("<stdin>", lineno, str(e))
                continue
            answer(q)
            out.flush()
    finally:
        out.flush()
    bad.summary()
    return 1 if bad.count else 0


def _query_line(raw: bytes, args: argparse.Namespace, base: Any) -> Any:
    from dataclasses import replace

    from funes.retrieval import Query

    try:
        d = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise RecordError("invalid JSON") from None
    if not isinstance(d, dict) or not isinstance(d.get("query"), str) or not d["query"].strip():
        raise RecordError("needs a non-empty string 'query'")
    over = {("block_type" if k == "type" else k): d[k] for k in FILTER_KEYS if d.get(k) is not None}
    filters = replace(base, **over)
    filters.where()
    ints = {}
    for key in ("k", "candidates", "neighbors"):
        v = d.get(key, getattr(args, key))
        if not isinstance(v, int) or isinstance(v, bool) or v < (0 if key == "neighbors" else 1):
            raise RecordError(f"'{key}' must be a positive integer")
        ints[key] = v
    half = d.get("half_life", args.half_life)
    if not isinstance(half, (int, float)):
        raise RecordError("'half_life' must be a number")
    return Query(
        d["query"],
        ints["k"],
        ints["candidates"],
        ints["neighbors"],
        float(half),
        filters,
        d.get("id"),
    )


if __name__ == "__main__":
    sys.exit(main())
