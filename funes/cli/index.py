"""`funes index [PATH…|OWNER/NAME|--harness NAME] [--limit N] [--no-thinking] [--yes]
[--memory DIR] [--backfill] [--no-embed] [--embed-tool-results all|head] [--json]`: index agent
sessions into the memory.

The porcelain over parse → chunk → write → embed (funes.ingest.indexer), in one process. With a
path, that path is indexed in full; without one, every known agent root (or one harness's) is
swept, newest sessions first, text before tool calls before tool results, within a 60 s budget.
Chunks are searchable by text as soon as they are written; vectors are filled in behind, in the
same run or by `funes index --backfill`. An OWNER/NAME (or hf://datasets/OWNER/NAME) that is
not a local path names an agent-traces dataset on the Hub (funes.hub.traces), indexed in full.
The library draws nothing: this module passes it the terminal's progress bar and prompt.
See docs/funes-index.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

from funes import validate
from funes.cli._args import Parser, harness_option
from funes.cli._pipe import run
from funes.cli._tty import IndexProgress, confirm
from funes.errors import UsageError
from funes.store.embedding import TOOL_RESULTS, set_tool_results

if TYPE_CHECKING:
    from funes.hub.traces import TraceDataset
    from funes.ingest.plan import IndexOptions
    from funes.ingest.report import IndexReport

PROG = "funes"


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes index",
        example="funes index ~/.codex/sessions --limit 20",
        description="Index coding-agent sessions into the memory: a path in full, or (no "
        "path) every known agent root within a 60 s budget, newest sessions first.",
        epilog="Exit status: 0 done (or budget reached), 1 error or another writer busy, "
        "2 bad arguments.",
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="transcript file or directory, or an agent-traces dataset on the Hub "
        "(OWNER/NAME or hf://datasets/OWNER/NAME)",
    )
    harness_option(p, metavar="NAME", help="one agent: %(agents)s")
    p.add_argument("--limit", metavar="N", help="only the N most recent sessions per source")
    p.add_argument("--no-thinking", action="store_true", help="leave thinking blocks out")
    p.add_argument("-y", "--yes", action="store_true", help="finish past the budget, no prompt")
    p.add_argument("--memory", metavar="DIR", help="memory directory (default: $FUNES_HOME/memory)")
    p.add_argument(
        "--backfill",
        action="store_true",
        help="only fill in vectors for chunks stored without one (what hooks run detached)",
    )
    # The detached backfill an unattended sweep starts (funes.ingest.behind): one at a time,
    # logged to the hooks' log, letting other writers in between batches.
    p.add_argument("--behind", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(
        "--no-embed",
        action="store_true",
        help="store and index text only; leave vectors to a later `funes index --backfill`",
    )
    p.add_argument(
        "--embed-tool-results",
        choices=TOOL_RESULTS,
        metavar="all|head",
        help="head: give only the first piece (~1,200 characters) of each tool result a vector, "
        "the rest searchable by words; the memory remembers it (default: all)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="validate the PATHs and count the turns and chunk ids they would give; write nothing",
    )
    p.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _budget() -> float:
    """The sweep's time budget: 60 s, or ``$FUNES_INDEX_BUDGET`` seconds."""
    from funes.ingest.plan import BUDGET_SECONDS

    raw = os.environ.get("FUNES_INDEX_BUDGET", "").strip()
    if not raw:
        return BUDGET_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 86400:
        raise UsageError(f"FUNES_INDEX_BUDGET must be seconds from 0 to 86400 (got {raw!r})")
    return value


def _main(args: argparse.Namespace) -> int:
    from funes.ingest.plan import IndexOptions, unchanged
    from funes.ingest.report import as_dict, describe

    limit = validate.number("limit", args.limit) if args.limit is not None else None
    # a sweep reads agents; with paths, any registered source (parquet too) may be forced
    harness = validate.harness(args.harness) if args.harness and not args.paths else args.harness
    if args.backfill and args.paths:
        raise UsageError("--backfill takes no path: it embeds what the memory already holds")
    if args.check:
        return _check(args)
    opts = IndexOptions(
        paths=args.paths,
        harness=harness,
        limit=limit,
        thinking=not args.no_thinking,
        yes=args.yes,
        memory=args.memory,
        embed=not args.no_embed,
        budget=None if args.backfill else _budget(),
    )
    if args.embed_tool_results is not None:
        # lazy: see _run
        from funes.memories import writable_dir

        set_tool_results(writable_dir(args.memory), args.embed_tool_results)
    local = all(os.path.exists(os.path.expanduser(a)) for a in args.paths)
    # Nothing changed (sizes and mtimes against state.json, no vector waiting): said without
    # loading LanceDB, onnxruntime or the dataset — a per-turn hook's usual case.
    report = None if args.backfill or not local else unchanged(opts)
    if report is None:
        try:
            report = _run(args, opts)
        except KeyboardInterrupt:
            # Every batch committed before the interrupt is whole and recorded; the next run
            # goes on from there (and never writes a chunk twice).
            print(
                "funes: interrupted — what this run stored is kept; run it again to go on",
                file=sys.stderr,
            )
            return 130
        if report is None:
            return 0
    backfill_cmd = "funes index --backfill" + (f" --memory {args.memory}" if args.memory else "")
    for line in describe(report, backfill_cmd):
        print(f"funes: {line}", file=sys.stderr)
    if args.json:
        print(json.dumps(as_dict(report)))
    elif not args.quiet:
        print(report.summary(backfill=args.backfill))
    return 0


def _run(args: argparse.Namespace, opts: IndexOptions) -> IndexReport | None:
    """The run itself (index, backfill, or the backfill behind); None when it prints nothing."""
    progress = IndexProgress()
    progress.status("starting")  # the imports below take seconds on a busy machine
    # lazy: LanceDB, numpy and the secrets scanner stay off a no-op run (0.4 s of CPU, measured
    # at 20k chunks)
    from funes.ingest import behind
    from funes.ingest.backfill import stdin_interactive
    from funes.memories import writable_dir
    from funes.store.lock import behind_pid

    try:
        report = _index_or_backfill(args, opts, progress)
    finally:
        progress.clear()  # the spinner or bar, before anything else is printed
    if report is None:
        return None
    if report.without_vectors and report.embed_note is None and not args.backfill:
        path = writable_dir(args.memory)
        running = behind_pid(path)
        if running is not None:
            report.behind = (running, False)  # it embeds this run's chunks too
        elif not (args.paths or args.no_embed or stdin_interactive(None)):
            # An unattended sweep stopped at its budget: the vectors are filled in behind it.
            report.behind = behind.start(path, _behind_command(path))
    return report


def _index_or_backfill(
    args: argparse.Namespace, opts: IndexOptions, progress: IndexProgress
) -> IndexReport | None:
    # lazy: see _run
    from funes.ingest import behind, indexer
    from funes.ingest.backfill import backfill
    from funes.memories import writable_dir
    from funes.store.lock import behind_pid

    if args.behind:
        behind.run(args.memory)
        return None
    if args.backfill and (pid := behind_pid(writable_dir(args.memory))) is not None:
        progress.clear()
        print(
            f"funes: a backfill is already running (pid {pid}); "
            "`funes status` shows how many chunks still wait",
            file=sys.stderr,
        )
        return None
    if args.backfill:
        report = backfill(args.memory, progress=progress)
    else:
        opts.memory = str(writable_dir(args.memory))  # before a Hub dataset is looked up

        def announce(ds: TraceDataset) -> None:
            progress.clear()
            _announce(ds)

        opts.paths, opts.units = indexer.hub_units(args.paths, on_dataset=announce)
        report = indexer.index(opts, progress=progress, ask=_ask)
    return report


def _ask(question: str) -> bool:
    """The budget's question, taken off the screen once answered (one estimate on screen)."""
    return confirm(question, erase=True)


def _behind_command(memory: object) -> list[str]:
    """`funes index --backfill --behind --memory MEMORY`, as this Python runs it."""
    return [sys.executable, "-m", "funes.cli.index", "--backfill", "--behind",
            "--memory", str(memory)]  # fmt: skip


def _check(args: argparse.Namespace) -> int:
    """`--check`: exit 1 when any file is refused; nothing is written."""
    # lazy: chunking and the secrets scanner stay off fast commands' start-up
    from funes.ingest.check import check

    if not args.paths:
        raise UsageError("--check needs a PATH: a file or directory of transcripts to validate")
    report = check(args.paths, args.harness)
    for line in report.refused:
        print(f"funes: refused: {line}", file=sys.stderr)
    if args.json:
        print(json.dumps(report.as_dict()))
    elif not args.quiet:
        print(report.summary())
    return 1 if report.refused else 0


def _announce(ds: TraceDataset) -> None:
    """Name a Hub trace dataset once it is resolved, before any of it is read."""
    # lazy: funes.hub.traces stays off fast commands' start-up
    from funes.hub.traces import CONVERT_REF

    s = "" if len(ds.shards) == 1 else "s"
    print(
        f"funes: {ds.uri} — {len(ds.shards)} parquet shard{s} at {CONVERT_REF} "
        f"(commit {ds.commit[:8]})",
        file=sys.stderr,
    )


if __name__ == "__main__":
    sys.exit(main())
