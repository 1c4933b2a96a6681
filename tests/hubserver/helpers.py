"""Helpers for the hub tests: a per-test server, per-"machine" environments, small sessions
written through the plumbing (`funes-chunk | funes-write`, no embedding: fast)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from hubserver.server import HubServer

BIN = Path(sys.executable).parent
TOKENS = {"ana": "hf_ana_write", "bob": "hf_bob_write", "reader": "hf_reader_readonly"}


@pytest.fixture
def hub() -> Iterator[HubServer]:
    server = HubServer().start()
    server.add_user("ana", TOKENS["ana"], orgs=["team"])
    server.add_user("bob", TOKENS["bob"])
    server.add_user("reader", TOKENS["reader"], orgs=["ana", "team"], role="read")
    try:
        yield server
    finally:
        server.stop()


class Machine:
    """One user's machine: its own HOME, FUNES_HOME and HF cache, talking to ``hub``."""

    def __init__(self, root: Path, hub: HubServer, user: str | None = "ana") -> None:
        self.root = root
        self.hub = hub
        root.mkdir(parents=True, exist_ok=True)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
        self.env.update(
            HOME=str(root),
            FUNES_HOME=str(root / "funes"),
            HF_HOME=str(root / "hf"),
            HF_ENDPOINT=hub.url,
            HF_HUB_DISABLE_TELEMETRY="1",
            HF_HUB_DISABLE_PROGRESS_BARS="1",
        )
        cache = os.environ.get("FUNES_CACHE_DIR")
        if cache:
            self.env["FUNES_CACHE_DIR"] = cache
        if user is not None:
            self.env["HF_TOKEN"] = TOKENS[user]

    def run(self, name: str, *args: str | Path, input: bytes | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
        # in-process (tests/conftest.py run_cli), with this machine's environment alone
        r = run_cli(name, *args, input=input, env={**self.env, **(env or {})}, clear_env=True)
        return r  # type: ignore[return-value]

    def funes(self, *args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
        r = self.run("funes", *args, env=env)
        return subprocess.CompletedProcess(
            r.args, r.returncode, r.stdout.decode(), r.stderr.decode()
        )

    def popen(self, *args: str | Path) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [str(BIN / "funes"), *map(str, args)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
        )

    def index(self, turns: list[dict[str, Any]], memory: Path | None = None) -> dict[str, Any]:
        """Store turns in this machine's memory, unredacted (the gate is what is tested)."""
        data = "".join(json.dumps(t) + "\n" for t in turns).encode()
        c = self.run("funes-chunk", "--no-redact", input=data)
        assert c.returncode == 0, c.stderr
        args = ["--memory", str(memory)] if memory else []
        w = self.run("funes-write", *args, input=c.stdout)
        assert w.returncode == 0, w.stderr
        return json.loads(w.stdout.decode().splitlines()[-1])


def turn(session: str, seq: int, text: str, role: str = "assistant", **kw: Any) -> dict[str, Any]:
    blocks = kw.pop("blocks", None) or [{"type": "text", "text": text}]
    return {
        "kind": "turn",
        "v": 1,
        "harness": "claude_code",
        "session_id": session,
        "turn_uuid": f"{session}-t{seq}",
        "parent_uuid": f"{session}-t{seq - 1}" if seq else None,
        "seq": seq,
        "ts": f"2026-11-{10 + seq % 15:02d}T10:00:00.000Z",
        "role": role,
        "workdir": "-home-ana-app",
        "repo": "ana/app",
        "source_path": f"/home/ana/.claude/projects/app/{session}.jsonl",
        "blocks": blocks,
        **kw,
    }


def remote_table(hub: HubServer, repo_id: str, prefix: str = "") -> Any:
    """The dataset the server holds at the head, opened with lancedb (an Arrow table)."""
    import lancedb

    tmp = Path(tempfile.mkdtemp(prefix="hub-remote-"))
    pre = prefix + "/" if prefix else ""
    for path, data in hub.files(repo_id).items():
        if path.startswith(pre):
            dst = tmp / path[len(pre) :]
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(data)
    return lancedb.connect(str(tmp)).open_table("chunks").to_arrow()


def commit_files(hub: HubServer, repo_id: str, index: int) -> set[str]:
    """The paths a commit added or changed (index into the repo's commits, -1 = head)."""
    commits = hub.repo(repo_id).commits
    c = commits[index]
    parent = next((p for p in commits if p.oid == c.parent), None)
    before = parent.files if parent else {}
    return {p for p, d in c.files.items() if before.get(p) != d}
