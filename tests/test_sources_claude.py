"""Claude Code transcripts: one fixture per format quirk."""

from __future__ import annotations

from pathlib import Path

from conftest import write_jsonl

from funes import sources
from funes.records import Turn
from funes.sources import FileStats

CWD = "/home/ana/proj"


def rec(kind: str, uuid: str, content: object, **extra: object) -> dict[str, object]:
    r: dict[str, object] = {
        "type": kind,
        "uuid": uuid,
        "parentUuid": None,
        "timestamp": "2026-03-02T10:00:00.000Z",
        "cwd": CWD,
        "sessionId": "5f0c",
        "message": {"role": kind, "content": content},
    }
    r.update(extra)
    return r


def parse_file(path: Path) -> tuple[list[Turn], FileStats]:
    got: list[FileStats] = []
    turns = list(sources.parse([path], on_file=got.append))
    return turns, got[0]


def test_reference_example_yields_three_turns_with_backfilled_tool_name(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "5f0c.jsonl",
        [
            '{"type":"summary","summary":"Parser refactor"}',
            '{"type":"user","uuid":"u-1","parentUuid":null,"timestamp":"2026-03-02T10:00:00.000Z","cwd":"/home/ana/proj","sessionId":"5f0c","message":{"role":"user","content":"why do we chunk at 1200 chars?"}}',
            '{"type":"assistant","uuid":"u-2","parentUuid":"u-1","timestamp":"2026-03-02T10:00:04.000Z","cwd":"/home/ana/proj","message":{"role":"assistant","content":[{"type":"thinking","thinking":"check chunk.rs"},{"type":"tool_use","id":"toolu_9","name":"Read","input":{"file_path":"/home/ana/proj/chunk.rs"}}]}}',
            '{"type":"user","uuid":"u-3","parentUuid":"u-2","timestamp":"2026-03-02T10:00:05.000Z","cwd":"/home/ana/proj","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":[{"type":"text","text":"const MAX_CHARS = 1200;"}]}]}}',
        ],
    )
    turns, stats = parse_file(f)
    assert [t.seq for t in turns] == [0, 1, 2]
    assert {t.workdir for t in turns} == {"-home-ana-proj"}
    assert {t.session_id for t in turns} == {"5f0c"}
    assert turns[0].blocks[0].text == "why do we chunk at 1200 chars?"
    assert [b.type for b in turns[1].blocks] == ["thinking", "tool_use"]
    assert turns[1].blocks[1].text == '{"file_path":"/home/ana/proj/chunk.rs"}'
    assert turns[1].blocks[1].tool_name == "Read"
    assert turns[1].parent_uuid == "u-1"
    result = turns[2].blocks[0]
    assert (result.type, result.tool_name, result.tool_use_id) == ("tool_result", "Read", "toolu_9")
    assert result.text == "const MAX_CHARS = 1200;"
    assert turns[2].role == "tool"  # a user record that only carries tool output
    assert turns[0].ts == "2026-03-02T10:00:00.000Z"
    assert stats.ignored["summary"] == 1 and stats.skipped_lines == 0


def test_string_and_array_content_and_unknown_parts(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "s.jsonl",
        [
            rec("user", "a", "plain string prompt"),
            rec(
                "assistant",
                "b",
                [
                    {"type": "text", "text": "first"},
                    {"type": "image", "source": {"data": "AAAA"}},
                    {"type": "redacted_thinking", "data": "opaque"},
                    "a bare string part is not a block",
                    {"type": "text", "text": "second"},
                ],
            ),
        ],
    )
    turns, _ = parse_file(f)
    assert [[(b.type, b.text) for b in t.blocks] for t in turns] == [
        [("text", "plain string prompt")],
        [("text", "first"), ("text", "second")],
    ]


def test_blank_blocks_are_dropped_without_advancing_seq(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "s.jsonl",
        [
            rec("user", "a", "hello"),
            rec(
                "assistant",
                "b",
                [{"type": "text", "text": "  \n "}, {"type": "thinking", "thinking": ""}],
            ),
            rec("user", "c", "   "),
            rec("assistant", "d", [{"type": "tool_result", "tool_use_id": "x", "content": []}]),
            rec("assistant", "e", [{"type": "text", "text": "answer"}]),
        ],
    )
    turns, stats = parse_file(f)
    assert [(t.turn_uuid, t.seq) for t in turns] == [("a", 0), ("e", 1)]
    assert sum(stats.empty.values()) == 3


def test_tool_use_keeps_empty_input_and_non_ascii_literally(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "s.jsonl",
        [
            rec("assistant", "a", [{"type": "tool_use", "id": "t1", "name": "TodoRead"}]),
            rec(
                "assistant",
                "b",
                [
                    {
                        "type": "tool_use",
                        "id": "t2",
                        "name": "Write",
                        "input": {"path": "é.md", "n": 1},
                    }
                ],
            ),
        ],
    )
    turns, _ = parse_file(f)
    assert turns[0].blocks[0].text == "{}"
    assert turns[1].blocks[0].text == '{"path":"é.md","n":1}'


def test_tool_result_content_is_flattened_and_unmatched_ids_stay_unnamed(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "s.jsonl",
        [
            rec("assistant", "a", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]),
            rec(
                "user",
                "b",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [
                            {"type": "text", "text": "line one"},
                            {"type": "image", "source": {}},
                            "bare string",
                        ],
                    },
                    {"type": "tool_result", "tool_use_id": "nobody", "content": "orphan output"},
                    {"type": "tool_result", "tool_use_id": "t1", "content": {"odd": 1}},
                ],
            ),
        ],
    )
    turns, _ = parse_file(f)
    results = turns[1].blocks
    assert [(b.text, b.tool_name) for b in results] == [
        ("line one\nbare string", "Bash"),
        ("orphan output", None),
    ]


def test_only_user_and_assistant_records_are_kept(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"type": "summary", "summary": "x", "leafUuid": "l"},
            {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"},
            {"type": "queue-operation", "operation": "enqueue", "content": "queued prompt"},
            {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}},
            {"type": "progress", "data": {"type": "hook_progress"}},
            rec("user", "a", "kept"),
        ],
    )
    turns, stats = parse_file(f)
    assert [t.turn_uuid for t in turns] == ["a"]
    assert set(stats.ignored) == {
        "summary",
        "system",
        "queue-operation",
        "file-history-snapshot",
        "progress",
    }


def test_meta_and_sidechain_records_are_kept_with_their_true_role(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "s.jsonl",
        [
            rec("user", "a", "Caveat: generated by local commands", isMeta=True),
            rec("user", "b", "a real prompt"),
            rec("assistant", "c", [{"type": "text", "text": "sidechain answer"}], isSidechain=True),
        ],
    )
    turns, _ = parse_file(f)
    assert [(t.turn_uuid, t.role) for t in turns] == [
        ("a", "meta"),
        ("b", "user"),
        ("c", "assistant"),
    ]


def test_subagent_files_are_sessions_of_their_own_listed_after_parents(tmp_path: Path) -> None:
    proj = tmp_path / ".claude" / "projects" / "-home-ana-proj"
    write_jsonl(proj / "sess-1.jsonl", [rec("user", "a", "parent prompt")])
    write_jsonl(proj / "sess-1" / "subagents" / "agent-9f.jsonl", [rec("user", "s", "sub prompt")])
    write_jsonl(proj / "sess-2.jsonl", [rec("user", "b", "other session")])
    turns = list(sources.parse([tmp_path / ".claude" / "projects"]))
    assert [t.session_id for t in turns] == ["sess-1", "sess-2", "agent-9f"]
    assert {t.harness for t in turns} == {"claude_code"}


def test_workdir_is_the_first_usable_cwd_else_the_project_dir(tmp_path: Path) -> None:
    first = rec("user", "a", "no cwd yet")
    first["cwd"] = "   "
    second = rec("user", "b", "now with cwd")
    second["cwd"] = "/home/ubuntu/llama.cpp"
    f = write_jsonl(tmp_path / "projects" / "-x-y" / "s.jsonl", [first, second])
    turns, _ = parse_file(f)
    assert {t.workdir for t in turns} == {"-home-ubuntu-llama-cpp"}

    bare = rec("user", "a", "no cwd at all")
    del bare["cwd"]
    g = write_jsonl(tmp_path / "projects" / "-srv-app" / "t.jsonl", [bare])
    turns, _ = parse_file(g)
    assert turns[0].workdir == "-srv-app"


def test_workdir_munge_matches_claude_project_dir_naming() -> None:
    m = sources.munge_workdir
    assert m("/home/ubuntu/funes") == "-home-ubuntu-funes"
    assert m("C:\\Users\\d\\dev\\funes") == "C--Users-d-dev-funes"
    assert m("/") is None and m("  ") is None and m(None) is None


def test_repo_facet_normalises_remote_urls() -> None:
    on = sources.facets._owner_name
    assert on("origin\thttps://github.com/acme/kb.git (fetch)") == "acme/kb"
    assert on("origin\tgit@github.com:acme/kb.git (push)") == "acme/kb"
    assert on("hub\thttps://huggingface.co/datasets/acme/kb/ (fetch)") == "acme/kb"
    assert sources.repo_of("/definitely/not/here") == ""
