"""Hermes: state.db read-only and live, old schemas, session files, and their agreement."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import jsonl, run_cli, write_jsonl

from funes import sources
from funes.records import Turn
from funes.sources import FileStats, Unit, hermes

FIXTURES = Path(__file__).parent / "fixtures" / "hermes"
SESSION = "20260301_100000_h1"


def epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).replace(tzinfo=UTC).timestamp()


def make_db(path: Path, schema: str | None = None, wal: bool = True) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(schema or (FIXTURES / "schema.sql").read_text())
    return conn


def add(
    conn: sqlite3.Connection, session: str, role: str, content: str | None, ts: str, **kw: object
) -> None:
    cols = ["session_id", "role", "content", "timestamp", *kw]
    vals = [session, role, content, epoch(ts), *kw.values()]
    conn.execute(
        f"INSERT INTO messages ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", vals
    )


def the_conversation(conn: sqlite3.Connection) -> None:
    """The rows Hermes writes for the conversation of fixtures/hermes/<SESSION>.jsonl."""
    conn.execute("INSERT INTO sessions (id, cwd) VALUES (?, '/home/kim/tool')", (SESSION,))
    calls = [
        {"id": "k1", "type": "function", "function": {"name": "grep", "arguments": '{"q":"--old"}'}},
        {"id": "k2", "type": "function", "function": {"name": "read_file", "arguments": {"path": "cli.py"}}},
    ]  # fmt: skip
    add(conn, SESSION, "user", "rename the --old flag", "2026-03-01T10:00:00")
    add(conn, SESSION, "assistant", "Looking for usages first.", "2026-03-01T10:00:01.250",
        reasoning="find usages", tool_calls=json.dumps(calls))  # fmt: skip
    add(conn, SESSION, "tool", "2 hits", "2026-03-01T10:00:02", tool_call_id="k1", tool_name="grep")
    add(conn, SESSION, "tool", "def main(): ...", "2026-03-01T10:00:02.500", tool_call_id="k2",
        tool_name="read_file")  # fmt: skip
    add(conn, SESSION, "assistant", "Renamed in 2 places.", "2026-03-01T10:00:04")
    conn.commit()


def parse_one(path: Path, harness: str | None = None) -> tuple[list[Turn], FileStats]:
    got: list[FileStats] = []
    turns = list(sources.parse([path], harness, on_file=got.append))
    return turns, got[0]


def shape(turns: list[Turn]) -> list[tuple[object, ...]]:
    return [
        (t.session_id, t.seq, t.role, t.ts, t.workdir,
         [(b.type, b.text, b.tool_name, b.tool_use_id) for b in t.blocks])
        for t in turns
    ]  # fmt: skip


def test_database_rows_become_turns_in_id_order(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    conn = make_db(db)
    the_conversation(conn)
    turns, st = parse_one(db)
    assert st.harness == "hermes" and st.error is None
    assert [t.turn_uuid for t in turns] == ["1", "2", "3", "4", "5"]
    assert [t.role for t in turns] == ["user", "assistant", "tool", "tool", "assistant"]
    assert turns[1].ts == "2026-03-01T10:00:01.250Z"
    assert [(b.type, b.text) for b in turns[1].blocks] == [
        ("thinking", "find usages"),
        ("text", "Looking for usages first."),
        ("tool_use", '{"q":"--old"}'),
        ("tool_use", '{"path":"cli.py"}'),
    ]
    assert {t.workdir for t in turns} == {"-home-kim-tool"}
    assert {t.source_path for t in turns} == {str(db)}


def test_same_conversation_as_db_rows_and_as_session_file_gives_same_blocks(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    the_conversation(make_db(db))
    from_db, _ = parse_one(db)
    from_file, st = parse_one(FIXTURES / f"{SESSION}.jsonl")
    assert st.harness == "hermes"
    assert shape(from_file) == shape(from_db)
    # Only the ids differ: message ids in the database, <session>-<seq> in the file.
    assert [t.turn_uuid for t in from_file] == [f"{SESSION}-{i}" for i in range(5)]
    assert sources.coverage(st)["ignored"] == {"session_meta": 1}


def test_session_file_is_sniffed_as_hermes_and_codex_session_meta_still_codex(
    tmp_path: Path,
) -> None:
    f = tmp_path / "elsewhere.jsonl"
    f.write_bytes((FIXTURES / f"{SESSION}.jsonl").read_bytes())
    _, st = parse_one(f)
    assert st.harness == "hermes"
    codex = write_jsonl(
        tmp_path / "rollout.jsonl",
        [
            {"timestamp": "2026-03-03T08:00:00.000Z", "type": "session_meta", "payload": {"id": "x", "cwd": "/srv"}},
            {"timestamp": "2026-03-03T08:00:01.000Z", "type": "response_item",
             "payload": {"type": "message", "role": "user", "content": "hi"}},
        ],
    )  # fmt: skip
    _, st = parse_one(codex)
    assert st.harness == "codex"


def test_old_schema_without_cwd_reasoning_content_or_tool_name(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    conn = make_db(
        db,
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT);"
        "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, role TEXT,"
        " content TEXT, tool_call_id TEXT, tool_calls TEXT, timestamp REAL, reasoning TEXT);",
    )
    calls = [{"id": "c9", "function": {"name": "terminal", "arguments": '{"command":"ls"}'}}]
    add(
        conn,
        "s1",
        "assistant",
        None,
        "2026-01-01T00:00:00",
        reasoning="list it",
        tool_calls=json.dumps(calls),
    )
    add(conn, "s1", "tool", "a.py", "2026-01-01T00:00:01", tool_call_id="c9")
    conn.commit()
    turns, st = parse_one(db)
    assert st.error is None
    assert {t.workdir for t in turns} == {"hermes"}  # no cwd column: the fallback
    assert [b.type for b in turns[0].blocks] == ["thinking", "tool_use"]
    (res,) = turns[1].blocks
    assert (res.type, res.tool_name, res.tool_use_id) == ("tool_result", "terminal", "c9")


def test_reasoning_content_wins_even_empty_and_falls_back_only_when_null(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    conn = make_db(db)
    add(conn, "s", "assistant", "a", "2026-01-01T00:00:00", reasoning="r1", reasoning_content="rc1")
    add(conn, "s", "assistant", "b", "2026-01-01T00:00:01", reasoning="r2", reasoning_content="")
    add(conn, "s", "assistant", "c", "2026-01-01T00:00:02", reasoning="r3")
    conn.commit()
    turns, _ = parse_one(db)
    thinking = [[b.text for b in t.blocks if b.type == "thinking"] for t in turns]
    assert thinking == [["rc1"], [], ["r3"]]


def test_rows_are_ordered_by_id_not_timestamp_and_system_rows_keep_their_role(
    tmp_path: Path,
) -> None:
    db = tmp_path / "state.db"
    conn = make_db(db)
    add(conn, "s", "system", "You are Hermes.", "2026-01-01T00:00:09")
    add(conn, "s", "user", "first", "2026-01-01T00:00:05")
    add(conn, "s", "assistant", "second", "2026-01-01T00:00:01")
    add(conn, "s", "session_meta", "{}", "2026-01-01T00:00:00")
    add(conn, "s", "assistant", "   ", "2026-01-01T00:00:02")
    conn.commit()
    turns, st = parse_one(db)
    assert [(t.role, t.blocks[0].text) for t in turns] == [
        ("system", "You are Hermes."), ("user", "first"), ("assistant", "second"),
    ]  # fmt: skip
    cov = sources.coverage(st)
    assert cov["ignored"] == {"session_meta": 1} and cov["empty"] == {"assistant": 1}
    assert cov["unexplained"] == {}


def test_database_is_opened_read_only_and_left_untouched(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    conn = make_db(db, wal=False)
    the_conversation(conn)
    conn.close()
    before = (hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime_ns)
    turns, _ = parse_one(db)
    assert len(turns) == 5
    assert (hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime_ns) == before
    ro = hermes.connect(db)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        ro.execute("DELETE FROM messages")
    ro.close()


def test_reading_while_hermes_writes_in_wal_mode(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    writer = make_db(db)
    the_conversation(writer)
    stop = threading.Event()
    errors: list[BaseException] = []
    written = [5]

    def hermes_appends() -> None:
        try:
            i = 0
            while not stop.is_set():
                add(
                    writer,
                    "live",
                    "user" if i % 2 == 0 else "assistant",
                    f"m{i}",
                    "2026-03-02T00:00:00",
                )
                writer.commit()  # never "database is locked": readers don't block a WAL writer
                written[0] += 1
                i += 1
                time.sleep(0.001)
        except BaseException as e:
            errors.append(e)

    t = threading.Thread(target=hermes_appends)
    t.start()
    try:
        seen = []
        for _ in range(5):
            turns, st = parse_one(db)
            assert st.error is None
            live = [t for t in turns if t.session_id == "live"]
            # One consistent snapshot: the live session is a gap-free prefix of what was written.
            assert [t.blocks[0].text for t in live] == [f"m{i}" for i in range(len(live))]
            assert [t.seq for t in live] == list(range(len(live)))
            seen.append(len(live))
            time.sleep(0.02)
    finally:
        stop.set()
        t.join()
    assert not errors, errors
    assert seen == sorted(seen) and seen[-1] > 0


def test_wal_growth_changes_the_unit_signature(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    conn = make_db(db)
    the_conversation(conn)
    unit = Unit(db, hermes.SOURCE)
    before = unit.signature()
    add(conn, SESSION, "user", "one more", "2026-03-01T11:00:00")
    conn.commit()
    assert (tmp_path / "state.db-wal").exists()
    assert unit.signature() != before


def test_not_a_hermes_database_is_one_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    sqlite3.connect(db).executescript("CREATE TABLE kv (k TEXT, v TEXT);")
    r = run_cli("funes-parse", db)
    assert r.returncode == 1 and r.stdout == b""
    err = r.stderr.decode()
    assert f"{db}: not a Hermes state database (no messages table)" in err


def test_forced_harness_reads_a_database_of_any_name(tmp_path: Path) -> None:
    db = tmp_path / "copy-of-hermes.sqlite"
    the_conversation(make_db(db))
    r = run_cli("funes-parse", "--harness", "hermes", db)
    assert r.returncode == 0, r.stderr
    assert len(jsonl(r.stdout)) == 5


def _db_and_an_older_session_file(home: Path) -> tuple[Path, Path]:
    """A Hermes home whose state.db holds the conversation that a session file beside it
    also holds, plus one older session only in its own file: (the Hermes home, that file)."""
    hh = home / ".hermes"
    (hh / "sessions").mkdir(parents=True)
    the_conversation(make_db(hh / "state.db"))
    (hh / "sessions" / f"{SESSION}.jsonl").write_bytes((FIXTURES / f"{SESSION}.jsonl").read_bytes())
    only_file = write_jsonl(
        hh / "sessions" / "20260302_090000_h2.jsonl",
        [{"role": "session_meta", "cwd": "/w"}, {"role": "user", "content": "older session"}],
    )
    return hh, only_file


def test_sweep_reads_a_conversation_once_when_both_db_and_session_file_hold_it(
    private_home: Path,
) -> None:
    hh, only_file = _db_and_an_older_session_file(private_home)
    units = sources.sweep(private_home)
    assert [u.path for u in units] == [hh / "state.db", only_file]
    assert all(u.source is hermes.SOURCE for u in units)


def test_hermes_home_given_as_a_directory_also_reads_each_conversation_once(
    private_home: Path,
) -> None:
    hh = private_home / ".hermes"
    (hh / "sessions").mkdir(parents=True)
    the_conversation(make_db(hh / "state.db"))
    (hh / "sessions" / f"{SESSION}.jsonl").write_bytes((FIXTURES / f"{SESSION}.jsonl").read_bytes())
    r = run_cli("funes-parse", hh)
    assert r.returncode == 0, r.stderr
    assert {t["turn_uuid"] for t in jsonl(r.stdout)} == {"1", "2", "3", "4", "5"}


def test_a_database_given_by_path_is_recognised_by_content_whatever_its_name(
    tmp_path: Path,
) -> None:
    db = tmp_path / "backup.db"
    the_conversation(make_db(db))
    r = run_cli("funes-parse", db)
    assert r.returncode == 0, r.stderr
    turns = jsonl(r.stdout)
    assert [t["role"] for t in turns] == ["user", "assistant", "tool", "tool", "assistant"]
    assert {t["harness"] for t in turns} == {"hermes"} and {t["session_id"] for t in turns} == {
        SESSION
    }
    other = tmp_path / "notes.db"
    sqlite3.connect(other).executescript("CREATE TABLE kv (k TEXT, v TEXT);")
    r = run_cli("funes-parse", other)
    assert r.returncode == 1
    assert f"{other}: a SQLite database, but not Hermes' (no messages table)" in r.stderr.decode()


def test_status_count_sweeps_what_the_sweep_reads_after_its_pruning(private_home: Path) -> None:
    """`funes status` counts the transcripts waiting to be indexed from ``sweep_paths`` (no
    Path or unit per file): the same files, Hermes' session files held by state.db pruned."""
    hh, only_file = _db_and_an_older_session_file(private_home)
    from funes.sources.routing import sweep_paths

    assert sweep_paths(private_home) == [
        (str(hh / "state.db"), hermes.SOURCE, None),
        (str(only_file), hermes.SOURCE, None),
    ]
