"""`funes add` / `remove` / `doctor` for the agents wired through their JSON configs (Gemini
CLI, Qwen Code, Copilot CLI, Cursor, OpenCode, Cline, Roo Code, Kilo Code): the MCP entry is
written into the agent's own file and `remove` leaves the user's configuration byte-identical
to a backup. Their hooks are tested in test_agents_hooks.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_cli

VSCODE = ".config/Code/User/globalStorage"
# agent → (its config file under $HOME, the key that holds MCP servers)
WIRED = {
    "gemini": (".gemini/settings.json", "mcpServers"),
    "qwen": (".qwen/settings.json", "mcpServers"),
    "copilot": (".copilot/mcp-config.json", "mcpServers"),
    "cursor": (".cursor/mcp.json", "mcpServers"),
    "opencode": (".config/opencode/opencode.json", "mcp"),
    "cline": (f"{VSCODE}/saoudrizwan.claude-dev/settings/cline_mcp_settings.json", "mcpServers"),
    "roo": (f"{VSCODE}/rooveterinaryinc.roo-cline/settings/mcp_settings.json", "mcpServers"),
    "kilo": (f"{VSCODE}/kilocode.kilo-code/settings/mcp_settings.json", "mcpServers"),
}
USER_FILE = (
    b'{\n\t"theme":   "dark",\n\t"%s": {"mine": {"command": "my-server", "args": []}},\n'
    b'\t"unicode": "caf\\u00e9 \xe2\x9c\x93"\n}'
)  # tabs, odd spacing, an escape and raw UTF-8, no final newline: a re-dump would differ


def funes(*args: str) -> tuple[int, str, str]:
    r = run_cli("funes", *args, "--no-index") if args[0] == "add" else run_cli("funes", *args)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


@pytest.mark.parametrize("agent", sorted(WIRED))
def test_add_then_remove_leaves_the_users_file_byte_identical(
    private_home: Path, agent: str
) -> None:
    rel, key = WIRED[agent]
    cfg = private_home / rel
    cfg.parent.mkdir(parents=True)
    cfg.write_bytes(USER_FILE % key.encode())
    backup = cfg.read_bytes()
    rc, out, err = funes("add", agent)
    assert rc == 0, err
    doc = json.loads(cfg.read_text())
    assert doc[key]["mine"] == {"command": "my-server", "args": []}  # the user's entry kept
    entry = doc[key]["funes"]
    assert "mcp" in json.dumps(entry) and doc["theme"] == "dark"
    assert "funes index" in out  # the first index it skipped, or how sessions get indexed
    rc, out, _ = funes("doctor", "--json", agent)
    (row,) = json.loads(out)["agents"]
    assert row["mcp"] is True and row["mcp_source"].startswith(f"~/{rel} ")
    rc, _, err = funes("remove", agent)
    assert rc == 0, err
    assert cfg.read_bytes() == backup


@pytest.mark.parametrize("agent", sorted(WIRED))
def test_a_config_funes_created_is_removed_again(private_home: Path, agent: str) -> None:
    rel, key = WIRED[agent]
    cfg = private_home / rel
    assert funes("add", agent)[0] == 0
    assert json.loads(cfg.read_text())[key]["funes"]
    assert funes("add", agent)[0] == 0  # a second add changes nothing
    assert funes("remove", agent)[0] == 0
    assert not cfg.exists()
    assert not (private_home / rel.split("/")[0]).exists()  # nor the folders funes made
    (row,) = json.loads(funes("doctor", "--json", agent)[1])["agents"]
    assert row["mcp"] is False


def test_a_config_funes_cannot_read_is_left_untouched(private_home: Path) -> None:
    cfg = private_home / ".gemini/settings.json"
    cfg.parent.mkdir(parents=True)
    cfg.write_bytes(b'{"theme": "dark", // a comment\n}')
    before = cfg.read_bytes()
    rc, _, err = funes("add", "gemini")
    assert rc != 0 and "not valid JSON" in err and cfg.read_bytes() == before


def test_environment_moves_the_config(private_home: Path, tmp_path: Path) -> None:
    moved = tmp_path / "gh"
    r = run_cli("funes", "add", "gemini", "--no-index", env={"GEMINI_CLI_HOME": str(moved)})
    assert r.returncode == 0, r.stderr.decode()
    assert (moved / ".gemini/settings.json").is_file() and not (private_home / ".gemini").exists()
    r = run_cli("funes", "add", "copilot", "--no-index", env={"COPILOT_HOME": str(tmp_path / "cp")})
    assert r.returncode == 0 and (tmp_path / "cp/mcp-config.json").is_file()
    assert os.environ.get("GEMINI_CLI_HOME") is None
