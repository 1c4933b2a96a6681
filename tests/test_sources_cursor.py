"""Cursor: the CLI agent's JSONL transcripts and the IDE's state.vscdb, opened read-only and
immutable (never written, never created)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from agent_homes import (
    CURSOR_CLI_TURNS,
    CURSOR_IDE_TURNS,
    cursor_db,
    cursor_lines,
    shape,
    snapshot,
    swept,
    write_cursor_cli,
    write_cursor_ide,
)
from conftest import write_jsonl

from funes import sources


def test_cli_transcript_without_ids_or_times(private_home: Path) -> None:
    laid = write_cursor_cli(private_home)
    turns, stats = swept(private_home, "cursor")
    assert shape(turns) == CURSOR_CLI_TURNS
    assert {t.session_id for t in turns} == {laid.session_id}
    assert [t.turn_uuid for t in turns] == ["L1", "L2", "L3", "L5"]  # line numbers: stable
    assert {t.workdir for t in turns} == {"-home-ana-tiles"}
    assert all(t.ts.endswith("Z") for t in turns)  # the file's time
    # U+2028 inside a string does not split the record; [REDACTED] reasoning is dropped
    assert turns[3].blocks[0].text.startswith("FIFO\u2028not LRU")
    report = sources.coverage(stats[0])
    assert report["unexplained"] == {} and stats[0].skipped_lines == 1


def test_cursor_config_dir_moves_the_cli_root(
    private_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_jsonl(tmp_path / "cc/projects/p/agent-transcripts/moved.jsonl", cursor_lines("x"))
    monkeypatch.setenv("CURSOR_CONFIG_DIR", str(tmp_path / "cc"))
    assert {t.session_id for t in swept(private_home, "cursor")[0]} == {"moved"}


def test_ide_database_composers_and_bubbles_become_turns(private_home: Path) -> None:
    laid = write_cursor_ide(private_home)
    turns, stats = swept(private_home, "cursor")
    assert shape(turns) == CURSOR_IDE_TURNS
    assert {t.session_id for t in turns} == {laid.session_id}
    assert [t.turn_uuid for t in turns] == ["bu1", "ba1"]
    use, result = turns[1].blocks[2], turns[1].blocks[3]
    assert (use.text, use.tool_name, use.tool_use_id) == (
        '{"command":"rg evict"}',
        "run_terminal_cmd",
        "t1",
    )
    assert result.text == '{"output":"cache.rs"}'
    assert {t.workdir for t in turns} == {"-home-ana-tiles"}
    assert turns[1].ts == "2026-05-04T13:06:40.000Z"  # no time of its own: the chat's
    assert sources.coverage(stats[0])["error"] is None


def test_macos_location_is_swept(private_home: Path) -> None:
    cursor_db(
        private_home / "Library/Application Support/Cursor/User/globalStorage/state.vscdb",
        "mac-1",
        "x",
    )
    assert {t.session_id for t in swept(private_home, "cursor")[0]} == {"mac-1"}


@pytest.mark.parametrize("wal", [False, True])
def test_ide_database_is_never_written_even_while_locked(private_home: Path, wal: bool) -> None:
    laid = write_cursor_ide(private_home)
    holder = sqlite3.connect(laid.where, isolation_level=None)
    if wal:
        holder.execute("pragma journal_mode=wal")
    holder.execute("begin immediate")  # the editor in the middle of a write
    try:
        before = snapshot(laid.where.parent)
        turns, stats = swept(private_home, "cursor")
        assert snapshot(laid.where.parent) == before  # same files, bytes and mtimes
    finally:
        holder.execute("rollback")
        holder.close()
    assert len(turns) == 2 and stats[0].error is None


def test_missing_ide_database_stays_missing_and_old_or_corrupt_ones_do_not_stop_the_run(
    private_home: Path,
) -> None:
    gs = private_home / ".config/Cursor/User/globalStorage"
    gs.mkdir(parents=True)
    write_cursor_cli(private_home)
    turns, _ = swept(private_home, "cursor")
    assert len(turns) == 4 and list(gs.iterdir()) == []
    old = sqlite3.connect(gs / "state.vscdb")  # 2024: no cursorDiskKV table
    old.execute("create table ItemTable (key text, value blob)")
    old.commit()
    old.close()
    turns, stats = swept(private_home, "cursor")
    assert len(turns) == 4 and all(s.error is None for s in stats)
    (gs / "state.vscdb").write_bytes(b"SQLite format 3\x00" + os.urandom(3000))
    turns, stats = swept(private_home, "cursor")
    errors = [s.error for s in stats if s.error]
    assert len(turns) == 4 and len(errors) == 1 and "\n" not in errors[0]
