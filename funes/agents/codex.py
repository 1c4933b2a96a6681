"""Codex: the index hook on ``Stop`` in ``~/.codex/hooks.json`` and the MCP server through
``codex mcp add``. Codex has no session-end event; Stop fires every turn.
funes does not edit ``~/.codex/config.toml`` (Codex writes its own MCP entry there).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from funes.agents._common import (
    COMMON_SCRIPT,
    INDEX_SCRIPT,
    PUSH_SCRIPT,
    ConfigError,
    Context,
    Registrations,
    Result,
    cli_says_present,
    has_funes_hooks,
    hook_command,
    install_script,
    is_funes_group,
    load_json_object,
    mcp_args,
    merge_hooks,
    prune_dirs,
    register_mcp,
    remove_file,
    restore_json_user_file,
    run_cli,
    scripts_current,
    shell_join,
    sync_push_script,
    unregister,
    which,
    write_json_user_file,
)
from funes.agents._registry import Agent, Asker
from funes.agents.ask import codex_event

NAME = "codex"
ABSENT_MCP = "No MCP server named 'funes' found"
GET_MCP = ["codex", "mcp", "get", "funes", "--json"]
STATUS = "Indexing turn into funes memory"
PUSH_STATUS = "Publishing funes memory"


def hooks_dir(ctx: Context) -> Path:
    return ctx.home / ".codex" / "hooks"


def hooks_file(ctx: Context) -> Path:
    return ctx.home / ".codex" / "hooks.json"


def desired(ctx: Context) -> dict[str, list[dict[str, Any]]]:
    script = str(hooks_dir(ctx) / INDEX_SCRIPT)
    command = hook_command(script, NAME, ctx.funes_bin, ctx.index_memory)
    hook = {"type": "command", "command": command, "timeout": 15, "statusMessage": STATUS}
    out: dict[str, list[dict[str, Any]]] = {"Stop": [{"hooks": [hook]}]}
    if ctx.push_memory:  # Codex has no session-end event: publish when the next one starts
        push_cmd = hook_command(
            str(hooks_dir(ctx) / PUSH_SCRIPT), NAME, ctx.funes_bin, ctx.push_memory
        )
        push = {"type": "command", "command": push_cmd, "timeout": 15}
        out["SessionStart"] = [{"hooks": [{**push, "statusMessage": PUSH_STATUS}]}]
    return out


def mcp_command(ctx: Context) -> list[str]:
    if ctx.mcp_url:
        return ["codex", "mcp", "add", "funes", "--url", ctx.mcp_url]
    return ["codex", "mcp", "add", "funes", "--", ctx.funes_bin, *mcp_args(ctx.memory)]


def mcp_registered(ctx: Context) -> bool | None:
    """Ask Codex whether ``funes`` is registered with this command; None: no CLI."""
    proc = run_cli(GET_MCP, timeout=60)
    if proc is None:
        return None
    if proc.returncode != 0:
        return False
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        return True  # registered, in a shape we cannot compare
    transport = data.get("transport", data) if isinstance(data, dict) else {}
    if ctx.mcp_url:
        return isinstance(transport, dict) and transport.get("url") == ctx.mcp_url
    return (
        isinstance(transport, dict)
        and transport.get("command") == ctx.funes_bin
        and transport.get("args") == mcp_args(ctx.memory)
    )


def mcp_present() -> bool | None:
    """Whether Codex has any MCP server named funes (None: cannot tell)."""
    return cli_says_present(GET_MCP)


def manual_block(ctx: Context) -> str:
    return json.dumps({"hooks": desired(ctx)}, indent=2)


def add(ctx: Context, res: Result) -> None:
    script = hooks_dir(ctx) / INDEX_SCRIPT
    wrote = install_script(script)
    res.did(f"hook script {ctx.show(script)}" + ("" if wrote else ", unchanged"), wrote)
    if sync_push_script(ctx, hooks_dir(ctx) / PUSH_SCRIPT) and ctx.push_memory:
        res.did(f"push hook script {ctx.show(hooks_dir(ctx) / PUSH_SCRIPT)}")
    path = hooks_file(ctx)
    try:
        doc, raw = load_json_object(path)
        assert doc is not None
        pristine = not has_funes_hooks(doc)
        new = merge_hooks(doc, desired(ctx))
    except ConfigError as e:
        res.problem(
            f"{ctx.show(path)}: {e}; left it untouched — merge this block by hand, or fix the "
            f"file and rerun `funes add codex`:\n{manual_block(ctx)}"
        )
    else:
        wrote = write_json_user_file(ctx, path, doc, raw, new, pristine)
        what = "Stop and SessionStart (push) hooks" if ctx.push_memory else "Stop hook"
        res.did(f"{what} in {ctx.show(path)}" + ("" if wrote else ", unchanged"), wrote)
    mcp = mcp_command(ctx)
    if which("codex") is None:
        res.todo(shell_join(mcp))
        res.did("codex is not on PATH: MCP registration left to you", False)
        return
    register_mcp(ctx, res, "codex-mcp", mcp, lambda: mcp_registered(ctx))


def remove(ctx: Context, res: Result) -> None:
    unregister(res, ["codex", "mcp", "remove", "funes"], ABSENT_MCP, mcp_present)
    Registrations(ctx).set("codex-mcp", None)
    path = hooks_file(ctx)
    try:
        doc, raw = load_json_object(path)
        assert doc is not None
        if raw is not None and "hooks" in doc:
            stripped = merge_hooks(doc, {})
            if stripped != doc:
                restore_json_user_file(ctx, path, stripped, raw, "hooks")
                res.did(f"removed funes hooks from {ctx.show(path)}")
    except ConfigError as e:
        res.problem(f"{ctx.show(path)}: {e}; left it untouched — remove the funes entries by hand")
    for name in (INDEX_SCRIPT, COMMON_SCRIPT, PUSH_SCRIPT, "funes-sync.log"):
        if remove_file(hooks_dir(ctx) / name):
            res.did(f"deleted {ctx.show(hooks_dir(ctx) / name)}")
    prune_dirs(hooks_dir(ctx), ctx.home)


def status(ctx: Context) -> dict[str, Any]:
    events: list[str] = []
    pushes: list[str] = []
    commands: list[str] = []
    try:
        doc, _ = load_json_object(hooks_file(ctx))
        for event, groups in ((doc or {}).get("hooks") or {}).items():
            for g in groups if isinstance(groups, list) else []:
                if is_funes_group(g):
                    cmds = [h.get("command", "") for h in g["hooks"] if isinstance(h, dict)]
                    if any(PUSH_SCRIPT in c for c in cmds):
                        pushes.append(event)
                    else:
                        events.append(event)
                    commands += cmds
    except (ConfigError, AttributeError):
        pass
    script = hooks_dir(ctx) / INDEX_SCRIPT
    return {
        "hooks": sorted(set(events)),
        "push_hooks": sorted(set(pushes)),
        "hooks_file": str(hooks_file(ctx)),
        "script": str(script) if script.exists() else None,
        "script_current": scripts_current(script),
        "commands": commands,
        "mcp": mcp_registered(ctx),
        "note": _features_note(ctx),
    }


def _features_note(ctx: Context) -> str | None:
    """Codex runs hooks.json only with its hooks feature on (off in ``[features]`` = no hooks)."""
    try:
        conf = tomllib.loads((ctx.home / ".codex" / "config.toml").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    features = conf.get("features", {})
    if isinstance(features, dict) and (
        features.get("hooks") is False or features.get("codex_hooks") is False
    ):
        return "hooks are switched off in ~/.codex/config.toml ([features] hooks = false)"
    return None


# `funes ask codex`: `exec -` reads the prompt from stdin; no MCP server
ASK = Asker(
    ("codex", "exec", "--json", "--skip-git-repo-check", "-c", "mcp_servers={}", "-"), codex_event
)

AGENT = Agent(NAME, add, remove, status, ask=ASK)
