"""What every agent integration shares, re-exported from the modules split by concern: where to
install (``Context``) and what `add`/`remove` did (``Result``) (``_context``), file writes (``_files``),
the hook scripts and entries (``_hooks``), the user's JSON files (``_userfiles``) and the
agents' CLIs (``_cli``).

Every write is atomic (`<file>.funes-tmp` + rename, so a hook script that is running keeps its
old inode) and happens only when the content differs. A user file funes edits (Codex's
`hooks.json`, Hermes' allowlist) is remembered as it was before funes touched it, so `funes
remove` puts back the user's exact bytes when the only difference is funes' own entries.
"""

from __future__ import annotations

from funes.agents._cli import (
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
from funes.agents._context import ConfigError, Context, Result
from funes.agents._files import (
    packaged,
    prune_dirs,
    remove_file,
    remove_tree,
    write_if_changed,
)
from funes.agents._hooks import (
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
from funes.agents._userfiles import (
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
