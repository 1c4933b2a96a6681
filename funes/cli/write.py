"""`funes-write [--memory DIR] [--strict] [FILE…]`: chunk JSONL → the memory.

Appends every chunk whose id is not stored yet — with its vector if the line carries one, else
with a null vector (searchable by text at once; `funes index --backfill` embeds it later). Prints
one JSON summary line: ``{"written": N, "skipped": M, "memory": "<label>"}`` where skipped
counts chunks already stored. Lines that are not usable chunks (bad JSON, another kind, a vector
of the wrong width or from another model) are reported with their line number and not written;
the exit status is then 1. See docs/funes-write.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack

from funes.cli._args import Parser
from funes.cli._pipe import BadLines, open_inputs, read_numbered, run
from funes.records import Chunk

PROG = "funes-write"
BATCH = 4000


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog=PROG,
        description="Append chunk records (with or without vectors) to a memory; ids already "
        "stored are skipped. Prints one JSON summary line.",
        epilog="Exit status: 0 all lines written or skipped as stored, 1 some lines unusable "
        "(or another writer busy), 2 bad arguments.",
    )
    p.add_argument("files", nargs="*", metavar="FILE", help="chunk JSONL (default: stdin)")
    p.add_argument("--memory", metavar="DIR", help="memory directory (default: $FUNES_HOME/memory)")
    p.add_argument("--strict", action="store_true", help="stop at the first bad line")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args), PROG)


def _main(args: argparse.Namespace) -> int:
    # lazy: numpy stays off fast commands' start-up
    from funes.memories import open_for_write

    bad = BadLines(PROG, args.strict)
    mem = open_for_write(args.memory, create=True)
    written = seen = 0
    with ExitStack() as stack:
        inputs = open_inputs(stack, args.files)
        with mem.writer() as w:
            buf: list[Chunk] = []
            for fp, where in inputs:
                for lineno, _, rec in read_numbered(fp, bad, where):
                    if not isinstance(rec, Chunk):
                        kind = rec.get("kind") if isinstance(rec, dict) else "turn"
                        bad.skip(where, lineno, f"not a chunk (kind {kind!r})")
                        continue
                    why = w.check(rec)
                    if why:
                        bad.skip(where, lineno, why)
                        continue
                    buf.append(rec)
                    seen += 1
                    if len(buf) >= BATCH:
                        written += w.append(buf)
                        buf = []
            written += w.append(buf)
    print(json.dumps({"written": written, "skipped": seen - written, "memory": mem.label}))
    bad.summary()
    return 1 if bad.count else 0


if __name__ == "__main__":
    sys.exit(main())
