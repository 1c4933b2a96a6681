"""`funes-parse --all` over every agent's home layout, and the `--report` coverage table."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import EVAL_DEV, jsonl, run_cli, write_jsonl

from funes.sources import registry

FIXTURES = Path(__file__).parent / "fixtures"
CORPUS = EVAL_DEV / "corpus"

CLAUDE = [
    {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}},
    {"type": "user", "uuid": "u-1", "parentUuid": None, "timestamp": "2026-03-02T10:00:00.000Z",
     "cwd": "/home/ana/proj", "sessionId": "5f0c", "message": {"role": "user", "content": "why 1200 chars?"}},
    {"type": "assistant", "uuid": "u-2", "parentUuid": "u-1", "timestamp": "2026-03-02T10:00:04.000Z",
     "cwd": "/home/ana/proj", "message": {"role": "assistant", "content": [{"type": "text", "text": "Embedder limit."}]}},
]  # fmt: skip
CODEX = [
    {"timestamp": "2026-03-03T08:00:00.000Z", "type": "session_meta", "payload": {"id": "0190aa-bb", "cwd": "/srv/app"}},
    {"timestamp": "2026-03-03T08:00:01.000Z", "type": "response_item",
     "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "add a healthcheck"}]}},
    {"timestamp": "2026-03-03T08:00:02.000Z", "type": "event_msg", "payload": {"type": "token_count"}},
]  # fmt: skip


def agents_home(home: Path) -> None:
    """A HOME holding a session of each of the four agents where each keeps them."""
    write_jsonl(home / ".claude/projects/-home-ana-proj/5f0c.jsonl", CLAUDE)
    write_jsonl(
        home / ".codex/sessions/2026/03/03/rollout-2026-03-03T08-00-00-0190aa-bb.jsonl", CODEX
    )
    pi = home / ".pi/agent/sessions/--Users-bo-site--/2026-03-04T09-00-00_s-77.jsonl"
    pi.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "pi/compaction.jsonl", pi)
    hermes = home / ".hermes"
    (hermes / "sessions").mkdir(parents=True)
    conn = sqlite3.connect(hermes / "state.db")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript((FIXTURES / "hermes/schema.sql").read_text())
    conn.execute("INSERT INTO sessions (id, cwd) VALUES ('h1', '/home/kim/tool')")
    conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('h1', 'user', 'rename the flag', 1767225600.0)"
    )
    conn.commit()
    conn.close()
    shutil.copy(FIXTURES / "hermes/20260301_100000_h1.jsonl", hermes / "sessions")


def test_all_reads_every_agents_known_locations_under_home(private_home: Path) -> None:
    agents_home(private_home)
    # Something elsewhere in HOME is not a known location and is not read.
    write_jsonl(private_home / "notes/other.jsonl", CLAUDE)
    r = run_cli("funes-parse", "--all")
    assert r.returncode == 0, r.stderr
    turns = jsonl(r.stdout)
    by = {}
    for t in turns:
        by.setdefault(t["harness"], set()).add(t["session_id"])
    assert by == {
        "claude_code": {"5f0c"},
        "codex": {"0190aa-bb"},
        "pi": {"s-77"},  # pi's own session id (its header), not the file stem
        "hermes": {"h1", "20260301_100000_h1"},
    }
    assert not any("notes" in t["source_path"] for t in turns)
    assert b"5 files" in r.stderr


def test_all_with_no_agent_homes_is_one_clear_error(private_home: Path) -> None:
    r = run_cli("funes-parse", "--all")
    assert r.returncode == 1 and r.stdout == b""
    (line,) = r.stderr.decode().splitlines()
    assert line.startswith("funes: no agent transcripts under $HOME (looked in ")
    # every registered agent's known location is named, whatever agents are registered
    homed = [src for src in registry() if src.roots]
    assert len(homed) >= 12
    for root in (r for src in homed for r in src.roots):
        assert f"~/{root}" in line


def test_all_takes_no_paths(tmp_path: Path) -> None:
    r = run_cli("funes-parse", "--all", tmp_path)
    assert r.returncode == 2 and b"--all" in r.stderr


def test_report_prints_a_table_instead_of_turns(private_home: Path) -> None:
    agents_home(private_home)
    r = run_cli("funes-parse", "--all", "--report")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert not out.lstrip().startswith("{")
    header = out.splitlines()[0].split()
    assert header[:9] == ["file", "harness", "sessions", "read", "turns", "empty", "ignored",
                          "UNEXPLAINED", "unreadable"]  # fmt: skip
    assert "ignored (not content): file-history-snapshot 1" in out
    assert "ignored (not content): event_msg 1, session_meta 1" in out
    assert out.rstrip().endswith("0 unexplained records, 0 unreadable")


def test_report_json_has_one_object_per_file_with_every_record_accounted_for(
    private_home: Path,
) -> None:
    agents_home(private_home)
    r = run_cli("funes-parse", "--all", "--report", "--json")
    assert r.returncode == 0, r.stderr
    reports = jsonl(r.stdout)
    assert len(reports) == 5
    for rep in reports:
        accounted = (
            rep["records_kept"] + sum(rep["empty"].values()) + sum(rep["ignored"].values())
            + sum(rep["unexplained"].values()) + sum(rep["skipped"].values())
        )  # fmt: skip
        assert accounted == rep["records_read"], rep
    pi = next(r for r in reports if r["harness"] == "pi")
    assert pi["blocks"] == {"text": 4, "thinking": 1, "tool_use": 1, "tool_result": 1}


def test_report_makes_unexplained_and_unreadable_records_stand_out(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "s.jsonl",
        [*CLAUDE, {"type": "brand-new-kind", "text": "might be content"}, '{"type":"user","mess'],
    )
    r = run_cli("funes-parse", "--report", f)
    assert r.returncode == 1  # a line was skipped
    out = r.stdout.decode()
    assert "UNEXPLAINED (not read, might hold content): brand-new-kind 1" in out
    assert "unreadable: malformed_json 1 (line 5 malformed_json)" in out
    assert out.rstrip().endswith("1 unexplained record, 1 unreadable")
    r = run_cli("funes-parse", "--report", "--json", f)
    (rep,) = jsonl(r.stdout)
    assert rep["unexplained"] == {"brand-new-kind": 1} and rep["skipped_lines"] == [
        [5, "malformed_json"]
    ]


def test_json_without_report_is_a_usage_error(tmp_path: Path) -> None:
    r = run_cli("funes-parse", "--json", tmp_path)
    assert r.returncode == 2 and b"--json goes with --report" in r.stderr


def test_harness_flag_overrides_sniffing(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "s.jsonl", CLAUDE)
    r = run_cli("funes-parse", "--harness", "pi", "--report", "--json", f)
    (rep,) = jsonl(r.stdout)
    assert rep["source"] == "pi" and rep["turns"] == 0
    # Read as pi, nothing fits, and the report says so.
    assert rep["unexplained"] == {"file-history-snapshot": 1, "user": 1, "assistant": 1}


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/eval-dev is not beside this checkout")
def test_eval_dev_corpus_parses_with_no_unexplained_or_unreadable_record() -> None:
    r = run_cli("funes-parse", "--report", "--json", CORPUS)
    assert r.returncode == 0, r.stderr
    reports = jsonl(r.stdout)
    assert len(reports) == len(list(CORPUS.glob("*/*.jsonl")))
    for rep in reports:
        assert rep["error"] is None, rep
        assert rep["unexplained"] == {} and rep["skipped"] == {}, rep
        assert rep["turns"] > 0
    assert {rep["harness"] for rep in reports} == {"claude_code", "codex", "pi"}
    # The two glued lines of the pi-mono sessions are read, not lost.
    assert sum(rep["repaired"].get("concatenated_records", 0) for rep in reports) == 2
    table = run_cli("funes-parse", "--report", CORPUS).stdout.decode()
    assert table.rstrip().endswith("0 unexplained records, 0 unreadable")
    assert json.dumps(reports)  # plain JSON all the way down
