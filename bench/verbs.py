"""The session verbs and the HTTP MCP server at 20k chunks: cold whole-process CPU of
`funes sessions`, `funes scan`, ranged `funes get` and `funes sketch` (first and cached), and
warm recall latency over `funes mcp --http` from a second client while a first is connected.

    .venv/bin/python -m bench verbs [--quick]

The memory is bench/recall.py's: a synth history cut to 20,000 chunks with random unit vectors
(the sketch's choice costs the same on any vectors). Scan, get and sketch read the session
with the most chunks. Each cold call is a new interpreter (`python -m funes.cli.main …`);
CPU is user + system of the child, the steadier figure on a shared machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # `python bench/verbs.py`: import as the bench package
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import os
import shutil
import socket
import subprocess
import time
from collections import Counter
from typing import Any

from bench._common import ROOT, Context, loadavg, log, queries, summary_ms
from bench.recall import _children_cpu, build_env, synth_memory


def cold_cpu(argv: list[str], runs: int, before: Any = None) -> dict[str, Any]:
    """Wall and CPU time of ``funes ARGV`` as new processes; one untimed call first (the OS
    file cache), ``before()`` run ahead of each call (to drop a cache)."""
    env = build_env(ROOT)
    wall: list[float] = []
    cpu: list[float] = []
    for i in range(runs + 1):
        if before is not None:
            before()
        t, c = time.perf_counter(), _children_cpu()
        subprocess.run(
            [sys.executable, "-m", "funes.cli.main", *argv], env=env, cwd=ROOT,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            check=True,
        )  # fmt: skip
        if i:
            wall.append(time.perf_counter() - t)
            cpu.append(_children_cpu() - c)
    return {**summary_ms(wall), "cpu_p50_ms": summary_ms(cpu)["p50_ms"]}


def http_recall(path: Path, texts: list[str], runs: int) -> dict[str, Any]:
    """Warm recall latency over `funes mcp --http`, measured from a second client while a
    first stays connected (the server loaded its models once, at start)."""
    import anyio
    from mcp import Client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = build_env(ROOT)
    proc = subprocess.Popen(
        [sys.executable, "-m", "funes.cli.main", "mcp", "--http", "--port", str(port),
         "--memory", str(path)],
        env=env, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("funes mcp --http did not start") from None
                time.sleep(0.2)

        def server_cpu() -> float:
            """User + system seconds the server process has used so far (Linux /proc)."""
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

        cpu: list[float] = []

        async def measure() -> list[float]:
            async with Client(url, read_timeout_seconds=300) as first:
                await first.call_tool("recall", {"query": texts[0]})  # waits for the warm-up
                async with Client(url, read_timeout_seconds=300) as second:
                    for q in texts[:2]:
                        await second.call_tool("recall", {"query": q})
                    times = []
                    for i in range(runs):
                        q = texts[i % len(texts)]
                        t, c = time.perf_counter(), server_cpu()
                        r = await second.call_tool("recall", {"query": q})
                        times.append(time.perf_counter() - t)
                        cpu.append(server_cpu() - c)
                        if r.is_error:
                            raise SystemExit(f"recall over HTTP failed: {r.content}")
                    return times

        wall = summary_ms(anyio.run(measure))
        return {**wall, "server_cpu_p50_ms": summary_ms(cpu)["p50_ms"]}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def run(ctx: Context) -> dict[str, Any]:
    from funes.store import open_memory

    path = synth_memory(ctx, 20_000)
    t = open_memory(path).rows(columns=("session_id",)).column("session_id").to_pylist()
    session, chunks = Counter(t).most_common(1)[0]
    runs = 3 if ctx.quick else 7
    home = Path(build_env(ROOT)["FUNES_HOME"])
    cache = home / "cache" / "sketch"

    def drop_cache() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    mem = ["--memory", str(path)]
    load0 = loadavg()
    out: dict[str, Any] = {
        "memory": "20,000 synth chunks, random unit vectors",
        "session": {"id": session, "chunks": chunks},
    }
    calls = {
        "sessions": (["sessions", *mem], None),
        "scan": (["scan", "error", session, *mem], None),
        "get_range": (["get", session, "--from", "0", "--to", "40", *mem], None),
        "sketch_first": (["sketch", session, *mem], drop_cache),
        "sketch_cached": (["sketch", session, *mem], None),
    }
    for name, (argv, before) in calls.items():
        out[name] = cold_cpu(argv, runs, before)
        log(f"verbs {name}: {out[name]}")
    texts = [q["query"] for q in queries()]
    out["mcp_http_recall_second_client"] = http_recall(path, texts, 10 if ctx.quick else 31)
    log(
        f"verbs MCP over HTTP, warm recall from a second client: {out['mcp_http_recall_second_client']}"
    )
    out["load"] = {"start": load0, "end": loadavg()}
    return out


if __name__ == "__main__":
    from bench.__main__ import main

    raise SystemExit(main(["verbs", *sys.argv[1:]]))
