"""Recall latency: warm (a Searcher kept open, as MCP and `funes-query` run) and cold (a
`funes recall` process), at 20k and 100k chunks; and the index hook's return time.

    .venv/bin/python -m bench recall [--quick]

The memories are built from `bench/synth.py` histories (real layouts of the four agents,
eval-dev's sessions re-identified and time-shifted), parsed and chunked by funes, cut to exactly
20,000 / 100,000 chunks, with **random unit vectors** in place of embeddings (embedding 100k
chunks here would take over an hour; the query is still embedded by the real model, and
vector search costs the same on any 384-d vectors). Vector search is flat (funes builds an ANN
index only in `funes optimize`, from 50k vectors). Queries are eval-dev's 31 questions.

"With rerank" uses a stand-in cross-encoder of cross-encoder/ms-marco-MiniLM-L-6-v2's
architecture (int8, 256 tokens — `_common.standin_reranker`): none ships on a registry this
machine reaches, and its latency depends on the architecture, not the weights.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # `python bench/recall.py`: import as the bench package
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import json
import os
import subprocess
import tempfile
import time
from typing import Any

from bench import synth
from bench._common import (
    BIN,
    NOW,
    ROOT,
    Context,
    loadavg,
    log,
    queries,
    standin_reranker,
    summary_ms,
)


def synth_memory(ctx: Context, n_chunks: int) -> Path:
    """A memory of exactly ``n_chunks`` chunks of a synth history, random unit vectors."""

    def build() -> Path:
        import numpy as np

        from funes.chunking import chunk_turns
        from funes.sources import parse
        from funes.store import open_memory

        t0 = time.monotonic()
        home = ctx.tmp / f"synth-home-{n_chunks}"
        synth.build(home, int(n_chunks / synth.CHUNKS_PER_SESSION * 1.25) + 10, seed=0)
        roots = [home / ".claude/projects", home / ".codex/sessions",
                 home / ".pi/agent/sessions", home / ".hermes/state.db"]  # fmt: skip
        chunks = []
        for c in chunk_turns(parse([r for r in roots if r.exists()])):
            chunks.append(c)
            if len(chunks) == n_chunks:
                break
        if len(chunks) < n_chunks:
            raise SystemExit(f"synth history gave {len(chunks)} < {n_chunks} chunks")
        rng = np.random.default_rng(0)
        path = ctx.tmp / f"mem-{n_chunks}"
        mem = open_memory(path, create=True)
        with mem.writer(interactive=False) as w:
            for s in range(0, n_chunks, 10_000):
                batch = chunks[s : s + 10_000]
                v = rng.standard_normal((len(batch), 384)).astype(np.float32)
                v /= np.linalg.norm(v, axis=1, keepdims=True)
                for c, x in zip(batch, v, strict=True):
                    c.vector = x.tolist()
                w.append(batch)
            w.optimize(ann=False)
        log(f"memory of {n_chunks} synth chunks built in {time.monotonic() - t0:.0f} s")
        return path

    path: Path = ctx.once(f"synth-memory-{n_chunks}", build)
    return path


def warm(path: Path, texts: list[str], rerank: bool) -> dict[str, Any]:
    from funes.models import load_embedder, load_reranker
    from funes.retrieval import Query, Searcher
    from funes.store import open_memory

    rr = None
    if rerank:
        os.environ["FUNES_RERANKER"] = str(standin_reranker())
        rr = load_reranker()
    try:
        s = Searcher(open_memory(path), load_embedder(), rr)
        for q in texts[:2]:
            s.search(Query(q), now=NOW)
        times = []
        for q in texts:
            t = time.perf_counter()
            s.search(Query(q), now=NOW)
            times.append(time.perf_counter() - t)
    finally:
        os.environ.pop("FUNES_RERANKER", None)
        from funes.models import reranker

        reranker._loaded.clear()  # later suites (quality) must not see the stand-in as installed
    return summary_ms(times)


def cold(path: Path, texts: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Wall time of `funes recall` processes: new interpreter, models and memory opened from
    disk each time. One untimed call first, so the OS file cache holds the code and model."""
    times = []
    for i, q in enumerate([texts[-1], *texts]):
        t = time.perf_counter()
        subprocess.run(
            [str(BIN / "funes"), "recall", q, "--memory", str(path)],
            env={**os.environ, **env}, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True,
        )  # fmt: skip
        if i:
            times.append(time.perf_counter() - t)
    return summary_ms(times)


def build_env(tree: Path) -> dict[str, str]:
    """Run funes from the source ``tree`` with this interpreter (PYTHONPATH wins over the
    editable install; run with ``cwd=tree`` too, as `python -m` puts the working directory
    first), so two builds compare with the same dependencies and Python."""
    home = Path(tempfile.gettempdir()) / "funes-bench-home"  # no memory of the user's is read
    return {**os.environ, "PYTHONPATH": str(tree), "FUNES_HOME": str(home)}


def _commit(tree: Path) -> str | None:
    r = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True, check=False)  # fmt: skip
    return r.stdout.strip() or None


def cold_commands(
    path: Path, texts: list[str], builds: dict[str, Path], runs: int
) -> dict[str, Any]:
    """Whole-process wall time of `funes recall`, `funes status` and `funes get` (a new
    interpreter each: imports, memory and models from disk), each build's runs interleaved
    with the other's so both see the same load; one untimed warm-up call per command."""
    from funes.store import open_memory

    row = open_memory(path).rows(columns=("session_id", "turn_uuid")).slice(0, 1).to_pylist()[0]
    commands = {
        "recall": lambda i: ["recall", texts[i % len(texts)], "--memory", str(path)],
        "status": lambda i: ["status", "--memory", str(path)],
        "get": lambda i: ["get", row["session_id"], row["turn_uuid"], "--memory", str(path)],
    }
    out: dict[str, Any] = {}
    for name, argv in commands.items():
        times: dict[str, list[float]] = {b: [] for b in builds}
        cpu: dict[str, list[float]] = {b: [] for b in builds}
        for i in range(runs + 1):
            for build, tree in builds.items():
                t, c = time.perf_counter(), _children_cpu()
                subprocess.run(
                    [sys.executable, "-m", "funes.cli.main", *argv(i)], env=build_env(tree),
                    cwd=tree, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE, check=True,
                )  # fmt: skip
                if i:
                    times[build].append(time.perf_counter() - t)
                    cpu[build].append(_children_cpu() - c)
        out[name] = {b: {**summary_ms(ts), "cpu_p50_ms": summary_ms(cpu[b])["p50_ms"]}
                     for b, ts in times.items()}  # fmt: skip
        _ratio(out[name])
        log(f"cold {name}: {out[name]}")
    return out


def mcp_first_recall(path: Path, text: str, builds: dict[str, Path], runs: int,
                     wait_s: float = 3.0) -> dict[str, Any]:  # fmt: skip
    """Time of an agent's first `recall` over MCP asked ``wait_s`` after `initialize`: a new
    `funes mcp` server each run, spawned and driven by the MCP SDK's client."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def once(tree: Path) -> float:
        env = build_env(tree)
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "funes.cli.main", "mcp", "--memory", str(path)],
            env={k: env[k] for k in ("PATH", "HOME", "PYTHONPATH", "FUNES_HOME") if k in env},
            cwd=tree,
        )  # fmt: skip
        async with Client(params, read_timeout_seconds=300) as client:
            await anyio.sleep(wait_s)
            t = time.perf_counter()
            result = await client.call_tool("recall", {"query": text})
            took = time.perf_counter() - t
            if result.is_error or not any(
                "→ get" in getattr(c, "text", "") for c in result.content
            ):
                raise SystemExit(f"MCP recall from {tree} answered no hit")
            return took

    times: dict[str, list[float]] = {b: [] for b in builds}
    for _ in range(runs):
        for build, tree in builds.items():
            times[build].append(anyio.run(once, tree))
    out: dict[str, Any] = {b: summary_ms(ts) for b, ts in times.items()}
    out["wait_after_initialize_s"] = wait_s
    _ratio(out)
    log(f"MCP first recall {wait_s:g} s after initialize: {out}")
    return out


def _children_cpu() -> float:
    """CPU seconds (user + system) of every finished child so far: on a loaded machine the
    CPU a call costs is steadier than its wall time."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _ratio(res: dict[str, Any]) -> None:
    """``ratio``: this build's median wall time over the baseline's (< 1 is faster), and
    ``cpu_ratio`` the same for CPU time, when both builds ran."""
    if "baseline" in res and "this" in res:
        res["ratio"] = round(res["this"]["p50_ms"] / res["baseline"]["p50_ms"], 3)
        if "cpu_p50_ms" in res["this"]:
            res["cpu_ratio"] = round(res["this"]["cpu_p50_ms"] / res["baseline"]["cpu_p50_ms"], 3)


def hook_return(ctx: Context, runs: int) -> dict[str, Any]:
    """Foreground time of hooks/funes-index.sh fed a Claude Code Stop payload (the detached
    worker is pointed at a funes that exits at once, as tests/test_hooks.py does)."""
    home = ctx.tmp / "hook-home"
    (home / "proj").mkdir(parents=True, exist_ok=True)
    fake = home / "fake-funes"
    fake.write_text("#!/bin/sh\necho indexed sessions=0\n")
    fake.chmod(0o755)
    transcript = home / "proj" / "s.jsonl"
    transcript.write_text('{"type":"user","message":{"role":"user","content":"hi"}}\n')
    payload = json.dumps(
        {"session_id": "s", "transcript_path": str(transcript), "cwd": str(home / "proj"),
         "hook_event_name": "Stop", "stop_hook_active": False}
    ).encode()  # fmt: skip
    env = {**os.environ, "HOME": str(home), "FUNES_HOME": str(home / ".funes")}
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(
            ["bash", str(ROOT / "hooks" / "funes-index.sh"), "claude", "--funes", str(fake)],
            input=payload, env=env, capture_output=True, check=True, timeout=30,
        )  # fmt: skip
        times.append(time.perf_counter() - t)
    time.sleep(0.5)  # let the last detached workers finish before the scratch dir goes
    return summary_ms(times)


def run(ctx: Context) -> dict[str, Any]:
    texts = [q["query"] for q in queries()]
    sizes = [20_000] if ctx.quick else [20_000, 100_000]
    rerank_n = 3 if ctx.quick else 12
    out: dict[str, Any] = {
        "vectors": "random unit vectors (query embedded by the real model); flat search",
        "queries": len(texts),
        "reranker": "stand-in MiniLM-L6 cross-encoder, int8, 256 tokens, 30 pairs",
    }
    for n in sizes:
        path = synth_memory(ctx, n)
        res: dict[str, Any] = {"warm": warm(path, texts, rerank=False)}
        log(f"recall {n}: warm {res['warm']}")
        if n == 20_000:
            res["warm_rerank"] = warm(path, texts[:rerank_n], rerank=True)
            log(f"recall {n}: warm + rerank {res['warm_rerank']}")
            res["cold_cli"] = cold(path, texts[: 3 if ctx.quick else 7], {})
            log(f"recall {n}: cold CLI {res['cold_cli']}")
            if not ctx.quick:
                rr = {"FUNES_RERANKER": str(standin_reranker())}
                res["cold_cli_rerank"] = cold(path, texts[:3], rr)
                log(f"recall {n}: cold CLI + rerank {res['cold_cli_rerank']}")
            builds = {"this": ROOT}
            if ctx.baseline is not None:
                builds["baseline"] = ctx.baseline.resolve()
                out["baseline"] = {"tree": str(builds["baseline"]),
                                   "commit": _commit(builds["baseline"])}  # fmt: skip
            out["this_commit"] = _commit(ROOT)
            runs = 3 if ctx.quick else 5
            load0 = loadavg()
            res["cold_process"] = cold_commands(path, texts, builds, runs)
            res["mcp_first_recall"] = mcp_first_recall(path, texts[0], builds, runs)
            out["cold_starts_run"] = {"load_start": load0, "load_end": loadavg()}
        out[str(n)] = res
    out["hook_return"] = hook_return(ctx, 9 if ctx.quick else 21)
    out["hook_return"]["median_ms"] = out["hook_return"]["p50_ms"]
    log(f"hook return {out['hook_return']}")
    return out


if __name__ == "__main__":
    from bench.__main__ import main

    raise SystemExit(main(["recall", *sys.argv[1:]]))
