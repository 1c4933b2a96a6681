"""Options shared by `funes recall` and `funes-query`."""

from __future__ import annotations

import argparse

from funes.retrieval import DEFAULT_HALF_LIFE, Filters


def add_search_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-k", "--k", type=int, default=8, help="hits to return (default 8)")
    p.add_argument("--candidates", type=int, default=30, help="pool per leg (default 30)")
    p.add_argument("--neighbors", type=int, default=1, help="±seq window of context (default 1)")
    p.add_argument(
        "--half-life",
        type=float,
        default=DEFAULT_HALF_LIFE,
        help=f"recency half-life in days, 0 = off (default {DEFAULT_HALF_LIFE:g})",
    )
    p.add_argument(
        "--type", dest="block_type", metavar="T", help="text, thinking, tool_use, tool_result"
    )
    p.add_argument("--harness", metavar="H", help="claude, codex, pi, hermes")
    p.add_argument("--workdir", metavar="DIR", help="a working directory (path or munged)")
    p.add_argument("--repo", metavar="OWNER/NAME", help="a git remote")
    p.add_argument("--session", metavar="ID", help="one session")
    p.add_argument("--since", metavar="WHEN", help="turns at or after: 2026-03-01, 7d, 12h")
    p.add_argument("--until", metavar="WHEN", help="turns before: 2026-03-01 (inclusive day)")
    p.add_argument("--memory", metavar="M", help="a memory directory (default: your local memory)")


def filters_from(args: argparse.Namespace) -> Filters:
    return Filters(
        block_type=args.block_type,
        harness=args.harness,
        workdir=args.workdir,
        repo=args.repo,
        session=args.session,
        since=args.since,
        until=args.until,
    )
