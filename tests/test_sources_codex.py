"""Codex rollouts: one fixture per format quirk."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from conftest import run_cli, write_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


# ---------------------------------------------------------------------------- injected context

# What Codex writes into user messages itself, as rollouts show it (codex-rs): AGENTS.md and user
# instructions, a skill's body, the environment and its other session-prefix tags.
CODEX_CONTEXT = [
    "# AGENTS.md instructions for /srv/app\n\n<INSTRUCTIONS>\n# AGENTS.md\r\nUse pnpm.\n</INSTRUCTIONS>",
    "<user_instructions>\nalways answer in French\n</user_instructions>",
    "<skill>\n<name>apply-grant</name>\n</skill>",
    "<environment_context>\n  <cwd>/srv/app</cwd>\n  <shell>zsh</shell>\n</environment_context>",
    "<turn_aborted>\nThe user interrupted the previous turn.\n</turn_aborted>",
    "<subagent_notification>{}</subagent_notification>",
]


def user_msg(*texts: str) -> dict[str, object]:
    parts = [{"type": "input_text", "text": t} for t in texts]
    return item({"type": "message", "role": "user", "content": parts})


def rollout(context: list[str], prompt: str) -> list[dict[str, object] | str]:
    """session_meta, a developer message, Codex's context messages, the user's prompt and an
    answer — with a malformed and a truncated line among them."""
    return [
        EXAMPLE[0],
        item(
            {
                "type": "message",
                "role": "developer",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<permissions instructions>sandboxed</permissions instructions>",
                    }
                ],
            }
        ),
        *[user_msg(c) for c in context],
        "{not json",
        user_msg(prompt),
        item(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "done"}],
            }
        ),
        '{"timestamp":"2026-03-03T08:00:09.000Z","type":"response_item","payload":{"type":"mes',
    ]


def _case(text: str, flips: list[bool]) -> str:
    """``text`` with some letters' case flipped (Codex compares its tags case-insensitively)."""
    return "".join(
        c.swapcase() if f else c for c, f in zip(text, flips + [False] * len(text), strict=False)
    )


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    context=st.lists(
        st.tuples(
            st.sampled_from(CODEX_CONTEXT),
            st.lists(st.booleans(), max_size=24),
            st.sampled_from(["", " ", "\n", "\t\n "]),
        ),
        min_size=1,
        max_size=5,
    ),
    prompt=st.text(min_size=1, max_size=80).filter(
        lambda t: t.strip() and not t.lstrip().startswith(("<", "#"))
    ),
)
def test_context_codex_writes_is_meta_and_the_users_prompt_stays_user(
    tmp_path: Path, context: list[tuple[str, list[bool], str]], prompt: str
) -> None:
    texts = [lead + _case(c, flips) for c, flips, lead in context]
    with tempfile.TemporaryDirectory(dir=tmp_path) as d:
        f = write_jsonl(Path(d) / "rollout.jsonl", rollout(texts, prompt))
        files: list[sources.FileStats] = []
        turns = list(sources.parse([f], on_file=files.append))
        stats = files[0]
    roles = [t.role for t in turns]
    assert roles == ["developer", *["meta"] * len(texts), "user", "assistant"]
    assert turns[len(texts) + 1].blocks[0].text == prompt
    assert sum(stats.skipped.values()) == 2  # the malformed and the truncated line


def test_a_user_message_mixing_context_and_a_prompt_stays_user(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "r.jsonl", [EXAMPLE[0], user_msg(CODEX_CONTEXT[3], "now fix the login bug")]
    )
    assert [t.role for t in sources.parse([f])] == ["user"]


def test_sessions_list_the_users_own_first_prompt_not_codexs_context(tmp_path: Path) -> None:
    day = tmp_path / ".codex" / "sessions" / "2026" / "03" / "03"
    write_jsonl(day / "rollout-2026-03-03T08-00-00-0190aa-bb.jsonl",
                rollout(CODEX_CONTEXT[:4], "help me apply for the grant"))  # fmt: skip
    mem = tmp_path / "memory"
    r = run_cli("funes", "index", tmp_path / ".codex", "--no-embed", "--memory", mem)
    assert r.returncode in (0, 1), r.stderr
    r = run_cli("funes", "sessions", "--memory", mem)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().splitlines()[1] == "  > help me apply for the grant"
    r = run_cli("funes", "sessions", "--memory", mem, "--json")
    assert json.loads(r.stdout)["prompt"] == "help me apply for the grant"
