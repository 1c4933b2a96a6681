"""`funes get SESSION TURN`: a turn and the turns around it, splits reassembled."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from funes.cli._args import Parser
from funes.cli._format import TurnView, get_agent, get_human, group_turns
from funes.cli._pipe import run
from funes.cli._tty import spinner, tty_style
from funes.errors import FunesError

if TYPE_CHECKING:
    from funes.store.memory import Memory


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
    from funes import validate
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
        sys.stdout.write(get_human(turns, turn_uuid, args.highlight, color))
    return 0


def window(mem: Memory, session_id: str, turn_uuid: str, width: int) -> list[TurnView]:
    """The turns within ``width`` seq of the named turn; FunesError when it is not stored."""
    return mem.retrying(lambda: _window(mem, session_id, turn_uuid, width))


def _window(mem: Memory, session_id: str, turn_uuid: str, width: int) -> list[TurnView]:
    from funes.store import redaction
    from funes.store.memory import sql_str

    found = (
        mem.rows(
            f"session_id = {sql_str(session_id)} AND turn_uuid = {sql_str(turn_uuid)}",
            columns=("seq",),
        )
        .column("seq")
        .to_pylist()
    )
    if not found:
        raise FunesError(f"turn {turn_uuid} not found in session {session_id} ({mem.label})")
    centre = min(found)
    rows = mem.session_rows(
        session_id,
        centre - width,
        centre + width,
        columns=("turn_uuid", "seq", "ts", "role", "text", "block_type", "block_idx", "split_idx"),
    )
    redaction.mask_for_serving(mem, rows, whole_blocks=True)
    return group_turns(rows)


if __name__ == "__main__":
    sys.exit(main())
