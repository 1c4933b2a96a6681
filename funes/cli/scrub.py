"""`funes scrub [--memory DIR] [--dry-run] [--builtin-only] [--json]`: take secrets out of a
memory that already holds them.

Scans every stored block with the built-in detectors and the external scanner (fail-closed),
replaces what they find with `[REDACTED:<detector>]`, re-embeds just those blocks, drops the
blocks it cannot redact safely, and physically removes the old text. Takes the writer lock
(one attempt). Counts are printed by detector, never a value. See docs/secrets.md.
"""

from __future__ import annotations

import argparse
import json
import sys

from funes.cli._args import Parser
from funes.cli._pipe import run
from funes.cli._tty import steps


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes scrub",
        example="funes scrub --dry-run",
        description="Redact secrets already stored in a local memory (source transcripts are "
        "never touched). Needs a secret scanner unless --builtin-only is given.",
    )
    p.add_argument("--memory", metavar="DIR", help="memory directory (default: $FUNES_HOME/memory)")
    p.add_argument(
        "--dry-run", action="store_true", help="report what would change; change nothing"
    )
    p.add_argument(
        "--builtin-only",
        action="store_true",
        help="scan with the built-in detectors alone (when no external scanner is installed)",
    )
    p.add_argument("--json", action="store_true", help="print the report as one JSON line")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    # lazy: numpy stays off fast commands' start-up
    from funes.ingest.scrub import describe, scrub

    with steps(4, "scrub") as step:
        report = scrub(
            args.memory,
            dry_run=args.dry_run,
            builtin_only=args.builtin_only,
            on_step=step,
        )
    if args.json:
        print(json.dumps(report.as_dict()))
    else:
        print("\n".join(describe(report)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
