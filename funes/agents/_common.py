"""What every agent integration shares: where to install (``Context``), what `add`/`remove` did
(``Result``), and — re-exported from the modules split by concern — file writes (``_files``),
the hook scripts and entries (``_hooks``), the user's JSON files (``_userfiles``) and the
agents' CLIs (``_cli``).

Every write is atomic (`<file>.funes-tmp` + rename, so a hook script that is running keeps its
old inode) and happens only when the content differs. A user file funes edits (Codex's
`hooks.json`, Hermes' allowlist) is remembered as it was before funes touched it, so `funes
remove` puts back the user's exact bytes when the only difference is funes' own entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from funes.errors import FunesError
from funes.hub.spec import is_remote


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


# Imported last: these modules use Context, Result and ConfigError above.
from funes.agents._cli import (  # noqa: E402
    CLI_TIMEOUT,
    Registrations,
    cli_error,
    cli_says_present,
    gone,
    register_mcp,
    run_cli,
    shell_join,
    unregister,
    which,
)
from funes.agents._files import (  # noqa: E402
    packaged,
    prune_dirs,
    remove_file,
    remove_tree,
    write_if_changed,
)
from funes.agents._hooks import (  # noqa: E402
    AGENT_CASES,
    COMMON_SCRIPT,
    INDEX_SCRIPT,
    PUSH_SCRIPT,
    SCRIPT_NAMES,
    common_script,
    funes_events,
    has_funes_hooks,
    hook_args,
    hook_command,
    hook_script,
    install_script,
    is_funes_command,
    is_funes_entry,
    is_funes_group,
    mcp_args,
    merge_hooks,
    push_script,
    push_script_status,
    quote,
    remove_script,
    scripts_current,
    sources_common,
    sync_push_script,
    with_agent_cases,
)
from funes.agents._userfiles import (  # noqa: E402
    Originals,
    dump_like,
    load_json_object,
    restore_json_user_file,
    same,
    write_json_user_file,
)

__all__ = [
    "AGENT_CASES",
    "CLI_TIMEOUT",
    "COMMON_SCRIPT",
    "INDEX_SCRIPT",
    "PUSH_SCRIPT",
    "SCRIPT_NAMES",
    "ConfigError",
    "Context",
    "Originals",
    "Registrations",
    "Result",
    "cli_error",
    "cli_says_present",
    "common_script",
    "dump_like",
    "funes_events",
    "gone",
    "has_funes_hooks",
    "hook_args",
    "hook_command",
    "hook_script",
    "install_script",
    "is_funes_command",
    "is_funes_entry",
    "is_funes_group",
    "load_json_object",
    "mcp_args",
    "merge_hooks",
    "packaged",
    "prune_dirs",
    "push_script",
    "push_script_status",
    "quote",
    "register_mcp",
    "remove_file",
    "remove_script",
    "remove_tree",
    "restore_json_user_file",
    "run_cli",
    "same",
    "scripts_current",
    "shell_join",
    "sources_common",
    "sync_push_script",
    "unregister",
    "which",
    "with_agent_cases",
    "write_if_changed",
    "write_json_user_file",
]  # fmt: skip
