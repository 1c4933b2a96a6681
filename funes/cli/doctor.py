"""`funes doctor [AGENT…] [--memory M] [--json]`: is each agent wired, and is its hook working?

For each agent: hooks installed (from the files `funes add` writes), MCP registered (asked of the
agent's CLI; unknown without it), when the hook last ran and how it ended (hooks.log); then the
memory's pending work. See docs/agents.md.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from datetime import datetime
from typing import Any

from funes import agents
from funes.agents import doctor
from funes.cli._args import Parser
from funes.cli._pipe import run
from funes.cli.add import context
from funes.store.private import make_private, too_open


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes doctor",
        example="funes doctor codex",
        description="Check each agent's funes wiring: hooks, MCP, the hook's last run.",
        epilog="Exit status: 0 (the report is informational), 2 bad arguments.",
    )
    names = ", ".join(agents.names())
    p.add_argument("agents", nargs="*", metavar="AGENT", help=f"any of {names}")
    p.add_argument("--memory", metavar="M", help="memory whose pending work to show")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument(
        "--fix",
        action="store_true",
        help="make funes' files private (remove group and other permissions) without asking",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    for a in args.agents:
        if a not in agents.names():
            near = difflib.get_close_matches(a, agents.names(), n=1, cutoff=0.7)
            hint = f" (did you mean {near[0]}?)" if near else ""
            p.error(f"unknown agent {a!r} (choose from {', '.join(agents.names())}){hint}")
    return run(lambda: _main(args))


def _ago(ts: str | None, now: datetime) -> str:
    if not ts:
        return ""
    try:
        secs = (now - datetime.fromisoformat(ts)).total_seconds()
    except (ValueError, TypeError):
        return ""
    if secs < 90:
        return f" ({secs:.0f} s ago)"
    if secs < 90 * 60:
        return f" ({secs / 60:.0f} min ago)"
    if secs < 36 * 3600:
        return f" ({secs / 3600:.1f} h ago)"
    return f" ({secs / 86400:.0f} days ago)"


def unwired(a: dict[str, Any]) -> bool:
    """Nothing of funes on this agent: no hook, no MCP registration, no hook or push run, no
    note but the one saying it has no hook."""
    return not (
        a["hooks"]
        or a["mcp"]
        or a["last_start"]
        or a["last_end"]
        or a.get("push_hooks")
        or a.get("last_push")
        or any(not n.startswith("no hook:") for n in a["notes"])
    )


def render(rep: dict[str, Any], every: bool = True) -> str:
    """The report as text. ``every`` (no agent named): the agents funes is not wired to are
    named on one line rather than four lines each, so the ones wired stand out."""
    now = datetime.now().astimezone()
    out: list[str] = []
    idle = [a["agent"] for a in rep["agents"] if every and unwired(a)]
    for a in rep["agents"]:
        if a["agent"] in idle:
            continue
        out.append(a["agent"])
        if a["hooks"]:
            out.append(f"  hooks: installed ({', '.join(a['hooks'])}) in {a['hooks_file']}")
        else:
            out.append("  hooks: not installed")
        mcp = {True: "registered", False: "not registered", None: "unknown"}[a["mcp"]]
        if a["mcp"] is None:
            mcp += f" ({a['agent']} is not on PATH)"
        out.append(f"  mcp: {mcp}")
        if a["last_start"] or a["last_end"]:
            ended = a["last_outcome"] or "still running, or never finished"
            when = a["last_end"] or a["last_start"]
            out.append(f"  last hook run: {when}{_ago(when, now)}: {ended}")
            out += [f"    {line}" for line in a["last_detail"]]
        else:
            out.append("  last hook run: never")
        if a.get("push_hooks"):
            out.append(f"  push hooks: {', '.join(a['push_hooks'])}")
        if a.get("last_push"):
            when = a["last_push"]
            out.append(f"  last push: {when}{_ago(when, now)}: {a['last_push_outcome']}")
            out += [f"    {line}" for line in a["last_push_detail"]]
        out += [f"  note: {n}" for n in a["notes"]]
    if idle:
        out.append(
            f"not wired: {', '.join(idle)} — `funes add AGENT` wires one, "
            "`funes doctor AGENT` shows one in full"
        )
    mem = rep["memory"]
    if mem is None:
        out.append("memory: none yet (run `funes index` or let a hook run)")
    else:
        line = f"memory: {mem['memory']} — {mem['chunks']} chunks, {mem['sessions']} sessions"
        if mem["without_vectors"]:
            line += f"; vectors pending for {mem['without_vectors']} (`funes index --backfill`)"
        out.append(line)
        if mem.get("duplicate_rows"):
            out.append(
                f"  {mem['duplicate_rows']} duplicate rows: chunk ids stored more than once "
                "(two writers raced); recall shows each passage once"
            )
        if mem.get("stale_state_entries"):
            out.append(
                f"  {mem['stale_state_entries']} indexed transcript files no longer exist (their "
                "sessions stay in the memory), e.g. " + ", ".join(mem["stale_examples"][:1])
            )
    http = rep.get("mcp_http")
    if http:
        if http["answers"]:
            out.append(f"mcp http: {http['url']} answers")
        else:
            out.append(
                f"mcp http: nothing answers at {http['url']} — the agents registered with "
                "`funes add --mcp-http` reach funes there; start it with `funes mcp --http`"
            )
    out.append(f"hook log: {rep['log']}")
    wide = rep.get("open_files") or {"count": 0, "paths": []}
    if wide["count"]:
        out.append(
            f"files: {wide['count']} readable by other users — funes keeps memories private "
            "(0700 directories, 0600 files); `funes doctor --fix` makes them so"
        )
        out += [f"  {p}" for p in wide["paths"][:5]]
        if wide["count"] > 5:
            out.append(f"  … and {wide['count'] - 5} more")
    else:
        out.append("files: private (readable by you alone)")
    return "\n".join(out) + "\n"


def _main(args: argparse.Namespace) -> int:
    rep = doctor.report(context(None), tuple(args.agents) or None, memory=args.memory)
    if args.json:
        print(json.dumps(rep))
    else:
        print(render(rep, every=not args.agents), end="")
    if rep["open_files"]["count"] and (args.fix or (not args.json and _ask_fix())):
        _fix(rep)
    return 0


def _ask_fix() -> bool:
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return False
    sys.stderr.write("Make them private now (chmod go-rwx)? [Y/n] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("", "y", "yes")


def _fix(rep: dict[str, Any]) -> None:
    # lazy: funes.hub.remote stays off fast commands' start-up
    from funes.hub.remote import private_roots

    wide = too_open(private_roots())
    failed = make_private(wide)
    for p, why in failed[:10]:
        print(f"funes: cannot make {p} private: {why}", file=sys.stderr)
    done = len(wide) - len(failed)
    print(f"made {done} file{'' if done == 1 else 's'} private", file=sys.stderr)
    rep["open_files"] = {"count": len(failed), "paths": [str(p) for p, _ in failed[:20]]}
