"""`funes ask` overhead: what ask costs beyond the agent's own time, cold, on 20k chunks.

    .venv/bin/python -m bench ask [--quick]

The memory is the recall suite's 20,000-chunk synth memory (bench/recall.py: bench/synth.py
histories, random unit vectors; shared when both suites run). The agent is a fake `claude` (a
`/bin/sh` script) that answers `--version` and replays a recorded stream-json answer at once.

- **ask**: wall time of `funes ask claude QUESTION --memory M --anyway` processes (new
  interpreter, models and memory opened from disk each time; `--anyway` so a weak verdict
  never skips the agent call being timed), one untimed call first for the OS file cache;
- **agent**: wall time of the fake agent's own two calls (`--version`, then the answer);
- **overhead** = ask − agent (median of each): preflight, recall, prompt, stream handling;
- `funes recall` cold with ask's parameters on the same questions, for comparison;
- the CPU time (user + sys) of the ask and recall processes, which a loaded machine moves far
  less than wall time.

Questions are eval-dev's (../shared/eval-dev/queries.jsonl).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # `python bench/ask.py`: import as the bench package
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import json
import os
import resource
import statistics
import subprocess
import time
from typing import Any

from bench._common import BIN, Context, log, queries, summary_ms

ANSWER = "The passages do not say. Rephrase the question, or index more history.\n\nSessions: none"
AIM_S = 1.5


def fake_agent(root: Path) -> Path:
    """A bin dir with an instantly-answering `claude` (stream-json, as `claude -p` prints)."""
    bin_dir = root / "fake-agent-bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    stream = [
        {"type": "system", "subtype": "init", "session_id": "bench", "tools": [],
         "mcp_servers": [], "model": "fake"},
        {"type": "assistant", "message": {"role": "assistant",
                                          "content": [{"type": "text", "text": ANSWER}]}},
        {"type": "result", "subtype": "success", "is_error": False, "result": ANSWER,
         "session_id": "bench"},
    ]  # fmt: skip
    (bin_dir / "claude.stream.jsonl").write_text("".join(json.dumps(e) + "\n" for e in stream))
    exe = bin_dir / "claude"
    exe.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--version" ]; then echo "claude 0.0.0 (bench fake)"; exit 0; fi\n'
        f"exec /bin/cat {bin_dir / 'claude.stream.jsonl'}\n"
    )
    exe.chmod(0o755)
    return bin_dir


CPU: list[float] = []  # CPU seconds (user + sys) of each timed process tree, in call order


def _timed(argv: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one process; its CPU seconds (children included) go to ``CPU`` — on a
    loaded machine CPU time moves far less than wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    dt = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:3])} … failed: {r.stderr.strip()[-500:]}")
    return dt


def run(ctx: Context) -> dict[str, Any]:
    from bench.recall import synth_memory

    n = 20_000
    path = synth_memory(ctx, n)
    texts = [q["query"] for q in queries()][: 4 if ctx.quick else 12]
    bin_dir = fake_agent(ctx.tmp)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    ask = [str(BIN / "funes"), "ask", "claude"]
    recall = [str(BIN / "funes"), "recall"]
    fixed = ["--candidates", "30", "--neighbors", "1", "--half-life", "30"]  # ask's parameters
    prompt = "x" * 12_000  # about the size of a grounding prompt of 8 passages

    _timed([*ask, texts[-1], "--memory", str(path), "--anyway"], env)  # warm the file cache
    ask_t, agent_t, recall_t, ask_cpu, recall_cpu = [], [], [], [], []
    for q in texts:
        ask_t.append(_timed([*ask, q, "--memory", str(path), "--anyway"], env))
        ask_cpu.append(CPU[-1])
        agent_t.append(
            _timed([str(bin_dir / "claude"), "--version"], env)
            + _timed([str(bin_dir / "claude"), "-p", prompt, "--output-format", "stream-json"], env)
        )
        recall_t.append(_timed([*recall, q, "--memory", str(path), "-k", "8", *fixed], env))
        recall_cpu.append(CPU[-1])
    overhead = [a - g for a, g in zip(ask_t, agent_t, strict=True)]
    out: dict[str, Any] = {
        "chunks": n,
        "questions": len(texts),
        "ask_cold": summary_ms(ask_t),
        "agent_own": summary_ms(agent_t),
        "overhead": summary_ms(overhead),
        "recall_cold": summary_ms(recall_t),
        "ask_cpu": summary_ms(ask_cpu),
        "recall_cpu": summary_ms(recall_cpu),
        "aim_s": AIM_S,
    }
    out["overhead_vs_recall"] = round(statistics.median(overhead) / statistics.median(recall_t), 2)
    log(f"ask overhead {out['overhead']} (recall cold {out['recall_cold']})")
    return out


if __name__ == "__main__":
    from bench.__main__ import main

    raise SystemExit(main(["ask", *sys.argv[1:]]))
