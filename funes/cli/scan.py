"""`funes scan NEEDLE SESSION`: every occurrence of a literal string in one session."""

from __future__ import annotations

import argparse
import sys

from funes import validate
from funes.cli._args import Parser
from funes.cli._cold import start_reading
from funes.cli._pipe import run
from funes.cli._tty import spinner

EXAMPLE = """\
example:
  $ funes scan 'count=0' 5f0c2d1e-8a7b-4c3d-9e2f-1a2b3c4d5e6f --context 40
  [2026-10-14T09:02:19.000Z] tool seq9 turn=c-10 tool_result @339
    …iler/mvt.py:88: ParseError: LineTo with count=0 at offset 412 1 failed in 0.21s
  [2026-10-14T09:03:05.000Z] assistant seq10 turn=c-11 text @74
    …`tiler/mvt.py`: a `LineTo` command with count=0 raises `ParseError`, and the caller swa…
  2 occurrences of "count=0"

The needle is a literal string, never a regular expression: `funes scan 'a.b' S` finds "a.b"
and not "axb". At most 200 occurrences are shown; then a `→ scan … --from SEQ` line continues.
"""


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes scan",
        description="Find every occurrence of a literal string (never a regular expression) in "
        "one session's text — its prompts, answers, tool calls and tool output, each block "
        "stitched whole — with context around each.",
        epilog=EXAMPLE,
    )
    p.add_argument("needle", help="the text to find, exactly (quote it for the shell)")
    p.add_argument("session_id", metavar="SESSION", help="a session id, as `funes sessions` lists")
    p.add_argument("-i", "--ignore-case", action="store_true", help="match regardless of case")
    p.add_argument(
        "--context", metavar="N", default=100, help="characters shown either side (default 100)"
    )
    p.add_argument("--from", dest="seq_from", metavar="SEQ", help="scan from this turn (seq)")
    p.add_argument("--to", dest="seq_to", metavar="SEQ", help="scan up to this turn (seq)")
    p.add_argument("--memory", metavar="M", help="a memory directory or owner/name on the Hub")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    needle = validate.needle(args.needle)
    session_id = validate.text("session_id", args.session_id).strip()
    context = validate.number("context", args.context)
    lo, hi = validate.seq_range(args.seq_from, args.seq_to)
    memory = validate.text("memory", args.memory).strip() if args.memory else None
    start_reading()
    # lazy: numpy, pyarrow and Lance (under funes.memories and the store) load once the
    # arguments are valid: --help and a usage error start without them
    from funes.memories import open_one
    from funes.render.sessions import scan_text
    from funes.store.sessions import scan

    with spinner("scanning"):
        mem = open_one(memory)
        res = scan(mem, session_id, needle, args.ignore_case, context, lo, hi)
    sys.stdout.write(mem.note + scan_text(res, args.ignore_case, mem.label))
    return 0


if __name__ == "__main__":
    sys.exit(main())
