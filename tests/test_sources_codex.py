"""Codex rollouts: one fixture per format quirk."""

from __future__ import annotations

from pathlib import Path

from conftest import write_jsonl

from funes import sources
from funes.records import dumps

EXAMPLE = [
    '{"timestamp":"2026-03-03T08:00:00.000Z","type":"session_meta","payload":{"id":"0190aa-bb","cwd":"/srv/app","cli_version":"0.141.0"}}',
    '{"timestamp":"2026-03-03T08:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"add a healthcheck"}]}}',
    '{"timestamp":"2026-03-03T08:00:02.000Z","type":"event_msg","payload":{"type":"token_count"}}',
    '{"timestamp":"2026-03-03T08:00:03.000Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"look at routes"}],"encrypted_content":"opaque-SECRET-REASONING"}}',
    '{"timestamp":"2026-03-03T08:00:04.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\\"cmd\\":\\"ls\\"}","call_id":"call_1"}}',
    '{"timestamp":"2026-03-03T08:00:05.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"app.py\\n"}}',
]


def item(payload: dict[str, object], ts: str = "2026-03-03T08:00:09.000Z") -> dict[str, object]:
    return {"timestamp": ts, "type": "response_item", "payload": payload}


def test_reference_example(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "2026" / "03" / "03" / "rollout-x.jsonl", EXAMPLE)
    turns = list(sources.parse([f]))
    assert [t.turn_uuid for t in turns] == [
        "0190aa-bb-0",
        "0190aa-bb-1",
        "0190aa-bb-2",
        "0190aa-bb-3",
    ]
    assert [t.role for t in turns] == ["user", "assistant", "assistant", "tool"]
    assert [t.blocks[0].type for t in turns] == ["text", "thinking", "tool_use", "tool_result"]
    assert turns[1].blocks[0].text == "look at routes"
    assert turns[2].blocks[0].text == '{"cmd":"ls"}'
    assert (turns[3].blocks[0].tool_name, turns[3].blocks[0].text) == ("exec_command", "app.py\n")
    assert {t.workdir for t in turns} == {"-srv-app"}
    assert {t.harness for t in turns} == {"codex"}
    assert all(t.parent_uuid is None for t in turns)
    assert turns[0].ts == "2026-03-03T08:00:01.000Z"


def test_encrypted_reasoning_is_never_read(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "r.jsonl",
        [
            *EXAMPLE[:1],
            item({"type": "reasoning", "summary": [], "encrypted_content": "gAAAA-TOPSECRET"}),
            item(
                {
                    "type": "reasoning",
                    "summary": [
                        {"type": "summary_text", "text": "**Plan**"},
                        {"type": "other", "text": "not a summary"},
                        {"type": "summary_text", "text": "step two"},
                    ],
                    "content": None,
                    "encrypted_content": "gAAAA-TOPSECRET",
                }
            ),
        ],
    )
    turns = list(sources.parse([f]))
    out = "".join(dumps(t) for t in turns)
    assert "TOPSECRET" not in out
    assert [t.blocks[0].text for t in turns] == ["**Plan**\nstep two"]
    assert turns[0].seq == 0  # the summary-less reasoning item did not take a seq


def test_custom_tool_calls_and_json_outputs(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "c.jsonl",
        [
            *EXAMPLE[:1],
            item(
                {
                    "type": "custom_tool_call",
                    "call_id": "p1",
                    "name": "apply_patch",
                    "input": "*** Begin Patch",
                }
            ),
            item({"type": "custom_tool_call_output", "call_id": "p1", "output": "Success."}),
            item(
                {
                    "type": "function_call",
                    "call_id": "f1",
                    "name": "shell",
                    "arguments": {"not": "a string"},
                }
            ),
            item(
                {
                    "type": "function_call_output",
                    "call_id": "f1",
                    "output": {"exit_code": 0, "stdout": "ök"},
                }
            ),
            item({"type": "function_call_output", "call_id": "f1", "output": None}),
            item({"type": "function_call_output", "call_id": "unknown", "output": "who called me"}),
        ],
    )
    turns = list(sources.parse([f]))
    got = [(t.role, b.type, b.tool_name, b.text) for t in turns for b in t.blocks]
    assert got == [
        ("assistant", "tool_use", "apply_patch", "*** Begin Patch"),
        ("tool", "tool_result", "apply_patch", "Success."),
        ("assistant", "tool_use", "shell", "{}"),
        ("tool", "tool_result", "shell", '{"exit_code":0,"stdout":"ök"}'),
        ("tool", "tool_result", None, "who called me"),
    ]


def test_messages_keep_roles_and_only_text_parts(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "m.jsonl",
        [
            *EXAMPLE[:1],
            item(
                {
                    "type": "message",
                    "role": "developer",
                    "content": [{"type": "input_text", "text": "<permissions>"}],
                }
            ),
            item({"type": "message", "role": "assistant", "content": "a plain string"}),
            item(
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
                        {"type": "input_text", "text": "  "},
                        {"type": "input_text", "text": "look at this"},
                    ],
                }
            ),
            item({"type": "tool_schema", "name": "x"}),
            item({"type": "web_search_call", "action": {}}),
        ],
    )
    turns = list(sources.parse([f]))
    assert [(t.role, [b.text for b in t.blocks]) for t in turns] == [
        ("developer", ["<permissions>"]),
        ("assistant", ["a plain string"]),
        ("user", ["look at this"]),
    ]


def test_without_session_meta_the_stem_and_day_directory_are_used(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "2026" / "03" / "23" / "rollout-abc.jsonl",
        [item({"type": "message", "role": "user", "content": "hi"})],
    )
    turns = list(sources.parse([f], harness="codex"))
    assert (turns[0].session_id, turns[0].turn_uuid, turns[0].workdir) == (
        "rollout-abc",
        "rollout-abc-0",
        "23",
    )


def test_turn_ids_are_stable_when_the_log_grows(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "g.jsonl", EXAMPLE)
    before = [t.turn_uuid for t in sources.parse([f])]
    write_jsonl(f, [*EXAMPLE, dumps(item({"type": "message", "role": "user", "content": "more"}))])
    after = [t.turn_uuid for t in sources.parse([f])]
    assert after[: len(before)] == before and len(after) == len(before) + 1
