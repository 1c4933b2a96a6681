"""`funes-parse [PATH…|-] [--harness NAME]`: agent transcripts → turn JSONL on stdout."""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Callable
from pathlib import Path

from funes import sources
from funes.cli._pipe import run, warn
from funes.errors import FunesError, UsageError
from funes.records import dumps
from funes.sources import FileStats

PROG = "funes-parse"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Parse coding-agent transcripts (files, directory trees, or - for stdin) "
        "into turn records, one JSON object per line on stdout.",
        epilog="Exit status: 0 all read, 1 some lines or files skipped, 2 bad arguments.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="transcript file, directory, or -")
    p.add_argument("--harness", metavar="NAME", help="force the format (claude, codex, …)")
    p.add_argument("-v", "--verbose", action="store_true", help="per-file summary on stderr")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    p.add_argument("--strict", action="store_true", help="stop at the first unreadable line")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    paths: list[str] = args.paths
    if not paths:
        if sys.stdin.isatty():
            raise UsageError("no input — give transcript paths, or - to read stdin")
        paths = ["-"]
    if args.harness:
        sources.get_source(args.harness)  # unknown names fail before any work
    out = io.BufferedWriter(sys.stdout.buffer, buffer_size=1 << 16)
    total = FileStats("*")
    files = failed = 0

    def on_file(st: FileStats) -> None:
        nonlocal files, failed
        files += 1
        _merge(total, st)
        for lineno, reason in st.bad_lines:
            warn(PROG, f"{st.path}:{lineno}: {reason.replace('_', ' ')} line — skipped")
        if st.error:
            failed += 1
            warn(PROG, st.error)
        if args.strict and (st.error or st.skipped_lines):
            raise FunesError(f"{st.path}: unreadable input (--strict)")
        if args.verbose:
            warn(PROG, f"{st.path}: {_counts(st)}")

    try:
        for p in paths:
            if p == "-":
                _parse_stdin(args.harness, out, on_file)
            else:
                for turn in sources.parse([p], args.harness, on_file):
                    out.write(dumps(turn).encode("utf-8") + b"\n")
    finally:
        out.flush()
    if not args.quiet:
        s = "" if files == 1 else "s"
        warn(PROG, f"{files} file{s}: {_counts(total)}")
    return 1 if failed or total.skipped_lines else 0


def _parse_stdin(
    harness: str | None, out: io.BufferedWriter, on_file: Callable[[FileStats], None]
) -> None:
    st = FileStats("<stdin>")
    src = sources.get_source(harness) if harness else None
    try:
        for turn in sources.parse_stream(sys.stdin.buffer, Path("-"), st, src):
            out.write(dumps(turn).encode("utf-8") + b"\n")
    except FunesError as e:
        st.error = str(e).replace("-: ", "<stdin>: ", 1)
    on_file(st)


def _merge(total: FileStats, st: FileStats) -> None:
    total.sessions |= st.sessions
    total.turns += st.turns
    total.blocks.update(st.blocks)
    total.skipped.update(st.skipped)


def _counts(st: FileStats) -> str:
    n = len(st.sessions)
    blocks = sum(st.blocks.values())
    skipped = st.skipped_lines
    return (
        f"{n} session{'' if n == 1 else 's'}, {st.turns} turn{'' if st.turns == 1 else 's'}, "
        f"{blocks} block{'' if blocks == 1 else 's'}, "
        f"{skipped} skipped line{'' if skipped == 1 else 's'}"
    )


if __name__ == "__main__":
    sys.exit(main())
