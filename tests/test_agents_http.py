"""`funes add AGENT --mcp-http`: the agent is registered with the machine's `funes mcp --http`
URL instead of a stdio server (fake agent CLIs record their argv), and `funes doctor` says
whether anything answers there."""

from __future__ import annotations

import json
from pathlib import Path

from test_agents import calls, fakes, funes  # noqa: F401  (fakes is a fixture)

URL = "http://127.0.0.1:8765/mcp"


def mcp_adds(state: Path, cli: str) -> list[list[str]]:
    return [c["argv"] for c in calls(state) if c["cli"] == cli and c["argv"][:2] == ["mcp", "add"]]


def test_claude_and_codex_register_the_http_url_once(private_home: Path, fakes: Path) -> None:  # noqa: F811
    out = funes("add", "claude", "--mcp-http", "--no-index", state=fakes)
    assert out.returncode == 0, out.stderr
    assert mcp_adds(fakes, "claude") == [
        ["mcp", "add", "--transport", "http", "funes", URL, "-s", "user"]
    ]
    assert funes("add", "claude", "--mcp-http", "--no-index", state=fakes).returncode == 0
    assert len(mcp_adds(fakes, "claude")) == 1  # registered already: not again
    other = "http://localhost:9000/mcp"
    out = funes("add", "codex", "--mcp-http", other, "--no-index", state=fakes)
    assert out.returncode == 0, out.stderr
    assert mcp_adds(fakes, "codex") == [["mcp", "add", "funes", "--url", other]]


def test_hermes_config_names_the_url_and_pi_is_told_it_does_not_apply(
    private_home: Path,
    fakes: Path,  # noqa: F811
) -> None:
    assert funes("add", "hermes", "--mcp-http", "--no-index", state=fakes).returncode == 0
    text = (private_home / ".hermes" / "config.yaml").read_text()
    assert f"mcp_servers:  # added by funes\n  funes:\n    url: '{URL}'\n" in text
    out = funes("add", "pi", "--mcp-http", "--no-index", state=fakes)
    assert out.returncode == 0 and "--mcp-http changes nothing for pi" in out.stdout


def test_a_url_that_is_not_loopback_is_refused(private_home: Path, fakes: Path) -> None:  # noqa: F811
    out = funes("add", "claude", "--mcp-http", "http://example.com:8765/mcp", state=fakes)
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert out.stderr.startswith("funes: --mcp-http must be the loopback URL")
    assert not mcp_adds(fakes, "claude")


def test_doctor_says_when_nothing_answers_at_the_registered_url(
    private_home: Path,
    fakes: Path,  # noqa: F811
) -> None:
    url = "http://127.0.0.1:9/mcp"  # the discard port: nothing listens
    assert funes("add", "claude", "--mcp-http", url, "--no-index", state=fakes).returncode == 0
    out = funes("doctor", "claude", state=fakes)
    assert "  mcp: registered\n" in out.stdout
    assert f"mcp http: nothing answers at {url} — " in out.stdout


def test_agents_wired_by_json_config_get_the_url_in_their_own_shape(
    private_home: Path,
    fakes: Path,  # noqa: F811
) -> None:
    want = {
        "gemini": (".gemini/settings.json", "mcpServers", {"httpUrl": URL}),
        "qwen": (".qwen/settings.json", "mcpServers", {"httpUrl": URL}),
        "cursor": (".cursor/mcp.json", "mcpServers", {"url": URL}),
        "copilot": (".copilot/mcp-config.json", "mcpServers",
                    {"type": "http", "url": URL, "tools": ["*"]}),
        "opencode": (".config/opencode/opencode.json", "mcp",
                     {"type": "remote", "url": URL, "enabled": True}),
    }  # fmt: skip
    for agent, (path, key, entry) in want.items():
        out = funes("add", agent, "--mcp-http", "--no-index", state=fakes)
        assert out.returncode == 0, (agent, out.stderr)
        doc = json.loads((private_home / path).read_text())
        assert doc[key]["funes"] == entry, agent
        doctor = funes("doctor", agent, "--json", state=fakes)
        assert json.loads(doctor.stdout)["agents"][0]["mcp"] is True, agent
