"""Agents wired through JSON files funes edits (Gemini CLI, Qwen Code, Copilot CLI, Cursor,
OpenCode, Cline, Roo Code, Kilo Code): funes' MCP server entry in the file that lists the
agent's MCP servers and, where the agent runs hooks from a JSON file, an index hook on its
per-turn and session-end events. `funes add` writes funes' entries into the agent's own files,
`funes remove` takes them out and, when nothing else changed, puts back the user's exact bytes
(``Originals``); `funes doctor` reads the entries back.

Each file is read and written once per `add`/`remove`, whatever funes keeps in it (Gemini CLI
keeps MCP servers and hooks in the same ``settings.json``). The hook script itself lives in
``~/.funes/integrations/<agent>/``, never in the agent's home. An agent without hooks gets its
sessions through `funes index` (a bare run sweeps them all): `funes add` says so, and how to
schedule one.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from funes.agents._common import (
    INDEX_SCRIPT,
    PUSH_SCRIPT,
    ConfigError,
    Context,
    Originals,
    Result,
    funes_events,
    hook_args,
    hook_command,
    install_script,
    is_funes_entry,
    is_funes_group,
    load_json_object,
    mcp_args,
    merge_hooks,
    prune_dirs,
    push_script_status,
    remove_file,
    remove_tree,
    restore_json_user_file,
    same,
    scripts_current,
    shell_join,
    sync_push_script,
    write_if_changed,
    write_json_user_file,
)
from funes.agents._registry import Agent, Asker

SERVER = "funes"
SCHEDULE = (
    "its sessions are picked up by the next `funes index` (it has no hook funes can install): "
    "schedule one — e.g. `crontab -e` → `*/15 * * * * {bin} index -q{push}`"
)
# With a Hub memory bound, the same scheduled line publishes it (no hook can).
SCHEDULED_PUSH = " && {bin} push {memory} --yes"
# What `funes doctor` lists as the push hook of an agent whose index hook pushes after its run.
AFTER_INDEX = "after the index run"
HOOK_STATUS = "Indexing into funes memory"
PUSH_STATUS = "Publishing funes memory"
# funes' hooks by name, where the agent names hooks (Gemini CLI, Qwen Code)
HOOK_NAME = "funes-index"
PUSH_NAME = "funes-push"


def env_dir(name: str, default: Path) -> Path:
    """The directory an agent's environment variable names (``~`` expanded), else ``default``."""
    value = os.environ.get(name, "").strip()
    return Path(os.path.expanduser(value)) if value else default


def stdio_entry(ctx: Context) -> dict[str, Any]:
    """The common ``mcpServers`` shape: ``{"command", "args"}``."""
    return {"command": ctx.funes_bin, "args": mcp_args(ctx.memory)}


def url_entry(url: str) -> dict[str, Any]:
    """The common shape of an HTTP server (`funes add --mcp-http`): ``{"url"}``."""
    return {"url": url}


def script_dir(ctx: Context, agent: str) -> Path:
    """Where the index hook script of ``agent`` is installed (funes' own directory)."""
    return ctx.integrations / agent


@dataclass(frozen=True)
class Hooks:
    """An agent's hooks in a JSON file: ``file(ctx)`` holds ``{"hooks": {EVENT: [...]}}``;
    ``entry(command, event)`` is one hook of funes' for ``event``; ``grouped`` wraps it in a
    ``{"hooks": [entry]}`` group (Claude Code's shape, Gemini CLI's) rather than listing it
    flat (Cursor, Copilot CLI). ``skeleton`` is what a file funes creates holds besides
    (``{"version": 1}``). ``off(doc)`` says why the agent will not run the hooks, read from the
    same file (a switched-off hooks system), for `funes doctor`. ``push_events`` are the
    agent's session-end events, where a bound Hub memory is published (`funes-push.sh`, as
    for Claude Code); an agent without one has its index hook publish after its run."""

    file: Callable[[Context], Path]
    events: tuple[str, ...]
    entry: Callable[[str, str], dict[str, Any]]
    grouped: bool = False
    skeleton: dict[str, Any] = field(default_factory=dict)
    off: Callable[[dict[str, Any]], str | None] | None = None
    push_events: tuple[str, ...] = ()

    def ours(self, item: object) -> bool:
        return is_funes_group(item) if self.grouped else is_funes_entry(item)

    def desired(self, command: str, push: str | None = None) -> dict[str, list[dict[str, Any]]]:
        """funes' entries: the index ``command`` on each event, then the ``push`` command (if
        any) on each push event."""
        out: dict[str, list[dict[str, Any]]] = {}
        wanted = [(e, command) for e in self.events]
        wanted += [(e, push) for e in self.push_events if push]
        for event, cmd in wanted:
            hook = self.entry(cmd, event)
            out.setdefault(event, []).append({"hooks": [hook]} if self.grouped else hook)
        return out


def settings_hook(keys: tuple[str, ...]) -> Callable[[str, str], dict[str, Any]]:
    """The hook entry of Gemini CLI's ``settings.json`` (Qwen Code took its shape): funes'
    name, the command, a timeout in milliseconds (the script returns at once, the work is
    detached) and the status line, under ``keys`` in the order the agent writes them (its
    status key is ``description`` or ``statusMessage``)."""

    def entry(command: str, event: str) -> dict[str, Any]:
        push = PUSH_SCRIPT in command
        status = PUSH_STATUS if push else HOOK_STATUS
        values = {
            "name": PUSH_NAME if push else HOOK_NAME,
            "type": "command",
            "command": command,
            "timeout": 15000,
            "description": status,
            "statusMessage": status,
        }
        return {k: values[k] for k in keys}

    return entry


def hooks_off(
    switches: tuple[tuple[tuple[str, ...], bool], ...], disabled_in: tuple[str, ...] = ()
) -> Callable[[dict[str, Any]], str | None]:
    """Why the agent will not run funes' hooks, read from its settings: a ``switches`` path
    (``("hooksConfig", "enabled")``) set to the value that turns hooks off, or funes' hook
    named in a ``disabled`` list under one of ``disabled_in``."""

    def off(doc: dict[str, Any]) -> str | None:
        for path, value in switches:
            node: Any = doc
            for key in path:
                node = node.get(key) if isinstance(node, dict) else None
            if node is value:
                said = "true" if value else "false"
                return f"hooks are switched off in settings.json ({'.'.join(path)} = {said})"
        for section in disabled_in:
            part = doc.get(section)
            disabled = part.get("disabled") if isinstance(part, dict) else None
            if isinstance(disabled, list) and HOOK_NAME in disabled:
                return (
                    f"the hook {HOOK_NAME} is disabled in settings.json "
                    f"(`/hooks enable {HOOK_NAME}`)"
                )
        return None

    return off


@dataclass(frozen=True)
class Plugin:
    """Files of funes' own that make the agent run the index hook (an OpenCode plugin):
    ``files(ctx, command_args)`` maps each path to its bytes, where ``command_args`` are the
    hook script's path and arguments; ``events`` are what the plugin listens to;
    ``installed_args`` reads ``command_args`` back from the plugin as written."""

    files: Callable[[Context, list[str]], dict[Path, bytes]]
    events: tuple[str, ...]
    # the hook script's argv written in an installed plugin (its first file), None if unreadable
    installed_args: Callable[[bytes], list[str] | None] = lambda data: None


@dataclass(frozen=True)
class _Part:
    """One thing funes keeps in a user's JSON file: put it in, take it out, is it there."""

    what: str
    put: Callable[[dict[str, Any]], dict[str, Any]]
    strip: Callable[[dict[str, Any]], dict[str, Any]]
    has: Callable[[dict[str, Any]], bool]
    containers: tuple[str, ...]
    skeleton: dict[str, Any]


def mcp_json_agent(
    name: str,
    config: Callable[[Context], Path],
    entry: Callable[[Context], dict[str, Any]] = stdio_entry,
    key: str = "mcpServers",
    http_entry: Callable[[str], dict[str, Any]] = url_entry,
    hooks: Hooks | None = None,
    plugin: Plugin | None = None,
    hook_transcript: str | None = None,
    ask: Asker | None = None,
) -> Agent:
    """An :class:`Agent` whose wiring is ``<key>.funes`` in the JSON file ``config(ctx)``:
    ``entry(ctx)``, or ``http_entry(url)`` when ``ctx.mcp_url`` names the machine's
    `funes mcp --http` server; and, with ``hooks``, the index hook on ``hooks.events`` (with
    ``plugin``, the plugin files that run it)."""
    w = _Wiring(name, config, entry, key, http_entry, hooks, plugin)
    return Agent(
        name, w.add, w.remove, w.status, hook_transcript=hook_transcript, hooked=w.hooked, ask=ask
    )


@dataclass(frozen=True)
class _Wiring:
    """What :func:`mcp_json_agent` was given, and the `add`, `remove` and `status` it makes."""

    name: str
    config: Callable[[Context], Path]
    entry: Callable[[Context], dict[str, Any]]
    key: str
    http_entry: Callable[[str], dict[str, Any]]
    hooks: Hooks | None
    plugin: Plugin | None

    @property
    def hooked(self) -> bool:
        return self.hooks is not None or self.plugin is not None

    @property
    def push_at_end(self) -> bool:
        """A bound Hub memory is published at the agent's session end, else after each index
        run."""
        return self.hooks is not None and bool(self.hooks.push_events)

    def wanted(self, ctx: Context) -> dict[str, Any]:
        return self.http_entry(ctx.mcp_url) if ctx.mcp_url else self.entry(ctx)

    def push_after_index(self, ctx: Context) -> str | None:
        return ctx.push_memory if self.hooked and not self.push_at_end else None

    def command(self, ctx: Context) -> str:
        script = str(script_dir(ctx, self.name) / INDEX_SCRIPT)
        return hook_command(
            script, self.name, ctx.funes_bin, ctx.index_memory, self.push_after_index(ctx)
        )

    def push_command(self, ctx: Context) -> str | None:
        if not (self.push_at_end and ctx.push_memory):
            return None
        script = str(script_dir(ctx, self.name) / PUSH_SCRIPT)
        return hook_command(script, self.name, ctx.funes_bin, ctx.push_memory)

    def command_args(self, ctx: Context) -> list[str]:
        script = str(script_dir(ctx, self.name) / INDEX_SCRIPT)
        return hook_args(
            script, self.name, ctx.funes_bin, ctx.index_memory, self.push_after_index(ctx)
        )

    def push_where(self, ctx: Context) -> str:
        """Where the push runs, as `add` says it and `doctor` lists it."""
        if self.push_at_end:
            assert self.hooks is not None
            return ", ".join(self.hooks.push_events)
        return AFTER_INDEX

    # ------------------------------------------------------------------ the parts of the files

    def mcp_part(self, ctx: Context) -> _Part:
        key = self.key

        def put(doc: dict[str, Any]) -> dict[str, Any]:
            servers = doc.get(key)
            if servers is not None and not isinstance(servers, dict):
                raise ConfigError(f"its {key!r} is not an object")
            new = copy.deepcopy(doc)
            new.setdefault(key, {})[SERVER] = self.wanted(ctx)
            return new

        def strip(doc: dict[str, Any]) -> dict[str, Any]:
            new = copy.deepcopy(doc)
            if isinstance(new.get(key), dict):
                new[key].pop(SERVER, None)
            return new

        def has(doc: dict[str, Any]) -> bool:
            servers = doc.get(key)
            return isinstance(servers, dict) and SERVER in servers

        return _Part(f"MCP server {SERVER} ({key}.{SERVER})", put, strip, has, (key,), {})

    def hooks_part(self, ctx: Context, h: Hooks) -> _Part:
        def put(doc: dict[str, Any]) -> dict[str, Any]:
            base = doc or dict(h.skeleton)  # a file funes creates starts as the skeleton
            return merge_hooks(base, h.desired(self.command(ctx), self.push_command(ctx)), h.ours)

        def strip(doc: dict[str, Any]) -> dict[str, Any]:
            return merge_hooks(doc, {}, h.ours) if "hooks" in doc else doc

        def has(doc: dict[str, Any]) -> bool:
            return bool(funes_events(doc, h.ours))

        what = f"index hook on {', '.join(h.events)}"
        if ctx.push_memory:
            what += f" (push of {ctx.push_memory}: {self.push_where(ctx)})"
        return _Part(what, put, strip, has, ("hooks",), h.skeleton)

    def parts(self, ctx: Context) -> dict[Path, list[_Part]]:
        out: dict[Path, list[_Part]] = {self.config(ctx): [self.mcp_part(ctx)]}
        if self.hooks is not None:
            out.setdefault(self.hooks.file(ctx), []).append(self.hooks_part(ctx, self.hooks))
        return out

    # ------------------------------------------------------------------ add

    def add(self, ctx: Context, res: Result) -> None:
        if self.hooked:
            self._add_scripts(ctx, res)
        if self.plugin is not None:
            self._add_plugin(ctx, res, self.plugin)
        for path, ps in self.parts(ctx).items():
            _add_parts(ctx, res, path, ps)
        if not self.hooked:
            then = SCHEDULED_PUSH.format(bin=ctx.funes_bin, memory=ctx.push_memory)
            res.did(SCHEDULE.format(bin=ctx.funes_bin, push=then if ctx.push_memory else ""), False)

    def _add_scripts(self, ctx: Context, res: Result) -> None:
        script = script_dir(ctx, self.name) / INDEX_SCRIPT
        wrote = install_script(script)
        res.did(f"hook script {ctx.show(script)}" + ("" if wrote else ", unchanged"), wrote)
        push = script_dir(ctx, self.name) / PUSH_SCRIPT
        if sync_push_script(ctx, push) and ctx.push_memory:
            res.did(f"push script {ctx.show(push)}")

    def _add_plugin(self, ctx: Context, res: Result, plugin: Plugin) -> None:
        for path, data in plugin.files(ctx, self.command_args(ctx)).items():
            wrote = write_if_changed(path, data)
            on = ", ".join(plugin.events)
            if ctx.push_memory:
                on += f"; push of {ctx.push_memory}: {AFTER_INDEX}"
            what = f"plugin {ctx.show(path)} (index hook on {on})"
            res.did(what if wrote else f"{what}, unchanged", wrote)

    # ------------------------------------------------------------------ remove

    def remove(self, ctx: Context, res: Result) -> None:
        for path, ps in self.parts(ctx).items():
            _remove_parts(ctx, res, path, ps)
        if self.plugin is not None:
            for path in self.plugin.files(ctx, self.command_args(ctx)):
                if remove_file(path):
                    res.did(f"deleted {ctx.show(path)}")
                    prune_dirs(path.parent, ctx.home)
        if self.hooked and remove_tree(script_dir(ctx, self.name)):
            res.did(f"deleted {ctx.show(script_dir(ctx, self.name))}")
            prune_dirs(ctx.integrations, ctx.home)

    # ------------------------------------------------------------------ status

    def status(self, ctx: Context) -> dict[str, Any]:
        path = self.config(ctx)
        mcp: bool | None
        try:
            doc, _ = load_json_object(path)
            servers = (doc or {}).get(self.key)
            mcp = isinstance(servers, dict) and same(servers.get(SERVER), self.wanted(ctx))
            if isinstance(servers, dict) and SERVER in servers and not mcp:
                mcp = True  # registered, with another binary or memory
        except ConfigError:
            mcp = None
        st: dict[str, Any] = {
            "hooks": [],
            "hooks_file": str(path),
            "script": None,
            "script_current": False,
            "commands": [],
            "mcp": mcp,
            "mcp_source": f"{ctx.show(path)} {self.key}.{SERVER}",
        }
        if not self.hooked:
            st["note"] = (
                "no hook: sessions are indexed by `funes index` (and a Hub memory published "
                "by `funes push`), run by hand or on a schedule"
            )
            return st
        script = script_dir(ctx, self.name) / INDEX_SCRIPT
        st["script"] = str(script) if script.exists() else None
        st["script_current"] = scripts_current(script)
        st.update(push_script_status(script_dir(ctx, self.name) / PUSH_SCRIPT))
        if self.plugin is not None:
            self._plugin_status(ctx, st, self.plugin)
            return st
        assert self.hooks is not None
        _hooks_status(ctx, st, self.hooks)
        return st

    def _plugin_status(self, ctx: Context, st: dict[str, Any], plugin: Plugin) -> None:
        """The index hook as the plugin files say it (into ``st``)."""
        first = next(iter(plugin.files(ctx, self.command_args(ctx))))
        st["hooks_file"] = str(first)
        if not first.exists():
            return
        # what the plugin was written with (a memory, a push), not what this call names
        args = plugin.installed_args(first.read_bytes()) or self.command_args(ctx)
        st["hooks"] = list(plugin.events)
        st["push_hooks"] = [AFTER_INDEX] if "--push" in args else []
        st["commands"] = [shell_join(["bash", *args])]
        if any(
            not p.exists() or p.read_bytes() != data for p, data in plugin.files(ctx, args).items()
        ):
            st["note"] = f"the plugin is out of date: rerun `funes add {self.name}`"


def _add_parts(ctx: Context, res: Result, path: Path, ps: list[_Part]) -> None:
    """Put funes' parts ``ps`` into the user's file ``path`` (one read, one write)."""
    try:
        doc, raw = load_json_object(path)
        assert doc is not None
        new = doc
        for p in ps:
            new = p.put(new)
    except ConfigError as e:
        what = " and ".join(p.what for p in ps)
        res.problem(f"{ctx.show(path)}: {e}; left untouched — add the {what} by hand")
        return
    pristine = not any(p.has(doc) for p in ps)
    wrote = write_json_user_file(ctx, path, doc, raw, new, pristine)
    for p in ps:
        where = f"{p.what} in {ctx.show(path)}"
        res.did(where if wrote else f"{where}, unchanged", wrote)


def _remove_parts(ctx: Context, res: Result, path: Path, ps: list[_Part]) -> None:
    """Take funes' parts ``ps`` out of the user's file ``path``: the user's own bytes back when
    nothing else changed, the file (and the folders funes made for it) gone if funes made it."""
    try:
        doc, raw = load_json_object(path)
    except ConfigError as e:
        res.problem(f"{e}; left untouched — remove funes' entries by hand")
        return
    assert doc is not None
    there = [p for p in ps if p.has(doc)]
    if raw is None or not there:
        res.did(f"nothing of funes in {ctx.show(path)}", False)
        return
    stripped = doc
    for p in ps:
        stripped = p.strip(stripped)
    containers = tuple(c for p in ps for c in p.containers)
    skeleton = {k: v for p in ps for k, v in p.skeleton.items()}
    created = Originals(ctx).load(path) == Originals.ABSENT
    restore_json_user_file(ctx, path, stripped, raw, containers, skeleton)
    if created and not path.exists():  # and the folders funes made for it
        prune_dirs(path.parent, ctx.home)
    res.did(f"removed the {' and '.join(p.what for p in there)} from {ctx.show(path)}")


def _hooks_status(ctx: Context, st: dict[str, Any], hooks: Hooks) -> None:
    """The index (and push) hooks as the agent's hooks file holds them (into ``st``)."""
    st["hooks_file"] = str(hooks.file(ctx))
    try:
        hdoc, _ = load_json_object(hooks.file(ctx))
    except ConfigError as e:
        st["note"] = str(e)
        return
    hdoc = hdoc or {}
    ours = {
        event: [_command_of(item) for item in hdoc["hooks"][event] if hooks.ours(item)]
        for event in funes_events(hdoc, hooks.ours)
    }
    index = {e: [c for c in cs if PUSH_SCRIPT not in c] for e, cs in ours.items()}
    st["hooks"] = [e for e, cs in index.items() if cs]
    st["push_hooks"] = [e for e, cs in ours.items() if any(PUSH_SCRIPT in c for c in cs)]
    if any("--push" in c for cs in index.values() for c in cs):
        st["push_hooks"].append(AFTER_INDEX)
    st["commands"] = [c for cs in ours.values() for c in cs]
    why = hooks.off(hdoc) if hooks.off is not None and st["hooks"] else None
    if why:
        st["note"] = why


def _command_of(item: Any) -> str:
    """The command of a hook entry or of the first hook of a group."""
    if isinstance(item, dict) and isinstance(item.get("hooks"), list) and item["hooks"]:
        item = item["hooks"][0]
    if not isinstance(item, dict):
        return ""
    value = item.get("command") or item.get("bash") or ""
    return value if isinstance(value, str) else ""
