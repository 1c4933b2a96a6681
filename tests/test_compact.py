"""`funes compact [MEMORY]`: the reference's name for `funes optimize` — one verb."""

from __future__ import annotations

from pathlib import Path

import lance
from conftest import run_cmd
from memory_builder import build, chunk


def fragments(mem: Path) -> int:
    """Fragments of the table's latest version (older versions keep theirs for 10 minutes)."""
    return len(lance.dataset(str(mem / "chunks.lance")).get_fragments())


def test_compact_merges_fragments_and_keeps_every_row(tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    for batch in range(3):  # three appends: three fragments
        build(mem, [chunk(f"s{batch}", i, f"passage {batch}.{i}") for i in range(20)], None)
    assert fragments(mem) == 3
    r = run_cmd("funes", "compact", mem)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == f"compacted {mem}: 0 vectors, flat vector search\n"
    assert fragments(mem) == 1
    got = run_cmd("funes", "sessions", "--memory", mem).stdout.decode()
    assert got.splitlines()[-1] == "sessions 1–3 of 3"
    same = run_cmd("funes", "optimize", "--memory", mem, "--json")
    assert same.returncode == 0 and b'"memory": "' in same.stdout


def test_compact_is_refused_for_a_hub_memory_or_two_memories(tmp_path: Path) -> None:
    r = run_cmd("funes", "compact", "ana/kb")
    assert r.returncode == 2 and r.stderr.decode().startswith(
        "funes: hf://datasets/ana/kb is a Hub"
    )
    r = run_cmd("funes", "compact", tmp_path / "a", "--memory", tmp_path / "b")
    assert r.returncode == 2 and r.stderr.decode().startswith("funes: give the memory once")
