"""CPU of the commands a user or a hook runs when nothing changed, at ~20k chunks: a no-op
`funes index` sweep, a no-op per-turn hook (`funes index TRANSCRIPT --yes`, what the hook
script runs), `funes status` (first after a hook's write by the same build, with no counts that
describe the table as after a write by an older funes, and repeated) and `funes get SESSION
TURN`.

    .venv/bin/python -m bench.noop [--runs 7] [--baseline DIR]

The home is a bench/synth.py history of 200 sessions (~20k chunks across Claude Code, Codex, pi
and Hermes), indexed once without vectors, then given random unit vectors (a no-op run must
find nothing to embed). Each call is a new interpreter (`python -m funes.cli.main …`) run from
the source tree with PYTHONPATH; CPU is user + system of the child, medians of the runs; with
``--baseline DIR`` (`git worktree add --detach DIR REF`) each call of the baseline build
alternates with this one's and the A/B ratio is the median of the pairs' ratios. Writes
bench/results/noop-<date>.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # `python bench/noop.py`: import as the bench package
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
from collections.abc import Callable
from datetime import date
from typing import Any

from bench import synth
from bench._common import RESULTS, ROOT, Context, loadavg, log

SESSIONS = 200


def build(tmp: Path) -> tuple[Path, Path]:
    """(home, funes home) of the synth history, indexed, every chunk with a vector."""
    import numpy as np

    from funes.store import open_memory

    home = tmp / "home"
    synth.build(home, SESSIONS, seed=0)
    fh = home / ".funes-home"
    env = {**os.environ, "HOME": str(home), "FUNES_HOME": str(fh), "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-m", "funes.cli.main", "index", "--no-embed", "--yes", "-q"],
        env=env, cwd=ROOT, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
    )  # fmt: skip
    rng = np.random.default_rng(0)

    def embed(texts: list[str]) -> Any:
        v = rng.standard_normal((len(texts), 384)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    mem = open_memory(fh / "memory")
    with mem.writer(interactive=False) as w:
        w.backfill(embed, batch=5000)
        w.optimize(ann=False)
    # One sweep of this build records that nothing waits for a vector.
    subprocess.run(
        [sys.executable, "-m", "funes.cli.main", "index", "-q"], env=env, cwd=ROOT,
        stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
    )  # fmt: skip
    return home, fh


def cpu_of(argv: list[str], env: dict[str, str], tree: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "funes.cli.main", *argv], env={**env, "PYTHONPATH": str(tree)},
        cwd=tree, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        check=True,
    )  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(home: Path, fh: Path, runs: int, baseline: Path | None) -> dict[str, Any]:
    from funes.store import open_memory

    mem = open_memory(fh / "memory")
    chunks = mem.count()
    row = mem.rows(columns=("session_id", "turn_uuid")).slice(chunks // 4, 1).to_pylist()[0]
    transcript = max(
        (home / ".claude" / "projects").rglob("*.jsonl"), key=lambda p: p.stat().st_size
    )
    env = {**os.environ, "HOME": str(home), "FUNES_HOME": str(fh)}

    grown = transcript.with_name("bench-noop-grown.jsonl")
    turns = [0]

    def hook_write(tree: Path) -> None:
        """A hook's run of ``tree``'s build: one new turn appended to a session and indexed
        (text only), so its status is the first after a write that build made."""
        turns[0] += 1
        n = turns[0]
        line = {"type": "user", "uuid": f"noop-u{n}", "sessionId": "bench-noop-grown",
                "parentUuid": f"noop-u{n - 1}" if n > 1 else None, "cwd": "/home/u/proj",
                "timestamp": f"2026-11-30T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
                "message": {"role": "user", "content": f"status after write {n}: why zeta{n}?"}}  # fmt: skip
        with open(grown, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
        # A status first, untimed: the other build's write came last, and a build's writer goes
        # on only from counts that describe the table (as a user's one build always does).
        for argv in (["status"], ["index", str(grown), "--no-embed", "--yes", "-q"]):
            subprocess.run(
                [sys.executable, "-m", "funes.cli.main", *argv], env={**env, "PYTHONPATH": str(tree)},
                cwd=tree, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, check=True,
            )  # fmt: skip

    def forget_counts(tree: Path) -> None:
        """As after a write by an older funes: no counts that describe the table, no cache."""
        (fh / "memory" / "counts.json").unlink(missing_ok=True)
        shutil.rmtree(fh / "cache" / "status", ignore_errors=True)

    calls: dict[str, tuple[list[str], Callable[[Path], None] | None]] = {
        "index_noop": (["index", "-q"], None),
        "hook_noop": (["index", str(transcript), "--yes", "-q"], None),
        "status_after_write": (["status"], hook_write),
        "status_counted": (["status"], forget_counts),
        "status_repeated": (["status"], None),
        "get": (["get", row["session_id"], row["turn_uuid"]], None),
    }
    builds = {"this": ROOT, **({"baseline": baseline} if baseline else {})}
    out: dict[str, Any] = {"chunks": chunks, "sessions": SESSIONS, "runs": runs}
    for name, (argv, before) in calls.items():
        cpu: dict[str, list[float]] = {b: [] for b in builds}
        for i in range(runs + 1):  # the first round warms the file cache, untimed
            for b, tree in builds.items():
                if before is not None:
                    before(tree)
                c = cpu_of(argv, env, tree)
                if i:
                    cpu[b].append(c)
        res: dict[str, Any] = {b: {"cpu_p50_s": round(statistics.median(v), 3),
                                   "cpu_s": [round(x, 3) for x in v]} for b, v in cpu.items()}  # fmt: skip
        if baseline:
            pairs = [a / b for a, b in zip(cpu["this"], cpu["baseline"], strict=True) if b]
            res["ratio_p50"] = round(statistics.median(pairs), 2)
        out[name] = res
        log(f"noop {name}: {res}")
    return out


def run(ctx: Context) -> dict[str, Any]:
    load0 = loadavg()
    home, fh = build(ctx.tmp)
    out = measure(home, fh, 3 if ctx.quick else 7, ctx.baseline)
    out["load"] = {"start": load0, "end": loadavg()}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--baseline", type=Path, help="source tree of an earlier build")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="funes-noop-") as d:
        ctx = Context(quick=False, tmp=Path(d), baseline=args.baseline)
        load0 = loadavg()
        home, fh = build(ctx.tmp)
        out = measure(home, fh, args.runs, args.baseline)
        out["load"] = {"start": load0, "end": loadavg()}
    dest = RESULTS / f"noop-{date.today().isoformat()}.json"
    dest.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    print(f"written {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
