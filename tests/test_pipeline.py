"""The plumbing chain composes like the porcelain: parse | chunk | embed | write, then query."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import REPO, jsonl, run_cli

SAMPLES = REPO / "contrib" / "samples"


def test_the_unix_pipeline_builds_a_memory_the_porcelain_reads(tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    chunks = run_cli("funes-chunk", input=run_cli("funes-parse", SAMPLES).stdout).stdout
    embedded = run_cli("funes-embed", "--skip-existing", "--memory", mem, input=chunks)
    assert embedded.returncode == 0, embedded.stderr
    rows = jsonl(embedded.stdout)
    assert len(rows) == 28 and all(len(r["vector"]) == 384 for r in rows)
    wrote = run_cli("funes-write", "--memory", mem, input=embedded.stdout)
    assert json.loads(wrote.stdout) == {"written": 28, "skipped": 0, "memory": str(mem)}

    # A second pass embeds nothing: every id is already stored.
    again = run_cli("funes-embed", "--skip-existing", "--memory", mem, input=chunks)
    assert again.returncode == 0 and again.stdout == b""

    hits = jsonl(
        run_cli(
            "funes-query", "why did 0042 hit a lock timeout?", "--memory", mem, "-k", "3"
        ).stdout
    )
    assert any("ACCESS EXCLUSIVE" in h["text"] for h in hits)
    # The porcelain sees the same memory.
    status = run_cli("funes", "status", "--memory", mem).stdout.decode()
    assert "chunks: 28\n" in status


def test_memory_without_skip_existing_is_a_usage_error(tmp_path: Path) -> None:
    r = run_cli("funes-embed", "--memory", tmp_path, input=b"")
    assert (
        r.returncode == 2
        and r.stderr.decode().strip() == "funes: --memory goes with --skip-existing"
    )
