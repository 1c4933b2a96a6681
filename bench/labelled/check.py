"""Check the labelled recall set in bench/labelled/ against the transcripts restored beside it.

    .venv/bin/python bench/labelled/check.py [--agent claude-code] [--quiet]

Layout: ``bench/labelled/<agent>/manifest.jsonl`` (one line per transcript: ``file, agent,
repo, commit, path, sha256, licence, records``) and ``bench/labelled/<agent>/queries.jsonl``
(one question per line: ``id, query, agent, file, repo, answer_quote, kind`` and, for absent
questions, ``checked_terms``). Transcripts live in ``bench/labelled/corpus/<file>`` (not
committed; ``restore.py`` rebuilds them from local clones).

Rules (those of ../shared/eval-dev/README.md): ``answer_quote`` is an exact substring of one
decoded JSON string value of ``file`` (for a SQLite file: of one text cell, or of a JSON string
inside one); ``kind`` is paraphrase | keyword | decision | failure | tool | absent; an absent
question has ``file``/``answer_quote`` null and ``checked_terms``, none of which occurs
(case-insensitive) in any transcript of the whole set. Exit 1 on any violation.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
KINDS = {"paraphrase", "keyword", "decision", "failure", "tool", "absent"}


def load(name: str, agent: str | None = None) -> list[dict]:
    out = []
    stem = name.removesuffix(".jsonl")
    for f in sorted(HERE.glob(f"*/{stem}*.jsonl")):
        if agent and f.parent.name != agent:
            continue
        for n, line in enumerate(f.read_text().splitlines(), 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as e:
                    sys.exit(f"{f}:{n}: not JSON ({e})")
    return out


def strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
        s = value.lstrip()
        if s[:1] in "[{":
            try:
                inner = json.loads(value)
            except (json.JSONDecodeError, RecursionError):
                inner = None
            yield from strings(inner)
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def file_strings(path: Path) -> Iterator[str]:
    if path.suffix == ".db":
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        tables = [r[0] for r in con.execute("select name from sqlite_master where type='table'")]
        for t in tables:
            for row in con.execute(f'select * from "{t}"'):
                for cell in row:
                    yield from strings(cell)
        return
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            yield from strings(json.loads(line))
        except (json.JSONDecodeError, RecursionError):
            continue


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agent", help="check only this agent's folder (absent terms still use all)")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    problems: list[str] = []
    manifest = {m["file"]: m for m in load("manifest.jsonl")}
    present = {f for f in manifest if (CORPUS / f).exists()}
    for f in sorted(present):
        sha = hashlib.sha256((CORPUS / f).read_bytes()).hexdigest()
        if sha != manifest[f]["sha256"]:
            problems.append(f"{f}: sha256 differs from the manifest")
    missing = sorted(set(manifest) - present)
    cache: dict[str, list[str]] = {}
    lowered: dict[str, str] = {}
    for f in present:
        lowered[f] = (CORPUS / f).read_bytes().decode("utf-8", "replace").lower()
    qs = load("queries.jsonl", a.agent)
    seen: set[str] = set()
    for q in qs:
        qid = q.get("id")
        where = f"{qid}"
        if qid in seen:
            problems.append(f"{where}: duplicate id")
        seen.add(qid)
        if q.get("kind") not in KINDS:
            problems.append(f"{where}: kind {q.get('kind')!r}")
            continue
        if not q.get("query"):
            problems.append(f"{where}: empty query")
        if q["kind"] == "absent":
            terms = q.get("checked_terms") or []
            if not terms:
                problems.append(f"{where}: absent question without checked_terms")
            for t in terms:
                for f, text in lowered.items():
                    if t.lower() in text:
                        problems.append(f"{where}: absent term {t!r} occurs in {f}")
            continue
        f = q.get("file")
        if f not in manifest:
            problems.append(f"{where}: file {f!r} not in any manifest")
            continue
        if q.get("repo") != manifest[f]["repo"]:
            problems.append(f"{where}: repo {q.get('repo')!r} != manifest {manifest[f]['repo']!r}")
        if f not in present:
            continue
        if f not in cache:
            cache[f] = list(file_strings(CORPUS / f))
        quote = q.get("answer_quote") or ""
        if len(quote) < 8:
            problems.append(f"{where}: answer_quote too short")
        elif not any(quote in s for s in cache[f]):
            problems.append(f"{where}: answer_quote not found in {f}")
    kinds = Counter(q["kind"] for q in qs if q.get("kind") in KINDS)
    agents = Counter(q.get("agent") for q in qs)
    repos = {m["repo"] for m in manifest.values()}
    long_ = sum(1 for m in manifest.values() if (m.get("records") or 0) > 1000)
    if not a.quiet:
        print(f"questions {len(qs)}  by kind {dict(sorted(kinds.items()))}")
        print(f"by agent {dict(sorted(agents.items()))}")
        print(
            f"transcripts {len(manifest)} ({len(present)} present) from {len(repos)} repositories;"
            f" {long_} with > 1,000 records"
        )
        if qs:
            print(f"absent share {kinds['absent'] / len(qs):.0%}")
        for f in missing:
            print(f"missing (run restore.py): {f}")
    for p in problems:
        print(f"PROBLEM {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
