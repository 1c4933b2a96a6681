"""GitHub Copilot CLI: events.jsonl beside workspace.yaml, and the older flat layout."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_homes import COPILOT_TURNS, copilot_events, shape, swept, write_copilot
from conftest import write_jsonl

from funes import sources


def test_events_become_turns_with_copilots_own_ids(private_home: Path) -> None:
    laid = write_copilot(private_home)
    turns, stats = swept(private_home, "copilot")
    assert shape(turns) == COPILOT_TURNS
    assert {t.session_id for t in turns} == {laid.session_id}
    assert [t.turn_uuid for t in turns] == ["e3", "e6", "e8", "e9"]
    assert turns[0].blocks[0].text == "why does the tile cache thrash?"  # not transformedContent
    use, result = turns[1].blocks[1], turns[2].blocks[0]
    assert (use.text, use.tool_name, use.tool_use_id) == (
        '{"command":"rg evict"}',
        "bash",
        "call_1",
    )
    assert (result.text, result.tool_name, result.tool_use_id) == (
        "cache.rs: fn evict_oldest",
        "bash",
        "call_1",
    )
    assert {t.workdir for t in turns} == {"-home-ana-tiles"}
    report = sources.coverage(stats[0])
    assert report["unexplained"] == {} and stats[0].skipped_lines == 1
    assert report["ignored"]["ephemeral"] == 2 and report["ignored"]["system.message"] == 1


def test_older_flat_layout_without_workspace_yaml(private_home: Path) -> None:
    f = write_jsonl(
        private_home / ".copilot/session-state/1f2e-flat.jsonl",
        copilot_events("1f2e-flat", "/srv/app", "flat"),
    )
    turns = list(sources.parse([f]))
    assert shape(turns) == COPILOT_TURNS and {t.harness for t in turns} == {"copilot"}
    assert {t.session_id for t in turns} == {"1f2e-flat"} and {t.workdir for t in turns} == {
        "-srv-app"
    }
    assert {t.session_id for t in swept(private_home, "copilot")[0]} == {"1f2e-flat"}


def test_workspace_yaml_names_a_session_whose_start_was_lost(private_home: Path) -> None:
    d = private_home / ".copilot/session-state/abc"
    write_jsonl(d / "events.jsonl", copilot_events("x", "/x", "p")[3:])  # no session.start
    (d / "workspace.yaml").write_text("id: 'from-yaml'\ncwd: \"/home/bo/web\"\n")
    turns, _ = swept(private_home, "copilot")
    assert {t.session_id for t in turns} == {"from-yaml"} and {t.workdir for t in turns} == {
        "-home-bo-web"
    }


def test_copilot_home_moves_the_root(
    private_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    laid = write_copilot(tmp_path / "moved-home")
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "moved-home/.copilot"))
    assert {t.session_id for t in swept(private_home, "copilot")[0]} == {laid.session_id}


def test_an_events_file_found_elsewhere_is_sniffed_as_copilot(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "exported.jsonl", copilot_events("s-1", "/p", "x"))
    assert {t.harness for t in sources.parse([f])} == {"copilot"}


def test_unrequested_tool_start_and_readable_reasoning_are_kept(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "e.jsonl", [
        {"type": "session.start", "data": {"sessionId": "s"}, "id": "0"},
        {"type": "assistant.reasoning", "data": {"reasoningId": "opaque", "content": ""}, "id": "1"},
        {"type": "assistant.reasoning", "data": {"content": "think first"}, "id": "2"},
        {"type": "assistant.message", "data": {"content": "ok", "reasoningText": "think first"}, "id": "3"},
        {"type": "tool.execution_start", "data": {"toolCallId": "c9", "toolName": "view", "arguments": {"path": "a"}}, "id": "4"},
        {"type": "tool.execution_complete", "data": {"toolCallId": "c9", "success": False, "error": {"message": "no such file"}}, "id": "5"},
    ])  # fmt: skip
    turns = list(sources.parse([f]))
    assert shape(turns) == [
        ("assistant", ["thinking"]), ("assistant", ["text"]),
        ("assistant", ["tool_use"]), ("tool", ["tool_result"]),
    ]  # fmt: skip
    assert turns[3].blocks[0].text == "no such file" and turns[3].blocks[0].tool_name == "view"
