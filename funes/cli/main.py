"""`funes VERB …`: the porcelain dispatcher.

Verb `x` runs the command module `funes.cli.x` in process; a verb funes does not ship runs an
executable `funes-x` found on PATH (git-style), so plumbing and third-party commands compose
the same way. Nothing heavy is imported here: `funes --help` must answer at once.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys

import funes
import funes.cli
from funes import plugins

# One line per verb for `funes help`; verbs without a line still run.
SUMMARIES = {
    "index": "index agent sessions into the memory",
    "ingest": "store whole-session envelopes another tool sends (a file or stdin)",
    "recall": "search the memory: ranked passages with provenance",
    "get": "show a turn and the turns around it, or a range of a session's turns",
    "sessions": "list the sessions in the memory, newest first, with their opening prompts",
    "sketch": "a digest of one session: its opening ask, last word and what differs most",
    "scan": "find a literal string in one session, every occurrence with context",
    "ask": "ask an agent's CLI a question, answered from your memory",
    "status": "what the memory holds",
    "add": "wire an agent ({agents}) to funes",
    "remove": "unwire an agent",
    "push": "publish the memory to a Hugging Face dataset",
    "scrub": "redact secrets from the local memory",
    "curate": "choose the sessions a project memory on the Hub may ship",
    "mcp": "run the MCP server on stdio",
    "doctor": "check each agent's hooks, MCP registration and last hook run",
    "compact": "compact the memory and build its search indexes",
    "optimize": "the same as compact",
    "models": "the local models: pins, files, checks",
    "parse": "plumbing: transcripts → turn JSONL",
    "chunk": "plumbing: turn JSONL → chunk JSONL",
    "embed": "plumbing: chunk JSONL → chunk JSONL with vectors",
    "write": "plumbing: chunk JSONL → the memory",
    "query": "plumbing: queries → hit JSONL",
}
ORDER = list(SUMMARIES)


def verbs() -> list[str]:
    """Command modules shipped in funes.cli (names only; nothing is imported)."""
    names = [m.name for m in pkgutil.iter_modules(funes.cli.__path__)]
    return [n.replace("_", "-") for n in names if not n.startswith("_") and n != "main"]


def usage() -> str:
    have = set(verbs())
    width = max((len(v) for v in have), default=8)
    rows = [v for v in ORDER if v in have] + sorted(have - set(ORDER))
    agents = ", ".join(plugins.names(plugins.AGENTS))
    summaries = {**SUMMARIES, "add": SUMMARIES["add"].format(agents=agents)}
    lines = [f"  {v:<{width}}  {summaries.get(v, '')}".rstrip() for v in rows]
    return (
        "usage: funes [--version] [--help] VERB [ARGS…]\n\n"
        "funes keeps a local, append-only memory of your coding agents' sessions.\n\n"
        "verbs:\n" + "\n".join(lines) + "\n\n"
        "`funes help VERB` (or `funes VERB --help`) explains one verb. Any `funes-NAME`\n"
        "executable on PATH runs as `funes NAME`.\n"
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(usage())
        return 0 if args else 2
    if args[0] in ("-V", "--version", "version"):
        print(f"funes {funes.__version__}")
        return 0
    verb, rest = args[0], args[1:]
    if verb == "help":
        if not rest:
            sys.stdout.write(usage())
            return 0
        verb, rest = rest[0], ["--help"]
    if verb.startswith("-"):
        print(f"funes: unknown option {verb!r} — see `funes --help`", file=sys.stderr)
        return 2
    if verb in verbs():
        module = importlib.import_module(f"funes.cli.{verb.replace('-', '_')}")
        code = int(module.main(rest) or 0)
        if argv is None:  # this process's own command line: nothing runs after the verb
            from funes.cli._cold import end

            return end(code)
        return code
    # lazy: shutil (with zlib, bz2, lzma) costs ~4 ms of CPU at every verb's start; only a verb
    # funes does not ship needs it
    import shutil

    exe = shutil.which(f"funes-{verb}")
    if exe:
        sys.stdout.flush()
        os.execv(exe, [exe, *rest])
    near = close_verb(verb)
    hint = f" Did you mean `funes {near}`?" if near else " See `funes --help`."
    print(f"funes: '{verb}' is not a funes verb.{hint}", file=sys.stderr)
    return 2


def close_verb(word: str) -> str | None:
    """A verb ``word`` is a slip of (one or two letters off, or its start), else None:
    `funes reacll` → recall, `funes stat` → status, but `funes update` → nothing."""
    known = [*verbs(), "help", "version"]
    prefixed = [v for v in known if len(word) >= 3 and v.startswith(word)]
    if len(prefixed) == 1:
        return prefixed[0]
    import difflib  # lazy: only a mistyped verb needs it

    near = difflib.get_close_matches(word, known, n=1, cutoff=0.8)
    return near[0] if near else None


if __name__ == "__main__":
    sys.exit(main())
