"""What the agent integrations share: file writes, the hook script, the JSON hook merge, the
agents' CLIs, and the record of what `funes add` changed.

Every write is atomic (`<file>.funes-tmp` + rename, so a hook script that is running keeps its
old inode) and happens only when the content differs. A user file funes edits (Codex's
`hooks.json`, Hermes' allowlist) is remembered as it was before funes touched it, so `funes
remove` puts back the user's exact bytes when the only difference is funes' own entries.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from funes.agents._registry import Agent, registry
from funes.errors import FunesError
from funes.hub.spec import is_remote

INDEX_SCRIPT = "funes-index.sh"
PUSH_SCRIPT = "funes-push.sh"
# A hook entry is funes' iff its command names one of these (the push script is kept so
# an install by the reference implementation is recognised and replaced).
SCRIPT_NAMES = ("funes-index.sh", "funes-push.sh")
# The lines of the index hook written from the registered agents lie between these.
AGENT_CASES = (b"\t# agents: begin\n", b"\t# agents: end\n")
CLI_TIMEOUT = 120


class ConfigError(FunesError):
    """A user's config file funes cannot read safely; it is left untouched."""


@dataclass
class Context:
    """Where and what to install: ``home`` is ``$HOME`` (never ``$FUNES_HOME``)."""

    home: Path
    funes_bin: str
    memory: str | None = None
    mcp_url: str | None = None  # register this `funes mcp --http` URL instead of a stdio server

    @property
    def push_memory(self) -> str | None:
        """The Hub memory the session-boundary hooks publish to (None: no push hooks)."""
        return self.memory if self.memory and is_remote(self.memory) else None

    @property
    def index_memory(self) -> str | None:
        """The memory the index hook writes: a local one (a Hub memory is fed by push)."""
        return None if self.push_memory else self.memory

    @property
    def integrations(self) -> Path:
        return self.home / ".funes" / "integrations"

    def show(self, path: Path) -> str:
        """``path`` with ``$HOME`` written as ``~``, for output."""
        try:
            return "~/" + str(path.relative_to(self.home))
        except ValueError:
            return str(path)


@dataclass
class Result:
    """What one `add`/`remove` did, what the user must do by hand, and what went wrong."""

    agent: str
    done: list[str] = field(default_factory=list)
    manual: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    changed: bool = False

    def did(self, msg: str, changed: bool = True) -> None:
        self.done.append(msg)
        self.changed = self.changed or changed

    def todo(self, cmd: str) -> None:
        self.manual.append(cmd)

    def problem(self, msg: str) -> None:
        self.problems.append(msg)


# ---------------------------------------------------------------------------- files


def write_if_changed(path: Path, data: bytes, mode: int | None = None) -> bool:
    """Write ``data`` atomically unless the file already holds it; True if written.

    ``mode`` None keeps an existing file's permissions (user files) and uses 0644 for new ones.
    """
    try:
        old: bytes | None = path.read_bytes()
        old_mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        old, old_mode = None, None
    want = mode if mode is not None else (old_mode if old_mode is not None else 0o644)
    if old == data and old_mode == want:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".funes-tmp")
    tmp.write_bytes(data)
    os.chmod(tmp, want)
    os.replace(tmp, path)
    return True


def remove_file(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except FileNotFoundError:
        return False


def prune_dirs(path: Path, stop: Path) -> None:
    """Remove ``path`` and its parents up to (not including) ``stop`` while they are empty."""
    while path != stop and stop in path.parents:
        try:
            path.rmdir()
        except OSError:
            return
        path = path.parent


def remove_tree(path: Path) -> bool:
    """Delete a directory tree funes owns; a symlink at the root is unlinked, not followed."""
    if path.is_symlink():
        path.unlink()
        return True
    if path.is_dir():
        shutil.rmtree(path)
        return True
    return False


def packaged(name: str) -> bytes:
    """A file shipped in ``funes.agents`` (``hooks/funes-index.sh``, ``pi_extension/…``)."""
    return resources.files("funes.agents").joinpath(name).read_bytes()


def hook_script() -> bytes:
    """The index hook script, with a case for each registered agent that names the file to
    index when its payload names no transcript (``Agent.hook_transcript``)."""
    return with_agent_cases(packaged(f"hooks/{INDEX_SCRIPT}"), registry().values())


def with_agent_cases(script: bytes, agents: Iterable[Agent]) -> bytes:
    """``script`` with the lines between its ``# agents: begin`` and ``# agents: end`` markers
    written from ``agents``."""
    head, begin, rest = script.partition(AGENT_CASES[0])
    _, end, tail = rest.partition(AGENT_CASES[1])
    if not begin or not end:
        return script
    cases = "".join(f"\t{a.name}) db={a.hook_transcript} ;;\n" for a in agents if a.hook_transcript)
    return head + begin + cases.encode("utf-8") + end + tail


def install_script(dest: Path) -> bool:
    return write_if_changed(dest, hook_script(), 0o755)


def push_script() -> bytes:
    return packaged(f"hooks/{PUSH_SCRIPT}")


def sync_push_script(ctx: Context, dest: Path) -> bool:
    """Install the push hook script when a Hub memory is bound, remove it otherwise."""
    if ctx.push_memory:
        return write_if_changed(dest, push_script(), 0o755)
    return remove_file(dest)


# ---------------------------------------------------------------------------- hook commands


def quote(field_: str) -> str:
    """A double-quoted command field: backslash and double quote escaped, ``$`` kept so the
    hook runner can expand ``${CLAUDE_PLUGIN_ROOT}``."""
    return '"' + field_.replace("\\", "\\\\").replace('"', '\\"') + '"'


def hook_command(script: str, agent: str, funes_bin: str, memory: str | None) -> str:
    parts = ["bash", quote(script), quote(agent), "--funes", quote(funes_bin)]
    if memory:
        parts += ["--memory", quote(memory)]
    return " ".join(parts)


def is_funes_command(command: object) -> bool:
    return isinstance(command, str) and any(n in command for n in SCRIPT_NAMES)


def mcp_args(memory: str | None) -> list[str]:
    return ["mcp", "--memory", memory] if memory else ["mcp"]


# ---------------------------------------------------------------------------- JSON hooks


def is_funes_group(group: object) -> bool:
    if not isinstance(group, dict):
        return False
    hooks = group.get("hooks")
    return isinstance(hooks, list) and any(
        isinstance(h, dict) and is_funes_command(h.get("command")) for h in hooks
    )


def has_funes_hooks(doc: dict[str, Any]) -> bool:
    hooks = doc.get("hooks")
    return isinstance(hooks, dict) and any(
        isinstance(gs, list) and any(is_funes_group(g) for g in gs) for gs in hooks.values()
    )


def merge_hooks(doc: dict[str, Any], desired: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Drop funes groups from every event, append the desired ones, delete the
    events that this emptied. Everything else keeps its place and value."""
    if not desired and "hooks" not in doc:
        return doc
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError('its "hooks" value is not an object')
    merged: dict[str, Any] = {}
    for event, groups in hooks.items():
        if isinstance(groups, list):
            kept = [g for g in groups if not is_funes_group(g)]
            if kept or not groups or event in desired:
                merged[event] = kept
        else:
            merged[event] = groups
    for event, groups in desired.items():
        current = merged.get(event, [])
        if not isinstance(current, list):
            raise ConfigError(f'its "hooks.{event}" value is not a list')
        merged[event] = current + groups
    out = dict(doc)
    out["hooks"] = merged
    return out


# ---------------------------------------------------------------------------- JSON user files


def load_json_object(path: Path) -> tuple[dict[str, Any] | None, bytes | None]:
    """(document, raw bytes); a missing or blank file is ``{}`` with raw None / the blank bytes.

    Raises ConfigError when the file is not a JSON object.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, None
    if not raw.strip():
        return {}, raw
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(f"{path} is not valid JSON ({e})") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{path} is not a JSON object")
    return doc, raw


def dump_like(doc: dict[str, Any], previous: bytes | None) -> bytes:
    """Serialise ``doc`` in the layout of the file it replaces (indent, final newline)."""
    indent: int | str | None = 2
    newline = True
    if previous and previous.strip():
        text = previous.decode("utf-8", "replace")
        newline = text.endswith("\n")
        lines = text.strip().splitlines()
        if len(lines) == 1:
            indent = None
        else:
            for line in lines[1:]:
                stripped = line.lstrip(" \t")
                if stripped and len(stripped) < len(line):
                    lead = line[: len(line) - len(stripped)]
                    indent = "\t" if lead.startswith("\t") else len(lead)
                    break
    body = json.dumps(doc, indent=indent, ensure_ascii=False)
    return (body + ("\n" if newline else "")).encode("utf-8")


def same(a: object, b: object) -> bool:
    """Equal as JSON, key order included."""
    return json.dumps(a, sort_keys=False) == json.dumps(b, sort_keys=False)


class Originals:
    """The user's files as they were before funes first edited them, under
    ``~/.funes/integrations/originals/`` — what lets `remove` restore them byte for byte."""

    ABSENT = b""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.dir = ctx.integrations / "originals"

    def _path(self, target: Path) -> Path:
        rel = self.ctx.show(target).removeprefix("~/").replace("/", "__")
        return self.dir / rel

    def save(self, target: Path, raw: bytes | None) -> None:
        p = self._path(target)
        if raw is None:
            write_if_changed(p.with_name(p.name + ".absent"), self.ABSENT)
            remove_file(p)
        else:
            write_if_changed(p, raw)
            remove_file(p.with_name(p.name + ".absent"))

    def load(self, target: Path) -> bytes | None:
        """The saved bytes, ``ABSENT`` if the file did not exist, None if nothing was saved."""
        p = self._path(target)
        if p.with_name(p.name + ".absent").exists():
            return self.ABSENT
        try:
            return p.read_bytes()
        except FileNotFoundError:
            return None

    def forget(self, target: Path) -> None:
        p = self._path(target)
        remove_file(p)
        remove_file(p.with_name(p.name + ".absent"))
        prune_dirs(self.dir, self.ctx.home)


def write_json_user_file(
    ctx: Context,
    path: Path,
    doc: dict[str, Any],
    raw: bytes | None,
    new: dict[str, Any],
    pristine: bool,
) -> bool:
    """Write ``new`` over a user's JSON file (``doc``/``raw`` as read), remembering the file as
    it was when it held nothing of funes' (``pristine``). True if written."""
    if same(new, doc) and raw is not None:
        return False
    if pristine:
        Originals(ctx).save(path, raw)
    return write_if_changed(path, dump_like(new, raw))


def restore_json_user_file(
    ctx: Context, path: Path, stripped: dict[str, Any], raw: bytes | None, container: str
) -> bool:
    """Write ``stripped`` (the file without funes' entries) back, as the user's original bytes
    when it equals them. ``container`` is the key funes may have created (``hooks``,
    ``approvals``): left empty and absent from the original, it goes too. True if written."""
    originals = Originals(ctx)
    saved = originals.load(path)
    candidate = dict(stripped)
    original_doc: Any = None
    if saved is not None and saved != Originals.ABSENT:
        try:
            original_doc = json.loads(saved.decode("utf-8")) if saved.strip() else {}
        except (UnicodeDecodeError, json.JSONDecodeError):
            original_doc = None
    lacks_container = saved == Originals.ABSENT or (
        isinstance(original_doc, dict) and container not in original_doc
    )
    if container in candidate and not candidate[container] and lacks_container:
        del candidate[container]
    changed: bool
    if saved == Originals.ABSENT and not candidate:
        changed = remove_file(path)
    elif saved not in (None, Originals.ABSENT) and (
        same(candidate, original_doc) or (not saved.strip() and not candidate)
    ):
        changed = write_if_changed(path, saved)
    else:
        changed = write_if_changed(path, dump_like(candidate, raw))
    originals.forget(path)
    return changed


# ---------------------------------------------------------------------------- agent CLIs


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
