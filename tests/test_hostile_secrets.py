"""The secret half of the hostile-transcript fixture (issue 17): every kind of secret that leaked
in the probe — and a fake of every detector in the table — in prose, tool input, env dumps,
config files and curl output. Indexed, then every byte of the memory directory and every output
of recall, get, funes-query and the MCP tools is searched: no secret value anywhere. The same
transcript written without redaction is masked when served, also under a redaction stamp made
with older rules."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, write_jsonl
from test_scrub import bench

from funes.secrets import RULES_VERSION

SID = "0057113e-0000-4000-8000-000000000017"


hostile_values = bench.hostile_values


def test_every_hostile_kind_is_redacted_in_each_of_the_five_places() -> None:
    for seed in (17, 18, 19):
        missed = [
            f"{kind}: {place}"
            for kind, places in bench.hostile_recall(seed).items()
            for place, ok in places.items()
            if not ok
        ]
        assert missed == []


def hostile_session(root: Path, seed: int = 17) -> tuple[Path, dict[str, str]]:
    """A Claude Code session with every hostile value in each of the five places; returns its
    path and {value: kind} (table fakes included)."""
    rng = random.Random(seed)
    v = hostile_values(rng)
    recs: list[dict[str, Any]] = []
    parent: str | None = None

    def add(role: str, content: Any) -> None:
        nonlocal parent
        n = len(recs)
        uuid = f"{SID[:8]}-turn-{n:04d}"
        recs.append({"type": role, "uuid": uuid, "parentUuid": parent, "sessionId": SID,
                     "timestamp": f"2026-11-30T{n // 60 % 24:02d}:{n % 60:02d}:00.000Z",
                     "cwd": "/home/ana/shop", "message": {"role": role, "content": content}})  # fmt: skip
        parent = uuid

    def tool(name: str, command: str, output: str) -> None:
        tid = f"toolu_{len(recs)}"
        add(
            "assistant",
            [{"type": "tool_use", "id": tid, "name": name, "input": {"command": command}}],
        )
        add("user", [{"type": "tool_result", "tool_use_id": tid, "content": [{"type": "text", "text": output}]}])  # fmt: skip

    # 1. prose: a user pasting what the dashboard showed them
    add("user", (
        f"Here are the creds for staging. SendGrid {v['sendgrid']} for mail, Mailgun "
        f"{v['mailgun']} as the fallback, the DigitalOcean token {v['digitalocean']}, the "
        f"Shopify admin token {v['shopify']}. Discord bot: {v['discord']}; Telegram bot "
        f"{v['telegram']}. Twilio API key {v['twilio-sk']} and its auth token is "
        f"`{v['twilio-auth']}`. My Stellar seed is {v['stellar']} and the wallet seed phrase is "
        f"{v['mnemonic']} — please don't lose them. Also the old BTC key {v['bitcoin-wif']} and "
        f"the master xprv {v['xprv']}."
    ))  # fmt: skip
    add("assistant", [{"type": "text", "text": (
        f"Noted. I'll use the API key `{v['labelled-backticks']}` for the storefront.\n\n"
        f"**Secret Key**: `{v['labelled-bold']}`\n\nand the user's provided key "
        f"(`{v['labelled-parens']}`) for the webhook."
    )}])  # fmt: skip
    # 2. tool input: commands carrying credentials
    tool("Bash", f"docker login -u ci-bot -p {v['docker-p']} registry.example.com && "
         f"mysql -h db -u app --password={v['password-flag']} -e 'select 1'",
         "Login Succeeded\n1")  # fmt: skip
    # 3. an env dump
    tool("Bash", "env | sort", "\n".join([
        "HOME=/home/ana", f"ANTHROPIC_API_KEY={v['anthropic']}", f"SENDGRID_API_KEY={v['sendgrid']}",
        f"TWILIO_AUTH_TOKEN={v['twilio-auth']}", f"TELEGRAM_BOT_TOKEN={v['telegram']}",
        f"MNEMONIC={v['mnemonic']}", "PATH=/usr/bin:/bin", "TERM=xterm-256color",
    ]))  # fmt: skip
    # 4. config files
    tool("Read", "cat config/production.yaml", (
        f"mail:\n  provider: sendgrid\n  api_key: \"{v['sendgrid']}\"\nshop:\n  token: "
        f"{v['shopify']}\nstorage:\n  sas_url: https://acct.blob.core.windows.net/media?"
        f"sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2027-01-01T00:00:00Z&sig={v['sas-sig']}\n"
        f"wallet:\n  seed: {v['stellar']}\n"
    ))  # fmt: skip
    tool("Read", "cat .docker/config.json", json.dumps(
        {"auths": {"registry.example.com": {"auth": v["basic"]}},
         "discord": {"bot_token": v["discord"]}}, indent=2))  # fmt: skip
    # 5. curl output, headers and body
    tool("Bash", f"curl -v -u admin:{v['curl-user']} https://api.example.com/v1/me",
         f"> GET /v1/me HTTP/1.1\n> Authorization: Basic {v['basic']}\n< HTTP/1.1 200 OK\n"
         + json.dumps({"api_key": v["mailgun"], "token": v["digitalocean"],
                       "sas": f"sv=2022-11-02&sr=b&sig={v['sas-sig']}"}))  # fmt: skip
    values = {value: kind for kind, value in v.items()}
    # and a fake of every detector, each in the place the bench puts it first
    for kind in bench.KINDS:
        value = kind.make(rng)
        ctx = dict(bench._contexts(kind, value, rng))
        add("user", ctx["prose"])
        tool("Bash", ctx["shell"], ctx["tool_output"])
        values[value] = kind.detector
    path = write_jsonl(root / ".claude" / "projects" / "-home-ana-shop" / f"{SID}.jsonl", recs)
    return path, values


def leaks(data: bytes, values: dict[str, str]) -> list[str]:
    """Kinds whose value (or its JSON-escaped form) is in ``data`` — never the value."""
    out = []
    for value, kind in values.items():
        frags = bench.fragments(value) if value.startswith("-----BEGIN") else [value]
        if kind == "mnemonic" or kind == "bip39-mnemonic":
            frags = [" ".join(value.split()[i : i + 4]) for i in range(0, 12, 4)]
        if any(f.encode() in data or json.dumps(f)[1:-1].encode() in data for f in frags):
            out.append(kind)
    return out


def dir_leaks(root: Path, values: dict[str, str]) -> dict[str, list[str]]:
    return {
        str(f.relative_to(root)): hit
        for f in sorted(root.rglob("*"))
        if f.is_file() and (hit := leaks(f.read_bytes(), values))
    }


QUERIES = ("staging creds SendGrid Mailgun", "docker login registry", "env sort HOME PATH",
           "config production yaml sas_url", "docker config auths", "curl api example v1 me",
           "deploy logs config rotate", "seed phrase wallet Stellar")  # fmt: skip


def everything_served(mem: Path) -> bytes:
    """recall (agent and --json), funes-query, get (agent and human) and the MCP tools."""
    from funes import mcp_server

    out = []
    for q in QUERIES[:3]:
        for extra in ((), ("--json",)):
            r = run_cli("funes", "recall", q, "-k", "30", "--neighbors", "2", "--memory", mem,
                        *extra)  # fmt: skip
            assert r.returncode == 0, r.stderr
            out.append(r.stdout + r.stderr)
    batch = "".join(json.dumps({"query": q, "k": 50, "neighbors": 2}) + "\n" for q in QUERIES)
    r = run_cli("funes-query", "--memory", mem, input=batch)
    assert r.returncode == 0, r.stderr
    out.append(r.stdout + r.stderr)
    for fmt in ("agent", "human"):
        r = run_cli("funes", "get", SID, f"{SID[:8]}-turn-0000", "--window", "1000",
                    "--format", fmt, "--memory", mem)  # fmt: skip
        assert r.returncode == 0, r.stderr
        out.append(r.stdout + r.stderr)
    memories = mcp_server.Memories(str(mem))
    out.append(mcp_server.get(memories, SID, f"{SID[:8]}-turn-0000", 1000).encode())
    for q in QUERIES:
        out.append(mcp_server.recall(memories, q, k=20).encode())
    return b"\n".join(out)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    home = tmp_path_factory.mktemp("hostile-home")
    return hostile_session(home)


def test_every_hostile_value_is_redacted_at_ingest(
    hostile: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    path, values = hostile
    parsed = run_cli("funes-parse", path)
    chunks = run_cli("funes-chunk", input=parsed.stdout)
    assert chunks.returncode == 0, chunks.stderr
    assert leaks(chunks.stdout, values) == []
    # what the fixture holds before redaction: every value, or the test proves nothing
    raw = run_cli("funes-chunk", "--no-redact", input=parsed.stdout).stdout
    assert len(leaks(raw, values)) == len(values)


def test_an_indexed_hostile_transcript_leaves_no_secret_on_disk_or_in_any_output(
    hostile: tuple[Path, dict[str, str]], tmp_path: Path, private_home: Path
) -> None:
    path, values = hostile
    mem = tmp_path / "mem"
    r = run_cli("funes", "index", path, "--yes", "--no-embed", "--memory", mem)
    assert r.returncode == 0, r.stderr
    assert leaks(r.stdout + r.stderr, values) == []
    assert dir_leaks(mem, values) == {}
    out = everything_served(mem)
    assert b"[REDACTED:" in out and b"staging" in out  # the passages are there, masked
    assert leaks(out, values) == []


@pytest.mark.slow  # 10+ s of CPU: .ci/run runs it, bin/test does not
def test_an_unredacted_copy_is_masked_when_served_also_under_an_old_rules_stamp(
    hostile: tuple[Path, dict[str, str]], tmp_path: Path, private_home: Path
) -> None:
    path, values = hostile
    mem = tmp_path / "mem"
    chunks = run_cli("funes-chunk", "--no-redact", input=run_cli("funes-parse", path).stdout)
    assert run_cli("funes-write", "--memory", mem, input=chunks.stdout).returncode == 0
    # the lexical index hashes redacted text even for these rows
    assert dir_leaks(mem / "lexical", values) == {}
    assert leaks(everything_served(mem), values) == []
    # an older funes redacted (and stamped) it with rules that missed these kinds
    old = Path(shutil.copytree(mem, tmp_path / "old"))
    stamp = {"format": 1, "ingest": {"detectors": "builtin", "rules": "0" * 16}}
    (old / "redaction.json").write_text(json.dumps(stamp))
    assert stamp["ingest"]["rules"] != RULES_VERSION
    assert leaks(everything_served(old), values) == []
