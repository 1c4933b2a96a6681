"""`funes status` and the MCP `status` tool give one answer for a memory: a Hub memory (the
loopback Hub of tests/hubserver) is read from this machine's cached copy of it, and both say so
rather than showing the copy as if it were a local memory."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
from hubserver.helpers import BIN, Machine, hub, turn
from hubserver.server import HubServer
from mcp import Client
from mcp.client.stdio import StdioServerParameters

__all__ = ["hub"]


def mcp_status(machine: Machine, memory: str, **env: str) -> tuple[str, bool]:
    """The `status` tool of `funes mcp` run on ``machine`` (its HOME, FUNES_HOME and Hub)."""

    async def ask() -> tuple[str, bool]:
        params = StdioServerParameters(
            command=str(BIN / "funes"), args=["mcp"], env={**machine.env, **env}
        )
        async with Client(params, read_timeout_seconds=120) as client:
            result = await client.call_tool("status", {"memory": memory})
        text = "".join(c.text for c in result.content if c.type == "text")
        return text, bool(result.is_error)

    return anyio.run(ask)


def test_cli_and_mcp_status_agree_and_both_say_a_remote_is_a_cached_copy(
    hub: HubServer, tmp_path: Path
) -> None:
    pub = Machine(tmp_path / "pub", hub)
    pub.index(
        [
            turn("s1", 0, "why does the bandicoot importer drop rows?", role="user"),
            turn("s1", 1, "The bandicoot importer drops rows whose timestamp has no zone."),
            turn("s2", 0, "and the wombat exporter?", role="user"),
        ]
    )
    r = pub.funes("push", "ana/kb", "--create", "--yes")
    assert r.returncode == 0, r.stderr
    head = hub.repo("ana/kb").commits[-1].oid
    reader = Machine(tmp_path / "bob", hub, user="reader")  # never indexed anything itself

    cli = reader.funes("status", "ana/kb")
    assert cli.returncode == 0, cli.stderr
    lines = cli.stdout.splitlines()
    assert lines[0] == "memory: hf://datasets/ana/kb"
    assert lines[1].startswith(
        f"cached copy: commit {head[:8]} (read from this machine, not the Hub"
    )
    assert lines[2:4] == ["chunks: 3", "sessions: 2"]
    # nothing of a local memory's status: no agents, no pending indexing, no models, no disk
    assert not any(ln.startswith(("embedding model:", "disk:", "pending indexing")) for ln in lines)

    text, is_error = mcp_status(reader, "ana/kb")
    assert not is_error, text
    assert same(text) == same(cli.stdout)

    js = reader.funes("status", "ana/kb", "--json")
    assert js.returncode == 0, js.stderr
    doc = json.loads(js.stdout)
    assert doc["cached_copy"]["commit"] == head and doc["chunks"] == 3

    # Offline, the copy is all there is: both say the Hub is unreachable, and which copy is read.
    hub.stop()
    cli = reader.funes("status", "ana/kb", env={"FUNES_HUB_TTL": "0"})
    assert cli.returncode == 0, cli.stderr
    lines = cli.stdout.splitlines()
    assert lines[0].startswith(
        f"remote hf://datasets/ana/kb unreachable — recalling from its cached copy (commit {head[:8]}"
    )
    assert lines[1] == "memory: hf://datasets/ana/kb"
    assert lines[2].startswith(f"cached copy: commit {head[:8]} (read from this machine, not")
    text, is_error = mcp_status(reader, "ana/kb", FUNES_HUB_TTL="0")
    assert not is_error, text
    assert same(text) == same(cli.stdout)


def same(text: str) -> str:
    """``text`` without how long ago the Hub was asked (the two answers come seconds apart)."""
    return re.sub(r"UTC, (just now|\d+ \w+ ago)\)", "UTC, …)", text)
