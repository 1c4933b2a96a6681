"""`funes models [--json]` and `funes models fetch`: the local models, their pins and checks.

`funes models` says which embedder, pair model and reranker this install has, where their files came from,
and whether their sha256 matches the pin (exit 1 when a check fails; a missing reranker is not
a failure). `funes models fetch` downloads the optional pinned cross-encoder from the Hub.
"""

from __future__ import annotations

import argparse
import json
import sys

from funes.cli._args import Parser
from funes.cli._pipe import run
from funes.render.models import fetched_text, models_text, problems_text

PROG = "funes models"


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog=PROG,
        example="funes models fetch",
        description="Show the local models (embedder, pair model, reranker), their pins, where their "
        "files came from and a sha256 check; `fetch` downloads the optional reranker.",
        epilog="Exit status: 0 all checks pass, 1 a check or download failed.",
    )
    p.add_argument(
        "action",
        nargs="?",
        choices=["show", "fetch"],
        default="show",
        metavar="ACTION",
        help="show (the default) or fetch",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _fetch(args) if args.action == "fetch" else _show(args))


def _fetch(args: argparse.Namespace) -> int:
    # lazy: funes.models.pins and funes.models.reranker stay off fast commands' start-up
    from funes.models.pins import RERANKER_PIN
    from funes.models.reranker import fetch_reranker

    path = fetch_reranker()
    if args.json:
        print(json.dumps({"fetched": RERANKER_PIN.name, "dir": str(path)}))
    else:
        sys.stdout.write(fetched_text(RERANKER_PIN.name, RERANKER_PIN.revision, path))
    return 0


def _show(args: argparse.Namespace) -> int:
    # lazy: funes.models.info stays off fast commands' start-up
    from funes.models.info import describe, hints

    d = describe()
    if args.json:
        print(json.dumps(d, indent=1))
    else:
        sys.stdout.write(models_text(d, hints()))
    sys.stderr.write(problems_text(d))
    return 0 if d["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
