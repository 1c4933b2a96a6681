"""`funes models [--json]` and `funes models fetch`: the local models, their pins and checks.

`funes models` says which embedder, pair model and reranker this install has, where their files came from,
and whether their sha256 matches the pin (exit 1 when a check fails; a missing reranker is not
a failure). `funes models fetch` downloads the optional pinned cross-encoder from the Hub.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from funes.cli._args import Parser
from funes.cli._pipe import run

PROG = "funes models"


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog=PROG,
        example="funes models fetch",
        description="Show the local models (embedder, pair model, reranker), their pins, where their "
        "files came from and a sha256 check; `fetch` downloads the optional reranker.",
        epilog="Exit status: 0 all checks pass, 1 a check or download failed.",
    )
    p.add_argument(
        "action",
        nargs="?",
        choices=["show", "fetch"],
        default="show",
        metavar="ACTION",
        help="show (the default) or fetch",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run(lambda: _fetch(args) if args.action == "fetch" else _show(args))


def _fetch(args: argparse.Namespace) -> int:
    # lazy: funes.models.pins and funes.models.reranker stay off fast commands' start-up
    from funes.models.pins import RERANKER_PIN
    from funes.models.reranker import fetch_reranker

    path = fetch_reranker()
    if args.json:
        print(json.dumps({"fetched": RERANKER_PIN.name, "dir": str(path)}))
    else:
        print(f"reranker {RERANKER_PIN.name} @ {RERANKER_PIN.revision[:12]} ready in {path}")
    return 0


def _show(args: argparse.Namespace) -> int:
    # lazy: funes.models.info stays off fast commands' start-up
    from funes.models.info import describe, hints

    d = describe()
    if args.json:
        print(json.dumps(d, indent=1))
    else:
        sys.stdout.write(render(d, hints()))
    for p in d["embedder"]["problems"] + d["pair"]["problems"] + d["reranker"]["problems"]:
        print(f"funes: {p}", file=sys.stderr)
    return 0 if d["ok"] else 1


def render(d: dict[str, Any], hint: dict[str, str]) -> str:
    e, r = d["embedder"], d["reranker"]
    lines = [f"embedder  {e['name']}  ({e['dim']}-d, truncates at {e['max_tokens']} tokens)"]
    if "file" in e:
        lines.append(f"  weights    {e['file']}  (from {e['origin']})")
        verdict = "ok" if e["sha256"] == e["sha256_pinned"] else f"MISMATCH (got {e['sha256']})"
        lines.append(f"  sha256     {e['sha256_pinned']}  {verdict}")
    tok_ok = "ok" if not any("tokenizer" in p for p in e["problems"]) else "MISMATCH"
    lines.append(f"  tokenizer  {e['tokenizer']}  (vendored, Apache-2.0; sha256 {tok_ok})")
    g = e["graph"]
    if g["state"] == "int8 per-channel":
        intact = "" if g["intact"] else ", damaged: re-derived on next use"
        lines.append(
            f"  graph      int8 per-channel, derived {str(g['derived_at'])[:10]}, "
            f"cosine to fp32 ≥ {g['min_cosine']}{intact}  ({g['file']})"
        )
    elif g["state"] == "not derived yet":
        lines.append(
            "  graph      int8 graph not derived yet "
            f"(on first use, a few seconds; cache {e['cache_dir']})"
        )
    else:
        lines.append(f"  graph      fp32 (the int8 graph reached only cosine {g['min_cosine']})")
    lines.append(f"  threads    {e['threads']}  (set {hint['threads']} to change)")
    pm = d["pair"]
    lines.append(
        f"pair      {pm['name']}  ({pm['base']}; int8, reads {pm['max_tokens']} tokens, "
        f"{pm['bytes'] / 1e6:.1f} MB)"
    )
    for f in pm["files"]:
        verdict = (
            "missing"
            if f["sha256"] is None
            else "ok"
            if f["sha256"] == f["sha256_pinned"]
            else f"MISMATCH (got {f['sha256']})"
        )
        lines.append(f"  {Path(f['file']).name:<14} {f['sha256_pinned']}  {verdict}")
    lines.append(f"  dir        {pm['dir']}  (from {pm['origin']})")
    if r["installed"]:
        lines.append(f"reranker  {r['name']}")
        lines.append(f"  weights    {r['file']}  (from {r['origin']})")
        rec = r["sha256_recorded"]
        if rec is None:
            check = "not pinned (local directory)"
        else:
            check = "ok" if rec == r["sha256"] else "MISMATCH with the sha256 recorded at download"
        lines.append(f"  sha256     {r['sha256']}  {check}")
    elif r["problems"]:
        lines.append("reranker  unusable (see below)")
    else:
        lines.append("reranker  none installed — recall ranks without a cross-encoder")
        lines.append(f"  to add one: {hint['reranker']}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
