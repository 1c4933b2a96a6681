"""Cline, Roo Code and Kilo Code: whole-file JSON rewritten on every change; what is new is
decided by content and turn ids stay stable across rewrites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_homes import (
    CLINE_TURNS,
    cline_messages,
    shape,
    swept,
    write_cline,
    write_kilo,
    write_roo,
)
from conftest import run_cli

from funes import sources


@pytest.mark.parametrize("write", [write_cline, write_roo, write_kilo])
def test_task_history_becomes_turns_under_each_forks_name(private_home: Path, write) -> None:  # type: ignore[no-untyped-def]
    laid = write(private_home)
    turns, stats = swept(private_home, laid.harness)
    assert shape(turns) == CLINE_TURNS
    assert {(t.harness, t.session_id) for t in turns} == {(laid.harness, laid.session_id)}
    assert turns[2].blocks[0].text.endswith("cache.rs: fn evict_oldest")  # a result, as user text
    assert turns[0].ts.startswith("2026-05-02T")  # no time of its own: the task id's
    expected = "-home-ana-roo" if laid.harness == "roo" else "-home-ana-tiles"
    assert {t.workdir for t in turns} == {expected}
    assert sources.coverage(stats[0])["unexplained"] == {}
    others = {"cline", "roo", "kilo"} - {laid.harness}
    assert all(swept(private_home, o)[0] == [] for o in others)


def test_rewrite_with_one_more_message_keeps_ids_and_adds_one_turn(private_home: Path) -> None:
    laid = write_cline(private_home)
    first, _ = swept(private_home, "cline")
    msgs = cline_messages(laid.phrase)
    msgs.append({"role": "user", "content": [{"type": "text", "text": "and make it LRU"}]})
    laid.where.write_text(json.dumps(msgs, indent=2))  # rewritten whole, formatted differently
    second, _ = swept(private_home, "cline")
    assert [t.turn_uuid for t in second[:-1]] == [t.turn_uuid for t in first]
    assert len(second) == len(first) + 1 and len({t.turn_uuid for t in second}) == len(second)


@pytest.mark.slow
def test_rewritten_task_stores_exactly_one_more_turn(private_home: Path) -> None:
    laid = write_cline(private_home)
    r = run_cli("funes", "index", "--no-embed", "--json", "--harness", "cline")
    assert r.returncode == 0, r.stderr.decode()
    msgs = [*cline_messages(laid.phrase), {"role": "user", "content": "and make it LRU"}]
    laid.where.write_text(json.dumps(msgs))
    r = run_cli("funes", "index", "--no-embed", "--json", "--harness", "cline")
    summary = json.loads(r.stdout.decode().strip().splitlines()[-1])
    assert summary["chunks"] == 1, summary  # the one new message: one short block, one chunk
    from funes.store.memory import open_memory

    rows = open_memory().rows(columns=["turn_uuid", "text"]).to_pylist()
    assert len({r["turn_uuid"] for r in rows}) == len(CLINE_TURNS) + 1
    assert "and make it LRU" in {r["text"] for r in rows}


def test_repeated_identical_messages_get_distinct_stable_ids(private_home: Path) -> None:
    laid = write_cline(private_home)
    msgs = [
        *cline_messages(laid.phrase),
        {"role": "user", "content": "continue"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "continue"},
    ]
    laid.where.write_text(json.dumps(msgs))
    turns, _ = swept(private_home, "cline")
    ids = [t.turn_uuid for t in turns]
    assert len(set(ids)) == len(ids) and ids[-1] == ids[-3] + "-1"


def test_cline_cli_sessions_with_their_own_ids(
    private_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = tmp_path / "cline-data/sessions/sess_01"
    d.mkdir(parents=True)
    (d / "sess_01.json").write_text(json.dumps({"session_id": "sess_01", "cwd": "/srv/cli"}))
    (d / "sess_01.messages.json").write_text(json.dumps({"version": 1, "sessionId": "sess_01", "messages": [
        {"id": "m_u", "role": "user", "content": [{"type": "text", "text": "say hello"}], "ts": 1767225600000},
        {"id": "m_a", "role": "assistant", "content": [{"type": "text", "text": "hello"}, {"type": "thinking", "text": "easy"}], "ts": 1767225603000},
    ]}))  # fmt: skip
    monkeypatch.setenv("CLINE_DATA_DIR", str(tmp_path / "cline-data"))
    turns, _ = swept(private_home, "cline")
    assert [(t.turn_uuid, t.role, t.session_id) for t in turns] == [
        ("m_u", "user", "sess_01"),
        ("m_a", "assistant", "sess_01"),
    ]
    assert shape(turns)[1] == ("assistant", ["text", "thinking"]) and {
        t.workdir for t in turns
    } == {"-srv-cli"}


def test_file_caught_mid_write_is_one_error_and_read_next_time(private_home: Path) -> None:
    laid = write_cline(private_home)
    laid.where.write_text(json.dumps(cline_messages(laid.phrase))[:-40])
    turns, stats = swept(private_home, "cline")
    assert turns == [] and stats[0].error is not None and "not valid JSON" in stats[0].error
