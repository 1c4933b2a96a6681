"""Run benchmark suites, write bench/results/<date>.json and regenerate bench/README.md.

    .venv/bin/python -m bench                  # every suite (~15 min on 2 cores)
    .venv/bin/python -m bench --quick          # smaller sizes, fewer repeats (~3 min)
    .venv/bin/python -m bench recall quality   # some suites; merged into today's file
    bin/train                                  # = python -m bench train-pair-model (torch)
    .venv/bin/python -m bench real-sources     # real transcripts from /work/.mirror, checked
    .venv/bin/python -m bench scale --sizes 10k,100k   # a heavy history (only when named)

A full run writes bench/results/<date>.json (--quick: <date>-quick.json); a run of some suites
replaces those suites in the day's file. bench/README.md is regenerated from the newest full
results file after every non-quick run (`--readme-only` regenerates it without measuring).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import json
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from bench import EXPLICIT, SCRIPT_ARGS, SUITES
from bench._common import RESULTS, ROOT, Context, loadavg, log, machine


def available() -> list[str]:
    return [s for s, (mod, _) in SUITES.items() if importlib.util.find_spec(mod) is not None]


def run_suite(name: str, ctx: Context) -> dict[str, Any]:
    mod_name, fn_name = SUITES[name]
    mod = importlib.import_module(mod_name)
    fn = getattr(mod, fn_name, None)
    t0, load0 = time.monotonic(), loadavg()
    if fn is None:  # a suite module without run(ctx): run it as a script, keep its output
        import subprocess

        args = SCRIPT_ARGS.get(name, {}).get("quick" if ctx.quick else "default", [])
        started = time.time()
        r = subprocess.run([sys.executable, "-m", mod_name, *args], capture_output=True, text=True)
        res: dict[str, Any] = {"args": args, "exit": r.returncode, "stdout": r.stdout[-4000:]}
        own = RESULTS / f"{name}-{date.today().isoformat()}.json"
        if own.exists() and own.stat().st_mtime >= started:
            res["results"] = json.loads(own.read_text())
    elif "ctx" in inspect.signature(fn).parameters or len(inspect.signature(fn).parameters) == 1:
        res = fn(ctx)
    else:
        res = fn()
    res = dict(res or {})
    res["_run"] = {"wall_s": round(time.monotonic() - t0, 1), "load_start": load0,
                   "load_end": loadavg(), "quick": ctx.quick}  # fmt: skip
    return res


def compiled() -> None:
    """Compile funes's modules before timing them, as pip does when it installs funes: with
    PYTHONDONTWRITEBYTECODE set (or a tree edited since its last import), every process the
    bench starts compiled each edited module again — a cold `funes get` at 1M counted 1,445M
    instructions instead of 1,095M."""
    import compileall

    compileall.compile_dir(ROOT / "funes", quiet=1)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["train-pair-model"]:  # a command, not a suite: needs the `train` extra
        from bench.pair.train import main as train_pair_model

        return train_pair_model(argv[1:])
    if argv[:1] == ["real-sources"]:  # a check, not a measurement: bench/real_sources.py
        from bench.real_sources import main as real_sources

        return real_sources(argv[1:])
    ap = argparse.ArgumentParser(
        prog="python -m bench",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="suites: "
        + ", ".join(SUITES)
        + f" ({', '.join(sorted(EXPLICIT))}: only when named)",
    )
    ap.add_argument("suites", nargs="*", metavar="SUITE", help="default: all")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    ap.add_argument("--readme-only", action="store_true", help="regenerate bench/README.md")
    ap.add_argument(
        "--baseline",
        metavar="DIR",
        type=Path,
        help="a source tree of an earlier build (git worktree add --detach DIR REF): the recall "
        "suite measures its cold starts in the same run and reports ratios",
    )
    ap.add_argument(
        "--sizes",
        metavar="N,N",
        help="chunk counts for suites that measure sizes (scale): e.g. 10k,100k,1M",
    )
    args = ap.parse_args(argv)
    from bench import _readme

    if args.readme_only:
        print(_readme.write())
        return 0
    unknown = [s for s in args.suites if s not in SUITES]
    if unknown:
        ap.error(f"unknown suite {', '.join(unknown)} (choose from {', '.join(SUITES)})")
    have = available()
    sizes = None
    if args.sizes:
        from bench.scale import parse_sizes

        try:
            sizes = parse_sizes(args.sizes)
        except ValueError as e:
            ap.error(str(e))
    suites = [s for s in (args.suites or [x for x in SUITES if x not in EXPLICIT]) if s in have]
    missing = [s for s in args.suites if s not in have]
    if missing:
        ap.error(f"suite module missing: {', '.join(missing)}")
    day = date.today().isoformat()
    out = RESULTS / f"{day}{'-quick' if args.quick else ''}.json"
    doc: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    doc.setdefault("suites", {})
    compiled()
    t0, load0 = time.monotonic(), loadavg()
    with tempfile.TemporaryDirectory(prefix="funes-bench-") as d:
        ctx = Context(quick=args.quick, tmp=Path(d), baseline=args.baseline, sizes=sizes)
        for name in suites:
            log(f"suite {name} …")
            doc["suites"][name] = run_suite(name, ctx)
            log(f"suite {name} done in {doc['suites'][name]['_run']['wall_s']} s")
            _write(out, doc, day)  # a suite that crashes later keeps what came before
    run = {
        "command": "python -m bench " + " ".join(sys.argv[1:] if argv is None else argv),
        "suites": suites,
        "wall_s": round(time.monotonic() - t0, 1),
        "load_start": load0,
        "load_end": loadavg(),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    doc["machine"] = machine()
    doc.setdefault("runs", []).append(run)
    _write(out, doc, day)
    log(f"{len(suites)} suites in {run['wall_s']} s; written {out}")
    if not args.quick:
        print(_readme.write())
    return 0


def _write(out: Path, doc: dict[str, Any], day: str) -> None:
    doc["date"] = day
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")


if __name__ == "__main__":
    sys.exit(main())
