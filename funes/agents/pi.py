"""pi: an extension package in ``~/.funes/integrations/pi/`` installed with ``pi install DIR``.
It gives pi the ``recall`` and ``get`` tools (a bridge to ``funes mcp``) and,
beyond the reference implementation, indexes on pi's ``agent_end`` event by running the same hook script, and
with a Hub memory bound publishes it on ``session_shutdown`` (``scripts/funes-push.sh``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from funes.agents._common import (
    COMMON_SCRIPT,
    INDEX_SCRIPT,
    PUSH_SCRIPT,
    Context,
    Registrations,
    Result,
    cli_error,
    common_script,
    hook_script,
    packaged,
    prune_dirs,
    push_script,
    push_script_status,
    remove_file,
    remove_tree,
    run_cli,
    scripts_current,
    shell_join,
    unregister,
    which,
    write_if_changed,
)
from funes.agents._registry import Agent

NAME = "pi"
MIN_VERSION = (0, 74, 2)
ABSENT = "No matching package found for"


def root(ctx: Context) -> Path:
    return ctx.integrations / "pi"


def files(ctx: Context) -> dict[Path, tuple[bytes, int | None]]:
    return extension_files(ctx, root(ctx), NAME)


def extension_files(ctx: Context, r: Path, agent: str) -> dict[Path, tuple[bytes, int | None]]:
    """The extension's files in ``r`` for ``agent`` (pi, or omp, which loads pi's extensions)."""
    out: dict[Path, tuple[bytes, int | None]] = {
        r / "index.ts": (packaged("pi_extension/index.ts"), None),
        r / "package.json": (packaged("pi_extension/package.json"), None),
        r / "funes-bin": (f"{ctx.funes_bin}\n".encode(), None),
        r / "scripts" / INDEX_SCRIPT: (hook_script(), 0o755),
        r / "scripts" / COMMON_SCRIPT: (common_script(), 0o644),
    }
    if agent != NAME:
        out[r / "agent"] = (f"{agent}\n".encode(), None)
    if ctx.memory:
        out[r / "memory"] = (f"{ctx.memory}\n".encode(), None)
    if ctx.push_memory:  # published on session_shutdown; the index stays local
        out[r / "push-memory"] = (f"{ctx.push_memory}\n".encode(), None)
        out[r / "scripts" / PUSH_SCRIPT] = (push_script(), 0o755)
    return out


def sync_extension(ctx: Context, r: Path, agent: str) -> bool:
    """Write the extension's files into ``r``, drop the ones this context no longer wants;
    True if anything changed."""
    changed = False
    for path, (data, mode) in extension_files(ctx, r, agent).items():
        changed = write_if_changed(path, data, mode) or changed
    if not ctx.memory:
        changed = remove_file(r / "memory") or changed
    if not ctx.push_memory:
        changed = remove_file(r / "push-memory") or changed
        changed = remove_file(r / "scripts" / PUSH_SCRIPT) or changed
    return remove_file(r / "store") or changed  # the reference's legacy file


def installed(ctx: Context) -> bool | None:
    """Ask pi whether the package is installed; None: no CLI."""
    proc = run_cli(["pi", "list"], timeout=60)
    if proc is None:
        return None
    return proc.returncode == 0 and str(root(ctx)) in proc.stdout


def _version(text: str) -> tuple[int, ...] | None:
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(x) for x in m.groups()) if m else None


def add(ctx: Context, res: Result) -> None:
    if ctx.mcp_url:
        res.did(
            "pi reaches funes through its extension (a bridge to `funes mcp`), not an MCP URL: "
            "--mcp-http changes nothing for pi",
            False,
        )
    changed = sync_extension(ctx, root(ctx), NAME)
    res.did(
        f"extension in {ctx.show(root(ctx))} (tools recall, get; indexing on agent_end)"
        + ("" if changed else ", unchanged"),
        changed,
    )
    install = ["pi", "install", str(root(ctx))]
    if which("pi") is None:
        res.todo(shell_join(install))
        res.did("pi is not on PATH: installing the extension is left to you", False)
        return
    reg = Registrations(ctx)
    if not changed and reg.get("pi") == str(root(ctx)) and installed(ctx):
        res.did("extension already installed in pi", False)
        return
    proc = run_cli(["pi", "--version"], timeout=30)
    version = _version((proc.stdout + proc.stderr) if proc else "")
    if version is not None and version < MIN_VERSION:
        want = ".".join(map(str, MIN_VERSION))
        res.did(f"warning: pi {'.'.join(map(str, version))} is older than {want}; update pi", False)
    proc = run_cli(install)
    if proc is not None and proc.returncode != 0:
        res.problem(cli_error(install, proc))
        return
    reg.set("pi", str(root(ctx)))
    res.did(f"ran: {shell_join(install)}")


def remove(ctx: Context, res: Result) -> None:
    unregister(res, ["pi", "remove", str(root(ctx))], ABSENT, lambda: installed(ctx))
    Registrations(ctx).set("pi", None)
    if remove_tree(root(ctx)):
        res.did(f"deleted {ctx.show(root(ctx))}")
    prune_dirs(ctx.integrations, ctx.home)


def status(ctx: Context) -> dict[str, Any]:
    script = root(ctx) / "scripts" / INDEX_SCRIPT
    present = (root(ctx) / "index.ts").exists()
    ext = installed(ctx) if present else False
    pushing = present and (root(ctx) / "push-memory").exists()
    return {
        "hooks": ["agent_end"] if present else [],
        "push_hooks": ["session_shutdown"] if pushing else [],
        "hooks_file": str(root(ctx) / "index.ts"),
        "script": str(script) if script.exists() else None,
        "script_current": scripts_current(script),
        **push_script_status(root(ctx) / "scripts" / PUSH_SCRIPT),
        "commands": [],
        "funes_bin": read_beside(root(ctx) / "funes-bin"),
        "mcp": ext,
        "mcp_source": "pi list (the extension is pi's recall/get bridge)",
    }


def read_beside(path: Path) -> str | None:
    try:
        return path.read_text("utf-8").strip() or None
    except OSError:
        return None


AGENT = Agent(NAME, add, remove, status)
