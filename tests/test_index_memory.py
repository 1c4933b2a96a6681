"""`funes index` in bounded memory: the peak RSS of an index run does not grow with the size of
the history (issue 25). Histories are generated here in Claude Code's format; each run is a
`funes index` subprocess whose own peak RSS is read from ``os.wait4``."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import BIN

from funes.store import open_memory

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


def index_peak_rss(home: Path, path: Path | None = None) -> tuple[int, str]:
    """Peak RSS (KB) of `funes index PATH --no-embed` (default: the whole history) into
    ``home``'s memory, and its stdout."""
    env = {**os.environ, "HOME": str(home), "FUNES_HOME": str(home / ".funes")}
    target = path or home / ".claude"
    p = subprocess.Popen(
        [str(BIN / "funes"), "index", str(target), "--yes", "--no-embed", "--json"],
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


def words_of(home: Path, n: int, seed: int) -> list[str]:
    """``n`` words of the history under ``home``, drawn from its stored text."""
    rng = random.Random(seed)
    texts = [t for t in open_memory(home / ".funes" / "memory").rows(columns=["text"])
             .column("text").to_pylist() if t]  # fmt: skip
    return [rng.choice(rng.choice(texts).split()) for _ in range(n)]


def hits(home: Path, queries: list[str]) -> list[list[tuple[str, float]]]:
    mem = open_memory(home / ".funes" / "memory")
    return [mem.lexical_search(q, 20) for q in queries]


@pytest.mark.slow
def test_a_hook_rebuilding_the_lexical_index_peaks_at_the_same_rss_for_twice_the_history(
    tmp_path: Path,
) -> None:
    """A hook's one-session index into a memory whose lexical index was lost (a writer killed
    between its two commits, a deleted directory) rebuilds the index from the table first. It
    read every row whole, and the reader before it indexed them all in memory once more: the
    larger memory's run peaked about 40 % higher. Streamed, the two peak alike, and the rebuilt
    index answers exactly as the lost one did."""
    peaks = []
    for name, sessions, seed in (("small", 150, 3), ("large", 300, 4)):
        home = tmp_path / name
        n = write_history(home, sessions=sessions, turns=120, seed=seed)
        index_peak_rss(home)
        # the same memory, its lexical index kept: what the rebuilt one must answer
        intact = tmp_path / f"{name}-intact"
        shutil.copytree(home / ".funes", intact / ".funes")
        shutil.rmtree(home / ".funes" / "memory" / "lexical")
        # one new session, in a project of its own
        other = tmp_path / f"{name}-new"
        write_history(other, sessions=1, turns=30, seed=seed + 100)
        new = next((other / ".claude" / "projects").rglob("*.jsonl"))
        rss, out = index_peak_rss(home, new)
        assert json.loads(out)["chunks"] == 30
        index_peak_rss(intact, new)
        new_words = " ".join(new.read_text().split('"text": "')[1].split()[:3])
        queries = [*words_of(home, 40, seed), new_words, "w1q1 w2q2", "nothing-matches-this"]
        got, want = hits(home, queries), hits(intact, queries)
        assert sum(map(bool, want)) >= 41  # the sampled words and the new session's are found
        assert [[i for i, _ in h] for h in got] == [[i for i, _ in h] for h in want]
        assert [s for h in got for _, s in h] == pytest.approx([s for h in want for _, s in h])
        found = open_memory(home / ".funes" / "memory")
        assert found.lexical.n_docs() == found.count() == n + 30
        peaks.append(rss)
    small, large = peaks
    assert large <= 1.2 * small, (
        f"peak RSS {small / 1024:.0f} MB rebuilding 18,000 chunks, {large / 1024:.0f} MB for 36,000"
    )
