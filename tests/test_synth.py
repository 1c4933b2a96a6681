"""bench/synth.py: histories at scale in the agents' real layouts, byte-identical per seed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import EVAL_DEV, REPO, run_cli

sys.path.insert(0, str(REPO))  # the bench package lives at the repository root

from bench import synth

pytestmark = pytest.mark.skipif(not EVAL_DEV.is_dir(), reason="needs ../shared/eval-dev")


def snapshot(home: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(home)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(home.rglob("*"))
        if p.is_file()
    }


def test_same_seed_gives_a_byte_identical_tree_and_another_seed_does_not(tmp_path: Path) -> None:
    synth.build(tmp_path / "a", 40, seed=3)
    synth.build(tmp_path / "b", 40, seed=3)
    synth.build(tmp_path / "c", 40, seed=4)
    a = snapshot(tmp_path / "a")
    assert a == snapshot(tmp_path / "b")
    assert a != snapshot(tmp_path / "c")


def test_tree_uses_the_four_agents_layouts_and_parses_with_no_skipped_line(
    tmp_path: Path,
) -> None:
    info = synth.build(tmp_path, 40, seed=3)
    assert all(n > 0 for n in info["by_agent"].values()), info["by_agent"]
    files = [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()]
    assert any(f.startswith(".claude/projects/-home-dev-") for f in files)
    assert any(f.startswith(".codex/sessions/2026/") or f.startswith(".codex/sessions/2025/")
               for f in files)  # fmt: skip
    assert all("/rollout-" in f for f in files if f.startswith(".codex/"))
    assert any(f.startswith(".pi/agent/sessions/--home-dev-") for f in files)
    assert ".hermes/state.db" in files

    r = run_cli("funes-parse", "--all", "--report", "--json", env={"HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr.decode()
    reports = [json.loads(x) for x in r.stdout.decode().splitlines() if x.strip()]
    assert sum(x["sessions"] for x in reports) == 40
    for x in reports:
        assert x["error"] is None, x
        assert x["skipped"] == {} and x["repaired"] == {} and x["unexplained"] == {}, x
    assert "0 skipped lines" in r.stderr.decode()


def test_sessions_are_reidentified_and_time_shifted_into_the_year_before_the_end(
    tmp_path: Path,
) -> None:
    synth.build(tmp_path, 20, seed=5)
    ids = set()
    for f in (tmp_path / ".claude" / "projects").rglob("*.jsonl"):
        recs = [json.loads(x) for x in f.read_text().splitlines()]
        sids = {r["sessionId"] for r in recs if "sessionId" in r}
        assert sids == {f.stem}
        uuids = [r["uuid"] for r in recs if "uuid" in r]
        assert len(uuids) == len(set(uuids))
        ids.add(f.stem)
        for r in recs:
            t = synth.parse_ts(r.get("timestamp"))
            if t is not None:
                assert synth.END.year - 1 <= t.year <= synth.END.year + 1
    corpus_ids = {p.stem for p in (EVAL_DEV / "corpus").rglob("*.jsonl")}
    assert ids and not ids & corpus_ids
