"""`funes sketch`: a digest chosen from the stored vectors — the opening ask and the last word
always, one place per topic however often it repeats, the same on a second call (cached)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli
from memory_builder import build, chunk

TOPICS = ["tile cache eviction", "mvt parser zero-length", "redis ttl", "ci runner image",
          "grpc pin"]  # fmt: skip


def topic_vectors(rng: np.random.Generator, n_topics: int, per: int) -> np.ndarray:
    """``per`` near-identical unit vectors (cosine ≥ 0.98) around each of ``n_topics`` random
    directions, topic after topic."""
    centres = rng.standard_normal((n_topics, 384))
    out = []
    for c in centres:
        c = c / np.linalg.norm(c)
        for _ in range(per):
            v = c + 0.01 * rng.standard_normal(384)
            out.append(v / np.linalg.norm(v))
    return np.asarray(out, dtype=np.float32)


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    """Session `long`: a user's opening ask, 60 answers on five topics (twelve near-repeats
    each, interleaved), the assistant's last word; session `bare`: words only, no vectors."""
    rng = np.random.default_rng(7)
    topical = topic_vectors(rng, len(TOPICS), 12)
    order = [t * 12 + i for i in range(12) for t in range(len(TOPICS))]  # interleave topics
    rows = [chunk("long", 0, "how do we stop the tile server leaking memory?", role="user")]
    vecs = [rng.standard_normal(384)]
    for seq, j in enumerate(order, 1):
        rows.append(chunk("long", seq, f"about {TOPICS[j // 12]}, note {j % 12}: " + "z" * 400))
        vecs.append(topical[j])
    rows.append(chunk("long", 61, "done: byte-budgeted LRU, parser fixed, tests green"))
    vecs.append(rng.standard_normal(384))
    v = np.asarray(vecs, dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    build(tmp_path / "memory", rows, vectors=v)
    mem = build(tmp_path / "memory", [chunk("bare", 0, "no vectors here", role="user")], None)
    return mem


def sketch(mem: Path, *args: str) -> str:
    r = run_cli("funes", "sketch", *args, "--memory", mem)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode()


def seqs(out: str) -> list[int]:
    return [int(m[1]) for m in re.finditer(r"^\[[^\]]*\] \w+ seq(\d+) turn=", out, re.M)]


def test_a_sketch_keeps_the_first_and_last_turns_and_one_place_per_topic(memory: Path) -> None:
    out = sketch(memory, "long", "--units", "7")
    got = seqs(out)
    assert got[0] == 0 and got[-1] == 61 and len(got) == 7 and got == sorted(got)
    assert "seq0 turn=long-t0 text (opening ask)" in out
    assert "seq61 turn=long-t61 text (last word)" in out
    middle = [ln for ln in out.splitlines() if ln.startswith("about ")]
    assert sorted(ln.split(",")[0] for ln in middle) == sorted(f"about {t}" for t in TOPICS)
    # each topic's eleven repeats share its place
    assert out.count("(+11 alike: seq ") == 5
    assert out.splitlines()[0] == "sketch of session long: 7 passages of 62"


def test_a_sketch_is_identical_on_a_second_call_and_follows_new_turns(
    memory: Path, private_home: Path
) -> None:
    first = sketch(memory, "long", "--units", "5")
    cache = list((private_home / ".funes-home" / "cache" / "sketch").glob("*.json"))
    assert len(cache) == 1
    assert sketch(memory, "long", "--units", "5") == first
    build(memory, [chunk("long", 62, "one more thing: bump the version", role="user")], None)
    again = sketch(memory, "long", "--units", "5")  # new content: chosen afresh
    assert len(list(cache[0].parent.glob("*.json"))) == 2
    assert "(61 passages" not in again and again.splitlines()[0].endswith(
        "5 passages of 62 (1 without vectors left out)"
    )


def test_units_get_their_share_of_the_characters_but_never_under_240(memory: Path) -> None:
    out = sketch(memory, "long", "--units", "8", "--max-chars", "1000")
    bodies = [ln for ln in out.splitlines() if ln.startswith("about ")]
    assert bodies and all(len(b) == 240 and b.endswith("…") for b in bodies)
    part = sketch(memory, "long", "--from", "10", "--to", "20", "--units", "3")
    assert all(10 <= s <= 20 for s in seqs(part)) and len(seqs(part)) == 3


def test_a_session_without_vectors_gets_a_clear_line(memory: Path) -> None:
    out = sketch(memory, "bare")
    assert out.startswith("session bare has no vectors yet (1 passage waiting for one)")
    assert "funes index --backfill" in out
    r = run_cli("funes", "sketch", "nope", "--memory", memory)
    assert r.returncode == 1 and r.stderr.decode().startswith("funes: session nope not found")
    for bad, msg in [(["--units", "41"], "--units must be a whole number from 1 to 40"),
                     (["--max-chars", "50000"], "--max-chars must be a whole number from 1000")]:  # fmt: skip
        r = run_cli("funes", "sketch", "long", *bad, "--memory", memory)
        assert r.returncode == 2 and r.stderr.decode().startswith(f"funes: {msg}")


def test_a_repeated_sketch_of_an_unchanged_memory_never_opens_it(memory: Path) -> None:
    probe = (
        "import sys, funes.cli.main as m\n"
        "m.main(sys.argv[1:])\n"
        "print('LANCE=' + str('lance' in sys.modules or 'numpy' in sys.modules), file=sys.stderr)\n"
    )
    argv = [sys.executable, "-c", probe, "sketch", "long", "--units", "4", "--memory", str(memory)]
    first = subprocess.run(argv, capture_output=True, text=True, check=True)
    second = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert first.stderr.strip().endswith("LANCE=True")  # chosen from the vectors
    assert second.stderr.strip().endswith("LANCE=False")  # the same table: the cached answer
    assert second.stdout == first.stdout and second.stdout.startswith("sketch of session long")
