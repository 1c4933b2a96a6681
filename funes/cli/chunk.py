"""`funes-chunk [--tiers text,tool_use,tool_result] [--no-thinking] [--no-redact]`: turns → chunks.

Secrets are redacted (`[REDACTED:<detector>]`, funes.secrets) in each whole block before it is
split, unless `--no-redact`. Reads JSONL on stdin (or the files named). Turn lines become chunk
lines; every other line —
chunks already made, kinds this stage doesn't know — passes through byte for byte, so the
stage can be run twice, or on a mixed stream, safely.
"""

from __future__ import annotations

import argparse
import io
import sys
from contextlib import ExitStack

from funes import secrets
from funes.chunking import TIERS, chunk_turn
from funes.cli._args import Parser
from funes.cli._pipe import BadLines, open_inputs, read_records, run
from funes.errors import UsageError
from funes.records import Turn, dumps

PROG = "funes-chunk"


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog=PROG,
        description="Split turn records into chunk records (≤1200 chars, 150 overlap, "
        "deterministic ids). Non-turn lines pass through unchanged.",
        epilog="Exit status: 0 all lines processed, 1 some lines skipped, 2 bad arguments.",
    )
    p.add_argument("files", nargs="*", metavar="FILE", help="JSONL input (default: stdin)")
    p.add_argument(
        "--tiers",
        default=",".join(TIERS),
        help="block tiers to chunk, comma-separated (default: %(default)s)",
    )
    p.add_argument("--no-thinking", action="store_true", help="leave thinking blocks out")
    p.add_argument(
        "--no-redact",
        action="store_true",
        help="keep secrets in the text (default: replace them with [REDACTED:<detector>])",
    )
    p.add_argument("--strict", action="store_true", help="stop at the first bad line")
    return p


def parse_tiers(spec: str) -> tuple[str, ...]:
    tiers = tuple(t.strip() for t in spec.split(",") if t.strip())
    unknown = [t for t in tiers if t not in TIERS]
    if unknown or not tiers:
        raise UsageError(
            f"unknown tier {unknown[0]!r} in --tiers (expected {', '.join(TIERS)})"
            if unknown
            else "--tiers is empty"
        )
    return tiers


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    tiers = parse_tiers(args.tiers)
    thinking = not args.no_thinking
    redact = None if args.no_redact else secrets.redact
    bad = BadLines(PROG, args.strict)
    out = io.BufferedWriter(sys.stdout.buffer, buffer_size=1 << 16)
    with ExitStack() as stack:
        inputs = open_inputs(stack, args.files)
        try:
            for fp, where in inputs:
                for raw, rec in read_records(fp, bad, where):
                    if isinstance(rec, Turn):
                        for c in chunk_turn(rec, tiers, thinking, redact):
                            out.write(dumps(c).encode("utf-8") + b"\n")
                    else:
                        out.write(raw if raw.endswith(b"\n") else raw + b"\n")
        finally:
            out.flush()
    bad.summary()
    return 1 if bad.count else 0


if __name__ == "__main__":
    sys.exit(main())
