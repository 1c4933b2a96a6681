"""Rewrite the set's table and totals in bench/labelled/README.md from the manifests and queries.

    .venv/bin/python bench/labelled/table.py

Everything from the line `| file | repository |` to the end of the file is regenerated; the
text above it is kept.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from bench.labelled import folds

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
HEADER = "| file | repository | path @ commit | licence | records | questions | batch |"


def _lines(pattern: str) -> list[tuple[str, dict]]:
    out = []
    for path in sorted(HERE.glob(f"*/{pattern}")):
        batch = path.stem.partition("-")[2] or "first"
        out += [(batch, json.loads(x)) for x in path.read_text().splitlines() if x.strip()]
    return out


def render() -> str:
    manifests = _lines("manifest*.jsonl")
    queries = [q for _, q in _lines("queries*.jsonl")]
    per_file = Counter(q["file"] for q in queries if q.get("file"))
    rows = [HEADER, "|---|---|---|---|---|---|---|"]
    for batch, m in manifests:
        frozen = " (frozen fold)" if folds.frozen(m["repo"]) else ""
        rows.append(
            f"| `{m['file']}` | {m['repo']}{frozen} | `{m['path']}` @ {m['commit'][:10]} "
            f"| {m['licence']} | {m['records']} | {per_file[m['file']]} | {batch} |"
        )
    kinds = Counter(q["kind"] for q in queries)
    agents = Counter(q["agent"] for q in queries)
    repos = {m["repo"] for _, m in manifests}
    first = {m["repo"] for b, m in manifests if b == "first"}
    big = sum(m["records"] > 1000 for _, m in manifests)
    frozen = {r for r in repos if folds.frozen(r)}
    n_frozen = sum(1 for q in queries if q.get("repo") and folds.frozen(q["repo"]))
    rows += [
        "",
        f"{len(queries):,} questions ("
        + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        + "); by agent "
        + ", ".join(f"{a} {n}" for a, n in sorted(agents.items()))
        + f"; {len(manifests)} transcripts from {len(repos)} repositories "
        f"({len(repos - first)} added after the first batch of {len(first)}); {big} with more "
        f"than 1,000 records. Frozen fold: {len(frozen)} repositories, {n_frozen} questions.",
    ]
    return "\n".join(rows) + "\n"


def main() -> None:
    text = README.read_text()
    start = text.find("| file | repository |")
    README.write_text((text[:start] if start >= 0 else text + "\n") + render())
    print(f"rewrote {README.relative_to(HERE.parent.parent)}")


if __name__ == "__main__":
    main()
