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
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from json.encoder import encode_basestring
from typing import Any

from funes import secrets
from funes.chunking import TIERS, Redactor, block_pieces, chunk_id
from funes.cli._args import Parser
from funes.cli._pipe import BadLines, open_inputs, read_records, run, widen_pipe
from funes.errors import UsageError
from funes.records import (
    CHUNK_FIELDS,
    SCHEMA_VERSION,
    Turn,
    dumps_value,
    escape_line_breaks,
)

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
    widen_pipe(sys.stdout)
    out = io.BufferedWriter(sys.stdout.buffer, buffer_size=1 << 16)
    with ExitStack() as stack:
        inputs = open_inputs(stack, args.files)
        try:
            for fp, where in inputs:
                for raw, rec in read_records(fp, bad, where):
                    if isinstance(rec, Turn):
                        for line in chunk_lines(rec, tiers, thinking, redact):
                            out.write(line.encode("utf-8"))
                    else:
                        out.write(raw if raw.endswith(b"\n") else raw + b"\n")
        finally:
            out.flush()
    bad.summary()
    return 1 if bad.count else 0


# A chunk line is `dumps(chunk)` (funes.records): "kind", "v", the chunk's fields in contract
# order, then the fields of the turn's and the block's `extra` the line does not already have.
# Of those, only the id, the text and the split index differ between the pieces of a block:
# the rest is encoded once per turn and block, not once per chunk.
_TURN_FIELDS = ("session_id", "turn_uuid", "parent_uuid", "seq", "ts", "role")
_BLOCK_FIELDS = ("block_type", "block_idx")
_TAIL_FIELDS = ("harness", "workdir", "repo", "source_path")
assert (  # the contract order, as the Chunk dataclass declares it
    "id", "text", *_TURN_FIELDS, *_BLOCK_FIELDS, "split_idx", "tool_name", *_TAIL_FIELDS
) == CHUNK_FIELDS  # fmt: skip
_LINE_KEYS = frozenset(("kind", "v", *CHUNK_FIELDS))  # vector and model: left out when unset
_HEAD = f'{{"kind":"chunk","v":{SCHEMA_VERSION},"id":"'


def chunk_lines(
    turn: Turn, tiers: Iterable[str], thinking: bool, redact: Redactor | None
) -> Iterator[str]:
    """The JSON lines (newline-terminated) of ``chunk_turn(turn, …)``'s chunks, each the
    same bytes as ``dumps(chunk) + "\\n"``."""
    sid, tid = turn.session_id, turn.turn_uuid
    turn_part = tail = turn_extra = ""
    for block_idx, block, pieces in block_pieces(turn, tiers, thinking, redact):
        if not pieces:
            continue
        if not turn_part:  # encoded at the first chunk, as dumps would
            turn_part, tail = _turn_parts(turn)
            turn_extra = _extra_part(turn.extra)
        mid = f',{turn_part},"block_type":{_value(block.type)},"block_idx":{block_idx},"split_idx":'
        extra = _extra_part({**turn.extra, **block.extra}) if block.extra else turn_extra
        end = f',"tool_name":{_value(block.tool_name)},{tail}{extra}}}\n'
        for split_idx, piece in enumerate(pieces):
            line = "".join((_HEAD, chunk_id(sid, tid, block_idx, split_idx), '","text":',
                            _str(piece), mid, str(split_idx), end))  # fmt: skip
            yield line if line.isascii() else escape_line_breaks(line)


# `dumps_value` of a string is json's own string encoder, called here without the encoder
# object around it (for anything else, that object builds a whole C encoder: per chunk line,
# more than escaping the line's text costs). A turn read from a line holds strings where its
# type says so; one built some other way is encoded by `dumps_value`, as before.
_str = encode_basestring


def _value(value: Any) -> str:
    if type(value) is str:
        return _str(value)
    if value is None:
        return "null"
    if type(value) is int:
        return int.__repr__(value)
    return dumps_value(value)


def _turn_parts(turn: Turn) -> tuple[str, str]:
    """The members (braces dropped) ``dumps_value`` writes for the turn's fields before and
    after the block's: `"session_id":"…",…,"role":"…"` and `"harness":"…",…`."""
    head = ",".join(f'"{k}":{_value(getattr(turn, k))}' for k in _TURN_FIELDS)
    tail = ",".join(f'"{k}":{_value(getattr(turn, k))}' for k in _TAIL_FIELDS)
    return head, tail


def _extra_part(extra: dict[str, Any]) -> str:
    """`,"key":value…` for the extras a chunk line writes (those it has no field of)."""
    if not extra:
        return ""
    return "".join(
        f",{dumps_value(k)}:{dumps_value(v)}" for k, v in extra.items() if k not in _LINE_KEYS
    )


if __name__ == "__main__":
    sys.exit(main())
