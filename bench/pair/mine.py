"""Mine training pairs from public transcripts outside the labelled set (issue 21, item 2).

    .venv/bin/python -m bench.pair.mine [--mirror /work/.mirror] [--per-repo 300]

Walks the fetched snapshots under ``--mirror`` (``owner+name/repo``, bare git directories): every
ref's ``*.jsonl`` and ``*.db`` blob of 3 KB – 4 MB is a candidate; funes' own parsers decide
which are transcripts (bench/pair/data.py ``transcript_pieces``), and ``mine`` turns each into
"closing" and "tool" groups. Left out, whole:

- every repository of the labelled set (bench/labelled/*/manifest*.jsonl), so no fold's
  repositories leak into another fold's model through mined pairs — which also lets one mined
  stage serve every cross-validation model;
- the frozen fold's rule (``bench.labelled.folds.frozen``) applied to every repository;
- eval-dev's repositories (its README's table) and any file whose content equals one of
  eval-dev's or the labelled set's transcripts;
- whatever ``/work/shared/eval-reserved/check`` reports reserved (each repository, and each
  file by content).

Groups are deduplicated by (query, positive) — entire.io checkpoints repeat a session's earlier
records — and capped per file and per repository so no one repository dominates. Writes
bench/work/pair/mined.jsonl (one group a line, see data.py) and mined-files.jsonl (repo, ref,
path, sha256, groups) — under bench/work/, never committed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.labelled.folds import frozen  # noqa: E402
from bench.pair.data import manifests, mine, transcript_pieces  # noqa: E402

CHECK = Path("/work/shared/eval-reserved/check")
EVAL_DEV = Path("/work/shared/eval-dev")
OUT = ROOT / "bench" / "work" / "pair"


def eval_dev_repos() -> set[str]:
    readme = EVAL_DEV / "README.md"
    out = set()
    if readme.exists():
        for line in readme.read_text().splitlines():
            cells = [c.strip() for c in line.split("|")]
            if len(cells) > 3 and "/" in cells[2] and " " not in cells[2]:
                out.add(cells[2].lower())
    return out


def known_shas() -> set[str]:
    """sha256 of every labelled and eval-dev transcript."""
    out = {m.get("sha256", "") for m in manifests()}
    for f in EVAL_DEV.glob("corpus/*/*"):
        out.add(hashlib.sha256(f.read_bytes()).hexdigest())
    return out


def reserved(repo: str, files: list[Path]) -> set[Path]:
    """The files ``check`` reports reserved (all of them when the repository is)."""
    p = subprocess.run([str(CHECK), repo, *map(str, files)], capture_output=True, text=True)
    if p.returncode == 0:
        return set()
    if f"{repo.lower()}: reserved" in p.stdout:
        return set(files)
    return {f for f in files if f"{f}: reserved" in p.stdout}


def why_not(repo: str, labelled: set[str], evald: set[str]) -> str | None:
    r = repo.lower()
    if r in labelled:
        return "labelled"
    if r in evald:
        return "eval-dev"
    if frozen(repo):
        return "frozen fold"
    return None


def candidates(git: Path) -> list[tuple[str, str, str, int]]:
    """(ref, path, blob, size) of every transcript-shaped blob in any ref, one per blob."""
    refs = subprocess.run(["git", "--git-dir", str(git), "for-each-ref", "--format=%(refname)"],
                          capture_output=True, text=True).stdout.split()  # fmt: skip
    refs = [r for r in refs if not r.startswith(("refs/pull/", "refs/tags/"))]  # PR heads: 1000s
    seen: dict[str, tuple[str, str, str, int]] = {}
    for ref in sorted(refs):
        ls = subprocess.run(["git", "--git-dir", str(git), "ls-tree", "-r", "-l", ref],
                            capture_output=True, text=True)  # fmt: skip
        for line in ls.stdout.splitlines():
            meta, path = line.split("\t", 1)
            _, typ, blob, size = meta.split()
            if typ != "blob" or not size.isdigit() or not path.endswith((".jsonl", ".db")):
                continue
            if 3000 < int(size) < 4_000_000 and blob not in seen:
                seen[blob] = (ref, path, blob, int(size))
    # largest first: a session's last checkpoint holds its earlier ones
    return sorted(seen.values(), key=lambda c: (-c[3], c[1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--per-file", type=int, default=30, help="groups per source and file")
    ap.add_argument("--per-repo", type=int, default=300, help="groups per repository")
    ap.add_argument("--files-per-repo", type=int, default=30)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--out", type=Path, default=OUT / "mined.jsonl")
    a = ap.parse_args(argv)
    t0 = time.monotonic()
    labelled = {m["repo"].lower() for m in manifests()}
    evald = eval_dev_repos()
    shas = known_shas()
    groups: list[dict[str, Any]] = []
    used: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    for d in sorted(a.mirror.iterdir()):
        git = d / "repo"
        if not git.is_dir() or "+" not in d.name:
            continue
        repo = d.name.replace("+", "/", 1)
        why = why_not(repo, labelled, evald)
        if why:
            skipped[why] = skipped.get(why, 0) + 1
            continue
        cands = candidates(git)[: a.files_per_repo]
        if not cands:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for i, (_, path, blob, _) in enumerate(cands):
                f = Path(tmp) / f"{i:03d}{Path(path).suffix}"
                f.write_bytes(subprocess.run(["git", "--git-dir", str(git), "cat-file", "blob",
                                              blob], capture_output=True, check=True).stdout)  # fmt: skip
                paths.append(f)
            bad = reserved(repo, paths)
            if len(bad) == len(paths) and bad:
                skipped["reserved"] = skipped.get("reserved", 0) + 1
                continue
            seen: set[str] = set()
            got = 0
            for (ref, path, _, _), f in zip(cands, paths, strict=True):
                sha = hashlib.sha256(f.read_bytes()).hexdigest()
                if f in bad or sha in shas or got >= a.per_repo:
                    continue
                try:
                    pieces = transcript_pieces(f)
                except Exception:  # not a transcript funes reads
                    continue
                rng = random.Random(f"{a.seed}:{sha}")
                n = 0
                for g in mine(pieces, repo, rng, a.per_file):
                    key = hashlib.sha256((g["q"] + "\0" + g["pos"][0]).encode()).hexdigest()
                    if key in seen or got >= a.per_repo:
                        continue
                    seen.add(key)
                    g["file"] = f"{repo}:{ref}:{path}"
                    groups.append(g)
                    got += 1
                    n += 1
                if n:
                    used.append({"repo": repo, "ref": ref, "path": path, "sha256": sha,
                                 "groups": n})  # fmt: skip
        print(f"{repo}: {got} groups ({time.monotonic() - t0:.0f} s)", flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text("".join(json.dumps(g, ensure_ascii=False) + "\n" for g in groups))
    files = a.out.with_name(a.out.stem + "-files.jsonl")
    files.write_text("".join(json.dumps(u) + "\n" for u in used))
    by = {s: sum(g["src"] == s for g in groups) for s in ("closing", "tool")}
    print(f"written {a.out}: {len(groups)} groups {by} from {len(used)} files of "
          f"{len({u['repo'] for u in used})} repositories; skipped {skipped}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
