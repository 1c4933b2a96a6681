"""`funes sessions`: the sessions a memory holds, newest first, with their opening prompts."""

from __future__ import annotations

import argparse
import sys

from funes import validate
from funes.cli._args import Parser, harness_option
from funes.cli._cold import start_reading
from funes.cli._pipe import run
from funes.cli._tty import spinner

EXAMPLE = """\
example:
  $ funes sessions --limit 2
  [2026-11-02T16:00:00.000Z] codex -srv-ledger 11 turns 0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b
    > The 0042_add_invoice_currency migration fails on staging with a lock timeout. …
  [2026-10-14T09:00:30.000Z] claude_code -home-ana-src-tiler 4 turns agent-a3f9
    > Search the repo for every place that constructs TileCache and report the call sites.
  sessions 1–2 of 3
  → sessions --offset 2 --limit 2
"""


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes sessions",
        description="List the sessions a memory holds, newest first: date, agent, repo (or "
        "working directory), turns, session id, and the opening prompt. Read one with "
        "`funes get SESSION --from SEQ`, search one with `funes scan`.",
        epilog=EXAMPLE,
    )
    p.add_argument("--repo", metavar="OWNER/NAME", help="sessions of checkouts of this git remote")
    harness_option(
        p,
        metavar="H",
        action="append",
        help="these agents: %(agents)s (claude_code = claude); several: claude,codex",
    )
    p.add_argument("--workdir", metavar="DIR", help="sessions run in this working directory")
    p.add_argument("--since", metavar="WHEN", help="with a turn at or after: 2026-03-01, 7d, 12h")
    p.add_argument("--until", metavar="WHEN", help="with a turn up to: 2026-03-01 (that whole day)")
    p.add_argument("--limit", metavar="N", default=50, help="sessions to show, 1–200 (default 50)")
    p.add_argument("--offset", metavar="N", default=0, help="skip the N newest (default 0)")
    p.add_argument(
        "--memory", metavar="M", help="a memory: a directory, owner/name on the Hub, or several"
    )
    p.add_argument("--json", action="store_true", help="one JSON object per session")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    # lazy: the store's session reader (hashlib, datetime) stays off `--help`; numpy is not in it
    from funes.store.sessions import MAX_SESSIONS, list_sessions

    where, since, until = validate.session_filters(vars(args))
    limit = validate.number("limit", args.limit, bounds=(1, MAX_SESSIONS))
    offset = validate.number("offset", args.offset)
    memory = validate.text("memory", args.memory).strip() if args.memory else None
    start_reading()  # a bad value is refused before numpy loads
    # lazy: numpy (under funes.memories and the store) stays off fast commands' start-up
    from funes.memories import open_all
    from funes.render.sessions import sessions_json, sessions_text

    with spinner("reading"):
        mems = open_all(memory)
        page = list_sessions(mems, where, since, until, limit, offset)
    if args.json:
        sys.stdout.write(sessions_json(page))
        return 0
    notes = "".join(dict.fromkeys(m.note for m in mems))
    untrusted = [m.label for m in mems if not m.trusted]
    sys.stdout.write(notes + sessions_text(page, memory, untrusted))
    return 0


if __name__ == "__main__":
    sys.exit(main())
