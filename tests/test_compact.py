"""`funes compact [MEMORY]`: the reference's name for `funes optimize` — one verb."""

from __future__ import annotations

from pathlib import Path

import lance
from conftest import run_cli
from memory_builder import build, chunk


def fragments(mem: Path) -> int:
    """Fragments of the table's latest version (older versions keep theirs for 10 minutes)."""
    return len(lance.dataset(str(mem / "chunks.lance")).get_fragments())


def test_compact_merges_fragments_and_keeps_every_row(tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    for batch in range(3):  # three appends: three fragments
        build(mem, [chunk(f"s{batch}", i, f"passage {batch}.{i}") for i in range(20)], None)
    assert fragments(mem) == 3
    r = run_cli("funes", "compact", mem)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == f"compacted {mem}: 0 vectors, flat vector search\n"
    assert fragments(mem) == 1
    got = run_cli("funes", "sessions", "--memory", mem).stdout.decode()
    assert got.splitlines()[-1] == "sessions 1–3 of 3"
    same = run_cli("funes", "optimize", "--memory", mem, "--json")
    assert same.returncode == 0 and b'"memory": "' in same.stdout


def test_compact_is_refused_for_a_hub_memory_or_two_memories(tmp_path: Path) -> None:
    r = run_cli("funes", "compact", "ana/kb")
    assert r.returncode == 2 and r.stderr.decode().startswith(
        "funes: hf://datasets/ana/kb is a Hub"
    )
    r = run_cli("funes", "compact", tmp_path / "a", "--memory", tmp_path / "b")
    assert r.returncode == 2 and r.stderr.decode().startswith("funes: give the memory once")


def test_doctor_finds_duplicate_rows_and_stale_state_entries(tmp_path: Path) -> None:
    import json

    import lancedb

    from funes.store import open_memory
    from funes.store.memory import chunks_to_arrow

    mem = build(tmp_path / "memory", [chunk("s", i, f"passage {i}") for i in range(5)], None)
    # a raced write: the same chunk appended by a second writer that did not see the first
    twice = chunks_to_arrow([chunk("s", 3, "passage 3")], open_memory(mem))
    lancedb.connect(str(mem)).open_table("chunks").add(twice)
    transcript = tmp_path / "gone.jsonl"
    (mem / "state.json").write_text(
        json.dumps({str(transcript): {"sig": "1:2", "level": "text", "thinking": True}})
    )
    r = run_cli("funes", "doctor", "claude", "--memory", mem, "--json")
    got = json.loads(r.stdout)["memory"]
    assert (got["duplicate_rows"], got["stale_state_entries"]) == (1, 1)
    text = run_cli("funes", "doctor", "claude", "--memory", mem).stdout.decode()
    assert "  1 duplicate rows: chunk ids stored more than once" in text
    assert (
        f"  1 indexed transcript files no longer exist (their sessions stay in the memory), e.g. {transcript}"
        in text
    )
    transcript.write_text("")
    again = json.loads(run_cli("funes", "doctor", "claude", "--memory", mem, "--json").stdout)
    assert again["memory"]["stale_state_entries"] == 0
