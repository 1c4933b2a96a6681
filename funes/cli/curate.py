"""`funes curate MEMORY [OWNER/REPO] [--include S…] [--exclude S…] [--yes]`: choose which of
this machine's sessions a project memory gets (docs/hub.md).

Without decisions on a terminal, a short review: each pending session with a preview of its
prompts, answered y (include) / n (exclude) / s (skip) / q (stop). Off a terminal (or with
``FUNES_NO_TUI``), the pending sessions are listed instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from funes.cli._args import Parser
from funes.cli._pipe import run
from funes.cli._tty import confirm
from funes.errors import FunesError, UsageError, counted
from funes.hub import receipt
from funes.hub.push import push
from funes.hub.remote import materialize
from funes.hub.spec import State, parse, state_message
from funes.render.curate import pending_text
from funes.render.push import push_text

if TYPE_CHECKING:
    from funes.hub.curate import Session
    from funes.hub.spec import MemorySpec
    from funes.hub.transport import RemoteInfo
    from funes.store.memory import Memory


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="funes curate",
        example="funes curate ana/project-memory --exclude 5f0c2d1e",
        description="Review which local sessions a project memory (a Hub dataset stamped with "
        "a project, OWNER/REPO) receives: `funes push` sends only included sessions.",
        epilog="Decisions live in $FUNES_HOME/curation/<memory>, one line per session. A "
        "session is named by its id or a unique prefix of it.",
    )
    p.add_argument("memory", metavar="MEMORY", help="OWNER/NAME[/PREFIX] or hf://datasets/…")
    p.add_argument(
        "project", metavar="OWNER/REPO", nargs="?", help="the project (needed the first time)"
    )
    p.add_argument("--include", nargs="+", default=[], metavar="S", help="sessions to publish")
    p.add_argument("--exclude", nargs="+", default=[], metavar="S", help="sessions to keep here")
    p.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help="make MEMORY the project memory of OWNER/REPO if it is not one yet (creates the "
        "dataset, private, if it does not exist)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _main(args))


def _main(args: argparse.Namespace) -> int:
    # lazy: funes.hub.curate and numpy stay off fast commands' start-up
    from funes.hub import curate, transport
    from funes.memories import open_for_write

    spec = parse(args.memory)
    if not spec.remote:
        raise UsageError("funes curate works on a Hub memory — name one: `funes curate OWNER/NAME`")
    local = open_for_write()  # the sessions of this machine's memory are what curate chooses from
    sessions = curate.sessions(local)
    if args.project is not None and "/" not in args.project:
        guesses = curate.did_you_mean(args.project, sessions)
        hint = f" — did you mean {' or '.join(guesses)}?" if guesses else ""
        raise UsageError(f"a project is OWNER/REPO (its repo identity), not {args.project!r}{hint}")
    info = transport.probe(spec)
    if info.state in (State.OFFLINE, State.UNAUTHORIZED):
        raise FunesError(state_message(spec, info.state, info.detail))
    current = curate.remote_project(info)
    project = _project(spec, info, args.project, current)
    tty = sys.stdin.isatty() and sys.stdout.isatty() and not os.environ.get("FUNES_NO_TUI")
    decisions = [(s, "include") for s in args.include] + [(s, "exclude") for s in args.exclude]
    needs_stamp = current is None
    if needs_stamp and (decisions or not tty):
        if not args.yes:
            raise FunesError(
                f"{spec.uri} is not a project memory yet — re-run with --yes to make it the "
                f"project memory of {project}"
                + (" (the dataset is created, private)" if info.state is State.MISSING else "")
            )
        _stamp(spec, info, project, local.model)
        needs_stamp = False
    if decisions:
        _record(spec, local, sessions, decisions, project)
        return 0
    cur = curate.load(spec)
    for note in cur.notes:
        print(f"note: {note}", file=sys.stderr)
    sel = curate.select(project, sessions, cur)
    pending = sel.pending(_remote_ids(info) | _receipt(spec))
    if not tty:
        _list(local, sessions, pending, project, spec.short)
        return 0
    return _review(spec, info, project, local, sessions, pending, needs_stamp)


def _project(spec: MemorySpec, info: RemoteInfo, named: str | None, current: str | None) -> str:
    """The project the remote is the memory of: the one it is stamped with, or the one
    ``named`` for a remote not stamped yet; a name that disagrees with the stamp, or none for
    a remote without one, is refused."""
    if named and current and named != current:
        raise FunesError(
            f"{spec.uri} is the project memory of {current}, not {named} (funes does not "
            "rename a project memory)"
        )
    project = named or current
    if project is None:
        if info.state is State.MISSING:
            raise FunesError(state_message(spec, info.state))
        raise UsageError(
            f"{spec.uri} is not a project memory — name its project: "
            f"`funes curate {spec.short} OWNER/REPO`"
        )
    return project


def _record(
    spec: MemorySpec,
    local: Memory,
    sessions: dict[str, Session],
    decisions: list[tuple[str, str]],
    project: str,
) -> None:
    """Record the ``decisions`` given on the command line (``--include``/``--exclude``) in the
    remote's curation file, each line with the session's size and opening prompt."""
    # lazy: funes.hub.curate and numpy stay off fast commands' start-up
    from funes.hub import curate

    lines: dict[str, str] = {}
    counts = {"include": 0, "exclude": 0}
    resolved = [(curate.resolve(s, sessions), state) for s, state in decisions]
    firsts = curate.prompts(local, {sid for sid, _ in resolved})
    for sid, state in resolved:
        s = sessions[sid]
        note = curate.comment(s, next(iter(firsts.get(sid) or []), None))
        lines[sid] = curate.decision_line(sid, state, len(s.ids), note)
    for sid in lines:
        counts[lines[sid].split(" ", 1)[0]] += 1
    curate.record(spec, lines)
    print(
        f"project memory of {project} — recorded {counts['include']} include, "
        f"{counts['exclude']} exclude"
    )


def _remote_ids(info: RemoteInfo) -> set[str]:
    """The ids of the remote at the commit just probed. Its snapshot is opened by path, not
    through funes.memories: that would resolve the head again, and may fall back to the local
    memory when offline, where these must be the remote's own ids or none."""
    # lazy: numpy stays off fast commands' start-up
    from funes.store.memory import open_memory

    if info.state is not State.READY:
        return set()
    return open_memory(materialize(info)).existing_ids()


def _receipt(spec: MemorySpec) -> set[str]:
    return receipt.load(spec) or set()


def _stamp(spec: MemorySpec, info: RemoteInfo, project: str, model: str | None) -> None:
    # lazy: funes.hub.curate stays off fast commands' start-up
    from funes.hub import curate

    oid = curate.stamp(spec, info, project, model)
    print(f"{spec.uri}: now the project memory of {project} (commit {oid})")


def _list(
    local: Memory, sessions: dict[str, Session], pending: list[str], project: str, short: str
) -> None:
    # lazy: funes.hub.curate stays off fast commands' start-up
    from funes.hub import curate

    firsts = curate.prompts(local, pending)
    sys.stdout.write(pending_text(sessions, pending, firsts, project, short))


def _review(
    spec: MemorySpec,
    info: RemoteInfo,
    project: str,
    local: Memory,
    sessions: dict[str, Session],
    pending: list[str],
    needs_stamp: bool,
) -> int:
    # lazy: funes.hub.curate stays off fast commands' start-up
    from funes.hub import curate

    firsts = curate.prompts(local, pending)
    lines: dict[str, str] = {}
    inc = exc = 0
    for n, sid in enumerate(sorted(pending, key=lambda s: sessions[s].first_ts), 1):
        s = sessions[sid]
        ps = firsts.get(sid) or []
        print(f"\n[{n}/{len(pending)}] {s.date} {sid}  {s.workdir}  chunks={len(s.ids)}")
        for p in ps[:3]:
            print("  > " + " ".join(p.split())[:160])
        if len(ps) > 3:
            print(f"  … {counted(len(ps) - 3, 'more prompt')}")
        sys.stdout.write("publish this session? [y]es / [n]o / [s]kip / [q]uit: ")
        sys.stdout.flush()
        answer = sys.stdin.readline()
        a = answer.strip().lower()[:1]
        if not answer or a == "q":
            break
        if a in ("y", "n"):
            state = "include" if a == "y" else "exclude"
            inc, exc = inc + (a == "y"), exc + (a == "n")
            lines[sid] = curate.decision_line(
                sid, state, len(s.ids), curate.comment(s, ps[0] if ps else None)
            )
    if lines:
        curate.record(spec, lines)
    left = len(pending) - inc - exc
    print(f"\nproject memory of {project} — {inc} include, {exc} exclude, {left} pending")
    if not inc:
        return 0
    if needs_stamp:
        if not confirm(f"Make {spec.uri} the project memory of {project}? [Y/n]"):
            return 0
        _stamp(spec, info, project, local.model)
    if confirm(f"Push the included sessions to {spec.uri} now? [Y/n]"):
        # lazy: see _main
        from funes.memories import open_for_write

        # opened again: what the hooks stored during the review goes too
        report = push(spec, open_for_write(), yes=True)
        sys.stdout.write(push_text(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
