"""`funes get SESSION TURN`: a turn and the turns around it, splits reassembled."""

from __future__ import annotations

import argparse
import sys

from funes import validate
from funes.cli._args import Parser
from funes.cli._pipe import run
from funes.cli._tty import spinner, term_width, tty_style
from funes.render.formats import get_agent, get_human
from funes.render.turns import window


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes get",
        description="Show a turn of a session and the turns around it (the `→ get` line of a "
        "recall hit runs as printed).",
    )
    p.add_argument("session_id")
    p.add_argument("turn_uuid")
    p.add_argument("--window", metavar="N", default=3, help="turns either side (default 3)")
    p.add_argument("--memory", metavar="M", help="a memory directory (default: your local memory)")
    p.add_argument("--highlight", metavar="TEXT", help="mark this passage (human format)")
    p.add_argument(
        "--format",
        choices=("human", "agent"),
        help="default: human on a terminal, agent when piped",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    # lazy: numpy stays off fast commands' start-up
    from funes.memories import open_one

    width = validate.number("window", args.window)
    session_id = validate.text("session_id", args.session_id).strip()
    turn_uuid = validate.text("turn_uuid", args.turn_uuid).strip()
    memory = validate.text("memory", args.memory) if args.memory else None
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


if __name__ == "__main__":
    sys.exit(main())
