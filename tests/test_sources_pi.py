"""pi sessions: tree ids, compaction and other summaries, string content, epoch-ms timestamps."""

from __future__ import annotations

import io
import json
from pathlib import Path

from conftest import EVAL_DEV, run_cli, write_jsonl

from funes import sources
from funes.records import Turn
from funes.sources import FileStats

FIXTURES = Path(__file__).parent / "fixtures" / "pi"


def parse_one(path: Path) -> tuple[list[Turn], FileStats]:
    got: list[FileStats] = []
    turns = list(sources.parse([path], on_file=got.append))
    return turns, got[0]


def test_pi_session_is_sniffed_as_pi_not_claude(tmp_path: Path) -> None:
    # Outside ~/.pi the path says nothing: the `session` header decides.
    f = tmp_path / "anywhere.jsonl"
    f.write_bytes((FIXTURES / "compaction.jsonl").read_bytes())
    turns, st = parse_one(f)
    assert st.harness == "pi" and st.error is None
    assert {t.harness for t in turns} == {"pi"}


def test_v3_session_keeps_tree_ids_roles_and_blocks() -> None:
    turns, st = parse_one(FIXTURES / "compaction.jsonl")
    assert [t.turn_uuid for t in turns] == ["a1", "a2", "a3", "k1", "b1", "x2"]
    assert [t.parent_uuid for t in turns] == ["m1", "a1", "a2", "a3", "k1", "x1"]
    assert [t.seq for t in turns] == list(range(6))
    assert [t.role for t in turns] == [
        "user", "assistant", "tool", "compaction", "branch_summary", "custom",
    ]  # fmt: skip
    # pi's own session id (the header's `id`), not the file stem the reference uses
    assert {t.session_id for t in turns} == {"s-77"}
    assert {t.workdir for t in turns} == {"-Users-bo-site"}
    # Whitespace-only text is dropped; tool calls keep compact JSON arguments and ids.
    assert [(b.type, b.text, b.tool_name, b.tool_use_id) for b in turns[1].blocks] == [
        ("thinking", "grep config", None, None),
        ("tool_use", '{"command":"cat package.json"}', "bash", "c1"),
    ]
    (result,) = turns[2].blocks
    assert (result.type, result.tool_name, result.tool_use_id) == ("tool_result", "bash", "c1")
    assert result.text == '{"scripts":{"css":"postcss"}}'  # the image part is not text
    assert st.turns == 6 and st.skipped_lines == 0


def test_compaction_summary_is_kept_as_a_compaction_turn() -> None:
    turns, _ = parse_one(FIXTURES / "compaction.jsonl")
    (comp,) = [t for t in turns if t.role == "compaction"]
    assert comp.ts == "2026-03-04T10:00:00.000Z"
    assert [b.type for b in comp.blocks] == ["text"]
    assert "tailwind was rejected because of bundle size" in comp.blocks[0].text
    (branch,) = [t for t in turns if t.role == "branch_summary"]
    assert branch.blocks[0].text.startswith("Tried sass first")


def test_non_content_entries_are_ignored_by_design_and_aborted_replies_are_empty() -> None:
    _, st = parse_one(FIXTURES / "compaction.jsonl")
    cov = sources.coverage(st)
    assert cov["ignored"] == {
        "session": 1, "model_change": 1, "custom": 1, "label": 1, "session_info": 1,
    }  # fmt: skip
    assert cov["unexplained"] == {}
    assert cov["empty"] == {"message:assistant": 1}
    assert cov["records_read"] == 12 and cov["records_kept"] == 6


def test_string_user_content_epoch_ms_timestamps_and_id_less_entries() -> None:
    turns, _ = parse_one(FIXTURES / "legacy.jsonl")
    user = turns[0]
    assert user.role == "user" and user.blocks[0].text == "why is the session file append-only?"
    # Numeric line timestamp; then none at line level, so the message's epoch ms is used.
    assert user.ts == "2025-12-24T00:32:29.359Z"
    assert turns[1].ts == "2025-12-24T00:32:34.170Z"
    # v1/v2 entries have no ids: a linear chain of synthesized ones.
    assert [t.turn_uuid for t in turns] == [f"2638daee-{i}" for i in range(len(turns))]
    assert [t.parent_uuid for t in turns] == [
        None,
        *[f"2638daee-{i}" for i in range(len(turns) - 1)],
    ]


def test_user_bash_execution_becomes_a_bash_call_and_its_output() -> None:
    turns, _ = parse_one(FIXTURES / "legacy.jsonl")
    bash = turns[2]
    assert bash.role == "user"
    assert [(b.type, b.text, b.tool_name) for b in bash.blocks] == [
        ("tool_use", '{"command":"wc -l session.jsonl"}', "bash"),
        ("tool_result", "42 session.jsonl\n", "bash"),
    ]


def test_records_glued_on_one_line_are_both_read_and_a_truncated_tail_is_counted() -> None:
    turns, st = parse_one(FIXTURES / "legacy.jsonl")
    texts = [t.blocks[0].text for t in turns]
    assert texts[-2:] == ["42 entries.", "ok"]  # line 5 held two records
    assert st.repaired == {"concatenated_records": 1} and st.repaired_lines == [
        (5, "concatenated_records")
    ]
    assert st.skipped == {"truncated": 1} and st.bad_lines == [(6, "truncated")]


def test_glued_line_with_a_bad_tail_keeps_the_good_record(tmp_path: Path) -> None:
    head = {"type": "session", "id": "s", "cwd": "/w"}
    msg = {"type": "message", "message": {"role": "user", "content": "first"}}
    f = write_jsonl(tmp_path / "s.jsonl", [head, json.dumps(msg) + '{"type":"mess'])
    turns, st = parse_one(f)
    assert [t.blocks[0].text for t in turns] == ["first"]
    assert st.repaired["concatenated_records"] == 1 and st.skipped == {"malformed_json": 1}


def test_unknown_entry_kinds_are_reported_unexplained(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"type": "session", "id": "s", "cwd": "/w"},
            {"type": "message", "message": {"role": "user", "content": "hi"}},
            {"type": "future_entry", "text": "who knows"},
            {"type": "message", "message": {"role": "narrator", "content": "??"}},
        ],
    )
    _, st = parse_one(f)
    assert sources.coverage(st)["unexplained"] == {"future_entry": 1, "message:narrator": 1}


def test_stdin_session_is_named_by_its_header_id() -> None:
    data = (FIXTURES / "compaction.jsonl").read_bytes()
    st = FileStats("<stdin>")
    turns = list(sources.parse_stream(io.BufferedReader(io.BytesIO(data)), Path("-"), st))
    assert {t.session_id for t in turns} == {"s-77"}


def test_real_pi_sessions_lose_no_message() -> None:
    files = sorted((EVAL_DEV / "corpus" / "pi").glob("*.jsonl"))
    if not files:
        return
    for f in files:
        turns, st = parse_one(f)
        cov = sources.coverage(st)
        assert st.error is None and cov["unexplained"] == {} and cov["skipped"] == {}, cov
        # Every message line is a turn, except replies aborted before any content.
        messages = sum(n for k, n in st.empty.items()) + len(turns)
        assert messages == cov["records_read"] - sum(cov["ignored"].values())
        assert {"user", "assistant", "tool"} <= {t.role for t in turns}


def test_a_pi_hit_carries_pis_own_session_id_and_session_filters_by_it(
    private_home: Path, tmp_path: Path
) -> None:
    pi_id = "0194b2c7-5e1a-7c3d-9f00-aa11bb22cc33"
    f = (
        private_home
        / ".pi/agent/sessions/--Users-bo-site--"
        / f"2026-03-04T09-00-00-000Z_{pi_id}.jsonl"
    )
    lines = (FIXTURES / "compaction.jsonl").read_text().replace('"id":"s-77"', f'"id":"{pi_id}"')
    f.parent.mkdir(parents=True)
    f.write_text(lines)
    mem = tmp_path / "mem"
    r = run_cli("funes", "index", "--harness", "pi", "--no-embed", "--yes", "--memory", mem)
    assert r.returncode == 0, r.stderr
    out = run_cli("funes", "recall", "what builds the css", "-k", "1", "--memory", mem,
                  "--session", pi_id).stdout.decode()  # fmt: skip
    header, get_line, *body = out.splitlines()
    # the top hit answers it (the tool output naming postcss, or the compaction summary that
    # records it), not the user's question, and its get line names pi's own session id
    assert header.startswith("[2026-03-04T") and " pi -Users-bo-site/0194b2c7 " in header
    assert "postcss" in "\n".join(body) and "what builds the css?" not in body
    turn = get_line.split()[3]
    assert turn in ("a3", "k1") and get_line == f"  → get {pi_id} {turn} --memory {mem}"
    other = run_cli("funes", "recall", "what builds the css", "--memory", mem, "--session", "s-77")
    assert (
        other.stdout
        == (
            f"no results — nothing in {mem} matches the filters (--session s-77); widen or drop "
            "them, or see what the memory holds with `funes status`\n"
        ).encode()
    )
