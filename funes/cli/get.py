"""`funes get SESSION TURN` (a turn and the turns around it) or `funes get SESSION --from SEQ
[--to SEQ]` (a range of a session's turns, capped near 40,000 characters), splits reassembled."""

from __future__ import annotations

import argparse
import sys

from funes import validate
from funes.cli._args import Parser
from funes.cli._cold import start_reading
from funes.cli._pipe import run
from funes.cli._tty import spinner, term_width, tty_style
from funes.errors import UsageError
from funes.records import CHUNK_FIELDS
from funes.render.formats import get_agent, get_human, get_json
from funes.render.turns import window, window_rows

EXAMPLE = """\
examples:
  $ funes get 5f0c2d1e-8a7b-4c3d-9e2f-1a2b3c4d5e6f c-11 --window 1   # as a recall hit prints it
  $ funes get 5f0c2d1e-8a7b-4c3d-9e2f-1a2b3c4d5e6f --from 0 --to 1
  [2026-10-14T09:00:00.000Z] user seq0 turn=c-1
  The tile server leaks memory under load and sometimes returns empty tiles for zoom 14. …
  ---
  [2026-10-14T09:00:06.000Z] assistant seq1 turn=c-2
  Start with the cache: an unbounded dict keyed by (z, x, y) would explain the growth. …
  ---
A range stops near 40,000 characters with the line that continues it:
  17 more turns of seq 0–29 past the 40,000-character cap
  → get 5f0c2d1e-8a7b-4c3d-9e2f-1a2b3c4d5e6f --from 13 --to 29
"""


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes get",
        description="Show a turn of a session and the turns around it (the `→ get` line of a "
        "recall hit runs as printed), or a range of its turns by seq (`--from`, `--to`; "
        "`--to` defaults to 20 turns on; output stops near 40,000 characters with the "
        "`--from` that continues).",
        epilog=EXAMPLE,
    )
    p.add_argument("session_id")
    p.add_argument("turn_uuid", nargs="?", help="a turn id (omit to read a range by seq)")
    p.add_argument("--window", metavar="N", default=None, help="turns either side (default 3)")
    p.add_argument("--from", dest="seq_from", metavar="SEQ", help="first turn of a range (seq)")
    p.add_argument("--to", dest="seq_to", metavar="SEQ", help="last turn of a range (seq)")
    p.add_argument("--memory", metavar="M", help="a memory directory (default: your local memory)")
    p.add_argument("--highlight", metavar="TEXT", help="mark this passage (human format)")
    p.add_argument(
        "--format",
        choices=("human", "agent"),
        help="default: human on a terminal, agent when piped",
    )
    p.add_argument(
        "--json", action="store_true", help="chunk records (JSONL), one per stored piece"
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    session_id = validate.text("session_id", args.session_id).strip()
    memory = validate.text("memory", args.memory) if args.memory else None
    ranged = args.seq_from is not None or args.seq_to is not None or args.turn_uuid is None
    if args.json and (args.format or args.highlight):
        raise UsageError("--json prints chunk records: give it without --format or --highlight")
    if ranged:
        if args.turn_uuid is not None:
            raise UsageError("give a TURN or a range (--from/--to), not both")
        if args.window is not None:
            raise UsageError("--window goes with a TURN; a range is given by --from and --to")
        lo, hi = validate.seq_range(args.seq_from, args.seq_to)
        return _range(session_id, lo, hi, memory, args.json)
    width = validate.number("window", args.window if args.window is not None else 3)
    turn_uuid = validate.text("turn_uuid", args.turn_uuid).strip()
    start_reading()
    # lazy: numpy, pyarrow and Lance (under funes.memories and the store) load once the
    # arguments are valid: --help and a usage error start without them
    from funes.memories import open_one

    if args.json:
        with spinner("reading"):
            mem = open_one(memory)
            rows = window_rows(mem, session_id, turn_uuid, width, CHUNK_FIELDS)
        sys.stdout.write(get_json(rows))
        return 0
    with spinner("reading"):
        mem = open_one(memory)
        turns = window(mem, session_id, turn_uuid, width)
    style = tty_style(sys.stdout)
    fmt = args.format or ("agent" if style is None else "human")
    if fmt == "agent":
        sys.stdout.write(get_agent(turns, mem.note, mem.label, mem.trusted))
    else:
        color = style.color if style is not None else False
        sys.stdout.write(get_human(turns, turn_uuid, term_width(), args.highlight, color))
    return 0


def _range(
    session_id: str, lo: int | None, hi: int | None, memory: str | None, json: bool = False
) -> int:
    start_reading()
    # lazy: as in _main
    from funes.memories import open_one
    from funes.render.sessions import range_agent, range_rest
    from funes.store.sessions import turn_range

    with spinner("reading"):
        mem = open_one(memory)
        tr = turn_range(mem, session_id, lo, hi, columns=CHUNK_FIELDS)
    if json:
        sys.stdout.write(get_json(tr.rows))
        sys.stderr.write(range_rest(tr, mem.label))  # what the cap left out: not a record
        return 0
    sys.stdout.write(range_agent(tr, mem.note, mem.label))
    return 0


if __name__ == "__main__":
    sys.exit(main())
