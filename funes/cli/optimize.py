"""`funes optimize [--memory DIR] [--ann|--no-ann] [--json]`: maintenance off the hot path.

Compacts the lexical index into one segment and the table's fragments, builds the ANN vector
index (IVF_RQ) once the memory holds enough vectors for it to beat a flat scan, and
reaps table versions older than ten minutes. Takes the writer lock. See docs/store.md.
"""

from __future__ import annotations

import argparse
import json
import sys

from funes.cli._args import Parser
from funes.cli._pipe import run
from funes.cli._tty import steps
from funes.store.state import mark_all_embedded


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes optimize",
        example="funes optimize --json",
        description="Compact the memory and build its vector index when it is large enough.",
    )
    p.add_argument("--memory", metavar="DIR", help="memory directory (default: $FUNES_HOME/memory)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--ann", action="store_true", default=None, help="build the ANN index now")
    g.add_argument("--no-ann", dest="ann", action="store_false", help="never build it")
    p.add_argument("--json", action="store_true", help="print what was done as one JSON line")
    # The vector index build an index run starts behind itself (funes.ingest.ann): no writer
    # lock, detached, logged to hooks.log.
    p.add_argument("--behind", action="store_true", help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    if args.behind:
        # lazy: numpy stays off fast commands' start-up
        from funes.ingest import ann
        from funes.memories import writable_dir

        ann.run(writable_dir(args.memory))
        return 0
    return optimize(args.memory, args.ann, args.json, "optimized")


def optimize(memory: str | None, ann: bool | None, as_json: bool, done: str) -> int:
    """`funes optimize` and `funes compact` (the reference's name): one verb, two spellings."""
    # lazy: numpy stays off fast commands' start-up
    from funes.memories import open_for_write

    mem = open_for_write(memory)
    with mem.writer() as w, steps(3, "optimize") as step:
        report = w.optimize(ann=ann, on_step=step)
        if not mem.count_without_vectors():
            # Compaction commits new table versions: the mark that nothing waits for a vector
            # names the old one, and the next no-op `funes index` would open the table (~2 s
            # of CPU importing LanceDB) to find that out.
            mark_all_embedded(mem.path)
    report["memory"] = mem.label
    if as_json:
        print(json.dumps(report))
    else:
        kind = "ANN index" if report["ann"] else "flat vector search"
        print(f"{done} {mem.label}: {report['vectors']} vectors, {kind}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
