"""What `funes status` reads besides the counts — the transcripts not yet indexed (a sweep
of every agent root, a stat per file) and the disk the memory takes — answered as before,
with fewer stats: a `-wal` is looked for beside databases only."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import run_cli
from test_index import write_claude, write_codex

from funes.sources.routing import Unit
from funes.store.status import _du


def status_json(memory: Path) -> dict:
    r = run_cli("funes", "status", "--memory", memory, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_status_counts_the_transcripts_grown_new_or_odd_since_the_index(
    private_home: Path,
) -> None:
    home, mem = private_home, private_home / "mem"
    grown = write_claude(home, "c1", 6)
    write_claude(home, "c2", 6, project="-home-ana-other")
    write_codex(home, "x1", 4)
    r = run_cli("funes", "index", "--yes", "--no-embed", "--memory", mem)
    assert r.returncode == 0, r.stderr
    assert status_json(mem)["pending_sources"] == 0

    with open(grown, "a") as f:  # the agent wrote another turn
        f.write(json.dumps({"type": "user", "uuid": "late", "sessionId": "c1"}) + "\n")
    write_codex(home, "x2", 4)  # a new session
    hidden = home / ".claude" / "projects" / ".trash" / "old.jsonl"  # never swept
    hidden.parent.mkdir()
    hidden.write_text(grown.read_text())
    outside = home / "elsewhere"  # a symlinked directory is not entered
    outside.mkdir()
    (outside / "s9.jsonl").write_text(grown.read_text())
    (home / ".claude" / "projects" / "linked").symlink_to(outside)
    # a FIFO named like a transcript: every index run skips it with a line, so it is never
    # pending (it was counted, and status asked for an index run that could not clear it)
    os.mkfifo(home / ".claude" / "projects" / "-home-ana-proj" / "pipe.jsonl")
    (home / ".claude" / "projects" / "-home-ana-proj" / "notes.txt").write_text("not one")
    assert status_json(mem)["pending_sources"] == 2


def test_the_disk_figure_is_every_file_under_the_memory(tmp_path: Path) -> None:
    mem = tmp_path / "mem"
    (mem / "chunks.lance" / "data").mkdir(parents=True)
    (mem / "lexical" / "s1").mkdir(parents=True)
    sizes = {"state.json": 10, "chunks.lance/data/a.lance": 4096, "lexical/s1/ids.npy": 333,
             "lexical/.hidden": 7}  # fmt: skip
    for rel, n in sizes.items():
        (mem / rel).write_bytes(b"x" * n)
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "f").write_bytes(b"x" * 10_000)
    (mem / "linked-dir").symlink_to(tmp_path / "big")  # not entered
    (mem / "linked-file").symlink_to(mem / "state.json")  # its target's size, as before
    (mem / "dangling").symlink_to(tmp_path / "nowhere")
    assert _du(mem) == sum(sizes.values()) + 10
    assert _du(tmp_path / "absent") == 0


def test_only_a_database_has_its_wal_in_its_signature(tmp_path: Path) -> None:
    db, wal = tmp_path / "state.db", tmp_path / "state.db-wal"
    db.write_bytes(b"d" * 100)
    assert Unit(db, None).signature() == f"100:{int(db.stat().st_mtime)}"
    wal.write_bytes(b"w" * 7)
    assert Unit(db, None).signature() == (
        f"100:{int(db.stat().st_mtime)}+7:{int(wal.stat().st_mtime)}"
    )
    # A transcript is no database: a file named like its WAL beside it changes nothing.
    t = tmp_path / "s1.jsonl"
    t.write_text("{}\n")
    (tmp_path / "s1.jsonl-wal").write_text("unrelated")
    assert Unit(t, None).signature() == f"3:{int(t.stat().st_mtime)}"
    assert Unit(tmp_path / "gone.jsonl", None).signature() is None
