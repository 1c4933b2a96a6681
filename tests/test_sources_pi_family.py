"""OpenClaw and omp: pi's JSONL kept in other places, under their own harness names.

The OpenClaw sessions here are built from the documented format. Real transcripts and reset
archives (about 1,400, from 30 public repositories) are checked by ``python -m bench
real-sources`` (bench/real_sources.py), which restores them at run time from fetched snapshots:
nothing a snapshot holds is committed to this repository, so they cannot be fixtures here. No
real omp session was found (see that module's docstring for what was searched).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_homes import PI_TURNS, pi_entries, shape, swept, write_omp, write_openclaw
from conftest import write_jsonl

from funes import sources


def test_openclaw_reset_archive_is_swept_and_the_index_is_not(private_home: Path) -> None:
    laid = write_openclaw(private_home)
    sessions_dir = laid.where.parent
    # a checkpoint copy, a backup, a deleted session and a run trace: none of them is read
    stem = laid.where.name.split(".jsonl")[0]
    for name in ("s.checkpoint.9f.jsonl", "s.jsonl.bak", "s.jsonl.deleted.2026-05-01"):
        write_jsonl(sessions_dir / name, pi_entries("other", "/x", "never read"))
    trace = {"traceSchema": "openclaw-trajectory", "schemaVersion": "1", "sessionId": stem}
    write_jsonl(
        sessions_dir / f"{stem}.trajectory.jsonl",
        [
            {**trace, "type": "session.started", "seq": "1", "data": {"trigger": "user"}},
            {**trace, "type": "prompt.submitted", "seq": "2", "data": {"prompt": "never read"}},
            {**trace, "type": "model.completed", "seq": "3", "data": {"aborted": False}},
        ],
    )
    turns, stats = swept(private_home, "openclaw")
    assert [s.path for s in stats] == [str(laid.where)]
    assert shape(turns) == PI_TURNS
    assert {t.harness for t in turns} == {"openclaw"}
    assert {t.session_id for t in turns} == {laid.session_id}
    assert {t.workdir for t in turns} == {"-home-ana-gateway"}
    assert stats[0].skipped_lines == 1  # the cut last line
    report = sources.coverage(stats[0])
    assert report["unexplained"] == {} and report["error"] is None


def test_openclaw_state_dir_moves_the_home(
    private_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved = tmp_path / "claw-state"
    laid = write_openclaw(private_home, state=moved)
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(moved))
    turns, _ = swept(private_home, "openclaw")
    assert {t.session_id for t in turns} == {laid.session_id}
    monkeypatch.delenv("OPENCLAW_STATE_DIR")
    assert swept(private_home, "openclaw")[0] == []


def test_openclaw_file_given_by_path_is_read_as_openclaw(private_home: Path) -> None:
    laid = write_openclaw(private_home)
    turns = list(sources.parse([laid.where]))
    assert {t.harness for t in turns} == {"openclaw"} and len(turns) == 4


def test_omp_title_and_developer_records_are_known_not_content(private_home: Path) -> None:
    laid = write_omp(private_home)
    turns, stats = swept(private_home, "omp")
    assert shape(turns) == PI_TURNS
    assert {t.harness for t in turns} == {"omp"} and {t.session_id for t in turns} == {
        laid.session_id
    }
    report = sources.coverage(stats[0])
    assert report["unexplained"] == {}
    assert report["ignored"]["message:developer"] == 1 and report["ignored"]["title_change"] == 1


def test_omp_profiles_and_xdg_data_home_are_swept(
    private_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    xdg = tmp_path / "xdg"
    entries = pi_entries("prof-1", "/p", "in a profile")
    write_jsonl(private_home / ".omp/profiles/work/agent/sessions/-p/a.jsonl", entries)
    write_jsonl(xdg / "omp/sessions/-p/b.jsonl", pi_entries("xdg-1", "/p", "under xdg"))
    write_jsonl(xdg / "omp/profiles/home/sessions/-p/c.jsonl", pi_entries("xdg-2", "/p", "x"))
    monkeypatch.setenv("XDG_DATA_HOME", str(xdg))
    turns, _ = swept(private_home, "omp")
    assert {t.session_id for t in turns} == {"prof-1", "xdg-1", "xdg-2"}


def test_pi_family_harness_names_select_their_source() -> None:
    for name in ("openclaw", "omp"):
        assert sources.get_source(name).harness == name
    # pi's own sniffing still claims a pi file found outside any agent's home
    rec = json.loads(json.dumps(pi_entries("s", "/p", "x")[0]))
    assert sources.sniff(rec).name == "pi"
