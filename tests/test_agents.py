"""`funes add` / `funes remove` per agent, run as a user would, against fake agent
CLIs on PATH that record their argv and print the markers the real CLIs print for an absent entry."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import BIN, REPO, as_text, run_cli

from funes.agents import names

# Every registered agent: a new one is covered by the tests below once `seed` gives it files
# of the user's own (a test fails until it does).
AGENTS = tuple(names())
# The agents' CLIs funes runs, played by the fake below (the others are wired by files alone).
CLIS = ("claude", "codex", "openclaw", "pi")
FUNES = str(BIN / "funes")

# One Python script plays every agent CLI; its name ($0) says which. State lives outside HOME so
# that "HOME is byte-identical after add + remove" is about funes alone.
FAKE = r"""#!{python}
import json, os, sys
name = os.path.basename(sys.argv[0]); argv = sys.argv[1:]
state_dir = os.environ["FAKE_STATE"]
with open(os.path.join(state_dir, "calls.jsonl"), "a") as f:
    f.write(json.dumps({{"cli": name, "argv": argv}}) + "\n")
path = os.path.join(state_dir, name + ".json")
state = json.load(open(path)) if os.path.exists(path) else {{}}
def save(): json.dump(state, open(path, "w"))
def absent(msg): print(msg, file=sys.stderr); sys.exit(1)
a = argv
if name == "claude":
    if a[:3] == ["plugin", "marketplace", "add"]: state["marketplace"] = a[3]
    elif a[:3] == ["plugin", "marketplace", "remove"]:
        if "marketplace" not in state: absent("Marketplace 'huggingface' not found")
        del state["marketplace"]
    elif a[:2] == ["plugin", "install"]: state["plugin"] = a[2]
    elif a[:2] == ["plugin", "uninstall"]:
        if "plugin" not in state: absent('Plugin "funes@huggingface" not found')
        del state["plugin"]
    elif a[:2] == ["mcp", "add"] and "--transport" in a: state["mcp"] = ["http", a[a.index("funes") + 1]]
    elif a[:2] == ["mcp", "add"]: state["mcp"] = a[a.index("--") + 1:]
    elif a[:2] == ["mcp", "get"]:
        if "mcp" not in state: absent("No MCP server found with name: funes")
        if state["mcp"][0] == "http": print("funes:\n  Scope: User config\n  Type: http\n  URL: %s" % state["mcp"][1])
        else: print("funes:\n  Scope: User config\n  Type: stdio\n  Command: %s\n  Args: %s" % (state["mcp"][0], " ".join(state["mcp"][1:])))
    elif a[:2] == ["mcp", "remove"]:
        if os.environ.get("FAKE_REMOVE_FAILS"): absent(os.environ["FAKE_REMOVE_FAILS"])
        if "mcp" not in state:
            absent(os.environ.get("FAKE_ABSENT_MCP", 'No MCP server named "funes" found in user config'))
        del state["mcp"]
elif name == "codex":
    if a[:2] == ["mcp", "add"] and "--url" in a: state["mcp"] = ["http", a[a.index("--url") + 1]]
    elif a[:2] == ["mcp", "add"]: state["mcp"] = a[a.index("--") + 1:]
    elif a[:2] == ["mcp", "get"]:
        if "mcp" not in state: absent("No MCP server named 'funes' found.")
        if state["mcp"][0] == "http": print(json.dumps({{"name": "funes", "transport": {{"type": "streamable_http", "url": state["mcp"][1]}}}}))
        else: print(json.dumps({{"name": "funes", "transport": {{"type": "stdio", "command": state["mcp"][0], "args": state["mcp"][1:]}}}}))
    elif a[:2] == ["mcp", "remove"]:
        if "mcp" not in state: absent("No MCP server named 'funes' found")
        del state["mcp"]
elif name == "openclaw":
    # `openclaw hooks enable|disable NAME` records the hook in openclaw.json, as OpenClaw does
    cfg = os.path.join(os.environ.get("OPENCLAW_STATE_DIR") or os.path.join(os.environ["HOME"], ".openclaw"), "openclaw.json")
    if a[:1] == ["hooks"] and a[1:2] in (["enable"], ["disable"]):
        doc = json.load(open(cfg)) if os.path.exists(cfg) else {{}}
        entries = doc.setdefault("hooks", {{}}).setdefault("internal", {{}}).setdefault("entries", {{}})
        entries.setdefault(a[2], {{}})["enabled"] = a[1] == "enable"
        os.makedirs(os.path.dirname(cfg), exist_ok=True)
        json.dump(doc, open(cfg, "w"), indent=2)
        state["hooks"] = [h for h in state.get("hooks", []) if h != a[2]] + ([a[2]] if a[1] == "enable" else [])
        if not state["hooks"]: del state["hooks"]
elif name == "pi":
    if a == ["--version"]: print("0.75.1")
    elif a[:1] == ["install"]: state["package"] = a[1]
    elif a[:1] == ["list"]: print("User packages:\n  " + state.get("package", "(none)"))
    elif a[:1] == ["remove"]:
        if state.get("package") != a[1]: absent("No matching package found for " + a[1])
        del state["package"]
save()
"""


@pytest.fixture
def fakes(tmp_path: Path) -> Path:
    """Fake agent CLIs on PATH; returns the state dir holding calls.jsonl."""
    bindir = tmp_path / "fakebin"
    state = tmp_path / "fakestate"
    bindir.mkdir()
    state.mkdir()
    for name in CLIS:
        exe = bindir / name
        exe.write_text(FAKE.format(python=sys.executable))
        exe.chmod(0o755)
    return state


def fake_env(state: Path | None) -> dict[str, str]:
    path = "/usr/bin:/bin"
    if state is not None:
        path = f"{state.parent / 'fakebin'}:{path}"
    return {"PATH": path, "FAKE_STATE": str(state or "")}


def funes(*args: str, state: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return as_text(run_cli("funes", *args, env={**fake_env(state), **env}))


def calls(state: Path) -> list[dict[str, Any]]:
    p = state / "calls.jsonl"
    return [json.loads(x) for x in p.read_text().splitlines()] if p.exists() else []


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file (bytes) and directory (None) under root, with permission bits."""
    out: dict[str, bytes | None] = {}
    for p in sorted(root.rglob("*")):
        key = f"{p.relative_to(root)} {oct(p.stat().st_mode & 0o777)}"
        out[key] = None if p.is_dir() else p.read_bytes()
    return out


USER_CODEX_HOOKS = """{
    "description": "my hooks",
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "date"}]}]
    }
}
"""
USER_HERMES_CONFIG = """# hermes settings — hand written
model:
  default: gpt-5   # the good one
hooks:
  post_llm_call:
    - command: "~/bin/ping.sh"   # tell me
      timeout: 5
  pre_tool_call:
  - command: ~/bin/guard.sh
    matcher: terminal

# servers I use
mcp_servers:
  fs:
    command: npx
    args: ["-y", "@mcp/fs", "/tmp"]
display:
  skin: mono
"""
USER_ALLOWLIST = """{"approvals": [{"event": "post_llm_call", "command": "~/bin/ping.sh"}], "version": 1}
"""


USER_GEMINI = """{
\t"theme": "GitHub",
\t"hooksConfig": {"enabled": true},
\t"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"name": "guard", "type": "command", "command": "~/bin/guard.sh"}]}]},
\t"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@mcp/fs"]}},
\t"note": "caf\u00e9 \u2713 gemini"
}"""
USER_VSCODE_MCP = (
    '{"mcpServers":{"github":{"command":"gh-mcp","args":[],"disabled":true,"alwaysAllow":[]}}}'
)
VSCODE = ".config/Code/User/globalStorage"


def seed(home: Path) -> None:
    """Each agent's config with content of the user's own."""
    files = {
        ".claude/settings.json": '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "afplay done.aiff"}]}]}}\n',
        ".claude.json": '{"mcpServers": {"other": {"command": "x"}}}\n',
        ".codex/hooks.json": USER_CODEX_HOOKS,
        ".codex/config.toml": '[features]\nhooks = true\n\n[mcp_servers.other]\ncommand = "x"\n',
        ".codex/hooks/mine.sh": "#!/bin/sh\necho mine\n",
        ".hermes/config.yaml": USER_HERMES_CONFIG,
        ".hermes/shell-hooks-allowlist.json": USER_ALLOWLIST,
        ".hermes/hooks/ping.sh": "#!/bin/sh\n",
        ".pi/agent/settings.json": '{"packages": ["npm:@me/pi-thing"]}\n',
        ".funes/integrations/README.mine": "not funes' file\n",
        ".gemini/settings.json": USER_GEMINI,
        ".qwen/settings.json": USER_GEMINI.replace("gemini", "qwen"),
        ".copilot/mcp-config.json": '{"mcpServers":{"gh":{"type":"local","command":"gh-mcp","tools":["*"]}}}',
        ".copilot/hooks/mine.json": '{"version": 1, "hooks": {"sessionEnd": [{"type": "command", "bash": "say bye"}]}}\n',
        ".cursor/mcp.json": '{\n  "mcpServers": {\n    "docs": {"url": "https://docs.example/mcp"}\n  }\n}\n',
        ".cursor/hooks.json": '{\n    "version": 1,\n    "hooks": {"stop": [{"command": "./hooks/ding.sh"}],\n              "afterFileEdit": [{"command": "prettier"}]}\n}',
        ".config/opencode/opencode.json": '{"$schema": "https://opencode.ai/config.json", "theme": "tokyonight"}\n',
        ".config/opencode/plugins/mine.js": "export const Mine = async () => ({})\n",
        ".openclaw/openclaw.json": '{\n  "hooks": {"internal": {"enabled": true, "entries": {"session-memory": {"enabled": true}}}}\n}\n',
        ".openclaw/hooks/mine/HOOK.md": "---\nname: mine\n---\n",
        ".omp/agent/extensions/mine.ts": "export default function (pi) {}\n",
        f"{VSCODE}/saoudrizwan.claude-dev/settings/cline_mcp_settings.json": USER_VSCODE_MCP,
        f"{VSCODE}/rooveterinaryinc.roo-cline/settings/mcp_settings.json": USER_VSCODE_MCP,
        f"{VSCODE}/kilocode.kilo-code/settings/mcp_settings.json": USER_VSCODE_MCP,
    }
    for rel, text in files.items():
        p = home / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


# ---------------------------------------------------------------------------- add / remove


@pytest.mark.parametrize("agent", AGENTS)
def test_add_then_remove_leaves_home_byte_identical(
    agent: str, private_home: Path, fakes: Path
) -> None:
    seed(private_home)
    before = snapshot(private_home)
    added = funes("add", agent, state=fakes)
    assert added.returncode == 0, added.stderr
    assert snapshot(private_home) != before  # something was installed
    removed = funes("remove", agent, state=fakes)
    assert removed.returncode == 0, removed.stderr
    assert snapshot(private_home) == before
    assert (
        not (fakes / f"{agent}.json").exists()
        or json.loads((fakes / f"{agent}.json").read_text()) == {}
    )


@pytest.mark.parametrize("agent", AGENTS)
def test_add_twice_changes_nothing_and_does_not_reregister(
    agent: str, private_home: Path, fakes: Path
) -> None:
    seed(private_home)
    assert funes("add", agent, state=fakes).returncode == 0
    first = snapshot(private_home)
    n = len(calls(fakes))
    again = funes("add", agent, state=fakes)
    assert again.returncode == 0, again.stderr
    assert snapshot(private_home) == first
    queries = {("mcp", "get"), ("list",), ("--version",)}
    later = [c["argv"] for c in calls(fakes)[n:]]
    assert all(tuple(a[:2]) in queries or tuple(a[:1]) in queries for a in later), later
    assert "unchanged" in again.stdout or "already" in again.stdout


@pytest.mark.parametrize("agent", AGENTS)
def test_remove_when_nothing_installed_is_quiet_and_exit_0(
    agent: str, private_home: Path, fakes: Path
) -> None:
    seed(private_home)
    before = snapshot(private_home)
    out = funes("remove", agent, state=fakes)
    assert out.returncode == 0, out.stderr
    assert snapshot(private_home) == before


def test_claude_registers_plugin_and_user_scope_mcp(private_home: Path, fakes: Path) -> None:
    out = funes("add", "claude", "--memory", str(private_home / "mem"), state=fakes)
    assert out.returncode == 0, out.stderr
    argvs = [c["argv"] for c in calls(fakes) if c["cli"] == "claude"]
    root = private_home / ".funes/integrations/claude-plugin"
    assert ["plugin", "marketplace", "add", str(root)] in argvs
    assert ["plugin", "install", "funes@huggingface"] in argvs
    mem = str(private_home / "mem")
    assert ["mcp", "add", "funes", "-s", "user", "--", FUNES, "mcp", "--memory", mem] in argvs
    hooks = json.loads((root / "funes/hooks/hooks.json").read_text())
    assert list(hooks["hooks"]) == ["Stop", "SessionEnd"]
    hook = hooks["hooks"]["Stop"][0]["hooks"][0]
    assert hook["command"] == (
        f'bash "${{CLAUDE_PLUGIN_ROOT}}/scripts/funes-index.sh" "claude" --funes "{FUNES}"'
        f' --memory "{mem}"'
    )
    assert (hook["type"], hook["timeout"]) == ("command", 15)
    market = json.loads((root / ".claude-plugin/marketplace.json").read_text())
    assert market["name"] == "huggingface" and market["plugins"][0]["source"] == "./funes"
    script = root / "funes/scripts/funes-index.sh"
    assert script.stat().st_mode & 0o777 == 0o755


def test_codex_merge_keeps_user_groups_and_appends_funes_stop(
    private_home: Path, fakes: Path
) -> None:
    seed(private_home)
    assert funes("add", "codex", state=fakes).returncode == 0
    doc = json.loads((private_home / ".codex/hooks.json").read_text())
    assert doc["description"] == "my hooks"
    stop = doc["hooks"]["Stop"]
    assert stop[0] == {"hooks": [{"type": "command", "command": "say done"}]}
    script = private_home / ".codex/hooks/funes-index.sh"
    assert stop[1]["hooks"][0]["command"] == f'bash "{script}" "codex" --funes "{FUNES}"'
    assert list(doc["hooks"]) == ["Stop", "SessionStart"]
    assert ["mcp", "add", "funes", "--", FUNES, "mcp"] in [c["argv"] for c in calls(fakes)]


def test_hermes_keeps_comments_and_approves_each_hook(private_home: Path, fakes: Path) -> None:
    seed(private_home)
    assert funes("add", "hermes", state=fakes).returncode == 0
    text = (private_home / ".hermes/config.yaml").read_text()
    assert text.startswith("# hermes settings — hand written\n")
    assert '    - command: "~/bin/ping.sh"   # tell me\n' in text
    import yaml

    doc = yaml.safe_load(text)
    cmd = f'bash "{private_home}/.hermes/hooks/funes-index.sh" "hermes" --funes "{FUNES}"'
    assert doc["hooks"]["post_llm_call"] == [
        {"command": "~/bin/ping.sh", "timeout": 5},
        {"command": cmd, "timeout": 30},
    ]
    assert doc["hooks"]["on_session_finalize"] == [{"command": cmd, "timeout": 30}]
    assert doc["mcp_servers"]["funes"] == {"command": FUNES, "args": ["mcp"]}
    assert doc["mcp_servers"]["fs"]["command"] == "npx"
    allow = json.loads((private_home / ".hermes/shell-hooks-allowlist.json").read_text())
    assert allow["version"] == 1
    assert allow["approvals"] == [
        {"event": "post_llm_call", "command": "~/bin/ping.sh"},
        {"event": "post_llm_call", "command": cmd},
        {"event": "on_session_finalize", "command": cmd},
    ]
    assert calls(fakes) == []  # hermes' own mutators would rewrite config.yaml: not run


def test_pi_extension_files_and_install(private_home: Path, fakes: Path) -> None:
    assert funes("add", "pi", state=fakes).returncode == 0
    root = private_home / ".funes/integrations/pi"
    pkg = json.loads((root / "package.json").read_text())
    assert pkg["name"] == "funes-pi" and pkg["pi"] == {"extensions": ["./index.ts"]}
    assert (root / "funes-bin").read_text() == FUNES + "\n"
    assert not (root / "memory").exists()
    ts = (root / "index.ts").read_text()
    assert '"agent_end"' in ts and 'name: "recall"' in ts and 'name: "get"' in ts
    assert (root / "scripts/funes-index.sh").read_bytes() == (
        REPO / "hooks/funes-index.sh"
    ).read_bytes()
    assert ["install", str(root)] in [c["argv"] for c in calls(fakes)]


def test_funes_bin_env_is_what_gets_recorded(private_home: Path, fakes: Path) -> None:
    out = funes("add", "codex", state=fakes, FUNES_BIN="/opt/funes/bin/funes")
    assert out.returncode == 0
    assert '--funes \\"/opt/funes/bin/funes\\"' in (private_home / ".codex/hooks.json").read_text()


# ---------------------------------------------------------------------------- malformed config


def test_malformed_codex_hooks_left_untouched_with_block_to_merge(
    private_home: Path, fakes: Path
) -> None:
    p = private_home / ".codex/hooks.json"
    p.parent.mkdir(parents=True)
    p.write_text('{"hooks": {"Stop": [}\n')
    out = funes("add", "codex", state=fakes)
    assert out.returncode == 1
    assert p.read_text() == '{"hooks": {"Stop": [}\n'
    assert "funes: ~/.codex/hooks.json: " in out.stderr and "not valid JSON" in out.stderr
    assert '"Stop"' in out.stderr and "funes-index.sh" in out.stderr  # the manual block
    removed = funes("remove", "codex", state=fakes)
    assert removed.returncode == 1 and p.read_text() == '{"hooks": {"Stop": [}\n'


@pytest.mark.parametrize(
    "name,text",
    [
        ("config.yaml", "hooks:\n  post_llm_call: [unclosed\n"),
        ("config.yaml", "- just\n- a list\n"),
        ("config.yaml", "hooks: {post_llm_call: [{command: x}]}\n"),
        ("shell-hooks-allowlist.json", "{approvals: nope"),
    ],
)
def test_malformed_hermes_files_are_left_untouched(
    name: str, text: str, private_home: Path, fakes: Path
) -> None:
    seed(private_home)
    (private_home / ".hermes" / name).write_text(text)
    before = snapshot(private_home)
    out = funes("add", "hermes", state=fakes)
    assert out.returncode == 1
    after = snapshot(private_home)
    # The user's files are as they were; only funes' own hook script (and what it sources) went in.
    ours = ("funes-index.sh", "funes-hook-common.sh")
    assert {k: v for k, v in after.items() if not any(n in k for n in ours)} == before
    assert out.stderr.startswith("funes: ~/.hermes/")
    assert "untouched" in out.stderr
    # What is printed for pasting by hand: both halves, naming a script that exists, and once
    # pasted into the two files, `funes add hermes` finds nothing left to do.
    config = out.stderr.split("in ~/.hermes/config.yaml:\n", 1)[1].split("\nand in ", 1)[0]
    allow = out.stderr.split("has not approved):\n", 1)[1]
    scripts = {Path(c["command"].split('"')[1]) for c in json.loads(allow)["approvals"]}
    assert scripts == {private_home / ".hermes/hooks/funes-index.sh"}
    assert all(s.is_file() for s in scripts)
    (private_home / ".hermes/config.yaml").write_text(config + "\n")
    (private_home / ".hermes/shell-hooks-allowlist.json").write_text(allow + "\n")
    again = funes("add", "hermes", state=fakes)
    assert again.returncode == 0, again.stderr
    assert "mcp_servers.funes in ~/.hermes/config.yaml, unchanged" in again.stdout
    assert "hook approvals in ~/.hermes/shell-hooks-allowlist.json, unchanged" in again.stdout


# ---------------------------------------------------------------------------- missing CLI


@pytest.mark.parametrize(
    "agent,expect",
    [
        ("claude", "claude mcp add funes -s user -- "),
        ("codex", "codex mcp add funes -- "),
        ("pi", "pi install "),
    ],
)
def test_missing_cli_prints_manual_commands_and_exits_0(
    agent: str, expect: str, private_home: Path
) -> None:
    out = funes("add", agent, state=None)
    assert out.returncode == 0, out.stderr
    assert f"{agent} is not on PATH" in out.stdout
    assert expect in out.stdout
    out = funes("remove", agent, state=None)
    assert out.returncode == 0
    assert f"{agent} is not on PATH" in out.stdout


def test_first_index_is_skipped_off_a_terminal_with_a_note(private_home: Path, fakes: Path) -> None:
    session = private_home / ".codex/sessions/2026/11/30/rollout-x.jsonl"
    session.parent.mkdir(parents=True)
    session.write_text("")
    out = funes("add", "codex", state=fakes)
    assert (
        "not a terminal: skipped the first index; run `funes index --harness codex`" in out.stdout
    )
    out = funes("add", "codex", "--no-index", state=fakes)
    assert "skipped the first index (--no-index)" in out.stdout


def test_shipped_hook_script_is_the_canonical_one() -> None:
    from importlib import resources

    shipped = resources.files("funes.agents").joinpath("hooks/funes-index.sh").read_bytes()
    assert shipped == (REPO / "hooks/funes-index.sh").read_bytes()


def test_remove_takes_any_not_found_wording_once_the_registration_is_gone(
    private_home: Path, fakes: Path
) -> None:
    assert funes("add", "claude", "--no-index", state=fakes).returncode == 0
    # The user removed the server by hand; this claude version words its answer differently.
    st = json.loads((fakes / "claude.json").read_text())
    del st["mcp"]
    (fakes / "claude.json").write_text(json.dumps(st))
    out = funes(
        "remove", "claude", state=fakes, FAKE_ABSENT_MCP='No MCP server found with name: "funes"'
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "failed" not in out.stdout + out.stderr
    assert not (private_home / ".funes").exists() or not any(
        (private_home / ".funes").rglob("*.json")
    )


def test_remove_still_fails_when_the_agent_keeps_the_registration(
    private_home: Path, fakes: Path
) -> None:
    assert funes("add", "claude", "--no-index", state=fakes).returncode == 0
    out = funes("remove", "claude", state=fakes, FAKE_REMOVE_FAILS="not found: config is locked")
    assert out.returncode == 1
    assert "`claude mcp remove funes -s user` failed (exit 1): not found: config is locked" in (
        out.stdout + out.stderr
    )


def test_add_offers_a_first_index_only_when_sessions_are_pending(
    private_home: Path, fakes: Path
) -> None:
    session = private_home / ".codex/sessions/2026/11/30/rollout-y.jsonl"
    session.parent.mkdir(parents=True)
    session.write_text(
        '{"timestamp":"2026-11-30T08:00:00.000Z","type":"session_meta","payload":{"id":"y","cwd":"/w"}}\n'
        '{"timestamp":"2026-11-30T08:00:01.000Z","type":"response_item","payload":{"type":"message",'
        '"role":"user","content":[{"type":"input_text","text":"add a health route"}]}}\n'
    )
    assert "not a terminal: skipped the first index" in funes("add", "codex", state=fakes).stdout
    r = funes("index", "--harness", "codex", "--no-embed", state=fakes)
    assert r.returncode == 0, r.stderr
    out = funes("add", "codex", state=fakes).stdout
    assert "your codex sessions are already indexed; the hook keeps them current" in out, (
        r.stdout,
        r.stderr,
        out,
    )
    assert "first index" not in out
