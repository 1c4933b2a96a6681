"""Claude Code: a hooks-only plugin (Stop per turn, SessionEnd; with a Hub memory bound, a push
on SessionStart and SessionEnd) plus the MCP server at user scope.
funes never edits ``~/.claude/settings.json``.

The plugin lives in a one-plugin marketplace under ``~/.funes/integrations/claude-plugin/``;
``claude plugin install`` is a no-op for an installed plugin, so a changed plugin is
uninstalled first.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from funes import __version__
from funes.agents._common import (
    COMMON_SCRIPT,
    INDEX_SCRIPT,
    PUSH_SCRIPT,
    Context,
    Registrations,
    Result,
    cli_error,
    cli_says_present,
    common_script,
    hook_command,
    hook_script,
    mcp_args,
    prune_dirs,
    push_script,
    register_mcp,
    remove_file,
    remove_tree,
    run_cli,
    scripts_current,
    shell_join,
    unregister,
    which,
    write_if_changed,
)
from funes.agents._registry import Agent, Asker
from funes.agents.ask import claude_event

NAME = "claude"
MARKETPLACE = "huggingface"
PLUGIN = f"funes@{MARKETPLACE}"
EVENTS = {
    "Stop": "Indexing turn into funes memory",
    "SessionEnd": "Indexing session into funes memory",
}
PUSH_EVENTS = ("SessionStart", "SessionEnd")
PUSH_STATUS = "Publishing funes memory"
DESCRIPTION = "Index each Claude Code turn into the local funes memory."
ABSENT_MCP = 'No MCP server named "funes"'
ABSENT_PLUGIN = f'Plugin "{PLUGIN}" not found'
ABSENT_MARKETPLACE = f"Marketplace '{MARKETPLACE}' not found"
GET_MCP = ["claude", "mcp", "get", "funes"]
REMOVE_MCP = ["claude", "mcp", "remove", "funes", "-s", "user"]


def root(ctx: Context) -> Path:
    return ctx.integrations / "claude-plugin"


def hooks_doc(ctx: Context) -> dict[str, Any]:
    scripts = "${CLAUDE_PLUGIN_ROOT}/scripts/"
    command = hook_command(scripts + INDEX_SCRIPT, NAME, ctx.funes_bin, ctx.index_memory)
    hooks: dict[str, list[dict[str, Any]]] = {
        event: [_group(command, status)] for event, status in EVENTS.items()
    }
    if ctx.push_memory:
        push = hook_command(scripts + PUSH_SCRIPT, NAME, ctx.funes_bin, ctx.push_memory)
        for event in PUSH_EVENTS:
            hooks.setdefault(event, []).append(_group(push, PUSH_STATUS))
    return {"hooks": hooks}


def _group(command: str, status: str) -> dict[str, Any]:
    hook = {"type": "command", "command": command, "timeout": 15, "statusMessage": status}
    return {"hooks": [hook]}


def _pretty(doc: object) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def files(ctx: Context) -> dict[Path, tuple[bytes, int | None]]:
    r = root(ctx)
    out: dict[Path, tuple[bytes, int | None]] = {
        r / ".claude-plugin" / "marketplace.json": (
            _pretty(
                {
                    "name": MARKETPLACE,
                    "owner": {"name": MARKETPLACE},
                    "plugins": [{"name": "funes", "source": "./funes", "description": DESCRIPTION}],
                }
            ),
            None,
        ),
        r / "funes" / ".claude-plugin" / "plugin.json": (
            _pretty(
                {
                    "name": "funes",
                    "version": __version__,
                    "description": DESCRIPTION,
                    "author": {"name": "funes"},
                }
            ),
            None,
        ),
        r / "funes" / "hooks" / "hooks.json": (_pretty(hooks_doc(ctx)), None),
        r / "funes" / "scripts" / INDEX_SCRIPT: (hook_script(), 0o755),
        r / "funes" / "scripts" / COMMON_SCRIPT: (common_script(), 0o644),
    }
    if ctx.push_memory:
        out[r / "funes" / "scripts" / PUSH_SCRIPT] = (push_script(), 0o755)
    return out


def mcp_command(ctx: Context) -> list[str]:
    if ctx.mcp_url:
        return ["claude", "mcp", "add", "--transport", "http", "funes", ctx.mcp_url, "-s", "user"]
    return [
        "claude",
        "mcp",
        "add",
        "funes",
        "-s",
        "user",
        "--",
        ctx.funes_bin,
        *mcp_args(ctx.memory),
    ]


def mcp_registered(ctx: Context) -> bool | None:
    """Ask Claude Code whether ``funes`` is registered with this command; None: no CLI."""
    proc = run_cli(GET_MCP, timeout=60)
    if proc is None:
        return None
    if proc.returncode != 0:
        return False
    text = proc.stdout
    if ctx.mcp_url:
        return f"URL: {ctx.mcp_url}" in text
    want_args = " ".join(mcp_args(ctx.memory))
    return f"Command: {ctx.funes_bin}" in text and f"Args: {want_args}" in text


def plugin_installed(ctx: Context) -> bool:
    """Claude's own record of installed plugins when it has one, else funes' registration note."""
    registry = ctx.home / ".claude" / "plugins" / "installed_plugins.json"
    try:
        data = json.loads(registry.read_text("utf-8"))
        plugins = data.get("plugins", data) if isinstance(data, dict) else {}
        return isinstance(plugins, dict) and PLUGIN in plugins
    except (OSError, ValueError):
        return Registrations(ctx).get("claude-plugin") == str(root(ctx))


def add(ctx: Context, res: Result) -> None:
    changed = False
    for path, (data, mode) in files(ctx).items():
        if write_if_changed(path, data, mode):
            changed = True
    if not ctx.push_memory and remove_file(root(ctx) / "funes" / "scripts" / PUSH_SCRIPT):
        changed = True
    r = ctx.show(root(ctx))
    pushes = f"; SessionStart, SessionEnd → {PUSH_SCRIPT}" if ctx.push_memory else ""
    res.did(
        f"plugin files in {r} (hooks: Stop, SessionEnd → {INDEX_SCRIPT}{pushes})"
        + ("" if changed else ", unchanged"),
        changed,
    )
    reg = Registrations(ctx)
    marketplace = ["claude", "plugin", "marketplace", "add", str(root(ctx))]
    install = ["claude", "plugin", "install", PLUGIN]
    mcp = mcp_command(ctx)
    if which("claude") is None:
        for argv in (marketplace, install, REMOVE_MCP, mcp):
            res.todo(shell_join(argv))
        res.did("claude is not on PATH: plugin and MCP registration left to you", False)
        return
    if changed or not plugin_installed(ctx):
        proc = run_cli(marketplace)
        if proc is not None and proc.returncode != 0 and "already" not in proc.stdout + proc.stderr:
            res.problem(cli_error(marketplace, proc))
            return
        if changed:
            run_cli(["claude", "plugin", "uninstall", PLUGIN])
        proc = run_cli(install)
        if proc is not None and proc.returncode != 0:
            res.problem(cli_error(install, proc))
            return
        reg.set("claude-plugin", str(root(ctx)))
        res.did(f"ran: {shell_join(marketplace)}; {shell_join(install)}")
    else:
        res.did(f"plugin {PLUGIN} already installed", False)
    register_mcp(
        ctx,
        res,
        "claude-mcp",
        mcp,
        lambda: mcp_registered(ctx),
        replace=REMOVE_MCP,
        scope=" (user scope)",
    )


def mcp_present() -> bool | None:
    """Whether Claude Code has any MCP server named funes (None: cannot tell)."""
    return cli_says_present(GET_MCP)


def remove(ctx: Context, res: Result) -> None:
    steps: list[tuple[list[str], str, Callable[[], bool | None] | None]] = [
        (REMOVE_MCP, ABSENT_MCP, mcp_present),
        (["claude", "plugin", "uninstall", PLUGIN], ABSENT_PLUGIN, lambda: plugin_installed(ctx)),
        (["claude", "plugin", "marketplace", "remove", MARKETPLACE], ABSENT_MARKETPLACE, None),
    ]
    for argv, marker, present in steps:  # without claude on PATH, each is left to the user
        unregister(res, argv, marker, present)
    reg = Registrations(ctx)
    reg.set("claude-plugin", None)
    reg.set("claude-mcp", None)
    if remove_tree(root(ctx)):
        res.did(f"deleted {ctx.show(root(ctx))}")
    prune_dirs(ctx.integrations, ctx.home)


def status(ctx: Context) -> dict[str, Any]:
    """Hooks and MCP as installed (doctor)."""
    hooks_file = root(ctx) / "funes" / "hooks" / "hooks.json"
    script = root(ctx) / "funes" / "scripts" / INDEX_SCRIPT
    events: list[str] = []
    pushes: list[str] = []
    try:
        doc = json.loads(hooks_file.read_text("utf-8"))
        for event, groups in doc.get("hooks", {}).items():
            text = json.dumps(groups)
            if INDEX_SCRIPT in text:
                events.append(event)
            if PUSH_SCRIPT in text:
                pushes.append(event)
    except (OSError, ValueError, AttributeError):
        pass
    return {
        "hooks": events,
        "push_hooks": pushes,
        "hooks_file": str(hooks_file),
        "script": str(script) if script.exists() else None,
        "script_current": scripts_current(script),
        "commands": _commands(hooks_file),
        "mcp": mcp_registered(ctx),
    }


def _commands(hooks_file: Path) -> list[str]:
    try:
        doc = json.loads(hooks_file.read_text("utf-8"))
        return sorted(
            {h["command"] for gs in doc["hooks"].values() for g in gs for h in g["hooks"]}
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


# `funes ask claude`: print mode reading the prompt from stdin, no MCP server at all
ASK = Asker(
    ("claude", "-p", "--strict-mcp-config", "--mcp-config", '{"mcpServers":{}}',
     "--output-format", "stream-json", "--verbose"),
    claude_event,
)  # fmt: skip

AGENT = Agent(NAME, add, remove, status, ask=ASK)
