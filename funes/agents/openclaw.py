"""OpenClaw: a managed hook of funes' own in ``~/.openclaw/hooks/funes/`` (``HOOK.md`` and
``handler.ts``; ``OPENCLAW_STATE_DIR`` moves ``~/.openclaw``) that runs the index hook after
each reply the gateway sends (``message:sent``), on ``/new`` and ``/reset`` (whose transcript
OpenClaw then archives as ``<id>.jsonl.reset.<ts>``) and when a session ends. The hook indexes
the session's transcript when OpenClaw names it, else sweeps OpenClaw's sessions.

With a Hub memory bound, the hook also runs the push hook (``scripts/funes-push.sh``) when a
session ends; the index stays local.

OpenClaw runs a managed hook once it is enabled, which its own CLI records in
``openclaw.json`` (``openclaw hooks enable funes``). funes remembers that file as it was and,
on `funes remove`, after ``openclaw hooks disable funes``, puts back the user's exact bytes when
funes' entry is the only difference. OpenClaw has no MCP registration funes makes.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from funes.agents._common import (
    COMMON_SCRIPT,
    INDEX_SCRIPT,
    PUSH_SCRIPT,
    Context,
    Originals,
    Registrations,
    Result,
    cli_error,
    common_script,
    hook_args,
    hook_script,
    packaged,
    prune_dirs,
    push_script,
    push_script_status,
    remove_file,
    remove_tree,
    run_cli,
    same,
    scripts_current,
    shell_join,
    which,
    write_if_changed,
)
from funes.agents._files import written_args
from funes.agents._mcp_json import env_dir
from funes.agents._registry import Agent

NAME = "openclaw"
HOOK = "funes"
EVENTS = ("message:sent", "command:new", "command:reset", "session:end")
MARK = b"/* funes: hook */ []"
PUSH_MARK = b"/* funes: push */ []"
PUSH_EVENT = "session:end"
ENABLE = ["openclaw", "hooks", "enable", HOOK]
DISABLE = ["openclaw", "hooks", "disable", HOOK]


def state_dir(ctx: Context) -> Path:
    return env_dir("OPENCLAW_STATE_DIR", ctx.home / ".openclaw")


def root(ctx: Context) -> Path:
    return state_dir(ctx) / "hooks" / HOOK


def config(ctx: Context) -> Path:
    return state_dir(ctx) / "openclaw.json"


def index_args(ctx: Context) -> list[str]:
    script = str(root(ctx) / "scripts" / INDEX_SCRIPT)
    return hook_args(script, NAME, ctx.funes_bin, ctx.index_memory)


def push_args(ctx: Context) -> list[str]:
    if not ctx.push_memory:
        return []
    return hook_args(str(root(ctx) / "scripts" / PUSH_SCRIPT), NAME, ctx.funes_bin, ctx.push_memory)


def files(
    ctx: Context, argv: tuple[list[str], list[str]] | None = None
) -> dict[Path, tuple[bytes, int | None]]:
    """The hook's files; ``argv`` (the index and push argv) is what ``ctx`` says unless given."""
    index, push = argv if argv is not None else (index_args(ctx), push_args(ctx))
    r = root(ctx)
    handler = (
        packaged("openclaw_hook/handler.ts")
        .replace(MARK, json.dumps(index).encode())
        .replace(PUSH_MARK, json.dumps(push).encode())
    )
    out: dict[Path, tuple[bytes, int | None]] = {
        r / "HOOK.md": (packaged("openclaw_hook/HOOK.md"), None),
        r / "handler.ts": (handler, None),
        r / "scripts" / INDEX_SCRIPT: (hook_script(), 0o755),
        r / "scripts" / COMMON_SCRIPT: (common_script(), 0o644),
    }
    if push:
        out[r / "scripts" / PUSH_SCRIPT] = (push_script(), 0o755)
    return out


def installed_argv(ctx: Context) -> tuple[list[str], list[str]] | None:
    """The index and push argv written in the installed handler; None if unreadable."""
    try:
        data = (root(ctx) / "handler.ts").read_bytes()
    except OSError:
        return None
    index, push = written_args(data, b"const HOOK = "), written_args(data, b"const PUSH = ")
    return (index, push) if index is not None and push is not None else None


def add(ctx: Context, res: Result) -> None:
    changed = False
    for path, (data, mode) in files(ctx).items():
        changed = write_if_changed(path, data, mode) or changed
    if not ctx.push_memory:
        changed = remove_file(root(ctx) / "scripts" / PUSH_SCRIPT) or changed
    pushes = f"; push of {ctx.push_memory} on {PUSH_EVENT}" if ctx.push_memory else ""
    what = f"hook {ctx.show(root(ctx))} (index on {', '.join(EVENTS)}{pushes})"
    res.did(what if changed else f"{what}, unchanged", changed)
    if which("openclaw") is None:
        res.todo(shell_join(ENABLE))
        res.did("openclaw is not on PATH: enabling the hook is left to you", False)
        return
    reg = Registrations(ctx)
    if reg.get("openclaw-hook") and _enabled(ctx):
        res.did(f"hook {HOOK} already enabled in OpenClaw", False)
        return
    originals = Originals(ctx)
    if originals.load(config(ctx)) is None:  # what the user had before OpenClaw's CLI edits it
        try:
            originals.save(config(ctx), config(ctx).read_bytes())
        except FileNotFoundError:
            originals.save(config(ctx), None)
    proc = run_cli(ENABLE)
    if proc is not None and proc.returncode != 0:
        res.problem(cli_error(ENABLE, proc))
        return
    reg.set("openclaw-hook", True)
    res.did(f"ran: {shell_join(ENABLE)} (restart the gateway to load it)")


def remove(ctx: Context, res: Result) -> None:
    if Registrations(ctx).get("openclaw-hook"):
        proc = run_cli(DISABLE)
        if proc is None:
            res.todo(shell_join(DISABLE))
        elif proc.returncode != 0 and _enabled(ctx):
            res.problem(cli_error(DISABLE, proc))
        elif proc.returncode == 0:
            res.did(f"ran: {shell_join(DISABLE)}")
        Registrations(ctx).set("openclaw-hook", None)
    if _restore_config(ctx):
        res.did(f"restored {ctx.show(config(ctx))} as it was before `funes add openclaw`")
    if remove_tree(root(ctx)):
        res.did(f"deleted {ctx.show(root(ctx))}")
        prune_dirs(root(ctx).parent, ctx.home)
    prune_dirs(ctx.integrations, ctx.home)


def _load(path: Path) -> dict[str, Any] | None:
    """``openclaw.json`` as strict JSON; None when missing or not plain JSON (JSON5)."""
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _entries(doc: dict[str, Any]) -> dict[str, Any] | None:
    hooks = doc.get("hooks")
    internal = hooks.get("internal") if isinstance(hooks, dict) else None
    entries = internal.get("entries") if isinstance(internal, dict) else None
    return entries if isinstance(entries, dict) else None


def _enabled(ctx: Context) -> bool:
    entries = _entries(_load(config(ctx)) or {})
    entry = entries.get(HOOK) if entries else None
    return isinstance(entry, dict) and entry.get("enabled") is True


def _restore_config(ctx: Context) -> bool:
    """Put back ``openclaw.json`` as funes found it when OpenClaw's record of funes' hook is
    all that differs; True if written. Otherwise the file is left as OpenClaw keeps it."""
    originals = Originals(ctx)
    saved = originals.load(config(ctx))
    if saved is None:
        return False
    originals.forget(config(ctx))
    prune_dirs(ctx.integrations, ctx.home)
    doc = _load(config(ctx))
    if doc is None:
        return False
    before = {} if saved == Originals.ABSENT else _load_bytes(saved)
    if before is None:
        return False
    stripped = copy.deepcopy(doc)
    path = ("hooks", "internal", "entries")
    entries = _entries(stripped)
    if entries is not None:
        entries.pop(HOOK, None)
    # containers OpenClaw created for funes' entry go when left empty
    for depth in range(len(path), 0, -1):
        node: Any = stripped
        for key in path[: depth - 1]:
            node = node.get(key) if isinstance(node, dict) else None
        key = path[depth - 1]
        had: Any = before
        for k in path[:depth]:
            had = had.get(k) if isinstance(had, dict) else None
        if isinstance(node, dict) and node.get(key) == {} and had is None:
            del node[key]
    if not same(stripped, before):
        return False
    if saved == Originals.ABSENT:
        return remove_file(config(ctx))
    return write_if_changed(config(ctx), saved)


def _load_bytes(raw: bytes) -> dict[str, Any] | None:
    try:
        doc = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except (UnicodeDecodeError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def status(ctx: Context) -> dict[str, Any]:
    r = root(ctx)
    script, push = r / "scripts" / INDEX_SCRIPT, r / "scripts" / PUSH_SCRIPT
    present = (r / "HOOK.md").exists() and (r / "handler.ts").exists()
    # what the hook was written with (a memory, a push), not what this call names
    argv = (installed_argv(ctx) if present else None) or (index_args(ctx), push_args(ctx))
    note = None
    if present and not _enabled(ctx):
        note = f"the hook is not enabled in OpenClaw: run `{shell_join(ENABLE)}`"
    elif present and any(
        not p.exists() or p.read_bytes() != data for p, (data, _) in files(ctx, argv).items()
    ):
        note = f"the hook is out of date: rerun `funes add {NAME}`"
    return {
        "hooks": list(EVENTS) if present else [],
        "push_hooks": [PUSH_EVENT] if present and argv[1] else [],
        "hooks_file": str(r / "HOOK.md"),
        "script": str(script) if script.exists() else None,
        "script_current": scripts_current(script),
        **push_script_status(push),
        "commands": [shell_join(["bash", *a]) for a in argv if a] if present else [],
        "mcp": False,
        "mcp_source": "OpenClaw (funes registers no MCP server there)",
        "note": note,
    }


AGENT = Agent(NAME, add, remove, status)
