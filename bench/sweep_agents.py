"""CPU time of a no-op `funes index` sweep: a home with the first agents only (Claude Code,
Codex, pi) against the same home holding every agent funes reads (the sessions of
tests/agent_homes.py beside them). The aim: the full home costs no more than 1.2× the small one
when nothing changed.

    .venv/bin/python bench/sweep_agents.py            # 7 runs each, medians of user + sys CPU
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
import agent_homes as ah  # noqa: E402

BIN = Path(sys.executable).parent / "funes"


def home(root: Path, every_agent: bool) -> Path:
    h = root / ("all" if every_agent else "first")
    h.mkdir(parents=True)
    ah.write_jsonl(
        h / ".pi/agent/sessions/--home-ana--/s.jsonl", ah.pi_entries("pi-1", "/home/ana", "pi")
    )
    samples = REPO / "contrib/samples"
    for src in samples.rglob("*.jsonl"):
        rel = src.relative_to(samples)
        top = ".claude/projects" if rel.parts[0] == "claude-code" else ".codex/sessions"
        dst = h / top / Path(*rel.parts[1:])
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dst)
    if every_agent:
        for write in ah.ALL:
            write(h)
    return h


def sweep_cpu(h: Path) -> float:
    env = {**os.environ, "HOME": str(h), "FUNES_HOME": str(h / ".funes-home")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [str(BIN), "index", "--no-embed", "-q"],
        env=env, check=True, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    medians = {}
    with tempfile.TemporaryDirectory(prefix="funes-sweep-") as tmp:
        for every in (False, True):
            h = home(Path(tmp), every)
            sweep_cpu(h)  # the first index; the runs timed below find nothing new
            runs = [sweep_cpu(h) for _ in range(args.runs)]
            medians[every] = statistics.median(runs)
            name = "every agent" if every else "first agents"
            print(
                f"{name:13} no-op sweep CPU s: median {medians[every]:.3f}  runs {[round(r, 3) for r in runs]}"
            )
    print(f"ratio every/first: {medians[True] / medians[False]:.2f} (aim ≤ 1.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
