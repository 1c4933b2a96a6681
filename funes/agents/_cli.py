"""Running an agent's own CLI (``codex mcp add …``) and remembering what funes registered."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

from funes.agents._context import Context, Result
from funes.agents._files import remove_file, write_if_changed

CLI_TIMEOUT = 120


def which(name: str) -> str | None:
    return shutil.which(name)


def run_cli(
    argv: list[str], input: str | None = None, timeout: float = CLI_TIMEOUT
) -> subprocess.CompletedProcess[str] | None:
    """Run an agent's CLI; None when it is not on PATH."""
    exe = which(argv[0])
    if exe is None:
        return None
    try:
        return subprocess.run(
            [exe, *argv[1:]],
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 124, "", f"timed out after {timeout:g}s")
    except OSError as e:
        return subprocess.CompletedProcess(argv, 126, "", str(e))


def shell_join(argv: list[str]) -> str:
    return shlex.join(argv)


# How agent CLIs say a thing is not there, across versions and wordings.
ABSENT_WORDS = re.compile(
    r"not found|no such|not registered|not installed|does ?n[o']t exist|no matching|"
    r"unknown (?:server|plugin|marketplace|package)|no mcp server",
    re.IGNORECASE,
)


def gone(
    proc: subprocess.CompletedProcess[str],
    marker: str,
    present: Callable[[], bool | None] | None = None,
) -> bool:
    """A remove command succeeded, or the thing is not there.

    A failed remove counts as done when its output carries the known absent ``marker``; else,
    when ``present()`` can tell, when the registration is really gone (whatever the agent said:
    its wording changes between versions, and a user may have removed it by hand); else when
    the output says "not found" in any of the usual ways."""
    if proc.returncode == 0:
        return True
    said = (proc.stdout or "") + (proc.stderr or "")
    if marker in said:
        return True
    if present is not None:
        there = present()
        if there is not None:
            return not there
    return bool(ABSENT_WORDS.search(said))


def cli_error(argv: list[str], proc: subprocess.CompletedProcess[str]) -> str:
    said = (proc.stderr or proc.stdout or "").strip().splitlines()
    tail = f": {said[-1]}" if said else ""
    return f"`{shell_join(argv)}` failed (exit {proc.returncode}){tail}"


def cli_says_present(argv: list[str]) -> bool | None:
    """Whether an agent's "get" command (``claude mcp get funes``) finds the thing: it exits 0.
    None when the CLI is not on PATH (cannot tell)."""
    proc = run_cli(argv, timeout=60)
    return None if proc is None else proc.returncode == 0


def register_mcp(
    ctx: Context,
    res: Result,
    key: str,
    argv: list[str],
    registered: Callable[[], bool | None],
    replace: list[str] | None = None,
    scope: str = "",
) -> None:
    """Register funes' MCP server through the agent's own CLI (``argv``, e.g. ``codex mcp add
    funes -- …``), unless the agent already has it and funes registered this same command (noted
    in ``Registrations`` under ``key``). ``replace`` is run first, its outcome ignored, for a CLI
    whose add refuses a name that exists; ``scope`` is said after "registered"."""
    reg = Registrations(ctx)
    if registered() and reg.get(key) == argv:
        res.did(f"MCP server funes already registered{scope}", False)
        return
    if replace is not None:
        run_cli(replace)
    proc = run_cli(argv)
    if proc is not None and proc.returncode != 0:
        res.problem(cli_error(argv, proc))
        return
    reg.set(key, argv)
    res.did(f"ran: {shell_join(argv)}")


def unregister(
    res: Result, argv: list[str], marker: str, present: Callable[[], bool | None] | None
) -> None:
    """Run one of the agent's remove commands (``codex mcp remove funes``): done when it
    succeeds or the thing is not there (see ``gone``); left to the user when the CLI is not on
    PATH."""
    proc = run_cli(argv)
    if proc is None:
        res.todo(shell_join(argv))
    elif not gone(proc, marker, present):
        res.problem(cli_error(argv, proc))
    elif proc.returncode == 0:
        res.did(f"ran: {shell_join(argv)}")


class Registrations:
    """What funes registered through an agent's CLI (``~/.funes/integrations/registered.json``),
    so a second `add` with nothing changed does not register again."""

    def __init__(self, ctx: Context) -> None:
        self.path = ctx.integrations / "registered.json"

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> Any:
        return self._load().get(key)

    def set(self, key: str, value: Any) -> None:
        data = self._load()
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
        if data:
            write_if_changed(self.path, (json.dumps(data, indent=2) + "\n").encode())
        else:
            remove_file(self.path)
