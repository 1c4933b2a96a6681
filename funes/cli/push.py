"""`funes push MEMORY [--yes] [--create]`: publish your memory's new chunks to a Hub dataset."""

from __future__ import annotations

import argparse
import sys

from funes.cli._args import Parser
from funes.cli._pipe import run
from funes.cli._tty import confirm
from funes.hub.push import check_target, push
from funes.hub.spec import parse
from funes.render.push import push_text


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes push",
        example="funes push ana/agent-memory --create",
        description="Publish the chunks a Hugging Face dataset lacks (append-only). Every block "
        "is scanned for secrets first; blocks with a finding stay here.",
    )
    p.add_argument("memory", metavar="MEMORY", help="OWNER/NAME[/PREFIX] or hf://datasets/…")
    p.add_argument("-y", "--yes", action="store_true", help="don't ask before a first publish")
    p.add_argument(
        "--create", action="store_true", help="create the dataset (private) if it does not exist"
    )
    p.add_argument(
        "--from", dest="source", metavar="M", help="the local memory to publish (default: yours)"
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    # lazy: numpy (under funes.memories and the store) stays off fast commands' start-up
    from funes.memories import open_for_write

    spec = parse(args.memory)
    check_target(spec)
    local = open_for_write(args.source, flag="--from")
    tty = sys.stdin.isatty() and sys.stderr.isatty()
    report = push(spec, local, yes=args.yes, create=args.create, confirm=confirm if tty else None)
    sys.stdout.write(push_text(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
