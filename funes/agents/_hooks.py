"""The hook scripts and the hook entries funes puts in an agent's configuration."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from funes.agents._context import ConfigError, Context
from funes.agents._files import packaged, remove_file, write_if_changed
from funes.agents._registry import Agent, registry

INDEX_SCRIPT = "funes-index.sh"
PUSH_SCRIPT = "funes-push.sh"
# What both scripts source from beside them (their shared functions)
COMMON_SCRIPT = "funes-hook-common.sh"
# A hook entry is funes' iff its command names one of these (the push script is kept so
# an install by the reference implementation is recognised and replaced).
SCRIPT_NAMES = ("funes-index.sh", "funes-push.sh")
# The lines of the index hook written from the registered agents lie between these.
AGENT_CASES = (b"\t# agents: begin\n", b"\t# agents: end\n")


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
    """Install the index hook script at ``dest``, with the part it sources beside it; True if
    either was written. :func:`remove_script` takes both away."""
    wrote = write_if_changed(dest, hook_script(), 0o755)
    return write_if_changed(dest.parent / COMMON_SCRIPT, common_script(), 0o644) or wrote


def remove_script(dest: Path) -> bool:
    """Delete the index hook script at ``dest`` and the part it sources; True if it was there."""
    remove_file(dest.parent / COMMON_SCRIPT)
    return remove_file(dest)


def common_script() -> bytes:
    """The functions the index and push scripts source from beside them."""
    return packaged(f"hooks/{COMMON_SCRIPT}")


def scripts_current(index: Path) -> bool:
    """Whether the index hook script at ``index`` and the part it sources are funes' own."""
    common = index.parent / COMMON_SCRIPT
    return (
        index.exists()
        and index.read_bytes() == hook_script()
        and common.exists()
        and common.read_bytes() == common_script()
    )


def sources_common(script: Path) -> bool:
    """Whether the hook script at ``script`` sources :data:`COMMON_SCRIPT` (funes' scripts do
    since that file exists; older ones are self-contained and run without it)."""
    try:
        lines = script.read_bytes().splitlines()
    except OSError:
        return False
    name = COMMON_SCRIPT.encode()
    return any(
        name in ln and ln.lstrip().startswith((b". ", b"source "))
        for ln in lines
        if not ln.lstrip().startswith(b"#")
    )


def push_script() -> bytes:
    return packaged(f"hooks/{PUSH_SCRIPT}")


def push_script_status(path: Path) -> dict[str, Any]:
    """The ``push_script`` and ``push_script_current`` of an agent's status (`funes doctor`)."""
    there = path.exists()
    return {
        "push_script": str(path) if there else None,
        "push_script_current": there and path.read_bytes() == push_script(),
    }


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


def hook_command(
    script: str, agent: str, funes_bin: str, memory: str | None, push: str | None = None
) -> str:
    """``bash "<script>" "<agent>" --funes "<FUNES>" [--memory "<M>"] [--push "<HUB>"]``."""
    parts = ["bash", quote(script), quote(agent), "--funes", quote(funes_bin)]
    if memory:
        parts += ["--memory", quote(memory)]
    if push:
        parts += ["--push", quote(push)]
    return " ".join(parts)


def hook_args(
    script: str, agent: str, funes_bin: str, memory: str | None, push: str | None = None
) -> list[str]:
    """The hook script's argv after ``bash``. ``push`` (the index hook of an agent with no
    session-end event, bound to a Hub memory) has the index hook publish that memory after its
    index run."""
    args = [script, agent, "--funes", funes_bin]
    if memory:
        args += ["--memory", memory]
    if push:
        args += ["--push", push]
    return args


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


def has_funes_hooks(doc: dict[str, Any], ours: Callable[[object], bool] = is_funes_group) -> bool:
    return bool(funes_events(doc, ours))


def funes_events(doc: dict[str, Any], ours: Callable[[object], bool] = is_funes_group) -> list[str]:
    """The events of ``doc["hooks"]`` that hold a hook of funes'."""
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return []
    return [e for e, gs in hooks.items() if isinstance(gs, list) and any(ours(g) for g in gs)]


def is_funes_entry(entry: object) -> bool:
    """A flat hook entry (Cursor's ``{"command"}``, Copilot CLI's ``{"bash"}``) of funes'."""
    return isinstance(entry, dict) and any(
        is_funes_command(entry.get(k)) for k in ("command", "bash")
    )


def merge_hooks(
    doc: dict[str, Any],
    desired: dict[str, list[dict[str, Any]]],
    ours: Callable[[object], bool] = is_funes_group,
) -> dict[str, Any]:
    """Drop funes' groups (``ours``: Claude Code-style groups by default, or flat entries)
    from every event, append the desired ones, delete the events that this emptied.
    Everything else keeps its place and value."""
    if not desired and "hooks" not in doc:
        return doc
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError('its "hooks" value is not an object')
    merged: dict[str, Any] = {}
    for event, groups in hooks.items():
        if isinstance(groups, list):
            kept = [g for g in groups if not ours(g)]
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
