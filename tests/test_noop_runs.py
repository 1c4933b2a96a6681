"""Runs with nothing to do answer without opening the table: a no-op `funes index` (a sweep, or
a hook's `funes index PATH --yes`) decides from file sizes and mtimes and the memory's state,
and `funes status` reads the counts its writers keep (tests/test_counts.py). Neither may hide
work: a chunk stored without a vector since, or a new session, is still seen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from test_index import write_claude
from test_write import chunk_line

# Runs `funes ARGS` in-process and prints, after it, whether LanceDB, Lance or onnxruntime were
# imported: the cost a no-op run must not pay.
PROBE = """
import sys
from funes.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as e:
    code = e.code
heavy = sorted(m for m in ("lance", "lancedb", "onnxruntime") if m in sys.modules)
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""


def probe(*args: str | Path) -> tuple[int, str, list[str]]:
    r = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, args)],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, env=os.environ, timeout=120,
    )  # fmt: skip
    lines = r.stderr.splitlines()
    heavy = [ln for ln in lines if ln.startswith("HEAVY=")]
    assert heavy, r.stderr
    loaded = [m for m in heavy[-1].removeprefix("HEAVY=").split(",") if m]
    return r.returncode, r.stdout, loaded


def test_a_noop_index_answers_without_opening_the_memory_and_still_sees_new_work(
    private_home: Path, tmp_path: Path
) -> None:
    src = write_claude(private_home, "sess-noop", 6)
    mem = tmp_path / "mem"
    r = run_cli("funes", "index", src, "--yes", "--memory", mem)
    assert r.returncode == 0, r.stderr
    assert "waiting=" not in r.stdout.decode()

    # Nothing changed: the hook's run and a sweep say so without loading the storage engine.
    code, out, loaded = probe("index", src, "--yes", "--memory", mem)
    assert (code, out.strip(), loaded) == (
        0,
        "indexed sessions=0 skipped=1 chunks=0 embedded=0",
        [],
    )
    code, out, loaded = probe("index", "--memory", mem)
    assert (code, loaded) == (0, [])
    assert out.strip() == "indexed sessions=0 skipped=1 chunks=0 embedded=0"

    # A chunk written since without a vector is work: the same run now embeds it.
    r = run_cli("funes-write", "--memory", mem, input=chunk_line(1, "gamma delta") + "\n")
    assert r.returncode == 0, r.stderr
    code, out, loaded = probe("index", src, "--yes", "--memory", mem)
    assert code == 0 and "lance" in loaded
    assert out.strip() == "indexed sessions=0 skipped=1 chunks=0 embedded=1"

    # A session that grew is work too.
    write_claude(private_home, "sess-noop", 9)
    r = run_cli("funes", "index", src, "--yes", "--memory", mem)
    summary = r.stdout.decode().strip()
    assert summary.startswith("indexed sessions=1 skipped=0 chunks=") and "chunks=0" not in summary
    code, out, loaded = probe("index", src, "--yes", "--memory", mem)
    assert (code, loaded) == (0, [])


def test_a_status_reads_the_counts_and_a_write_keeps_them_current(
    private_home: Path, tmp_path: Path
) -> None:
    mem = tmp_path / "mem"
    r = run_cli("funes-write", "--memory", mem, input=chunk_line(1, "alpha beta") + "\n")
    assert r.returncode == 0, r.stderr

    def status() -> tuple[dict[str, object], list[str]]:
        code, out, loaded = probe("status", "--memory", mem, "--json")
        assert code == 0
        return json.loads(out), loaded

    first, loaded = status()
    assert first["chunks"] == 1 and first["without_vectors"] == 1 and loaded == []
    again, loaded = status()
    assert again == first and loaded == []
    text = run_cli("funes", "status", "--memory", mem).stdout.decode()
    assert "chunks: 1\n" in text and "awaiting vectors: 1 chunks" in text

    more = "\n".join(chunk_line(i, f"word{i}") for i in (2, 3)) + "\n"
    assert run_cli("funes-write", "--memory", mem, input=more).returncode == 0
    after, loaded = status()
    assert after["chunks"] == 3 and after["without_vectors"] == 3 and loaded == []


def test_a_backfill_with_nothing_to_embed_says_so(tmp_path: Path) -> None:
    mem = tmp_path / "mem"
    unit = [0.0] * 383 + [1.0]
    lines = [chunk_line(i, f"word{i} cache ttl", vector=unit) for i in range(1, 4)]
    r = run_cli("funes-write", "--memory", mem, input="\n".join(lines) + "\n")
    assert r.returncode == 0, r.stderr
    r = run_cli("funes", "index", "--backfill", "--memory", mem)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == "nothing to embed: every chunk has its vector\n"
    assert r.stderr == b""
    # --json keeps its record; -q stays quiet.
    r = run_cli("funes", "index", "--backfill", "--json", "--memory", mem)
    assert json.loads(r.stdout)["embedded"] == 0
    assert run_cli("funes", "index", "--backfill", "-q", "--memory", mem).stdout == b""
    # With a chunk waiting, the backfill embeds it and says what it did.
    r = run_cli("funes-write", "--memory", mem, input=chunk_line(9, "gamma delta") + "\n")
    assert r.returncode == 0, r.stderr
    r = run_cli("funes", "index", "--backfill", "--memory", mem)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().strip() == "indexed sessions=0 skipped=0 chunks=0 embedded=1"


@pytest.mark.slow
def test_a_noop_index_after_a_compaction_or_a_scrub_still_answers_without_the_memory(
    private_home: Path, tmp_path: Path
) -> None:
    """`funes compact` and `funes scrub` commit new table versions without leaving a chunk
    waiting for a vector, but the mark a no-op run reads names the version before them: the
    next `funes index` opened the table once to find nothing to do (W7-15: 1.85 s of CPU and
    8.9 s on a busy machine, mostly importing LanceDB, for `indexed sessions=0`)."""
    src = write_claude(private_home, "sess-maint", 6)
    mem = tmp_path / "mem"
    r = run_cli("funes", "index", src, "--yes", "--memory", mem)
    assert r.returncode == 0 and "waiting=" not in r.stdout.decode(), r.stderr
    # each after a run that grew the session (a fragment for the compaction to merge); the
    # second compaction follows a scrub, after which no writer keeps the counts
    for turns, maintenance in ((9, ["compact"]), (12, ["scrub", "--builtin-only"]),
                               (15, ["compact"])):  # fmt: skip
        write_claude(private_home, "sess-maint", turns)
        r = run_cli("funes", "index", src, "--yes", "--memory", mem)
        assert r.returncode == 0 and "waiting=" not in r.stdout.decode(), r.stderr
        versions = sorted(os.listdir(mem / "chunks.lance" / "_versions"))
        r = run_cli("funes", *maintenance, "--memory", mem)
        assert r.returncode == 0, r.stderr
        assert sorted(os.listdir(mem / "chunks.lance" / "_versions")) != versions, maintenance
        code, out, loaded = probe("index", src, "--yes", "--memory", mem)
        assert (code, out.strip(), loaded) == (
            0,
            "indexed sessions=0 skipped=1 chunks=0 embedded=0",
            [],
        ), maintenance
