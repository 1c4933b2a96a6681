"""`funes sketch SESSION`: a digest of one session that needs no question."""

from __future__ import annotations

import argparse
import sys

from funes import validate
from funes.cli._args import Parser
from funes.cli._cold import start_reading
from funes.cli._pipe import run
from funes.cli._tty import spinner
from funes.hub.spec import parse_one
from funes.store import textcache
from funes.store.paths import memory_dir

EXAMPLE = """\
example:
  $ funes sketch 5f0c2d1e-8a7b-4c3d-9e2f-1a2b3c4d5e6f --units 3 --max-chars 1000
  sketch of session 5f0c2d1e-8a7b-4c3d-9e2f-1a2b3c4d5e6f: 3 passages of 13
  ---
  [2026-10-14T09:00:00.000Z] user seq0 turn=c-1 text (opening ask)
  The tile server leaks memory under load and sometimes returns empty tiles for zoom 14. …
  ---
  [2026-10-14T09:03:05.000Z] assistant seq10 turn=c-11 text (last word)
  The empty zoom-14 tiles come from `tiler/mvt.py`: a `LineTo` command with count=0 raises …
  ---
  …
"""


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes sketch",
        description="A digest of one session that needs no question: the opening ask, the "
        "last word, and the passages that differ most from those already chosen (pivoted "
        "Gram–Schmidt over the stored vectors), in session order. Cached per session.",
        epilog=EXAMPLE,
    )
    p.add_argument("session_id", metavar="SESSION", help="a session id, as `funes sessions` lists")
    p.add_argument("--units", metavar="N", default=8, help="passages to show, 1–40 (default 8)")
    p.add_argument(
        "--max-chars", metavar="N", default=8000, help="characters in all, ≤ 40,000 (default 8000)"
    )
    p.add_argument("--from", dest="seq_from", metavar="SEQ", help="sketch from this turn (seq)")
    p.add_argument("--to", dest="seq_to", metavar="SEQ", help="sketch up to this turn (seq)")
    p.add_argument("--memory", metavar="M", help="a memory directory or owner/name on the Hub")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    session_id = validate.text("session_id", args.session_id).strip()
    units = validate.number("units", args.units)
    max_chars = validate.number("max_chars", args.max_chars)
    lo, hi = validate.seq_range(args.seq_from, args.seq_to)
    memory = validate.text("memory", args.memory).strip() if args.memory else None
    # A local memory whose table has not changed since the same sketch: its text, read
    # without opening the memory (no Lance, no numpy).
    local = None if memory and parse_one(memory).remote else memory_dir(memory)
    key = textcache.key(local, "sketch", [session_id, units, max_chars, lo, hi]) if local else None
    text = textcache.get("sketch", key)
    if text is None:
        text = _sketch(memory, session_id, units, max_chars, lo, hi)
        textcache.put("sketch", key, text)
    sys.stdout.write(text)
    return 0


def _sketch(
    memory: str | None, session_id: str, units: int, max_chars: int, lo: int | None, hi: int | None
) -> str:
    start_reading()
    # lazy: numpy (under funes.memories and the store) stays off fast commands' start-up
    from funes.memories import open_one
    from funes.render.sessions import sketch_text
    from funes.store.sketch import sketch

    with spinner("sketching"):
        mem = open_one(memory)
        return sketch_text(sketch(mem, session_id, units, max_chars, lo, hi), mem.note)


if __name__ == "__main__":
    sys.exit(main())
