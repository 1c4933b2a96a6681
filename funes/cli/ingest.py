"""`funes ingest [PATH|-] [--memory DIR] [--no-embed] [--json]`: whole-session envelopes into the
memory (see ``funes.sources.envelope`` and docs/sources.md).

The input (a file, or stdin with ``-`` or no PATH; at most 64 MiB) is validated whole before
anything is written; then it is indexed as `funes index` would, its session ids namespaced
``<harness>:<id>``. Exit status: 0 stored (or nothing new), 1 refused or another writer busy.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

from funes.cli._args import Parser
from funes.cli._pipe import run
from funes.errors import FunesError


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes ingest",
        example="funes ingest sessions.json",
        description="Store whole-session envelopes ({version, harness, session_id, cwd, turns}) "
        "sent by another tool.",
        epilog="Exit status: 0 stored, 1 refused (nothing stored) or another writer busy.",
    )
    p.add_argument("path", nargs="?", default="-", metavar="PATH", help="a file, or - for stdin")
    p.add_argument("--memory", metavar="DIR", help="memory directory (default: $FUNES_HOME/memory)")
    p.add_argument("--no-embed", action="store_true", help="store text only; vectors later")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _read(path: str) -> tuple[bytes, str]:
    # lazy: funes.sources stays off fast commands' start-up
    from funes.sources.envelope import MAX_BYTES

    if path == "-":
        return sys.stdin.buffer.read(MAX_BYTES + 1), "<stdin>"
    try:
        with open(path, "rb") as f:
            return f.read(MAX_BYTES + 1), path
    except OSError as e:
        raise FunesError(f"{path}: cannot read ({e.strerror or e})") from None


def _main(args: argparse.Namespace) -> int:
    # lazy: the index pipeline (numpy, lancedb) stays off fast commands' start-up
    from funes.ingest import indexer
    from funes.ingest.report import as_dict, describe
    from funes.sources import Unit
    from funes.sources.envelope import SOURCE, SUFFIX, envelopes

    data, name = _read(args.path)
    envelopes(data, name)  # refused whole before anything is written
    fd, tmp = tempfile.mkstemp(suffix=SUFFIX, prefix="funes-ingest-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        # the content's digest is its signature: the same input again is skipped, a new one read
        unit = Unit(Path(tmp), SOURCE, key=name, revision=hashlib.sha1(data).hexdigest())
        opts = indexer.IndexOptions(
            units=[unit], memory=args.memory, embed=not args.no_embed, yes=True, budget=None
        )
        report = indexer.index(opts)
    finally:
        os.unlink(tmp)
    for line in describe(report):
        print(f"funes: {line}", file=sys.stderr)
    print(json.dumps(as_dict(report)) if args.json else report.summary())
    return 1 if report.failed else 0
