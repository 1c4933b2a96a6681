"""`funes index OWNER/NAME`: agent-trace dataset indexing throughput from the loopback Hub.

    .venv/bin/python -m bench hub-traces [--quick]

A trace dataset of synthetic sessions (bench/parse_formats.py's conversations: prompts,
thinking, tool calls with JSON arguments, tool results; 8 exchanges a session) is published on
the test suite's loopback Hub server (tests/hubserver) as a `refs/convert/parquet` conversion in
several shards. Measured, as a user runs it (a `funes index` process, empty HF cache, new
memory):

- **ingest**: `funes index OWNER/NAME --no-embed` — resolve refs and tree, download the shards,
  parse, chunk (secret redaction on), write and index the text: rows/s, chunks/s, MB downloaded;
- **unchanged**: the same command again — every shard skipped by its convert commit (seconds,
  HTTP requests, bytes downloaded);
- **with embedding** (not with --quick): a smaller dataset indexed end to end, vectors included.

Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import io
import json
import os
import random
import subprocess
import time
from typing import Any

from bench._common import BIN, ROOT, WORK, Context, log

TURNS = 8  # exchanges (user, assistant + tool call, tool result) per session


def shard_bytes(rng: random.Random, first: int, rows: int) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bench.parse_formats import conversation

    sessions, messages = [], []
    for n in range(first, first + rows):
        msgs = []
        for kind, f in conversation(rng, TURNS):
            if kind == "user":
                m: dict[str, Any] = {"role": "user", "content": f["text"]}
            elif kind == "assistant":
                cid, name, args = f["call"]  # type: ignore[misc]
                m = {"role": "assistant", "content": f["text"], "reasoning_content": f["thinking"],
                     "tool_calls": [{"id": cid, "type": "function",
                                     "function": {"name": name, "arguments": json.dumps(args)}}]}  # fmt: skip
            else:
                m = {"role": "tool", "content": f["text"], "tool_call_id": f["call"]}
            msgs.append(json.dumps(m))
        sessions.append(f"bench-{n:06d}")
        messages.append(msgs)
    s = pa.string()
    table = pa.table(
        {
            "session_id": pa.array(sessions, s),
            "messages": pa.array(messages, pa.list_(s)),
            "sent_at": pa.array(["2026-11-01T10:00:00.000Z"] * rows, s),
            "harness": pa.array(["codex"] * rows, s),
            "metadata": pa.array(['{"cwd": "/home/dev/proj"}'] * rows, s),
        }
    )
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def publish(hub: Any, repo: str, rows: int, shards: int, seed: int = 0) -> dict[str, int]:
    rng = random.Random(seed)
    per = -(-rows // shards)
    files = {
        f"default/train/{i:04d}.parquet": shard_bytes(rng, i * per, min(per, rows - i * per))
        for i in range(shards)
    }
    hub.create_repo(repo)
    hub.convert(repo, files)
    return {"rows": rows, "shards": shards, "bytes": sum(map(len, files.values()))}


def _env(root: Path, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(HOME=str(root), FUNES_HOME=str(root / "funes"), HF_HOME=str(root / "hf"),
               HF_ENDPOINT=url, HF_TOKEN="hf_bench", HF_HUB_DISABLE_TELEMETRY="1",
               HF_HUB_DISABLE_PROGRESS_BARS="1",
               FUNES_CACHE_DIR=str(WORK / "model-cache"))  # fmt: skip
    return env


def index(env: dict[str, str], repo: str, *extra: str) -> tuple[float, dict[str, Any]]:
    t = time.perf_counter()
    r = subprocess.run([str(BIN / "funes"), "index", repo, "--json", *extra], env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True)  # fmt: skip
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"funes index {repo} failed: {r.stderr.strip()[-500:]}")
    return dt, json.loads(r.stdout.splitlines()[-1])


def run(ctx: Context) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests"))
    from hubserver import HubServer

    rows, shards = (300, 2) if ctx.quick else (2000, 4)
    hub = HubServer().start()
    hub.add_user("bench", "hf_bench")
    out: dict[str, Any] = {"turns_per_session": TURNS}
    try:
        out["dataset"] = publish(hub, "bench/traces", rows, shards)
        env = _env(ctx.tmp / "traces-home", hub.url)
        hub.clear_log()
        dt, rep = index(env, "bench/traces", "--no-embed")
        got = sum(
            q.bytes_out for q in hub.requests() if q.method == "GET" and "/resolve/" in q.path
        )
        out["ingest"] = {
            "wall_s": round(dt, 2), "rows_per_s": round(rows / dt, 1),
            "chunks": rep["chunks"], "chunks_per_s": round(rep["chunks"] / dt, 1),
            "downloaded_mb": round(got / 1e6, 2), "requests": len(hub.requests()),
        }  # fmt: skip
        log(f"hub traces ingest {out['ingest']}")
        hub.clear_log()
        dt, rep = index(env, "bench/traces", "--no-embed")
        got = sum(
            q.bytes_out for q in hub.requests() if q.method == "GET" and "/resolve/" in q.path
        )
        out["unchanged"] = {"wall_s": round(dt, 2), "skipped": rep["skipped"],
                            "requests": len(hub.requests()), "downloaded_bytes": got}  # fmt: skip
        log(f"hub traces unchanged {out['unchanged']}")
        if not ctx.quick:
            small = 30
            publish(hub, "bench/traces-small", small, 1, seed=1)
            dt, rep = index(_env(ctx.tmp / "traces-embed", hub.url), "bench/traces-small")
            out["with_embedding"] = {
                "rows": small, "wall_s": round(dt, 2), "rows_per_s": round(small / dt, 2),
                "chunks": rep["chunks"], "embedded": rep["embedded"],
                "chunks_per_s": round(rep["chunks"] / dt, 1),
            }  # fmt: skip
            log(f"hub traces with embedding {out['with_embedding']}")
    finally:
        hub.stop()
    return out


if __name__ == "__main__":
    from bench.__main__ import main

    raise SystemExit(main(["hub-traces", *sys.argv[1:]]))
