"""Hostile input (issue 17): what oversized text and a burst of hooks cost.

    .venv/bin/python -m bench hostile            # 50 MB block, 48 MB chunk, 10 MB query
    .venv/bin/python -m bench hostile --quick    # 10 MB of each

Each command runs as a user runs it, in a child process whose peak RSS and CPU time are read
from ``getrusage(RUSAGE_CHILDREN)`` of a one-shot wrapper, so every figure is one process's
own. CPU time is quoted beside wall time: the machine is shared, and wall time follows its load.

- **block**: `funes index` of a Claude Code session whose one tool result is a 50 MB log
  (random words). funes stores it whole (≈ 52,000 pieces, searchable by words) and embeds the
  first 128 pieces only.
- **chunk**: `funes-embed` of one hand-made 48 MB chunk line (the issue measured 177 s and
  9.2 GB), then `funes-write` of it and a `funes recall` over the memory holding it (37 s).
- **query**: `funes-query` given a 10 MB query line (13 s and 1.8 GB): refused with one line.
- **hooks**: 20 index hooks fired back to back at the real funes on one small session:
  how many `funes index` processes ran, and how long until the last finished.
"""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench._common import BIN, ROOT, Context, log

HOOK = ROOT / "funes" / "agents" / "hooks" / "funes-index.sh"
_WRAP = (
    "import json, resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], stdin=sys.stdin, capture_output=True)\n"
    "dt = time.perf_counter() - t\n"
    "ru = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "rss, cpu = ru.ru_maxrss, ru.ru_utime + ru.ru_stime\n"
    "print(json.dumps({'seconds': round(dt, 2), 'peak_rss_mb': round(rss / 1024, 1),\n"
    "    'cpu_s': round(cpu, 2),\n"
    "    'exit': p.returncode, 'out': p.stdout[-2000:].decode('utf-8', 'replace'),\n"
    "    'err': p.stderr[-2000:].decode('utf-8', 'replace')}))\n"
)


def measured(argv: list[str], env: dict[str, str], stdin: Path | None = None) -> dict[str, Any]:
    """Wall seconds, peak RSS (MB) and exit status of one command, and its output's tails."""
    with open(stdin or os.devnull, "rb") as fin:
        p = subprocess.run(
            [sys.executable, "-c", _WRAP, *argv], stdin=fin, capture_output=True, env=env
        )
    res: dict[str, Any] = json.loads(p.stdout)
    return res


def _words(n_bytes: int, seed: int = 7) -> str:
    rnd = random.Random(seed)
    vocab = [
        "".join(rnd.choices(string.ascii_lowercase, k=rnd.randint(2, 10))) for _ in range(5000)
    ]
    lines, size = [], 0
    while size < n_bytes:
        line = " ".join(rnd.choices(vocab, k=12))
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)[:n_bytes]


def _session(path: Path, log_text: str) -> Path:
    sid = path.stem
    base = {"sessionId": sid, "cwd": "/home/ana/proj", "timestamp": "2026-11-01T10:00:00.000Z"}
    recs = [
        {**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "dump the build log"}},
        {**base, "type": "assistant", "uuid": "u2", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cat build.log"}}]}},
        {**base, "type": "user", "uuid": "u3", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": log_text}]}},
        {**base, "type": "assistant", "uuid": "u4", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "The log ends with the wombatfrost linker error."}]}},
    ]  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    return path


def run(ctx: Context) -> dict[str, Any]:
    mb = 10 if ctx.quick else 50
    root = ctx.tmp / "hostile"
    env = {**os.environ, "HOME": str(root / "home"), "FUNES_HOME": str(root / "funes")}
    out: dict[str, Any] = {"block_mb": mb}

    log(f"hostile: a {mb} MB block through `funes index`")
    transcript = _session(root / "projects" / "-home-ana-proj" / "big.jsonl", _words(mb << 20))
    mem = root / "mem-block"
    r = measured([str(BIN / "funes"), "index", str(transcript), "--yes", "--json",
                  "--memory", str(mem)], env)  # fmt: skip
    summary = json.loads(r["out"].strip().splitlines()[-1]) if r["exit"] == 0 else {}
    out["block"] = {k: r[k] for k in ("seconds", "cpu_s", "peak_rss_mb", "exit")} | {
        k: summary.get(k) for k in ("chunks", "embedded", "oversized_blocks")
    }

    chunk_mb = 10 if ctx.quick else 48
    log(f"hostile: one {chunk_mb} MB chunk through funes-embed, funes-write, funes recall")
    chunk = {"kind": "chunk", "v": 1, "id": "huge-1", "text": _words(chunk_mb << 20, 11),
             "session_id": "huge", "turn_uuid": "h1", "seq": 0, "role": "tool",
             "block_type": "tool_result", "harness": "claude_code"}  # fmt: skip
    line = root / "chunk.jsonl"
    line.write_text(json.dumps(chunk) + "\n")
    embedded = root / "chunk-embedded.jsonl"
    r = measured(["sh", "-c", f'"{BIN / "funes-embed"}" > "{embedded}"'], env, stdin=line)
    out["embed_chunk"] = {k: r[k] for k in ("seconds", "cpu_s", "peak_rss_mb", "exit")} | {
        "mb": chunk_mb
    }
    mem2 = root / "mem-chunk"
    r = measured([str(BIN / "funes-write"), "--memory", str(mem2)], env, stdin=embedded)
    out["write_chunk"] = {k: r[k] for k in ("seconds", "cpu_s", "peak_rss_mb", "exit")}
    r = measured([str(BIN / "funes"), "recall", "wombatfrost linker", "--memory", str(mem2)], env)
    out["recall_over_chunk"] = {k: r[k] for k in ("seconds", "cpu_s", "peak_rss_mb", "exit")}

    q_mb = 10
    log(f"hostile: a {q_mb} MB query line to funes-query")
    qline = root / "query.jsonl"
    qline.write_text(json.dumps({"query": _words(q_mb << 20, 13)}) + "\n")
    r = measured([str(BIN / "funes-query"), "--memory", str(mem)], env, stdin=qline)
    out["query"] = {k: r[k] for k in ("seconds", "cpu_s", "peak_rss_mb", "exit")} | {
        "mb": q_mb,
        "message": next((x for x in r["err"].splitlines() if "characters" in x), ""),
    }

    log("hostile: 20 index hooks back to back")
    out["hooks"] = _burst(root, env)
    return out


def _burst(root: Path, env: dict[str, str]) -> dict[str, Any]:
    small = _session(root / "hooks" / "projects" / "-home-ana-proj" / "s1.jsonl", "ok")
    payload = json.dumps({"session_id": "s1", "transcript_path": str(small),
                          "hook_event_name": "Stop"}).encode()  # fmt: skip
    env = {**env, "FUNES_HOME": str(root / "hooks" / "funes")}
    logf = root / "hooks" / "funes" / "logs" / "hooks.log"
    t0 = time.perf_counter()
    took = []
    for _ in range(20):
        t = time.perf_counter()
        subprocess.run(["bash", str(HOOK), "claude", "--funes", str(BIN / "funes")],
                       input=payload, env=env, check=False)  # fmt: skip
        took.append(time.perf_counter() - t)
    deadline = time.monotonic() + 600
    text = ""
    while time.monotonic() < deadline:
        text = logf.read_text() if logf.exists() else ""
        starts, ends = text.count(": start "), text.count(": ok") + text.count(": FAILED")
        queue = [p for d in logf.parent.glob(".queue.*") for p in d.iterdir()]
        if starts and starts == ends and not queue:
            time.sleep(1.0)
            if logf.read_text() == text:
                break
        time.sleep(0.2)
    took.sort()
    return {
        "hooks": 20,
        "index_processes": text.count(": start "),
        "return_ms_median": round(took[len(took) // 2] * 1000, 1),
        "seconds_until_indexed": round(time.perf_counter() - t0, 1),
    }


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(run(Context(quick="--quick" in sys.argv, tmp=Path(tmp))), indent=1))
