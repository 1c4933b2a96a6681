"""`funes scrub` a batch of whole sessions at a time (issue 25): the same result as a scrub
that reads everything at once — the same blocks redacted and dropped, the same rows left."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from memory_builder import build, chunk

from funes.ingest import scrub
from funes.records import Chunk
from funes.store import open_memory

GITHUB_PAT = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
AWS_KEY = "AKIAZ3Q5RTYXWVUPQNML"
VOCAB = 200_000


def history(sessions: int, per_session: int, seed: int, words: int = 150) -> list[Chunk]:
    """Sessions of one-chunk turns of random words; every 40th session carries a GitHub
    token split across the two pieces of one block, and every 25th an AWS key id in a turn."""
    rng = random.Random(seed)
    out = []
    for s in range(sessions):
        sid = f"s{seed}-{s:05d}"
        for t in range(per_session):
            text = " ".join(f"w{rng.randrange(VOCAB):x}" for _ in range(words))
            if s % 25 == 7 and t == 3:
                text += f" export AWS_ACCESS_KEY_ID={AWS_KEY[:-2]}{chr(65 + s % 26)}{chr(65 + s // 26 % 26)}"
            out.append(chunk(sid, t, f"turn {t} of {sid}: {text}"))
        if s % 40 == 11:
            turn = f"{sid}-t{per_session}"
            out.append(chunk(sid, per_session, f"the token is {GITHUB_PAT[:20]}", turn=turn))
            out.append(
                chunk(sid, per_session, f"{GITHUB_PAT[20:]} keep it", turn=turn, split_idx=1)
            )
    return out


@pytest.mark.slow  # 10+ s of CPU: .ci/run runs it, bin/test does not
@pytest.mark.needs_scanner
def test_a_scrub_in_small_batches_does_what_one_batch_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same report and the same rows left, whether the memory is judged whole or a few
    sessions at a time (a token split across two chunks is still seen whole)."""
    rows = history(48, 5, seed=3, words=20)
    one, many = tmp_path / "one" / "memory", tmp_path / "many" / "memory"
    build(one, rows, vectors=None)
    build(many, rows, vectors=None)
    a = scrub.scrub(str(one), embed=_zero)
    monkeypatch.setattr(scrub, "BATCH_ROWS", 7)
    b = scrub.scrub(str(many), embed=_zero)
    assert a.redacted_blocks > 0 and a.as_dict() == {**b.as_dict(), "memory": a.memory}
    cols = ["id", "text", "session_id", "split_idx"]
    ta = open_memory(one).rows(columns=cols).sort_by("id")
    tb = open_memory(many).rows(columns=cols).sort_by("id")
    assert ta.equals(tb)
    assert "[REDACTED:github-pat]" in "".join(ta.column("text").to_pylist())


def _zero(texts: list[str]) -> np.ndarray:
    v = np.zeros((len(texts), 384), dtype=np.float32)
    v[:, 0] = 1.0
    return v
