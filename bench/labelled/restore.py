"""Rebuild the labelled transcripts in bench/labelled/corpus/ from local clones.

    .venv/bin/python bench/labelled/restore.py [--from DIR ...]

The transcripts are not committed (their repositories' code and data stay out of this one); each
``<agent>/manifest.jsonl`` line names ``repo, commit, path, sha256``. For each, this looks for a
git directory of that repository under every ``--from`` DIR (default ``/work/.mirror``, where the
search tool's ``fetch`` puts snapshots, laid out ``OWNER+NAME/repo``; a plain clone at
``DIR/OWNER/NAME`` works too), writes ``git show COMMIT:PATH`` (``HEAD`` or any ref holding the
path if that commit is absent) and keeps it only when its sha256 matches. It prints what it could
not restore; the quality bench runs on whatever is present.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"


def git_dirs(roots: list[Path], repo: str) -> list[Path]:
    owner, name = repo.split("/", 1)
    out = []
    for r in roots:
        for cand in (r / f"{owner}+{name}" / "repo", r / f"{owner}+{name}", r / owner / name):
            if (cand / "HEAD").exists() or (cand / ".git").exists():
                out.append(cand / ".git" if (cand / ".git").exists() else cand)
    return out


def blob(git_dir: Path, commit: str, path: str) -> bytes | None:
    revs = [commit, "HEAD"]
    try:
        refs = subprocess.run(
            ["git", "--git-dir", str(git_dir), "log", "--all", "--format=%H", "--", path],
            capture_output=True,
            check=True,
        ).stdout.split()
        revs += [r.decode() for r in refs]
    except subprocess.CalledProcessError:
        pass
    for rev in revs:
        p = subprocess.run(
            ["git", "--git-dir", str(git_dir), "show", f"{rev}:{path}"], capture_output=True
        )
        if p.returncode == 0:
            return p.stdout
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--from",
        dest="roots",
        action="append",
        type=Path,
        help="folder of clones or fetched snapshots (repeatable; default /work/.mirror)",
    )
    a = ap.parse_args()
    roots = a.roots or [Path("/work/.mirror")]
    missing = 0
    entries = []
    for f in sorted(HERE.glob("*/manifest*.jsonl")):
        entries += [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
    for m in entries:
        dest = CORPUS / m["file"]
        if dest.exists() and hashlib.sha256(dest.read_bytes()).hexdigest() == m["sha256"]:
            continue
        data = None
        for g in git_dirs(roots, m["repo"]):
            data = blob(g, m["commit"], m["path"])
            if data is not None and hashlib.sha256(data).hexdigest() == m["sha256"]:
                break
            data = None
        if data is None:
            print(f"missing: {m['file']} ({m['repo']} {m['commit'][:10]}:{m['path']})")
            missing += 1
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    print(f"{len(entries) - missing} of {len(entries)} transcripts present in {CORPUS}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
