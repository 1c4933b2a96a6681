"""`funes-parse [PATH…|-|--all] [--harness NAME] [--report [--json]]`: transcripts → turn JSONL.

`--all` reads every agent's known locations under $HOME; `--report` prints, instead of the
turns, what each input held and what became of it (see `sources.coverage`).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from funes import sources
from funes.cli._args import Parser, harness_option
from funes.cli._pipe import run, warn, widen_pipe
from funes.errors import FunesError, UsageError
from funes.records import Block, Turn, dumps
from funes.render.parse import counts_text, file_warnings, report_text, summary_text
from funes.sources import FileStats

PROG = "funes-parse"


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog=PROG,
        description="Parse coding-agent transcripts (files, directory trees, or - for stdin) "
        "into turn records, one JSON object per line on stdout.",
        epilog="Exit status: 0 all read, 1 some lines or files skipped, 2 bad arguments.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="transcript file, directory, or -")
    harness_option(p, metavar="NAME", help="force the format: %(agents)s, or parquet")
    p.add_argument(
        "--all",
        action="store_true",
        help="read every agent's known locations under $HOME, as `funes index` sweeps them "
        "(docs/sources.md lists each agent's)",
    )
    p.add_argument(
        "--report",
        action="store_true",
        help="print a coverage table per file (records read, kept, ignored, skipped; turns "
        "and blocks) instead of the turns",
    )
    p.add_argument("--json", action="store_true", help="with --report: one JSON object per file")
    p.add_argument("-v", "--verbose", action="store_true", help="per-file summary on stderr")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    p.add_argument("--strict", action="store_true", help="stop at the first unreadable line")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    paths: list[str] = args.paths
    if args.json and not args.report:
        raise UsageError("--json goes with --report")
    if args.all and paths:
        raise UsageError("--all reads the known locations under $HOME; give it no paths")
    if not paths and not args.all:
        if sys.stdin.isatty():
            raise UsageError("no input — give transcript paths, or - to read stdin")
        paths = ["-"]
    if args.harness:
        sources.get_source(args.harness)  # unknown names fail before any work
    widen_pipe(sys.stdout)
    out = io.BufferedWriter(sys.stdout.buffer, buffer_size=1 << 16)
    total = FileStats("*")
    files = failed = 0
    reports: list[dict[str, Any]] = []
    big: list[int] = []  # sizes of this file's oversized blocks (counted as its turns stream)

    def on_file(st: FileStats) -> None:
        nonlocal files, failed
        files += 1
        _merge(total, st)
        failed += bool(st.error)
        for line in file_warnings(st):
            warn(PROG, line)
        if args.strict and (st.error or st.skipped_lines):
            raise FunesError(f"{st.path}: unreadable input (--strict)")
        if args.verbose:
            warn(PROG, f"{st.path}: {counts_text(st)}")
        if args.report:
            rep = sources.coverage(st)
            rep["oversized"] = {"blocks": len(big), "chars": sum(big)}
            big.clear()
            if args.json:
                out.write(json.dumps(rep, ensure_ascii=False).encode("utf-8") + b"\n")
            reports.append(rep)

    def emit(turn: Turn) -> None:
        if not args.report:  # a report is the same parse, with the turns counted and dropped
            out.write(dumps(turn).encode("utf-8") + b"\n")
        else:
            big.extend(len(b.text) for b in turn.blocks if _oversized(b))

    try:
        if args.all:
            units = sources.sweep()
            if not units:
                roots = ", ".join(f"~/{r}" for s in sources.registry() for r in s.roots)
                raise FunesError(f"no agent transcripts under $HOME (looked in {roots})")
            for turn in sources.parse_units(units, on_file):
                emit(turn)
        for p in paths:
            if p == "-":
                _parse_stdin(args.harness, emit, on_file)
            else:
                for turn in sources.parse([p], args.harness, on_file):
                    emit(turn)
        if args.report and not args.json:
            out.write(report_text(reports).encode("utf-8"))
    finally:
        out.flush()
    if not args.quiet:
        warn(PROG, summary_text(files, total))
    return 1 if failed or total.skipped_lines else 0


def _parse_stdin(
    harness: str | None, emit: Callable[[Turn], None], on_file: Callable[[FileStats], None]
) -> None:
    st = FileStats("<stdin>")
    src = sources.get_source(harness) if harness else None
    try:
        for turn in sources.parse_stream(sys.stdin.buffer, Path("-"), st, src):
            emit(turn)
    except FunesError as e:
        st.error = str(e).replace("-: ", "<stdin>: ", 1)
    on_file(st)


def _merge(total: FileStats, st: FileStats) -> None:
    total.sessions |= st.sessions
    total.turns += st.turns
    total.blocks.update(st.blocks)
    total.skipped.update(st.skipped)
    total.repaired.update(st.repaired)


def _oversized(block: Block) -> bool:
    # lazy: only a report splits blocks; the chunker and its hashlib (3.0 ms of CPU to import,
    # OpenSSL's 2.2 of them) stay off what every plain funes-parse pays at start
    from funes.chunking import oversized

    return oversized(block)


if __name__ == "__main__":
    sys.exit(main())
