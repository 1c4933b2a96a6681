"""Qwen Code: JSONL records with Gemini-style parts, telemetry that is not content, the older
Gemini-style whole-session JSON, QWEN_RUNTIME_DIR."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_homes import QWEN_TURNS, gemini_records, qwen_records, shape, swept, write_qwen
from conftest import write_jsonl

from funes import sources


def test_records_become_turns_with_qwens_ids(private_home: Path) -> None:
    laid = write_qwen(private_home)
    turns, stats = swept(private_home, "qwen")
    assert shape(turns) == QWEN_TURNS
    assert {t.session_id for t in turns} == {laid.session_id}
    assert [t.turn_uuid for t in turns] == ["q0", "q2", "q3", "q4"]
    assert [t.parent_uuid for t in turns] == [None, "q1", "q2", "q3"]
    assert turns[1].blocks[0].text == "eviction order?"
    result = turns[2].blocks[0]
    assert (result.text, result.tool_name, result.tool_use_id) == (
        "cache.rs: fn evict_oldest",
        "run_shell_command",
        "fc1",
    )
    assert {t.workdir for t in turns} == {"-home-ana-tiles"}
    report = sources.coverage(stats[0])
    assert report["unexplained"] == {} and stats[0].skipped_lines == 1
    assert report["ignored"] == {"system:ui_telemetry": 1, "system:chat_compression": 1}


def test_older_whole_session_json_is_read_as_qwen(private_home: Path) -> None:
    chats = private_home / ".qwen/tmp/0f3a/chats"
    chats.mkdir(parents=True)
    doc = {"sessionId": "old-q", "projectHash": "0f3a", "messages": [
        {"id": "1", "type": "user", "content": "hello"},
        {"id": "2", "type": "qwen", "content": "hi from qwen"},
    ]}  # fmt: skip
    (chats / "session-2025-08-01T10-00-oldq.json").write_text(json.dumps(doc))
    turns, _ = swept(private_home, "qwen")
    assert [(t.role, t.harness, t.session_id) for t in turns] == [
        ("user", "qwen", "old-q"), ("assistant", "qwen", "old-q"),
    ]  # fmt: skip


def test_gemini_and_qwen_homes_do_not_claim_each_others_files(private_home: Path) -> None:
    write_qwen(private_home)
    g = write_jsonl(private_home / ".gemini/tmp/p/chats/session-g.jsonl", gemini_records("g", "x"))
    q = private_home / ".qwen/projects/-home-ana-tiles/chats/c4d1-qwen-session.jsonl"
    assert {t.harness for t in sources.parse([g])} == {"gemini"}
    assert {t.harness for t in sources.parse([q])} == {"qwen"}
    assert {t.session_id for t in swept(private_home, "gemini")[0]} == {"g"}


def test_runtime_dir_moves_the_root(
    private_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_jsonl(tmp_path / "rt/projects/-p/chats/x.jsonl", qwen_records("moved", "/p", "z"))
    monkeypatch.setenv("QWEN_RUNTIME_DIR", str(tmp_path / "rt"))
    assert {t.session_id for t in swept(private_home, "qwen")[0]} == {"moved"}


def test_a_qwen_file_found_elsewhere_is_sniffed_as_qwen(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "copied.jsonl", qwen_records("s", "/p", "x"))
    assert {t.harness for t in sources.parse([f])} == {"qwen"}
