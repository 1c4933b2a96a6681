"""`funes index` in bounded memory: the peak RSS of an index run does not grow with the size of
the history (issue 25). Histories are generated here in Claude Code's format; each run is a
`funes index` subprocess whose own peak RSS is read from ``os.wait4``."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest
from conftest import BIN

# A chunk's worth of words drawn from a large vocabulary: about 120 distinct terms per chunk,
# so the lexical index (whose merges held every posting in memory) is what grows.
VOCAB = 400_000
WORDS_PER_BLOCK = 120


def write_history(home: Path, sessions: int, turns: int, seed: int) -> int:
    """``sessions`` Claude Code sessions of ``turns`` turns under ``home``; returns the number of
    text blocks written (one chunk each)."""
    rng = random.Random(seed)
    blocks = 0
    project = home / ".claude" / "projects" / "-home-ana-proj"
    project.mkdir(parents=True, exist_ok=True)
    for s in range(sessions):
        sid = f"{seed:04x}{s:08x}-0000-4000-8000-000000000000"
        lines = []
        for t in range(turns):
            base = {"uuid": f"{sid}-u{t}", "parentUuid": f"{sid}-u{t - 1}" if t else None,
                    "timestamp": f"2026-03-02T10:{t // 60 % 60:02d}:{t % 60:02d}.000Z",
                    "cwd": "/home/ana/proj", "sessionId": sid}  # fmt: skip
            text = " ".join(
                f"w{rng.randrange(VOCAB):x}q{rng.randrange(97)}" for _ in range(WORDS_PER_BLOCK)
            )
            role = "user" if t % 2 == 0 else "assistant"
            content = text if role == "user" else [{"type": "text", "text": text}]
            lines.append({"type": role, **base, "message": {"role": role, "content": content}})
            blocks += 1
        lines.append({"type": "assistant", "truncated": "{not json"})  # a malformed record
        (project / f"{sid}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in lines) + '{"type": "user", "mess'
        )
    return blocks


def index_peak_rss(home: Path) -> tuple[int, str]:
    """Peak RSS (KB) of `funes index HISTORY --no-embed` run on ``home``, and its stdout."""
    env = {**os.environ, "HOME": str(home), "FUNES_HOME": str(home / ".funes")}
    p = subprocess.Popen(
        [str(BIN / "funes"), "index", str(home / ".claude"), "--no-embed", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert p.stdout is not None
    out = p.stdout.read().decode()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 0, out
    return usage.ru_maxrss, out


@pytest.mark.slow
def test_an_index_run_of_a_history_twice_as_large_peaks_at_the_same_rss(tmp_path: Path) -> None:
    """18,000 and 36,000 chunks (about a minute of CPU in all). Before the lexical merges
    streamed, the larger run peaked 40 % higher (608 MB against 850 MB); now within 2 %."""
    small, large = tmp_path / "small", tmp_path / "large"
    n_small = write_history(small, sessions=150, turns=120, seed=1)
    n_large = write_history(large, sessions=300, turns=120, seed=2)
    rss_small, out_small = index_peak_rss(small)
    rss_large, out_large = index_peak_rss(large)
    # Both runs stored every block (the runs really did twice the work).
    small_run, large_run = json.loads(out_small), json.loads(out_large)
    assert small_run["chunks"] == n_small
    assert large_run["chunks"] == n_large == 2 * n_small
    assert large_run["lines_skipped"] == {"truncated": 300}  # one cut-off last line per session
    assert rss_large <= 1.2 * rss_small, (
        f"peak RSS {rss_small / 1024:.0f} MB for {n_small:,} chunks, "
        f"{rss_large / 1024:.0f} MB for {n_large:,}"
    )
