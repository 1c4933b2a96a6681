"""Older Codex rollouts (codex-rs of mid 2025): no envelope, a bare header, `record_type` markers.

The shapes are those of real public rollouts written in 2025-08/09 (see docs/sources.md): line 1
`{id, timestamp, instructions, git?}`, then `{"record_type":"state"}` markers between bare
response items with no `payload` wrapper and no timestamp of their own.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from conftest import run_cli, write_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from funes import sources
from funes.records import dumps

SID = "934df0e1-738e-477c-8310-886dd25042cf"
NAME = f"rollout-2025-08-28T12-05-24-{SID}.jsonl"
HEADER = {
    "id": SID,
    "timestamp": "2025-08-28T12:05:24.389Z",
    "instructions": None,
    "git": {"commit_hash": "141f143d", "branch": "main"},
}
STATE = {"record_type": "state"}
ENV = (
    "<environment_context>\n  <cwd>/workspaces/shop</cwd>\n  <approval_policy>never"
    "</approval_policy>\n  <sandbox_mode>danger-full-access</sandbox_mode>\n</environment_context>"
)


def msg(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "id": None, "role": role, "content": [{"type": kind, "text": text}]}


def reasoning(*summary: str) -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": "rs_68b0467d",
        "summary": [{"type": "summary_text", "text": s} for s in summary],
        "content": None,
        "encrypted_content": "gAAAA-LEGACY-CIPHERTEXT",
    }


def call(call_id: str, cmd: str) -> dict[str, Any]:
    args = json.dumps({"command": ["bash", "-lc", cmd]})
    return {"type": "function_call", "id": "fc_1", "name": "shell", "arguments": args,
            "call_id": call_id}  # fmt: skip


def output(call_id: str, text: str) -> dict[str, Any]:
    out = json.dumps({"output": text, "metadata": {"exit_code": 0, "duration_seconds": 0.1}})
    return {"type": "function_call_output", "call_id": call_id, "output": out}


EXAMPLE: list[dict[str, Any] | str] = [
    HEADER,
    STATE,
    msg("user", ENV),
    STATE,
    msg("user", "list the files"),
    STATE,
    reasoning(),
    reasoning("**Exploring directories**"),
    call("call_1", "ls -la"),
    output("call_1", "app.py\n"),
    {"type": "ghost_snapshot", "ghost_commit": {"id": "ghost-1", "parent": None}},
    msg("assistant", "There is one file, app.py."),
    STATE,
]


def parse(path: Path) -> tuple[list[Any], sources.FileStats]:
    files: list[sources.FileStats] = []
    turns = list(sources.parse([path], on_file=files.append))
    return turns, files[0]


def test_an_older_rollout_reads_into_the_same_turns(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / NAME, EXAMPLE)  # not under .codex/sessions: found by sniffing
    turns, stats = parse(f)
    got = [(t.role, b.type, b.tool_name, b.text) for t in turns for b in t.blocks]
    assert got == [
        ("meta", "text", None, ENV),
        ("user", "text", None, "list the files"),
        ("assistant", "thinking", None, "**Exploring directories**"),
        ("assistant", "tool_use", "shell", '{"command": ["bash", "-lc", "ls -la"]}'),
        ("tool", "tool_result", "shell", output("c", "app.py\n")["output"]),
        ("assistant", "text", None, "There is one file, app.py."),
    ]
    assert {t.harness for t in turns} == {"codex"}
    assert {t.session_id for t in turns} == {SID}
    assert [t.turn_uuid for t in turns] == [f"{SID}-{i}" for i in range(6)]
    assert {t.ts for t in turns} == {"2025-08-28T12:05:24.389Z"}  # the header's time
    assert {t.workdir for t in turns} == {"-workspaces-shop"}  # from <environment_context>
    assert "CIPHERTEXT" not in "".join(dumps(t) for t in turns)
    rep = sources.coverage(stats)
    assert rep["unexplained"] == {} and rep["skipped"] == {}
    assert rep["ignored"] == {
        "session_header": 1,
        "record_type:state": 4,
        "response_item:ghost_snapshot": 1,
    }
    assert rep["empty"] == {"response_item:reasoning": 1}
    assert rep["records_read"] == len(EXAMPLE)


def test_an_item_timestamp_and_a_header_cwd_win(tmp_path: Path) -> None:
    header = {**HEADER, "cwd": "/srv/api", "cli_version": "0.30.0"}
    first = {**msg("user", "hi"), "timestamp": "2025-09-05T17:07:47Z"}
    f = write_jsonl(tmp_path / NAME, [header, STATE, msg("user", ENV), first])
    turns, _ = parse(f)
    assert {t.workdir for t in turns} == {"-srv-api"}
    assert [t.ts for t in turns] == ["2025-08-28T12:05:24.389Z", "2025-09-05T17:07:47Z"]


def test_without_a_header_the_file_name_gives_the_session_and_time(tmp_path: Path) -> None:
    day = tmp_path / ".codex" / "sessions" / "2025" / "08" / "28"
    f = write_jsonl(day / NAME, ['{"id":"' + SID + '","timesta', STATE, msg("user", "hello")])
    turns, stats = parse(f)
    assert [(t.session_id, t.turn_uuid, t.ts, t.role) for t in turns] == [
        (SID, f"{SID}-0", "2025-08-28T12:05:24Z", "user")
    ]
    assert sum(stats.skipped.values()) == 1  # the truncated header, counted


def test_parsing_the_public_shape_through_the_cli_explains_every_record(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / ".codex" / "sessions" / "2025" / "08" / "28" / NAME, EXAMPLE)
    r = run_cli("funes-parse", "--report", "--json", tmp_path / ".codex" / "sessions")
    assert r.returncode == 0, r.stderr
    (rep,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert (rep["path"], rep["harness"], rep["sessions"], rep["turns"]) == (str(f), "codex", 1, 6)
    assert rep["unexplained"] == {} and rep["no_turns"] is None


# ---------------------------------------------------------------------------- generated shapes

LOCAL_SHELL = {
    "type": "local_shell_call",
    "call_id": "c3",
    "status": "completed",
    "action": {"type": "exec", "command": ["ls"]},
}
ITEMS = st.one_of(
    st.builds(lambda t: msg("user", t), st.text(max_size=30)),
    st.builds(lambda t: msg("assistant", t), st.text(max_size=30)),
    st.just(msg("user", ENV)),
    st.builds(lambda s: reasoning(*s), st.lists(st.text(max_size=12), max_size=2)),
    st.builds(call, st.sampled_from(["c1", "c2"]), st.text(max_size=10)),
    st.builds(output, st.sampled_from(["c1", "c2", "cx"]), st.text(max_size=10)),
    st.just(LOCAL_SHELL),
    st.just(STATE),
    st.just({"record_type": "later_kind"}),
    st.just({"type": "ghost_snapshot", "ghost_commit": {"id": "g"}}),
)
BAD = st.sampled_from(['{"type":"message","role":"us', "{not json", "[1, 2]", '"a string"'])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=st.lists(st.one_of(ITEMS, ITEMS, ITEMS, BAD), max_size=25),
    header=st.booleans(),
    truncate=st.integers(min_value=0, max_value=40),
)
def test_generated_older_rollouts_keep_stable_ids_and_account_for_every_line(
    tmp_path: Path, body: list[dict[str, Any] | str], header: bool, truncate: int
) -> None:
    lines = [json.dumps(r) if isinstance(r, dict) else r for r in [STATE, *body]]
    if header:
        lines.insert(0, json.dumps(HEADER))
    if truncate and len(lines) > 1:  # a log cut mid-line, as a copy taken mid-write is
        lines[-1] = lines[-1][: max(1, len(lines[-1]) - truncate)]
    with tempfile.TemporaryDirectory(dir=tmp_path) as d:
        day = Path(d) / ".codex" / "sessions" / "2025" / "08" / "28"
        day.mkdir(parents=True)
        f = day / NAME
        f.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        turns, stats = parse(f)
        again, _ = parse(f)
        write_jsonl(f, [*lines, msg("user", "one more")])
        grown, _ = parse(f)
    ids = [t.turn_uuid for t in turns]
    assert ids == [t.turn_uuid for t in again]  # deterministic
    assert ids == [f"{SID}-{i}" for i in range(len(ids))]  # header or file name: the same id
    assert [t.turn_uuid for t in grown][: len(ids)] == ids and len(grown) == len(ids) + 1
    assert all(t.harness == "codex" and t.blocks for t in turns)
    rep = sources.coverage(stats)
    accounted = (
        rep["turns"]
        + sum(rep["empty"].values())
        + sum(rep["ignored"].values())
        + sum(rep["unexplained"].values())
        + sum(rep["skipped"].values())
    )
    assert accounted == len([line for line in lines if line.strip()])
    assert set(rep["unexplained"]) <= {"record_type:later_kind"}
    assert (rep["no_turns"] is None) == bool(turns)


# ---------------------------------------------------------------------------- no turns, said


def test_a_rollout_with_no_turns_is_said_not_silently_dropped(tmp_path: Path) -> None:
    codex = tmp_path / ".codex"
    day = codex / "sessions" / "2025" / "08" / "28"
    write_jsonl(day / NAME, [HEADER, STATE, reasoning(), STATE])
    r = run_cli("funes-parse", "--report", codex / "sessions")
    err, out = r.stderr.decode(), r.stdout.decode()
    assert f"{NAME}: read as a codex transcript but no turns came of its 4 records" in err
    assert "NO TURNS: read as a codex transcript" in out
    r = run_cli("funes", "index", codex, "--no-embed", "--memory", tmp_path / "memory")
    err = r.stderr.decode()
    assert "but no turns came of its 4 records" in err and "nothing indexed from it" in err
