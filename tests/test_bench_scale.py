"""bench/scale.py: every step of the heavy-history bench runs end to end on a small history,
measures what it says, and bench/README.md's table renders from it; and bench/synth.py's
``--chunks`` asks for the history of that size without changing what a seed writes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import EVAL_DEV, REPO

sys.path.insert(0, str(REPO))  # the bench package lives at the repository root

from bench import _readme, scale, synth

needs_eval_dev = pytest.mark.skipif(not EVAL_DEV.is_dir(), reason="needs ../shared/eval-dev")


def test_sizes_read_k_and_m_and_refuse_words() -> None:
    assert scale.parse_sizes("10k,100k,1M,2000") == [10_000, 100_000, 1_000_000, 2000]
    with pytest.raises(ValueError, match="'lots'"):
        scale.parse_sizes("10k,lots")


@needs_eval_dev
def test_chunks_ask_for_sessions_and_keep_the_seeds_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert synth.sessions_for(1_000_000) == 10_000
    synth.main([str(tmp_path / "a"), "--chunks", "600", "--seed", "5"])
    by_chunks = json.loads(capsys.readouterr().out)
    synth.main([str(tmp_path / "b"), "--sessions", "6", "--seed", "5"])
    by_sessions = json.loads(capsys.readouterr().out)
    assert by_chunks == by_sessions and by_chunks["sessions"] == 6

    def files(home: Path) -> dict[str, bytes]:
        return {str(p.relative_to(home)): p.read_bytes() for p in home.rglob("*") if p.is_file()}

    assert files(tmp_path / "a") == files(tmp_path / "b")


@needs_eval_dev
@pytest.mark.slow
def test_every_step_runs_on_a_small_history_and_the_table_renders(tmp_path: Path) -> None:
    res = scale.one_size(800, tmp_path / "scratch", quick=True, work=tmp_path)

    failed = {k: v for k, v in res.items() if isinstance(v, dict) and "error" in v}
    assert not failed, failed
    idx = res["index"]
    assert idx["exit"] == 0 and not idx.get("timed_out")
    assert res["chunks"] == idx["report"]["chunks"] > 0
    assert idx["first_hit_s"] is not None and idx["all_text_searchable_s"] is not None
    assert idx["first_hit_s"] <= idx["all_text_searchable_s"] <= idx["wall_s"]
    assert idx["units"] == idx["units_at_text_tier"] > 0
    assert 20 < idx["peak_rss_mb"] < 4000 and idx["cpu_s"] > 0
    assert 0 < res["random_vectors"]["vectors"] + res["embed_behind"]["embedded"] <= res["chunks"]
    warm = ("warm_flat", "warm_flat_pair", "warm_optimized", "warm_optimized_pair",
            "warm_optimized_pair_mcp")  # fmt: skip
    for key in warm:
        assert res[key]["n"] == 8 and res[key]["p50_ms"] > 0, key
    for key in ("cold", "cold_optimized"):
        for name in ("recall", "status", "get"):
            assert res[key][name]["runs"] == 2 and "failed" not in res[key][name], (key, name)
    hook = res["append"]["hook_index_one_session"]
    assert "failed" not in hook and all(c and c > 0 for c in hook["chunks"])
    assert res["optimize"]["exit"] == 0
    assert res["lexical_build"]["report"]["writer_rebuild_s"] >= 0
    assert res["hub"]["push"]["exit"] == 0 and res["hub"]["push"]["uploaded_mb"] > 0
    assert "failed" not in res["hub"]["remote_recall_cold"]
    assert res["scrub"]["exit"] == 0 and res["scrub"]["report"]["rows"] > res["chunks"]
    assert res["disk_reaped"]["bytes_per_chunk"] > 0
    assert not (tmp_path / "scratch" / "home-800").exists()  # scratch data removed
    assert json.loads((tmp_path / "scale-800.json").read_text())["scrub"] == res["scrub"]

    table = "\n".join(_readme.scale_section({"vectors": scale.VECTORS_NOTE,
                                            "sizes": {"800": res}}))  # fmt: skip
    assert f"**{res['chunks']:,} chunks**" in table
    assert f"**{idx['all_text_searchable_s']} s**" in table
    assert "failed" not in table and "stopped at the time limit" not in table
    assert f"**{res['cold_optimized']['recall']['cpu_p50_s']:.2f} s** CPU" in table
