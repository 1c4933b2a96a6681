"""Recall with a cross-encoder installed: the reranker orders the head of the pool."""

from __future__ import annotations

from pathlib import Path

from conftest import jsonl, run_cli, write_jsonl
from test_models_reranker import build_tiny_cross_encoder


def line(uuid: str, text: str) -> dict[str, object]:
    return {"type": "assistant", "uuid": uuid, "timestamp": "2026-11-01T10:00:00.000Z",
            "cwd": "/home/ana/app", "message": {"role": "assistant", "content": text}}  # fmt: skip


def test_recall_reranks_with_the_installed_cross_encoder(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "t" / "s.jsonl", [
        line("a", "docker build cache layer timeout"),
        line("b", "fix the flaky test: the ci lock writer"),
        line("c", "bake bread with flour"),
        line("d", "database migration timeout"),
    ])  # fmt: skip
    mem = tmp_path / "memory"
    assert run_cli("funes", "index", tmp_path / "t", "--yes", "--memory", mem).returncode == 0
    env = {"FUNES_RERANKER": str(build_tiny_cross_encoder(tmp_path / "ce"))}
    hits = jsonl(run_cli("funes", "recall", "how do i fix the flaky test in ci", "--json",
                         "--memory", mem, env=env).stdout)  # fmt: skip
    assert hits[0]["turn_uuid"] == "b"
    rerank = [h["scores"]["rerank"] for h in hits]
    assert all(r is not None for r in rerank) and rerank == sorted(rerank, reverse=True)
    status = run_cli("funes", "status", "--memory", mem, env=env).stdout.decode()
    assert "reranking: on (" in status
    # Without it, the same query ranks by the built-in second stage and says so.
    plain = jsonl(run_cli("funes", "recall", "how do i fix the flaky test in ci", "--json",
                          "--memory", mem).stdout)  # fmt: skip
    assert all(h["scores"]["rerank"] is None for h in plain)
