"""`funes-embed [--batch N] [--strict] [FILE…]`: chunk JSONL → the same chunks with vectors.

Each chunk line comes back with ``vector`` (384 floats, L2-normalised) and ``model`` (the
embedder's pin name) added, in input order. Lines of other kinds pass through byte for byte.
Bad lines are reported with their line number and skipped (exit 1); ``--strict`` stops at the
first one. Progress goes to stderr when stderr is a terminal.
"""

from __future__ import annotations

import argparse
import io
import sys
from contextlib import ExitStack

from funes import validate
from funes.cli._args import Parser
from funes.cli._pipe import BadLines, open_inputs, read_records, run, warn, widen_pipe
from funes.cli._tty import progress as bar
from funes.errors import FunesError, UsageError
from funes.records import Chunk, dumps

PROG = "funes-embed"


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog=PROG,
        description="Add a 'vector' and 'model' to every chunk line (embedder: "
        "sentence-transformers/all-MiniLM-L6-v2). Other lines pass through unchanged.",
        epilog="Exit status: 0 all lines processed, 1 some lines skipped or a model error, "
        "2 bad arguments. FUNES_THREADS sets the number of model workers.",
    )
    p.add_argument("files", nargs="*", metavar="FILE", help="JSONL input (default: stdin)")
    p.add_argument(
        "--batch",
        default=64,
        metavar="N",
        help="chunks embedded (and written) per step (default: %(default)s)",
    )
    p.add_argument(
        "--skip-existing",
        action="store_true",
        help="drop chunks already stored in the memory (and repeats in the input) before "
        "embedding, so a pipeline never re-embeds old turns",
    )
    p.add_argument("--memory", metavar="DIR", help="with --skip-existing: the memory to check")
    p.add_argument("--strict", action="store_true", help="stop at the first bad line")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    # lazy: funes.models.derive stays off fast commands' start-up
    from funes.models import embed_chunks

    args.batch = validate.number("batch", args.batch)
    if args.memory and not args.skip_existing:
        raise UsageError("--memory goes with --skip-existing")
    stored = _stored_ids(args.memory) if args.skip_existing else None
    skipped = 0
    bad = BadLines(PROG, args.strict)
    widen_pipe(sys.stdout)
    out = io.BufferedWriter(sys.stdout.buffer, buffer_size=1 << 16)
    progress = bar(None, PROG, unit="chunk")
    pending: list[bytes | Chunk] = []  # input order: raw lines to pass through, chunks to embed
    chunks: list[Chunk] = []

    def flush() -> None:
        list(embed_chunks(chunks, batch=max(len(chunks), 1)))
        for item in pending:
            if isinstance(item, Chunk):
                out.write(dumps(item).encode("utf-8") + b"\n")
            else:
                out.write(item if item.endswith(b"\n") else item + b"\n")
        out.flush()
        progress.update(len(chunks))
        pending.clear()
        chunks.clear()

    stop: FunesError | None = None
    with ExitStack() as stack:
        inputs = open_inputs(stack, args.files)
        try:
            for fp, where in inputs:
                records = read_records(fp, bad, where)
                while True:
                    try:
                        raw, rec = next(records)
                    except StopIteration:
                        break
                    if isinstance(rec, Chunk) and stored is not None:
                        if rec.id in stored:
                            skipped += 1
                            continue
                        stored.add(rec.id)
                    if isinstance(rec, Chunk):
                        pending.append(rec)
                        chunks.append(rec)
                        if len(chunks) >= args.batch:
                            flush()
                    else:
                        pending.append(raw)
        except FunesError as e:  # --strict: keep what came before the bad line
            stop = e
        flush()
        progress.close()
    if stop is not None:
        raise stop
    if skipped and sys.stderr.isatty():
        warn(PROG, f"{skipped} chunks already stored — skipped")
    bad.summary()
    return 1 if bad.count else 0


def _stored_ids(memory: str | None) -> set[str]:
    # lazy: numpy stays off fast commands' start-up
    from funes.memories import open_one
    from funes.store import MemoryMissing

    try:
        return open_one(memory).existing_ids()
    except MemoryMissing:
        return set()  # nothing stored yet: every chunk is new


if __name__ == "__main__":
    sys.exit(main())
