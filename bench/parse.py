"""Parse + chunk throughput on a generated Claude Code tree: MB/s and peak RSS.

    .venv/bin/python bench/parse.py [--mb 200] [--runs 3]
    .venv/bin/python bench/parse.py --corpus DIR [--runs 7]

Generates (deterministically, seed 0) a `~/.claude/projects`-shaped tree of the given size —
sessions of user prompts, assistant text, thinking, tool calls and tool results of realistic,
skewed sizes, with the bookkeeping records real files carry — then times `funes-parse TREE`
and `funes-parse TREE | funes-chunk` as a user would run them (funes' bytecode compiled
first, as installing it does). Prints a markdown table and writes
bench/results/parse-<date>.json.

``--corpus DIR`` times real transcripts instead (eval-dev's, ../shared/eval-dev/corpus, or the
labelled set's, read where they are): the same commands, and the same work in one process
(``sources.parse`` then ``chunk_turns``, with and without redaction). Besides wall time, every
figure is in MB of transcript per CPU second (user + system of the whole pipeline): the machine
is shared, and CPU time is what the load inflates least.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent
WORDS = (
    "the parser cache lock index chunk embed query session turn tool result error retry "
    "migration schema table column vector token build test deploy config path file line "
    "function class method return value null undefined async await promise thread process "
    "memory disk network timeout fail pass fix bug issue commit branch merge review"
).split()


def prose(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words))


def code_block(rng: random.Random, n_lines: int) -> str:
    return "\n".join(
        f"{i:5d}\t    {rng.choice(WORDS)}_{rng.choice(WORDS)} = {rng.choice(WORDS)}({rng.randint(0, 999)})"
        for i in range(1, n_lines + 1)
    )


def session(rng: random.Random, sid: str, cwd: str, turns: int) -> list[str]:
    out = []
    rec: dict[str, Any]
    parent = None
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(minutes=rng.randint(0, 400_000))
    for i in range(turns):
        ts = (t0 + dt.timedelta(seconds=i * 7)).isoformat().replace("+00:00", "Z")
        uuid = f"{sid}-{i:05d}"
        base: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
                "sessionId": sid, "version": "2.0.14", "gitBranch": "main", "uuid": uuid,
                "timestamp": ts}  # fmt: skip
        kind = i % 4
        if kind == 0:
            rec = {
                **base,
                "type": "user",
                "message": {"role": "user", "content": prose(rng, rng.randint(8, 80))},
            }
        elif kind == 1:
            content = [
                {
                    "type": "thinking",
                    "thinking": prose(rng, rng.randint(20, 200)),
                    "signature": "Eo4H" * 40,
                }
            ]
            if rng.random() < 0.5:
                content.append({"type": "text", "text": prose(rng, rng.randint(20, 300))})
            rec = {**base, "type": "assistant", "message": {"role": "assistant", "model": "claude-sonnet-4-5",
                   "content": content, "usage": {"input_tokens": 10, "output_tokens": 200}}}  # fmt: skip
        elif kind == 2:
            call = {"type": "tool_use", "id": f"toolu_{uuid}", "name": rng.choice(["Read", "Bash", "Edit", "Grep"]),
                    "input": {"file_path": f"/src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py",
                              "command": prose(rng, 6)}}  # fmt: skip
            rec = {**base, "type": "assistant", "message": {"role": "assistant", "content": [call]}}
        else:
            size = int(rng.paretovariate(1.2) * 15)  # skewed: mostly short, some very long
            result = {"type": "tool_result", "tool_use_id": f"toolu_{sid}-{i - 1:05d}",
                      "content": code_block(rng, min(size, 2000))}  # fmt: skip
            rec = {**base, "type": "user", "message": {"role": "user", "content": [result]},
                   "toolUseResult": {"stdout": "", "stderr": "", "interrupted": False}}  # fmt: skip
        out.append(json.dumps(rec))
        if rng.random() < 0.15:
            out.append(
                json.dumps(
                    {"type": "progress", "data": {"type": "hook_progress"}, "uuid": uuid + "p"}
                )
            )
        parent = uuid
    return out


def generate(root: Path, megabytes: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    target = megabytes * 1_000_000
    written = 0
    n = 0
    while written < target:
        proj = root / ".claude" / "projects" / f"-home-dev-proj{n % 40}"
        proj.mkdir(parents=True, exist_ok=True)
        sid = f"{n:08x}-0000-4000-8000-{n:012x}"
        lines = session(rng, sid, f"/home/dev/proj{n % 40}", rng.randint(20, 400))
        data = ("\n".join(lines) + "\n").encode()
        (proj / f"{sid}.jsonl").write_bytes(data)
        written += len(data)
        n += 1
    return written


def timed(cmd: str) -> tuple[float, int, float]:
    """Wall seconds, peak RSS (MB) of the largest process and CPU seconds (user + system, every
    process) of a shell pipeline."""
    t = time.perf_counter()
    # A fresh process per run, so ru_maxrss is this run's (RUSAGE_CHILDREN keeps a maximum).
    probe = (
        "import resource,subprocess,sys;"
        "p=subprocess.run(sys.argv[1],shell=True,executable='/bin/bash');"
        "r=resource.getrusage(resource.RUSAGE_CHILDREN);"
        "print(r.ru_maxrss, r.ru_utime + r.ru_stime, p.returncode)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, cmd], capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - t
    rss, cpu, code = out.stdout.split()
    if int(code) > 1:  # 1: some lines skipped (real transcripts have a few), still a full run
        raise SystemExit(f"bench/parse.py: {cmd!r} failed (exit {code}): {out.stderr[-500:]}")
    return wall, int(rss) // 1024, float(cpu)


def _cases(prefix: str, tree: Path) -> dict[str, str]:
    parse = f"{prefix}'{BIN}/funes-parse' -q '{tree}'"
    return {
        "funes-parse": f"{parse} > /dev/null",
        "funes-parse | funes-chunk": f"{parse} | '{BIN}/funes-chunk' > /dev/null",
        "funes-parse | funes-chunk --no-redact": f"{parse} | '{BIN}/funes-chunk' --no-redact > /dev/null",
    }  # fmt: skip


def fresh_bytecode() -> None:
    """Compile funes' modules whose bytecode is missing or stale, as installing it does.

    Under ``PYTHONDONTWRITEBYTECODE`` (or in a read-only tree) a module edited since its last
    compile is compiled again by every process that imports it: ~0.15 s of CPU per pipeline
    on eval-dev, which a user of an installed funes never pays."""
    import importlib.util

    spec = importlib.util.find_spec("funes")
    if spec is None or not spec.submodule_search_locations:
        return
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for where in spec.submodule_search_locations:
        subprocess.run([sys.executable, "-m", "compileall", "-q", where], env=env,
                       stdout=subprocess.DEVNULL, check=False)  # fmt: skip


def _time_cases(cases: dict[str, str], size: int, runs: int) -> dict[str, Any]:
    fresh_bytecode()
    results = {}
    for name, cmd in cases.items():
        timings = [timed(cmd) for _ in range(runs)]
        walls = [w for w, _, _ in timings]
        cpus = [c for _, _, c in timings]
        results[name] = {
            "wall_s": [round(w, 2) for w in walls],
            "median_s": round(statistics.median(walls), 2),
            "mb_per_s": round(size / 1e6 / statistics.median(walls), 1),
            "cpu_s": [round(c, 3) for c in cpus],
            "median_cpu_s": round(statistics.median(cpus), 3),
            "mb_per_cpu_s": round(size / 1e6 / statistics.median(cpus), 1),
            "peak_rss_mb": max(r for _, r, _ in timings),
        }
    return results


def in_process(corpus: Path, size: int, runs: int) -> dict[str, Any]:
    """``sources.parse`` then ``chunk_turns`` in this process, CPU time, median of ``runs``:
    what `funes index` does before it embeds, without the pipes' JSON in between."""
    from funes import sources
    from funes.chunking import chunk_turns
    from funes.secrets import redact

    texts = [b.text for t in sources.parse([corpus]) for b in t.blocks]
    block_mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6

    def cpu(work: Any) -> float:
        spent = []
        for _ in range(runs):
            t0 = time.process_time()
            work()
            spent.append(time.process_time() - t0)
        return statistics.median(spent)

    redact("warm up")  # the detectors load on first use
    out = {
        "parse": cpu(lambda: sum(1 for _ in sources.parse([corpus]))),
        "parse + chunk, no redaction": cpu(
            lambda: sum(1 for _ in chunk_turns(sources.parse([corpus])))
        ),
        "parse + chunk": cpu(
            lambda: sum(1 for _ in chunk_turns(sources.parse([corpus]), redact=redact))
        ),
    }
    res: dict[str, Any] = {
        k: {"median_cpu_s": round(v, 3), "mb_per_cpu_s": round(size / 1e6 / v, 1)}
        for k, v in out.items()
    }
    r = cpu(lambda: [redact(t) for t in texts])
    res["redact() alone, on the block text"] = {
        "block_mb": round(block_mb, 2),
        "median_cpu_s": round(r, 3),
        "mb_per_cpu_s": round(block_mb / r, 1),
    }
    return res


def _corpus_files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.rglob("*") if p.is_file() and p.suffix == ".jsonl")


def measure_corpus(corpus: Path, runs: int) -> dict[str, Any]:
    files = _corpus_files(corpus)
    size = sum(p.stat().st_size for p in files)
    return {
        "corpus": {"path": str(corpus), "bytes": size, "files": len(files)},
        "runs": runs,
        "load_start": os.getloadavg()[0],
        "results": _time_cases(_cases("", corpus), size, runs),
        "in_process": in_process(corpus, size, runs),
        "load_end": os.getloadavg()[0],
    }


def measure(megabytes: int, runs: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="funes-bench-parse-"))
    try:
        t = time.perf_counter()
        size = generate(work, megabytes)
        gen_s = time.perf_counter() - t
        tree = work / ".claude" / "projects"
        files = sum(1 for _ in tree.rglob("*.jsonl"))
        results = _time_cases(_cases(f"HOME={work} ", tree), size, runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"tree": {"bytes": size, "files": files, "generate_s": round(gen_s, 1)},
            "runs": runs, "results": results}  # fmt: skip


def run(ctx: Any) -> dict[str, Any]:
    """The `parse` suite of `python -m bench`."""
    return measure(40 if ctx.quick else 200, 1 if ctx.quick else 3)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--mb", type=int, default=200, help="tree size in MB (default 200)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--corpus", type=Path, metavar="DIR", help="time these transcripts instead")
    ap.add_argument(
        "--against",
        type=Path,
        metavar="TREE",
        help="with --corpus: A/B against another funes source tree (a checkout of another "
        "commit), the two alternated run by run",
    )
    ap.add_argument("--in-process-json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.corpus and args.in_process_json:  # a child of --against: the tree on PYTHONPATH
        size = sum(p.stat().st_size for p in _corpus_files(args.corpus))
        print(json.dumps(in_process(args.corpus, size, args.runs)))
        return None
    if args.corpus and args.against:
        return ab_main(args.corpus, args.against, args.runs)
    if args.corpus:
        return corpus_main(args.corpus, args.runs)
    res = measure(args.mb, args.runs)
    doc = {
        "suite": "parse",
        "date": dt.date.today().isoformat(),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        **res,
    }
    out = Path(__file__).parent / "results" / f"parse-{doc['date']}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n")
    tree = res["tree"]
    print(f"tree: {tree['bytes'] / 1e6:.0f} MB in {tree['files']} Claude Code session files; "
          f"{args.runs} runs, median\n")  # fmt: skip
    print("| command | MB/s | median wall (s) | peak RSS (MB) |")
    print("|---|---|---|---|")
    for name, r in res["results"].items():
        print(f"| `{name}` | {r['mb_per_s']:.1f} | {r['median_s']:.2f} | {r['peak_rss_mb']} |")
    print(f"\nwritten {out}")


def corpus_main(corpus: Path, runs: int) -> None:
    res = measure_corpus(corpus, runs)
    day = dt.date.today().isoformat()
    out = Path(__file__).parent / "results" / f"parse-corpus-{day}.json"
    doc = json.loads(out.read_text()) if out.exists() else {"suite": "parse --corpus", "date": day}
    doc["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(),
                      "platform": platform.platform()}  # fmt: skip
    doc.setdefault("corpora", {})[
        corpus.name if corpus.name != "corpus" else corpus.parent.name
    ] = res
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n")
    c = res["corpus"]
    print(f"{c['path']}: {c['bytes'] / 1e6:.1f} MB in {c['files']} files; {runs} runs, median; "
          f"load {res['load_start']:.1f} -> {res['load_end']:.1f}\n")  # fmt: skip
    print("| command | MB per CPU s | median CPU (s) | median wall (s) | peak RSS (MB) |")
    print("|---|---|---|---|---|")
    for name, r in res["results"].items():
        cell = name.replace("|", "\\|")
        print(f"| `{cell}` | {r['mb_per_cpu_s']:.1f} | {r['median_cpu_s']:.2f} | "
              f"{r['median_s']:.2f} | {r['peak_rss_mb']} |")  # fmt: skip
    for name, r in res["in_process"].items():
        print(f"| in one process: {name} | {r['mb_per_cpu_s']:.1f} | {r['median_cpu_s']:.2f} | | |")
    print(f"\nwritten {out}")


def ab(corpus: Path, against: Path, runs: int) -> dict[str, Any]:
    """This tree (the one this script is in) and ``against``, alternated run by run, this one
    first: the two pipelines' CPU seconds (with and without redaction) and, in a child process
    per run, the in-process figures (each the median of 3 passes). Medians and A/B ratios."""
    size = sum(p.stat().st_size for p in _corpus_files(corpus))
    trees = {"A": Path(__file__).resolve().parents[1], "B": against.resolve()}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for root in trees.values():  # bytecode compiled first, as installing it does
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "funes")], env=env,
                       stdout=subprocess.DEVNULL, check=False)  # fmt: skip
    cpu: dict[str, dict[str, list[float]]] = {t: {} for t in trees}
    load = [os.getloadavg()[0]]
    for _ in range(runs):
        for tree, root in trees.items():
            cases = _cases(f"export PYTHONPATH='{root}'; ", corpus)
            for name in ("funes-parse | funes-chunk", "funes-parse | funes-chunk --no-redact"):
                cpu[tree].setdefault(name, []).append(timed(cases[name])[2])
            child = subprocess.run(
                [sys.executable, __file__, "--corpus", str(corpus), "--in-process-json",
                 "--runs", "3"],
                env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True,
                check=True,
            )  # fmt: skip
            for name, r in json.loads(child.stdout).items():
                cpu[tree].setdefault(f"in one process: {name}", []).append(r["median_cpu_s"])
    load.append(os.getloadavg()[0])
    block_mb = json.loads(child.stdout)["redact() alone, on the block text"]["block_mb"]
    out: dict[str, Any] = {}
    for name in cpu["A"]:
        a, b = (statistics.median(cpu[t][name]) for t in trees)
        mb = block_mb if name.startswith("in one process: redact()") else size / 1e6
        out[name] = {
            "A_cpu_s": [round(c, 3) for c in cpu["A"][name]],
            "B_cpu_s": [round(c, 3) for c in cpu["B"][name]],
            "A_mb_per_cpu_s": round(mb / a, 1),
            "B_mb_per_cpu_s": round(mb / b, 1),
            "ab": round(a / b, 3),
        }
    return {"corpus": {"path": str(corpus), "bytes": size}, "A": str(trees["A"]),
            "B": str(trees["B"]), "runs": runs, "load": load, "results": out}  # fmt: skip


def ab_main(corpus: Path, against: Path, runs: int) -> None:
    res = ab(corpus, against, runs)
    day = dt.date.today().isoformat()
    out = Path(__file__).parent / "results" / f"parse-ab-{day}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(f"{corpus}: {res['corpus']['bytes'] / 1e6:.1f} MB; A {res['A']}, B {res['B']}; "
          f"{runs} runs each, alternated; load {res['load'][0]:.1f} -> {res['load'][1]:.1f}\n")  # fmt: skip
    print("| what | A: MB per CPU s | B: MB per CPU s | CPU A/B (medians) |")
    print("|---|---|---|---|")
    for name, r in res["results"].items():
        cell = name.replace("|", "\\|")
        print(f"| {cell} | {r['A_mb_per_cpu_s']:.1f} | {r['B_mb_per_cpu_s']:.1f} | {r['ab']:.3f} |")
    print(f"\nwritten {out}")


if __name__ == "__main__":
    main()
