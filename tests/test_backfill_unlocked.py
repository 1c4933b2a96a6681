"""A backfill embeds without the writer lock and takes it only to store each batch, so a hook's
run that arrives while a detached `funes index --backfill` works is not refused or queued behind
minutes of embedding: it stores its turn at once — searchable by words straight away — and
leaves that turn's vectors to the backfill, which embeds them too. Nothing is lost or doubled."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli
from test_index import write_claude

from funes.store import counts
from funes.store.lock import behind_pid
from funes.store.memory import open_memory


def waiting(mem: Path) -> int | None:
    """The chunks waiting for a vector, as the writers' counts say (None: not known yet)."""
    found = counts.read(mem)
    return None if found is None else found[0].without_vectors


@pytest.mark.slow
def test_a_hooks_turn_gets_in_while_a_detached_backfill_embeds_and_is_embedded_by_it(
    private_home: Path, tmp_path: Path
) -> None:
    mem = tmp_path / "mem"
    big = write_claude(private_home, "sess-backlog", 3000)
    r = run_cli("funes", "index", big, "--no-embed", "--yes", "--memory", mem)
    assert r.returncode == 0, r.stderr
    backlog = open_memory(mem).count()
    assert waiting(mem) == backlog > 3000

    backfill = subprocess.Popen(
        [sys.executable, "-m", "funes.cli.main", "index", "--backfill", "--memory", str(mem)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=os.environ, start_new_session=True,
    )  # fmt: skip
    try:
        # Wait until it has stored a first batch: it is mid-run, holding the backfill lock.
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and backfill.poll() is None:
            left = waiting(mem)
            if left is not None and left < backlog and behind_pid(mem) == backfill.pid:
                break
            time.sleep(0.2)
        assert backfill.poll() is None, backfill.communicate()
        assert behind_pid(mem) == backfill.pid

        # The hook's run (what funes-index.sh runs, stdin not a terminal) for a new session.
        hook_src = private_home / ".claude" / "projects" / "-home-ana-proj" / "sess-hook.jsonl"
        turn = {
            "type": "user", "uuid": "hook-u0", "parentUuid": None, "sessionId": "sess-hook",
            "timestamp": "2026-03-03T10:00:00.000Z", "cwd": "/home/ana/proj",
            "message": {"role": "user", "content": "why does the quokkaflange importer stall?"},
        }  # fmt: skip
        hook_src.write_text(json.dumps(turn) + "\n")
        t0 = time.monotonic()
        hook = run_cli("funes", "index", hook_src, "--yes", "--memory", mem)
        took = time.monotonic() - t0
        assert hook.returncode == 0, hook.stderr.decode()
        summary = hook.stdout.decode().strip()
        assert summary.startswith("indexed sessions=1 ") and "embedded=0" in summary, summary
        assert "chunks=1 " in summary
        # It did not wait for the backfill to finish: that is still embedding the backlog.
        assert backfill.poll() is None, f"the backfill finished before the hook ({took:.1f}s)"

        shown = run_cli("funes", "status", "--memory", mem).stdout.decode()
        assert f"a backfill is running (pid {backfill.pid}) and embeds them" in shown

        # Searchable by words at once, before it has a vector.
        m = open_memory(mem)
        hits = m.lexical_search("quokkaflange importer", k=3)
        assert hits and m.fetch([hits[0][0]])[0]["session_id"] == "sess-hook"

        out, err = backfill.communicate(timeout=900)
    finally:
        if backfill.poll() is None:
            backfill.kill()
            backfill.wait()
    assert backfill.returncode == 0, err.decode()
    assert f"embedded={backlog + 1}" in out.decode()  # the hook's chunk too

    # The backfill embedded the hook's chunk too; every chunk is there once, with a vector.
    m = open_memory(mem)
    ids = m.rows(columns=("id",)).column("id").to_pylist()
    assert len(ids) == len(set(ids)) == backlog + 1
    assert m.count_without_vectors() == 0
    assert m.count("session_id = 'sess-hook' AND vector IS NOT NULL") == 1
    assert behind_pid(mem) is None
    st = json.loads(run_cli("funes", "status", "--memory", mem, "--json").stdout)
    assert (st["chunks"], st["without_vectors"], st["sessions"]) == (backlog + 1, 0, 2)
