"""`funes index --backfill` in bounded memory (issue 25): the peak RSS of a backfill does not grow
with the number of rows waiting for a vector. Histories are generated and stored text-only as in
tests/test_index_memory.py; each backfill is a subprocess whose own peak RSS is read from
``os.wait4``.

The subprocess runs what `funes index --backfill` runs (``embed_unlocked``: a batch read and
embedded without the writer lock, its vectors stored under it, 256 rows a commit) with a
stand-in for the model that derives a unit vector from each text: the model's memory does not
depend on the history, and at 38 ms of CPU a chunk it would take 20 minutes to embed these."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from test_index_memory import index_peak_rss, write_history

from funes.store import open_memory

BACKFILL = """
import sys, zlib
import numpy as np
from funes.ingest.backfill import embed_unlocked
from funes.store import open_memory

def embed(texts):
    out = np.empty((len(texts), 384), np.float32)
    for i, t in enumerate(texts):
        v = np.random.default_rng(zlib.crc32(t.encode())).standard_normal(384)
        out[i] = v / np.linalg.norm(v)
    return out

mem = open_memory(sys.argv[1])
print(*embed_unlocked(mem, embed, lambda: mem.writer(interactive=False)))
"""


def backfill_peak_rss(home: Path) -> tuple[int, int, int]:
    """Peak RSS (KB) of a backfill of ``home``'s memory, and the rows it embedded and left
    waiting."""
    env = {**os.environ, "HOME": str(home), "FUNES_HOME": str(home / ".funes")}
    with open(home / "backfill.err", "w+b") as err:
        p = subprocess.Popen(
            [sys.executable, "-c", BACKFILL, str(home / ".funes" / "memory")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=err,
        )
        assert p.stdout is not None
        out = p.stdout.read().decode()
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        assert p.returncode == 0, err.read().decode()[-2000:]
    done, left = map(int, out.split())
    return usage.ru_maxrss, done, left


@pytest.mark.slow
def test_a_backfill_of_a_history_twice_as_large_peaks_at_the_same_rss(tmp_path: Path) -> None:
    """18,000 and 36,000 chunks waiting for a vector (about a minute of CPU with the text-only
    index runs before them). Every row gets its vector, and vector search finds a chunk by the
    vector of its text."""
    peaks = []
    for name, sessions, seed in (("small", 150, 5), ("large", 300, 6)):
        home = tmp_path / name
        n = write_history(home, sessions=sessions, turns=120, seed=seed)
        _, out = index_peak_rss(home)
        assert json.loads(out)["without_vectors"] == n
        rss, done, left = backfill_peak_rss(home)
        assert (done, left) == (n, 0)
        mem = open_memory(home / ".funes" / "memory")
        assert mem.count("vector IS NULL") == 0
        row = mem.rows(columns=["id", "text"]).slice(n // 2, 1).to_pylist()[0]
        v = np.random.default_rng(zlib.crc32(row["text"].encode())).standard_normal(384)
        hits = mem.vector_search((v / np.linalg.norm(v)).astype(np.float32), 5)
        assert hits and hits[0][0] == row["id"]
        peaks.append(rss)
    small, large = peaks
    assert large <= 1.2 * small, (
        f"peak RSS {small / 1024:.0f} MB backfilling 18,000 chunks, {large / 1024:.0f} MB for 36,000"
    )
