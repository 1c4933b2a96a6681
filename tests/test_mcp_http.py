"""`funes mcp --http`: one streamable HTTP server on loopback for every agent of the machine —
raw JSON-RPC over HTTP and the MCP SDK's own client, as agents reach it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import BIN, run_cli
from mcp import Client

pytestmark = pytest.mark.slow  # the server loads the real embedder (10–20 s on loaded cores)

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(samples_memory: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """`funes mcp --http` on a free port over the samples memory; its stderr is kept."""
    port = free_port()
    err = tmp_path_factory.mktemp("http") / "stderr"
    keep = ("HOME", "FUNES_HOME", "FUNES_CACHE_DIR", "PATH")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    with open(err, "wb") as f:
        proc = subprocess.Popen(
            [str(BIN / "funes"), "mcp", "--http", "--port", str(port), "--memory",
             str(samples_memory)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=f, env=env,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 120
    while b"serving" not in err.read_bytes() or not _answers(port):
        assert proc.poll() is None, err.read_text()
        assert time.monotonic() < deadline, err.read_text()
        time.sleep(0.2)
    yield {"port": port, "url": url, "stderr": err, "proc": proc, "memory": samples_memory}
    proc.terminate()
    proc.wait(timeout=30)


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@dataclass
class Reply:
    status_code: int
    headers: dict[str, str]
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


def rpc(url: str, method: str, params: dict | None = None, **headers: str) -> Reply:
    """One JSON-RPC request POSTed as an agent's HTTP client sends it (stdlib only)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={**HEADERS, **headers}, method="POST"
    )
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            hdrs = {k.lower(): v for k, v in r.headers.items()}
            return Reply(r.status, hdrs, r.read().decode())
    except urllib.error.HTTPError as e:
        return Reply(e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode())


INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"},
}


def test_answers_initialize_tools_list_and_recall_as_plain_json(server: dict) -> None:
    r = rpc(server["url"], "initialize", INIT)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    assert r.json()["result"]["serverInfo"]["name"] == "funes"
    assert "mcp-session-id" not in r.headers  # stateless: no session to keep
    tools = rpc(server["url"], "tools/list").json()["result"]["tools"]
    assert {t["name"] for t in tools} == {"recall", "sessions", "scan", "sketch", "get", "status"}
    call = {"name": "recall", "arguments": {"query": "why a byte budget for the tile cache"}}
    res = rpc(server["url"], "tools/call", call).json()["result"]
    text = res["content"][0]["text"]
    assert not res["isError"] and "→ get 5f0c2d1e-8a7b-4c3d-9e2f-1a2b3c4d5e6f" in text
    bad = rpc(server["url"], "tools/call", {"name": "recall", "arguments": {"query": " "}})
    assert bad.json()["result"]["isError"] is True


def test_refuses_a_foreign_host_or_origin(server: dict) -> None:
    port = server["port"]
    r = rpc(server["url"], "tools/list", Host=f"evil.example:{port}")
    assert r.status_code == 421 and "result" not in r.text
    r = rpc(server["url"], "tools/list", Origin="http://evil.example")
    assert r.status_code == 403 and "result" not in r.text
    r = rpc(
        server["url"], "tools/list", Host=f"localhost:{port}", Origin=f"http://localhost:{port}"
    )
    assert r.status_code == 200 and r.json()["result"]["tools"]


def test_two_clients_share_one_loaded_model(server: dict) -> None:
    async def client(name: str, out: dict[str, Any], ready: anyio.Event) -> None:
        async with Client(server["url"]) as c:
            if name == "second":
                await ready.wait()  # the first is connected and has recalled
            r = await c.call_tool("recall", {"query": "MVT parser count=0 LineTo", "k": 2})
            out[name] = (r.is_error, "".join(x.text for x in r.content if x.type == "text"))
            if name == "first":
                ready.set()
                await anyio.sleep(1)  # still connected while the second recalls

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        ready = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(client, "first", out, ready)
            tg.start_soon(client, "second", out, ready)
        return out

    out = anyio.run(scenario)
    for name in ("first", "second"):
        is_error, text = out[name]
        assert not is_error and "turn=" not in text and "→ get " in text, (name, text)
    log = server["stderr"].read_text()
    assert log.count("funes mcp: models loaded once for every client") == 1, log
    assert server["proc"].poll() is None


def test_a_second_server_on_the_same_port_is_one_line(server: dict) -> None:
    r = run_cli("funes", "mcp", "--http", "--port", str(server["port"]))
    err = r.stderr.decode()
    assert r.returncode == 1 and err.count("\n") == 1
    assert err.startswith(f"funes: cannot listen on 127.0.0.1:{server['port']}: ")
    r = run_cli("funes", "mcp", "--port", "9000")
    assert r.returncode == 2 and r.stderr.decode().startswith("funes: --port goes with --http")
    assert json.loads(rpc(server["url"], "ping").text)["result"] == {}
