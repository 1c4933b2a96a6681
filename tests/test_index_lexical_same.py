"""The lexical index an index run writes is the one the table's rows give (issue 25).

`funes index` redacts each block before it splits it, so the writer takes a prose chunk's
text as the lexical index's text instead of masking it once more; a tool chunk (its label
names the tool, unredacted) is still masked. Whatever the path, the index must be the one a
rebuild from the table gives — the rebuild masks every row — term for term, and hold no term of
a secret."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
from conftest import run_cli, write_jsonl
from test_scrub import seeded_session

from funes.store import open_memory
from funes.store.lexical import LexicalIndex, Segment, merge, term_hash
from funes.store.tokenize import tokenize


def long_prose_session(root: Path, secrets: list[str], seed: int) -> Path:
    """A session of long assistant texts (split into several pieces) with ``secrets`` placed at
    random offsets, some of them across the 1,200-character cut between two pieces."""
    rng = random.Random(seed)
    sid = f"{seed:08x}-0000-4000-8000-00000000cafe"
    recs, parent = [], None
    for n in range(12):
        words = [f"step{rng.randrange(500)}" for _ in range(rng.randrange(150, 600))]
        for s in rng.sample(secrets, k=min(3, len(secrets))):
            words.insert(rng.randrange(len(words) + 1), f"token={s}")
        role = "user" if n % 2 == 0 else "assistant"
        text = " ".join(words)
        content = text if role == "user" else [{"type": "text", "text": text}]
        uuid = f"{sid[:8]}-p{n:03d}"
        recs.append({"type": role, "uuid": uuid, "parentUuid": parent, "sessionId": sid,
                     "timestamp": f"2026-10-01T10:{n:02d}:00.000Z", "cwd": "/home/ana/proj",
                     "message": {"role": role, "content": content}})  # fmt: skip
        parent = uuid
    recs.append('{"type": "assistant", "message": {"role": "assi')  # a cut-off last line
    return write_jsonl(root / "proj" / f"{sid}.jsonl", recs)


def whole(mem: Path) -> Segment:
    """Every live document of ``mem``'s lexical index, as one segment."""
    return merge(LexicalIndex.open(mem / "lexical").segments)


def test_an_index_runs_lexical_index_is_the_one_its_table_rebuilds(
    private_home: Path, tmp_path: Path
) -> None:
    hostile, values = seeded_session(private_home / "hostile")
    long = long_prose_session(private_home / "long", list(values), seed=5)
    mem = tmp_path / "mem"
    for path in (hostile, long):
        r = run_cli("funes", "index", path, "--yes", "--no-embed", "--memory", mem)
        assert r.returncode == 0, r.stderr
    rebuilt = tmp_path / "rebuilt"
    shutil.copytree(mem, rebuilt)
    shutil.rmtree(rebuilt / "lexical")
    with open_memory(rebuilt).writer(interactive=False):
        pass  # the writer indexes the table's rows again, each one masked
    a, b = whole(mem), whole(rebuilt)
    assert a.n_docs == b.n_docs == open_memory(mem).count() > 20
    for key in ("ids", "dl", "terms", "indptr", "docs", "tfs"):
        assert np.array_equal(np.asarray(getattr(a, key)), np.asarray(getattr(b, key))), key
    # no secret's words became terms (but a value stored as it was given: a context where
    # no detector knows it for a secret, a `token=` of the long session); the words around
    # them did
    stored = "\n".join(open_memory(mem).rows(columns=["text"]).column("text").to_pylist())
    leaked = [
        detector
        for value, detector in values.items()
        if value not in stored
        and any(np.isin(np.uint64(term_hash(t)), a.terms) for t in tokenize(value) if len(t) >= 12)
    ]
    assert leaked == []
    assert sum(value in stored for value in values) < len(values) / 4
    assert np.isin(np.uint64(term_hash("scheduler")), a.terms)
    hits = open_memory(mem).lexical_search("step7 token", 5)
    assert hits and all(open_memory(mem).fetch([i])[0]["session_id"] for i, _ in hits)
