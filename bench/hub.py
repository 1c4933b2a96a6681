"""Sharing through the Hub, measured against the loopback Hub server of the test suite.

    .venv/bin/python bench/hub.py [--new 1000] [--reps 5]

On one memory (a copy of the eval-dev bench memory when bench/work holds one, else a
synthetic one), published once:

- `funes recall` as a CLI call: local memory vs remote cold (empty HF cache) vs remote warm
  (cached commit, no HTTP) — medians, and the ratios to local;
- bytes uploaded per pushed chunk (request bodies of commit calls; the server counts them),
  for the first publish and for an append of --new chunks;
- push time for the --new new chunks (gate scan included).

Writes bench/results/hub-<date>.json and prints a table. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
BIN = Path(sys.executable).parent
QUERIES = [
    "why did the test fail",
    "how is the lexical index stored",
    "what did we decide about the cache",
]


def _env(root: Path, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(
        HOME=str(root),
        FUNES_HOME=str(root / "funes"),
        HF_HOME=str(root / "hf"),
        HF_ENDPOINT=url,
        HF_TOKEN="hf_bench",
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
        FUNES_CACHE_DIR=str(REPO / "bench" / "work" / "model-cache"),
    )
    return env


def _run(env: dict[str, str], *args: str) -> float:
    t0 = time.perf_counter()
    r = subprocess.run([str(BIN / "funes"), *args], env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"funes {' '.join(args)} failed: {r.stderr.strip()}")
    return dt


def _source_memory(dst: Path) -> str:
    work = sorted((REPO / "bench" / "work").glob("eval-dev-*"))
    if work and (work[0] / "chunks.lance").is_dir():
        shutil.copytree(work[0], dst, ignore=shutil.ignore_patterns("store.lock"))
        return f"eval-dev copy ({work[0].name})"
    _synthetic(dst, 3000, "base")
    return "synthetic"


def _synthetic(memory: Path, n: int, tag: str) -> None:
    import numpy as np

    from funes.records import Chunk
    from funes.store.memory import open_memory

    rng = np.random.default_rng(7)
    words = "cache index parser lock segment manifest commit push recall token vector".split()
    mem = open_memory(memory, create=True)
    chunks = []
    for i in range(n):
        v = rng.standard_normal(384).astype(np.float32)
        v /= np.linalg.norm(v)
        text = " ".join(rng.choice(words, 90)) + f" {tag}-{i}"
        sid = f"{tag}-session-{i // 50}"
        chunks.append(
            Chunk(
                id=f"{tag}{i:012x}"[-16:], text=text, session_id=sid, turn_uuid=f"{sid}-t{i % 50}",
                parent_uuid=None, seq=i % 50, ts="2026-11-29T10:00:00.000Z", role="assistant",
                block_type="text", block_idx=0, split_idx=0, tool_name=None, harness="claude_code",
                workdir="-bench", repo="", source_path="/bench", vector=v.tolist(),
            )
        )  # fmt: skip
    with mem.writer(interactive=False) as w:
        w.append(chunks)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--new", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)

    from hubserver import HubServer

    hub = HubServer().start()
    hub.add_user("bench", "hf_bench")
    tmp = Path(tempfile.mkdtemp(prefix="funes-bench-hub-"))
    try:
        local = tmp / "local"
        source = _source_memory(local)
        pub = _env(tmp / "pub", hub.url)
        hub.clear_log()
        t_first = _run(pub, "push", "bench/kb", "--create", "--yes", "--from", str(local))
        from funes.store.memory import open_memory

        n_base = open_memory(local).count()
        first_bytes = hub.uploaded_bytes()

        def recall(env: dict[str, str], memory: str) -> float:
            return _run(env, "recall", QUERIES[0], "--memory", memory, "-k", "5")

        local_t = [recall(pub, str(local)) for _ in range(args.reps)]
        cold_t = []
        for i in range(max(2, args.reps // 2)):
            cold_t.append(recall(_env(tmp / f"cold{i}", hub.url), "bench/kb"))
        warm_env = _env(tmp / "cold0", hub.url)
        hub.clear_log()
        warm_t = [recall(warm_env, "bench/kb") for _ in range(args.reps)]
        warm_requests = len(hub.requests())

        _synthetic(local, args.new, "new")
        hub.clear_log()
        t_push = _run(pub, "push", "bench/kb", "--from", str(local))
        new_bytes = hub.uploaded_bytes()
        res = {
            "date": datetime.now(UTC).strftime("%Y-%m-%d"),
            "memory": source,
            "chunks": n_base,
            "recall_local_s": round(statistics.median(local_t), 3),
            "recall_remote_cold_s": round(statistics.median(cold_t), 3),
            "recall_remote_warm_s": round(statistics.median(warm_t), 3),
            "warm_http_requests": warm_requests,
            "first_push_s": round(t_first, 2),
            "first_push_bytes_per_chunk": round(first_bytes / max(n_base, 1), 1),
            "append_chunks": args.new,
            "append_push_s": round(t_push, 2),
            "append_bytes_per_chunk": round(new_bytes / args.new, 1),
        }
        res["cold_vs_local"] = round(res["recall_remote_cold_s"] / res["recall_local_s"], 2)
        res["warm_vs_local"] = round(res["recall_remote_warm_s"] / res["recall_local_s"], 2)
    finally:
        hub.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    out = REPO / "bench" / "results" / f"hub-{res['date']}.json"
    out.write_text(json.dumps(res, indent=1) + "\n")
    print(f"| what ({res['memory']}, {res['chunks']} chunks) | value |\n|---|---|")
    rows = [
        ("recall, local memory (CLI, median)", f"{res['recall_local_s']} s"),
        ("recall, remote cold (empty HF cache)", f"{res['recall_remote_cold_s']} s ({res['cold_vs_local']}× local)"),
        ("recall, remote warm", f"{res['recall_remote_warm_s']} s ({res['warm_vs_local']}× local, {warm_requests} HTTP requests)"),
        ("first publish", f"{res['first_push_s']} s, {res['first_push_bytes_per_chunk']} B/chunk"),
        (f"push of {args.new} new chunks", f"{res['append_push_s']} s, {res['append_bytes_per_chunk']} B/chunk"),
    ]  # fmt: skip
    for k, v in rows:
        print(f"| {k} | {v} |")
    print(f"wrote {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
