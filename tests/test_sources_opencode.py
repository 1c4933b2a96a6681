"""OpenCode: its SQLite database read-only through a narrow query (never created, never
written, the event table never read), and the older JSON storage; and Kilo, the OpenCode fork
that keeps the same records in its own data directory."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from agent_homes import (
    OPENCODE_TURNS,
    opencode_db,
    shape,
    snapshot,
    swept,
    write_kilo,
    write_kilo_db,
    write_opencode,
)

from funes import sources
from funes.errors import FunesError
from funes.sources import FileStats
from funes.sources.sqlite import connect_readonly


def test_database_messages_and_parts_become_turns(private_home: Path) -> None:
    laid = write_opencode(private_home)
    turns, stats = swept(private_home, "opencode")
    assert shape(turns) == OPENCODE_TURNS
    assert {t.session_id for t in turns} == {laid.session_id}
    assert [(t.turn_uuid, t.parent_uuid) for t in turns] == [
        ("msg_01u", None),
        ("msg_02a", "msg_01u"),
    ]
    use, result = turns[1].blocks[1], turns[1].blocks[2]
    assert (use.text, use.tool_name, use.tool_use_id) == (
        '{"command":"rg evict"}',
        "bash",
        "call_1",
    )
    assert (result.text, result.tool_use_id) == ("cache.rs: fn evict_oldest", "call_1")
    assert {t.workdir for t in turns} == {"-home-ana-tiles"}
    assert turns[0].ts == "2026-05-03T09:20:00.000Z"
    # the event table repeats a part: read once, from the part table
    texts = [b.text for t in turns for b in t.blocks]
    assert sum(laid.phrase in x for x in texts) == 1
    report = sources.coverage(stats[0])
    assert report["unexplained"] == {} and report["error"] is None
    assert report["ignored"] == {"part:step-start": 1, "part:file": 1, "part:step-finish": 1}


@pytest.mark.parametrize("wal", [False, True])
def test_database_is_never_written(private_home: Path, wal: bool) -> None:
    laid = write_opencode(private_home)
    if wal:
        conn = sqlite3.connect(laid.where)
        conn.execute("pragma journal_mode=wal")
        conn.close()
    before = snapshot(laid.where.parent)
    turns, _ = swept(private_home, "opencode")
    assert len(turns) == 2
    assert snapshot(laid.where.parent) == before  # same files, same bytes, same mtimes


def test_a_missing_database_stays_missing(private_home: Path) -> None:
    base = private_home / ".local/share/opencode"
    base.mkdir(parents=True)
    assert swept(private_home, "opencode")[0] == []
    assert list(base.iterdir()) == []
    with pytest.raises(FunesError, match="no such file"):
        connect_readonly(base / "opencode.db", "OpenCode database")
    assert not (base / "opencode.db").exists()


def test_xdg_data_home_moves_the_database(
    private_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opencode_db(tmp_path / "data/opencode/opencode.db", "ses_moved", "moved")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert {t.session_id for t in swept(private_home, "opencode")[0]} == {"ses_moved"}


def test_locked_or_corrupt_database_is_one_error_and_the_run_goes_on(
    private_home: Path, tmp_path: Path
) -> None:
    laid = write_opencode(private_home)
    holder = sqlite3.connect(laid.where, isolation_level=None)
    holder.execute("begin exclusive")
    try:
        _, stats = swept(private_home, "opencode")
    finally:
        holder.execute("rollback")
        holder.close()
    (st,) = stats
    assert st.error is not None and st.error.startswith(f"{laid.where}: cannot ")
    assert "\n" not in st.error and "locked" in st.error
    bad = tmp_path / "corrupt/opencode.db"
    bad.parent.mkdir()
    bad.write_bytes(b"SQLite format 3\x00" + os.urandom(4000))
    got: list[FileStats] = []
    assert (
        list(sources.parse_units([sources.Unit(bad, sources.get_source("opencode"))], got.append))
        == []
    )
    assert got[0].error is not None and "\n" not in got[0].error


def test_older_json_storage_is_read(private_home: Path) -> None:
    storage = private_home / ".local/share/opencode/storage"

    def put(rel: str, value: dict[str, object]) -> None:
        p = storage / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(value))

    put("project/prj_9.json", {"id": "prj_9", "worktree": "/srv/old"})
    put(
        "session/prj_9/ses_old.json",
        {"id": "ses_old", "projectID": "prj_9", "time": {"created": 1}},
    )
    put(
        "message/ses_old/msg_b.json",
        {"id": "msg_b", "role": "assistant", "time": {"created": 1_700_000_001_000}},
    )
    put(
        "message/ses_old/msg_a.json",
        {"id": "msg_a", "role": "user", "time": {"created": 1_700_000_000_000}},
    )
    put("part/msg_a/prt_1.json", {"id": "prt_1", "type": "text", "text": "hello old storage"})
    put("part/msg_b/prt_2.json", {"id": "prt_2", "type": "text", "text": "hi from the json files"})
    turns, _ = swept(private_home, "opencode")
    assert [(t.role, t.turn_uuid, t.session_id) for t in turns] == [
        ("user", "msg_a", "ses_old"), ("assistant", "msg_b", "ses_old"),
    ]  # fmt: skip
    assert {t.workdir for t in turns} == {"-srv-old"}


# ---------------------------------------------------------------------------- Kilo


def test_kilo_database_is_swept_as_kilo_beside_its_legacy_tasks(private_home: Path) -> None:
    laid = write_kilo_db(private_home)
    legacy = write_kilo(private_home)
    write_opencode(private_home)
    before = snapshot(laid.where.parent)
    turns, stats = swept(private_home, "kilo")
    mine = [t for t in turns if t.session_id == laid.session_id]
    assert shape(mine) == OPENCODE_TURNS
    assert {t.harness for t in turns} == {"kilo"}
    assert {t.workdir for t in mine} == {"-home-ana-kiln"}
    assert {t.session_id for t in turns} == {laid.session_id, legacy.session_id}
    assert sorted(Path(s.path).name for s in stats) == [
        "api_conversation_history.json",
        "kilo.db",
    ]
    assert all(sources.coverage(s)["unexplained"] == {} for s in stats)
    # OpenCode's sweep reads its own database only; Kilo's is never written
    assert {t.session_id for t in swept(private_home, "opencode")[0]} == {"ses_3f1opencode"}
    assert snapshot(laid.where.parent) == before


def test_kilo_channel_database_and_kilo_db_variable(
    private_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = private_home / ".local/share/kilo"
    opencode_db(data / "kilo-beta.db", "ses_beta", "a preview channel")
    opencode_db(data / "team.db", "ses_named", "named by KILO_DB, relative")
    opencode_db(tmp_path / "elsewhere.db", "ses_abs", "named by KILO_DB, absolute")
    assert {t.session_id for t in swept(private_home, "kilo")[0]} == {"ses_beta"}
    monkeypatch.setenv("KILO_DB", "team.db")
    assert {t.session_id for t in swept(private_home, "kilo")[0]} == {"ses_beta", "ses_named"}
    monkeypatch.setenv("KILO_DB", str(tmp_path / "elsewhere.db"))
    assert {t.session_id for t in swept(private_home, "kilo")[0]} == {"ses_beta", "ses_abs"}
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "nowhere"))
    monkeypatch.delenv("KILO_DB")
    assert swept(private_home, "kilo")[0] == []
    assert not (tmp_path / "nowhere").exists()  # a missing data directory stays missing


def test_kilo_json_storage_is_kilo_and_opencode_storage_is_opencode(private_home: Path) -> None:
    for app in ("kilo", "opencode"):
        storage = private_home / ".local/share" / app / "storage"
        for rel, value in {
            f"session/prj_1/ses_{app}.json": {"id": f"ses_{app}", "directory": f"/srv/{app}"},
            f"message/ses_{app}/msg_1.json": {"id": "msg_1", "role": "user"},
            "part/msg_1/prt_1.json": {"id": "prt_1", "type": "text", "text": f"hello {app}"},
        }.items():
            p = storage / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(json.dumps(value))
    for app in ("kilo", "opencode"):
        turns = swept(private_home, app)[0]
        assert [(t.harness, t.session_id, t.blocks[0].text) for t in turns] == [
            (app, f"ses_{app}", f"hello {app}")
        ]
    # a tree given by path: each file goes to the agent whose directory holds it
    got = {(t.harness, t.session_id) for t in sources.parse([private_home / ".local/share"])}
    assert got == {("kilo", "ses_kilo"), ("opencode", "ses_opencode")}
