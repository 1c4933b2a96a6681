"""Gemini CLI: JSONL sessions replayed ($set, $rewindTo, the last copy of a message id wins),
the older whole-session JSON, the workdir from projects.json, GEMINI_CLI_HOME.

The sessions here are built from the documented format. Real ones (87 whole-session JSON files
of a public repository) are checked by ``python -m bench real-sources`` (bench/real_sources.py),
which restores them at run time from fetched snapshots: nothing a snapshot holds is committed
to this repository, so they cannot be fixtures here.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from agent_homes import GEMINI_TURNS, gemini_records, shape, swept, write_gemini
from conftest import write_jsonl

from funes import sources
from funes.sources import FileStats


def test_jsonl_session_is_replayed_as_gemini_cli_loads_it(private_home: Path) -> None:
    laid = write_gemini(private_home)
    turns, stats = swept(private_home, "gemini")
    assert shape(turns) == GEMINI_TURNS
    assert [t.turn_uuid for t in turns] == ["m1", "m2", "m5", "m6"]
    assert {t.session_id for t in turns} == {laid.session_id}
    # the last of the three copies of m2: its tool call ran and returned
    assert [(b.type, b.text, b.tool_name, b.tool_use_id) for b in turns[1].blocks] == [
        ("thinking", "Eviction\ncheck the order", None, None),
        ("text", "Let me look.", None, None),
        ("tool_use", '{"command":"rg evict"}', "run_shell_command", "call-1"),
        ("tool_result", "cache.rs: fn evict_oldest", "run_shell_command", "call-1"),
    ]
    assert {t.workdir for t in turns} == {"-home-ana-tiles"}  # from projects.json
    report = sources.coverage(stats[0])
    assert report["unexplained"] == {} and report["error"] is None
    assert report["ignored"]["rewound"] == 2 and report["ignored"]["superseded"] == 2


def test_rewind_drops_the_rewound_messages_and_their_text(private_home: Path) -> None:
    write_gemini(private_home)
    turns, _ = swept(private_home, "gemini")
    texts = " ".join(b.text for t in turns for b in t.blocks)
    assert "a rewound answer" not in texts and "no, the other cache" not in texts
    assert "and the fix?" in texts


def test_rewind_to_an_unknown_id_drops_everything_before_it(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / ".gemini/tmp/p/chats/session-x.jsonl",
        [
            {"sessionId": "s", "projectHash": "h"},
            {"id": "a", "type": "user", "content": "gone"},
            {"$rewindTo": "never-written"},
            {"id": "b", "type": "user", "content": "kept"},
        ],
    )
    turns = list(sources.parse([f], harness="gemini"))
    assert [b.text for t in turns for b in t.blocks] == ["kept"]


def test_set_messages_is_a_checkpoint_that_replaces_the_conversation(tmp_path: Path) -> None:
    """Gemini CLI rewrites its history (``/compress``, a masked tool output) as one ``$set``
    whose ``messages`` is the whole conversation from then on; messages it leaves out are gone,
    and what is appended after it counts again. ``$patch`` is read as ``$set``."""
    f = write_jsonl(
        tmp_path / ".gemini/tmp/p/chats/session-c.jsonl",
        [
            {"sessionId": "cp", "projectHash": "h"},
            {"id": "u1", "type": "user", "content": [{"text": "a long question"}]},
            {"id": "g1", "type": "gemini", "content": "a long answer"},
            {"$set": {"lastUpdated": "2026-08-05T10:00:00Z"}},
            {"$set": {"messages": [
                {"id": "s1", "type": "user", "content": [{"text": "summary of the talk so far"}]},
                {"id": "g1", "type": "gemini", "content": "a long answer, masked"},
            ], "lastUpdated": "2026-08-05T10:01:00Z"}},
            {"id": "u2", "type": "user", "content": [{"text": "and then?"}]},
            {"$patch": {"messages": [
                {"id": "s1", "type": "user", "content": [{"text": "summary of the talk so far"}]},
                {"id": "u2", "type": "user", "content": [{"text": "and then?"}]},
                {"id": "g2", "type": "gemini", "content": "then this"},
            ]}},
        ],
    )  # fmt: skip
    stats: list[FileStats] = []
    turns = list(sources.parse([f], on_file=stats.append))
    assert [(t.turn_uuid, t.blocks[0].text) for t in turns] == [
        ("s1", "summary of the talk so far"),
        ("u2", "and then?"),
        ("g2", "then this"),
    ]
    report = sources.coverage(stats[0])
    assert report["unexplained"] == {}
    assert report["ignored"]["$set"] == 2 and report["ignored"]["$patch"] == 1
    assert report["ignored"]["superseded"] == 2 + 3  # u1, g1; then s1, g1, u2


def test_metadata_line_holding_messages_seeds_the_conversation(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / ".gemini/tmp/p/chats/session-m.jsonl",
        [
            {"sessionId": "one-line", "projectHash": "h", "messages": [
                {"id": "a", "type": "user", "content": "an older session on one line"},
            ]},
            {"id": "b", "type": "gemini", "content": "resumed here"},
        ],
    )  # fmt: skip
    turns = list(sources.parse([f], harness="gemini"))
    assert [(t.turn_uuid, t.session_id) for t in turns] == [("a", "one-line"), ("b", "one-line")]


def test_set_messages_alone_makes_the_conversation_and_patches_metadata(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / ".gemini/tmp/p/chats/session-y.jsonl",
        [
            {"sessionId": "snap", "projectHash": "h", "startTime": "2026-07-22T07:53:15Z"},
            {"$set": {"messages": [
                {"id": "m1", "type": "user", "content": [{"text": "question"}]},
                {"id": "m2", "type": "gemini", "content": [{"text": "answer"}]},
            ]}},
        ],
    )  # fmt: skip
    turns = list(sources.parse([f]))
    assert [(t.role, t.session_id) for t in turns] == [("user", "snap"), ("assistant", "snap")]
    assert turns[0].ts == "2026-07-22T07:53:15.000Z"  # no message timestamp: the session start


def test_older_json_session_is_read_unless_resumed_into_jsonl(private_home: Path) -> None:
    chats = private_home / ".gemini/tmp" / hashlib.sha256(b"/srv/old").hexdigest() / "chats"
    chats.mkdir(parents=True)
    (private_home / ".gemini/projects.json").write_text(
        json.dumps({"projects": {"/srv/old": "old"}})
    )
    doc = {
        "sessionId": "legacy-1", "projectHash": "x", "startTime": "2025-09-01T10:00:00Z",
        "messages": [
            {"id": "u", "timestamp": "2025-09-01T10:00:01Z", "type": "user", "content": "hello there"},
            {"id": "g", "timestamp": "2025-09-01T10:00:02Z", "type": "gemini", "content": "hi back"},
        ],
    }  # fmt: skip
    (chats / "session-2025-09-01T10-00-legacy1.json").write_text(json.dumps(doc))
    turns, stats = swept(private_home, "gemini")
    assert shape(turns) == [("user", ["text"]), ("assistant", ["text"])]
    assert {t.workdir for t in turns} == {"-srv-old"}  # the directory named by its sha256
    assert stats[0].records_kept == 2
    # resumed: Gemini CLI copies it into a .jsonl beside it, which alone is read
    write_jsonl(
        chats / "session-2025-09-01T10-00-legacy1.jsonl", [doc | {"messages": []}, *doc["messages"]]
    )
    _, stats = swept(private_home, "gemini")
    assert [Path(s.path).suffix for s in stats] == [".jsonl"]


def test_gemini_cli_home_moves_the_root(
    private_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    laid = write_gemini(private_home, gemini_home=tmp_path / "elsewhere")
    assert swept(private_home, "gemini")[0] == []
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "elsewhere"))
    assert {t.session_id for t in swept(private_home, "gemini")[0]} == {laid.session_id}


def test_corrupt_json_session_is_one_error_and_the_run_goes_on(private_home: Path) -> None:
    write_gemini(private_home)
    bad = private_home / ".gemini/tmp/tiles/chats/session-broken.json"
    bad.write_text('{"sessionId": "b", "messages": [{"id": "x", "ty')
    turns, stats = swept(private_home, "gemini")
    errors = [s.error for s in stats if s.error]
    assert len(errors) == 1 and errors[0].startswith(f"{bad}: not valid JSON")
    assert len(turns) == len(GEMINI_TURNS)


def test_truncated_and_malformed_lines_are_counted_not_fatal(tmp_path: Path) -> None:
    recs = gemini_records("s", "x")
    f = write_jsonl(
        tmp_path / ".gemini/tmp/p/chats/session-z.jsonl",
        [*recs[:3], "{not json", "\x00\x01", *recs[3:], '{"id": "m9", "ty'],
    )
    got: list[FileStats] = []
    turns = list(sources.parse([f], on_file=got.append))
    assert shape(turns) == GEMINI_TURNS and got[0].skipped_lines == 3
