"""What `funes models` prints: the embedder, the pair model and the reranker this install has,
their pins, where their files came from and their sha256 checks; and what `fetch` fetched."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def models_text(d: dict[str, Any], hint: dict[str, str]) -> str:
    """The models of :func:`funes.models.info.describe` as text: each one's pin, files, origin
    and sha256 check; ``hint`` names the setting for threads and how to add a reranker."""
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


def problems_text(d: dict[str, Any]) -> str:
    """One `funes: …` line per failed check, for stderr."""
    found = d["embedder"]["problems"] + d["pair"]["problems"] + d["reranker"]["problems"]
    return "".join(f"funes: {p}\n" for p in found)


def fetched_text(name: str, revision: str, path: Path) -> str:
    """What `funes models fetch` says once the reranker is in place."""
    return f"reranker {name} @ {revision[:12]} ready in {path}\n"
