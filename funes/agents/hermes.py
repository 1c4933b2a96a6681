"""Hermes: shell hooks in ``~/.hermes/config.yaml`` (``post_llm_call`` per completed turn,
``on_session_finalize``), their consent entries in ``~/.hermes/shell-hooks-allowlist.json``, and
the MCP server as ``mcp_servers.funes`` in the same config (indexing is beta).

Unlike the reference implementation, funes writes ``mcp_servers.funes`` itself instead of running ``hermes mcp
add``: that command rewrites config.yaml through its YAML dumper (the user's comments and layout
go) and stops on an interactive prompt. The entry is what ``hermes mcp add`` writes (``command``,
``args``). Hermes passes no transcript path to hooks; the hook indexes ``~/.hermes/state.db``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from funes.agents import _yaml
from funes.agents._common import (
    COMMON_SCRIPT,
    INDEX_SCRIPT,
    PUSH_SCRIPT,
    ConfigError,
    Context,
    Originals,
    Result,
    hook_command,
    install_script,
    is_funes_command,
    load_json_object,
    mcp_args,
    prune_dirs,
    remove_file,
    restore_json_user_file,
    same,
    scripts_current,
    sync_push_script,
    write_if_changed,
    write_json_user_file,
)
from funes.agents._registry import Agent

NAME = "hermes"
EVENTS = ("post_llm_call", "on_session_finalize")
PUSH_EVENTS = ("on_session_start", "on_session_finalize")  # with a Hub memory bound
TIMEOUT = 30


def hermes_dir(ctx: Context) -> Path:
    return ctx.home / ".hermes"


def config_file(ctx: Context) -> Path:
    return hermes_dir(ctx) / "config.yaml"


def allowlist_file(ctx: Context) -> Path:
    return hermes_dir(ctx) / "shell-hooks-allowlist.json"


def script_path(ctx: Context) -> Path:
    return hermes_dir(ctx) / "hooks" / INDEX_SCRIPT


def command(ctx: Context) -> str:
    return hook_command(str(script_path(ctx)), NAME, ctx.funes_bin, ctx.index_memory)


def push_command(ctx: Context) -> str:
    script = hermes_dir(ctx) / "hooks" / PUSH_SCRIPT
    return hook_command(str(script), NAME, ctx.funes_bin, ctx.push_memory)


def entries(ctx: Context) -> list[tuple[str, str]]:
    """(event, command) of every funes hook, in the order they are written."""
    out = [(event, command(ctx)) for event in EVENTS]
    if ctx.push_memory:
        out += [(event, push_command(ctx)) for event in PUSH_EVENTS]
    return out


def mcp_entry(ctx: Context) -> dict[str, Any]:
    if ctx.mcp_url:
        return {"url": ctx.mcp_url}
    return {"command": ctx.funes_bin, "args": mcp_args(ctx.memory)}


def manual_config(ctx: Context) -> str:
    lines = ["hooks:"]
    for event, cmd in entries(ctx):
        lines += [f"  {event}:", f"    - command: {_yaml.sq(cmd)}", f"      timeout: {TIMEOUT}"]
    lines += ["mcp_servers:", "  funes:", *(f"    {line}" for line in _mcp_lines(ctx))]
    return "\n".join(lines)


def manual_allowlist(ctx: Context) -> str:
    return json.dumps({"approvals": _approvals(ctx)}, indent=2)


def _mcp_lines(ctx: Context) -> list[str]:
    entry = mcp_entry(ctx)
    if "url" in entry:
        return [f"url: {_yaml.sq(entry['url'])}"]
    args = ", ".join(_yaml.sq(a) for a in entry["args"])
    return [f"command: {_yaml.sq(entry['command'])}", f"args: [{args}]"]


def _approvals(ctx: Context) -> list[dict[str, str]]:
    return [{"event": event, "command": cmd} for event, cmd in entries(ctx)]


# ---------------------------------------------------------------------------- config.yaml


def _split(doc: dict[str, Any]) -> tuple[str, dict[str, list[Any]], dict[str, list[Any]], str, Any]:
    """(everything else, user hooks, funes hooks, other MCP servers, funes' MCP entry)."""
    rest = {k: v for k, v in doc.items() if k not in ("hooks", "mcp_servers")}
    user: dict[str, list[Any]] = {}
    ours: dict[str, list[Any]] = {}
    hooks = doc.get("hooks") or {}
    if not isinstance(hooks, dict):
        raise ConfigError("its hooks: value is not a mapping")
    for event, entries in hooks.items():
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise ConfigError(f"its hooks.{event} value is not a list")
        mine = [e for e in entries if isinstance(e, dict) and is_funes_command(e.get("command"))]
        theirs = [e for e in entries if e not in mine]
        if mine:
            ours[event] = mine
        if theirs:
            user[event] = theirs
    servers = doc.get("mcp_servers") or {}
    if not isinstance(servers, dict):
        raise ConfigError("its mcp_servers: value is not a mapping")
    others = {k: v for k, v in servers.items() if k != "funes"}
    return _yaml.canonical(rest), user, ours, _yaml.canonical(others), servers.get("funes")


def edit_config(text: str, ctx: Context | None) -> str:
    """``text`` with funes' hooks and MCP entry replaced by ``ctx``'s (removed if None)."""
    before = _split(_yaml.load(text))
    y = _yaml.YamlText(text)
    # Undo in the reverse order of `add` (hooks first, then mcp_servers): a section funes
    # appended at the end of the file is then still last when it goes.
    y.strip_key("mcp_servers", "funes")
    y.strip_items("hooks", is_funes_command)
    if ctx is not None:
        for event, cmd in entries(ctx):
            y.add_item("hooks", event, [f"- command: {_yaml.sq(cmd)}", f"  timeout: {TIMEOUT}"])
        y.set_key("mcp_servers", "funes", _mcp_lines(ctx))
    after = _split(_yaml.load(y.text))
    want_ours: dict[str, list[Any]] = {}
    for event, cmd in entries(ctx) if ctx else []:
        want_ours.setdefault(event, []).append({"command": cmd, "timeout": TIMEOUT})
    want_mcp = mcp_entry(ctx) if ctx else None
    if (
        after[0] != before[0]
        or _yaml.canonical(after[1]) != _yaml.canonical(before[1])
        or after[2] != want_ours
        or after[3] != before[3]
        or after[4] != want_mcp
    ):
        raise ConfigError("funes could not edit it line by line without changing other entries")
    return y.text


def _read_text(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise ConfigError("it is not UTF-8 text") from None


# ---------------------------------------------------------------------------- add / remove


def manual_block(ctx: Context) -> str:
    """Both halves to paste by hand: Hermes runs a shell hook only with its approval."""
    return (
        f"in {ctx.show(config_file(ctx))}:\n{manual_config(ctx)}\n"
        f"and in {ctx.show(allowlist_file(ctx))} (Hermes runs no shell hook it has not "
        f"approved):\n{manual_allowlist(ctx)}"
    )


def _install_scripts(ctx: Context, res: Result) -> None:
    wrote = install_script(script_path(ctx))
    res.did(f"hook script {ctx.show(script_path(ctx))}" + ("" if wrote else ", unchanged"), wrote)
    push_path = hermes_dir(ctx) / "hooks" / PUSH_SCRIPT
    if sync_push_script(ctx, push_path) and ctx.push_memory:
        res.did(f"push hook script {ctx.show(push_path)}")


def add(ctx: Context, res: Result) -> None:
    cfg, allow = config_file(ctx), allowlist_file(ctx)
    # Parse both user files first: a malformed one means neither is half-edited. The scripts
    # are funes' own files and go in either way, so the block printed for pasting names only
    # what exists.
    try:
        text = _read_text(cfg)
        new_text = edit_config(text or "", ctx)
    except ConfigError as e:
        _install_scripts(ctx, res)
        res.problem(
            f"{ctx.show(cfg)}: {e}; left it and {ctx.show(allow)} untouched — fix it and rerun "
            f"`funes add hermes`, or add this by hand {manual_block(ctx)}"
        )
        return
    try:
        doc, raw = load_json_object(allow)
        assert doc is not None
        new_doc, pristine = _merge_approvals(doc, _approvals(ctx))
    except ConfigError as e:
        _install_scripts(ctx, res)
        res.problem(
            f"{ctx.show(allow)}: {e}; left it and {ctx.show(cfg)} untouched — fix it and rerun "
            f"`funes add hermes`, or add this by hand {manual_block(ctx)}"
        )
        return
    _install_scripts(ctx, res)
    if text is None:
        Originals(ctx).save(cfg, None)
    wrote = text != new_text and write_if_changed(cfg, new_text.encode("utf-8"))
    events = ", ".join(dict.fromkeys(e for e, _ in entries(ctx)))
    res.did(
        f"hooks {events} and mcp_servers.funes in {ctx.show(cfg)}"
        + ("" if wrote else ", unchanged"),
        wrote,
    )
    wrote = write_json_user_file(ctx, allow, doc, raw, new_doc, pristine)
    res.did(f"hook approvals in {ctx.show(allow)}" + ("" if wrote else ", unchanged"), wrote)


def _merge_approvals(
    doc: dict[str, Any], desired: list[dict[str, str]]
) -> tuple[dict[str, Any], bool]:
    approvals = doc.get("approvals", [])
    if not isinstance(approvals, list):
        raise ConfigError('its "approvals" value is not a list')
    kept = [
        a for a in approvals if not (isinstance(a, dict) and is_funes_command(a.get("command")))
    ]
    pristine = len(kept) == len(approvals)
    out = dict(doc)
    out["approvals"] = kept + desired
    if not desired and "approvals" not in doc:
        out = doc
    return out, pristine


def remove(ctx: Context, res: Result) -> None:
    cfg, allow = config_file(ctx), allowlist_file(ctx)
    try:
        text = _read_text(cfg)
        new_text = edit_config(text, None) if text is not None else None
        doc, raw = load_json_object(allow)
        assert doc is not None
        stripped, pristine = _merge_approvals(doc, [])
    except ConfigError as e:
        res.problem(
            f"{ctx.show(cfg)} or {ctx.show(allow)}: {e}; left both untouched — remove the "
            "funes entries by hand"
        )
        return
    if text is not None and new_text is not None and new_text != text:
        originals = Originals(ctx)
        if not new_text.strip() and originals.load(cfg) == Originals.ABSENT:
            remove_file(cfg)
        else:
            write_if_changed(cfg, new_text.encode("utf-8"))
        originals.forget(cfg)
        res.did(f"removed funes hooks and mcp_servers.funes from {ctx.show(cfg)}")
    if raw is not None and not pristine and not same(stripped, doc):
        restore_json_user_file(ctx, allow, stripped, raw, "approvals")
        res.did(f"removed funes approvals from {ctx.show(allow)}")
    hooks = hermes_dir(ctx) / "hooks"
    for name in (INDEX_SCRIPT, COMMON_SCRIPT, PUSH_SCRIPT, "funes-sync.log"):
        if remove_file(hooks / name):
            res.did(f"deleted {ctx.show(hooks / name)}")
    prune_dirs(hooks, ctx.home)
    prune_dirs(ctx.integrations / "originals", ctx.home)


def status(ctx: Context) -> dict[str, Any]:
    events: list[str] = []
    pushes: list[str] = []
    commands: list[str] = []
    mcp: bool | None = False
    try:
        _, _, ours, _, entry = _split(_yaml.load(_read_text(config_file(ctx)) or ""))
        events = sorted(ours)
        commands = sorted({e["command"] for es in ours.values() for e in es})
        pushes = sorted(
            ev for ev, es in ours.items() if any(PUSH_SCRIPT in e["command"] for e in es)
        )
        mcp = isinstance(entry, dict) and entry.get("command") is not None
    except ConfigError:
        mcp = None
    approved: list[str] = []
    try:
        doc, _ = load_json_object(allowlist_file(ctx))
        approved = sorted(
            {
                a.get("event", "")
                for a in (doc or {}).get("approvals", [])
                if isinstance(a, dict) and a.get("command") in commands
            }
        )
    except (ConfigError, AttributeError):
        pass
    missing = [e for e in events if e not in approved]
    script = script_path(ctx)
    return {
        "hooks": events,
        "push_hooks": pushes,
        "hooks_file": str(config_file(ctx)),
        "script": str(script) if script.exists() else None,
        "script_current": scripts_current(script),
        "commands": commands,
        "mcp": mcp,
        "mcp_source": "config.yaml mcp_servers.funes",
        "note": f"not approved in shell-hooks-allowlist.json: {', '.join(missing)}"
        if missing
        else None,
    }


AGENT = Agent(
    NAME,
    add,
    remove,
    status,
    # Hermes hands over no transcript path: its transcript is the state database.
    hook_transcript='"${HERMES_HOME:-$HOME/.hermes}/state.db"',
)
