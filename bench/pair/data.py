"""Training groups for the pair model: pairs mined from transcripts, and the labelled questions.

A group is one query with its positive passages and hard negatives, all texts as funes stores
them (chunks of ≤1200 characters, tool blocks with their ``[tool_use …]`` label)::

    {"q": str, "pos": [str], "neg": [str], "repo": str, "src": "closing"|"tool"|"label"}

Mined (no labels needed), from every transcript funes' own parsers read:

- **closing**: a user prompt ↔ the assistant text that closed its turn (the last assistant
  prose before the next prompt). Hard negatives: the turn's first assistant text when it is
  another block (the restatement of the task, the announcement of a step), the turn's other
  assistant texts, and the closing texts of the neighbouring turns.
- **tool**: a tool call ↔ its result (joined on tool_use_id). Hard negatives: the results of
  the neighbouring calls of the same session.

Labelled: each answerable question of bench/labelled, its answering chunks as positives and,
as negatives, the candidates of funes' own pool that do not answer (when a pool is given), else
the transcript's chunks that share most words with the question and the answer's neighbours.

Never from files ``/work/shared/eval-reserved/check`` reports reserved, never from eval-dev,
never from frozen-fold repositories (bench/labelled/folds.py): the caller passes the
repositories to leave out.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LABELLED = ROOT / "bench" / "labelled"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.labelled.folds import fold_of, frozen  # noqa: E402

NEGATIVES = 11
MIN_PROMPT = 15  # characters of a user prompt worth pairing
MAX_QUERY_CHARS = 400

_WORD = re.compile(r"[A-Za-z0-9_]+")


@dataclass
class Piece:
    """One stored chunk of a transcript, with where it sits."""

    text: str
    seq: int
    role: str
    block_type: str
    tool_use_id: str | None
    turn: int  # index of the user-prompt turn it belongs to (-1 before the first)


def transcript_pieces(path: Path) -> list[Piece]:
    """The chunks funes would store for a transcript, in order (funes' own parser and chunker)."""
    from funes.chunking import render, split
    from funes.records import Block
    from funes.sources import parse

    out: list[Piece] = []
    turn = -1
    for t in parse([path]):
        prompt = t.role == "user" and any(
            b.type == "text" and len(b.text.strip()) >= MIN_PROMPT for b in t.blocks
        )
        if prompt:
            turn += 1
        for b in t.blocks:
            if b.type not in ("text", "thinking", "tool_use", "tool_result"):
                continue
            rendered = render(Block(b.type, b.text, b.tool_name, b.tool_use_id))
            for piece in split(rendered):
                out.append(Piece(piece, t.seq, t.role, b.type, b.tool_use_id, turn))
    return out


def mine(pieces: list[Piece], repo: str, rng: random.Random, cap: int = 40) -> list[dict[str, Any]]:
    """Mined groups of one transcript: at most ``cap`` of each source, drawn by ``rng``."""
    closing = _closing_groups(pieces, repo)
    tool = _tool_groups(pieces, repo)
    rng.shuffle(closing)
    rng.shuffle(tool)
    return closing[:cap] + tool[:cap]


def _closing_groups(pieces: list[Piece], repo: str) -> list[dict[str, Any]]:
    prompts: dict[int, str] = {}
    prose: dict[int, list[str]] = {}
    for p in pieces:
        if p.turn < 0:
            continue
        if p.role == "user" and p.block_type == "text" and p.turn not in prompts:
            prompts[p.turn] = p.text
        elif p.role == "assistant" and p.block_type == "text":
            prose.setdefault(p.turn, []).append(p.text)
    closers = {t: texts[-1] for t, texts in prose.items()}
    out = []
    for t, prompt in prompts.items():
        texts = prose.get(t)
        if not texts or len(texts[-1]) < 40:
            continue
        pos = texts[-1]
        neg = [x for x in dict.fromkeys(texts[:-1]) if x != pos]
        for d in (1, -1, 2, -2, 3, -3, 4, -4, 5, -5):
            c = closers.get(t + d)
            if c and c != pos and c not in neg:
                neg.append(c)
        if len(neg) < 3:
            continue
        out.append({"q": prompt[:MAX_QUERY_CHARS], "pos": [pos], "neg": neg[:NEGATIVES],
                    "repo": repo, "src": "closing"})  # fmt: skip
    return out


def _tool_groups(pieces: list[Piece], repo: str) -> list[dict[str, Any]]:
    calls: dict[str, str] = {}
    results: dict[str, str] = {}
    order: list[str] = []
    for p in pieces:
        if not p.tool_use_id:
            continue
        if p.block_type == "tool_use" and p.tool_use_id not in calls:
            calls[p.tool_use_id] = p.text
        elif p.block_type == "tool_result" and p.tool_use_id not in results:
            results[p.tool_use_id] = p.text
            order.append(p.tool_use_id)
    out = []
    for i, tid in enumerate(order):
        call, res = calls.get(tid), results[tid]
        if not call or len(res) < 30 or len(call) < 20:
            continue
        neg = []
        for d in (1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6):
            j = i + d
            if 0 <= j < len(order) and results[order[j]] != res and results[order[j]] not in neg:
                neg.append(results[order[j]])
        if len(neg) < 3:
            continue
        out.append({"q": call[:MAX_QUERY_CHARS], "pos": [res], "neg": neg[:NEGATIVES],
                    "repo": repo, "src": "tool"})  # fmt: skip
    return out


# ---------------------------------------------------------------- labelled questions


def manifests() -> list[dict[str, Any]]:
    out = []
    for f in sorted(LABELLED.glob("*/manifest*.jsonl")):
        out += [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
    return out


def questions() -> list[dict[str, Any]]:
    out = []
    for f in sorted(LABELLED.glob("*/queries*.jsonl")):
        out += [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
    return out


def _words(s: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(s)]


def lexical_negatives(q: str, pieces: list[Piece], skip: set[int], k: int) -> list[int]:
    """Indices of the ``k`` pieces BM25 ranks highest for ``q`` (not in ``skip``)."""
    docs = [Counter(_words(p.text)) for p in pieces]
    n = len(docs)
    avg = sum(sum(d.values()) for d in docs) / max(n, 1)
    df: Counter[str] = Counter()
    for d in docs:
        df.update(d.keys())
    terms = set(_words(q))
    scores = []
    for i, d in enumerate(docs):
        if i in skip:
            continue
        dl = sum(d.values())
        s = 0.0
        for t in terms:
            tf = d.get(t, 0)
            if tf:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / max(avg, 1)))
        if s > 0:
            scores.append((-s, i))
    return [i for _, i in sorted(scores)[:k]]


def labelled_groups(
    qs: Iterable[dict[str, Any]], pieces_of: dict[str, list[Piece]], rng: random.Random
) -> Iterator[dict[str, Any]]:
    """Groups of answerable labelled questions from their transcripts' own chunks."""
    from bench.quality import answers

    for q in qs:
        if q["kind"] == "absent" or q.get("file") not in pieces_of:
            continue
        pieces = pieces_of[q["file"]]
        pos_i = [i for i, p in enumerate(pieces) if answers(p.text, q["answer_quote"])]
        if not pos_i:
            continue
        skip = set(pos_i)
        neg_i = lexical_negatives(q["query"], pieces, skip, 8)
        near = [j for i in pos_i[:1] for j in range(i - 4, i + 5) if 0 <= j < len(pieces)]
        for j in near:
            if j not in skip and j not in neg_i:
                neg_i.append(j)
        neg = list(dict.fromkeys(pieces[i].text for i in neg_i))
        pos = list(dict.fromkeys(pieces[i].text for i in pos_i))
        neg = [x for x in neg if x not in pos]
        if len(neg) < 3:
            continue
        yield {"q": q["query"], "pos": pos[:3], "neg": neg[:NEGATIVES], "repo": q["repo"],
               "src": "label", "id": q["id"]}  # fmt: skip


def repo_allowed(repo: str, exclude_fold: int | None) -> bool:
    """Whether a labelled repository may feed training: never the frozen fold, never the
    held-out fold."""
    if frozen(repo):
        return False
    return exclude_fold is None or fold_of(repo) != exclude_fold


def build(
    exclude_fold: int | None,
    seed: int,
    cache: Path,
    mined_cap: int = 40,
    label_pools: dict[str, dict[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(mined groups, labelled groups) of the labelled corpus' transcripts whose repository is
    allowed. Parsed transcripts are cached under ``cache`` by sha256."""
    rng = random.Random(seed)
    mined: list[dict[str, Any]] = []
    pieces_of: dict[str, list[Piece]] = {}
    for m in manifests():
        if not repo_allowed(m["repo"], exclude_fold):
            continue
        path = LABELLED / "corpus" / m["file"]
        if not path.exists():
            continue
        pieces = _cached_pieces(path, m.get("sha256") or "", cache)
        pieces_of[m["file"]] = pieces
        mined += mine(pieces, m["repo"], random.Random(f"{seed}:{m['file']}"), mined_cap)
    qs = [q for q in questions() if q.get("repo") and repo_allowed(q["repo"], exclude_fold)]
    labels = []
    for q in qs:
        pool = (label_pools or {}).get(q["id"])
        if pool is not None:
            if pool["pos"] and len(pool["neg"]) >= 3:
                labels.append({"q": q["query"], "pos": pool["pos"][:3],
                               "neg": pool["neg"][:NEGATIVES], "repo": q["repo"],
                               "src": "label", "id": q["id"]})  # fmt: skip
            continue
        labels += labelled_groups([q], pieces_of, rng)
    return mined, labels


def _cached_pieces(path: Path, sha: str, cache: Path) -> list[Piece]:
    key = sha or hashlib.sha256(path.read_bytes()).hexdigest()
    f = cache / f"pieces-{key[:16]}.jsonl"
    if f.exists():
        return [Piece(**json.loads(x)) for x in f.read_text().splitlines() if x]
    pieces = transcript_pieces(path)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = f.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(p.__dict__) + "\n" for p in pieces))
    tmp.replace(f)
    return pieces
