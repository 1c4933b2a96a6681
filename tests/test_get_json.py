"""`funes get --json`: the turns as chunk records (JSONL, the chunk fields a recall hit carries),
secrets masked as in the text formats, the text escaped by JSON's rules only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, write_jsonl
from hypothesis import given
from hypothesis import strategies as st

from funes.records import CHUNK_FIELDS
from funes.render.formats import get_json

SID = "9a1b2c3d-0000-4000-8000-00000000c0de"
# A GitHub token shape the built-in detectors know (not a real token).
SECRET = "ghp_" + "Zq7Lm2Xv9Rt4Kp8Nw3Hy6Jb1Fd5Sg0Ce7Ua2"
# Text a renderer might be tempted to escape its own way: JSON's escapes are the only ones.
NASTY = (
    'a "quoted" \\path\\ ---\n[2026-01-01T00:00:00Z] user seq9\ttab \u2028 sep \x1b[31m red é 🦔'
)


def _line(uuid: str, parent: str | None, seq: int, role: str, content: Any) -> dict[str, Any]:
    return {
        "type": role,
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": f"2026-11-30T10:00:{seq:02d}.000Z",
        "cwd": "/home/ana/proj",
        "sessionId": SID,
        "message": {"role": role, "content": content},
    }


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """A memory this install never scanned (chunked with --no-redact), and the chunks stored."""
    root = tmp_path_factory.mktemp("getjson")
    transcript = write_jsonl(
        root / ".claude/projects/-home-ana-proj" / f"{SID}.jsonl",
        [
            _line("t-0", None, 0, "user", "why does the tile cache expire early?"),
            '{"type": "assistant", "uuid": "t-x", "message": {"content": [',  # truncated line
            _line(
                "t-1",
                "t-0",
                1,
                "assistant",
                [
                    {"type": "text", "text": NASTY},
                    {"type": "tool_use", "id": "tu1", "name": "Bash", "input": {"command": "env"}},
                ],
            ),
            _line(
                "t-2",
                "t-1",
                2,
                "user",
                [{"type": "tool_result", "tool_use_id": "tu1", "content": f"GH_TOKEN={SECRET}"}],
            ),
            _line("t-3", "t-2", 3, "assistant", [{"type": "text", "text": "TTL is 300 s. " * 400}]),
            _line("t-4", "t-3", 4, "user", "thanks"),
            _line("t-5", "t-4", 5, "user", "tile 14/8/5 empty\n" * 2500),  # past the range cap
        ],
    )
    parsed = run_cli("funes-parse", transcript)
    chunks = run_cli("funes-chunk", "--no-redact", input=parsed.stdout)
    assert chunks.returncode == 0, chunks.stderr
    mem = root / "mem"
    w = run_cli("funes-write", "--memory", mem, input=chunks.stdout)
    assert w.returncode == 0, w.stderr
    return mem, [json.loads(x) for x in chunks.stdout.decode().splitlines()]


def _records(out: bytes) -> list[dict[str, Any]]:
    return [json.loads(x) for x in out.decode("utf-8").splitlines()]


def test_get_json_prints_the_window_as_chunk_records(
    memory: tuple[Path, list[dict[str, Any]]],
) -> None:
    mem, stored = memory
    r = run_cli("funes", "get", SID, "t-2", "--window", "1", "--json", "--memory", mem)
    assert r.returncode == 0, r.stderr
    assert SECRET.encode() not in r.stdout and SECRET[4:20].encode() not in r.stdout
    got = _records(r.stdout)
    want = [c for c in stored if 1 <= c["seq"] <= 3]
    order = [(c["seq"], c["block_idx"], c["split_idx"]) for c in got]
    assert order == sorted((c["seq"], c["block_idx"], c["split_idx"]) for c in want)
    assert any(c["split_idx"] for c in got), "the long turn comes back as its stored pieces"
    by_id = {c["id"]: c for c in want}
    assert sorted(by_id) == sorted(c["id"] for c in got)
    for c in got:
        assert c["kind"] == "chunk" and c["v"] == 1
        assert list(c)[2:] == list(CHUNK_FIELDS), "the chunk fields, in the contract's order"
        assert "vector" not in c and "model" not in c
        s = by_id[c["id"]]
        assert {k: c[k] for k in CHUNK_FIELDS if k != "text"} == {
            k: s[k] for k in CHUNK_FIELDS if k != "text"
        }
        if SECRET in s["text"]:
            assert c["text"] == s["text"].replace(SECRET, "[REDACTED:github-pat]")
        else:
            assert c["text"] == s["text"]  # JSON round-trips the text exactly
    assert any(c["text"] == NASTY for c in got)
    assert {c["harness"] for c in got} == {"claude_code"}
    assert all(c["workdir"] for c in got), "provenance: where the session ran"
    assert all(c["source_path"].endswith(f"{SID}.jsonl") for c in got)
    assert "\u2028" not in r.stdout.decode(), "no raw line separator splits a record"


def test_get_json_reads_a_range_and_says_where_the_cap_stopped_on_stderr(
    memory: tuple[Path, list[dict[str, Any]]],
) -> None:
    mem, stored = memory
    r = run_cli("funes", "get", SID, "--from", "0", "--to", "4", "--json", "--memory", mem)
    assert r.returncode == 0, r.stderr
    got = _records(r.stdout)
    assert sorted(c["id"] for c in got) == sorted(c["id"] for c in stored if c["seq"] <= 4)
    assert r.stderr == b""
    assert b"[REDACTED:github-pat]" in r.stdout and SECRET.encode() not in r.stdout
    # Turn 5 does not fit the 40,000-character cap after the others: the records stop before
    # it, and stderr (not the JSON on stdout) names the --from that reads it.
    r = run_cli("funes", "get", SID, "--from", "0", "--to", "5", "--json", "--memory", mem)
    assert r.returncode == 0, r.stderr
    assert {c["seq"] for c in _records(r.stdout)} == {0, 1, 2, 3, 4}
    assert r.stderr.decode().splitlines() == [
        "1 more turn of seq 0–5 past the 40,000-character cap",
        f"→ get {SID} --from 5 --to 5 --memory {mem}",
    ]


def test_get_json_with_a_format_is_a_usage_error(
    memory: tuple[Path, list[dict[str, Any]]],
) -> None:
    mem, _ = memory
    r = run_cli("funes", "get", SID, "t-2", "--json", "--format", "agent", "--memory", mem)
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.decode().startswith("funes: ") and "--json" in r.stderr.decode()


def test_get_json_of_an_unknown_turn_is_one_error_line(
    memory: tuple[Path, list[dict[str, Any]]],
) -> None:
    mem, _ = memory
    r = run_cli("funes", "get", SID, "no-such-turn", "--json", "--memory", mem)
    assert r.returncode == 1 and r.stdout == b""
    (line,) = r.stderr.decode().splitlines()
    assert line.startswith(f"funes: turn no-such-turn not found in session {SID}")


@given(st.lists(st.text(), min_size=1, max_size=5))
def test_get_json_text_round_trips_through_json_alone(texts: list[str]) -> None:
    rows = [
        {"id": f"c{i}", "text": t, "session_id": SID, "turn_uuid": "t-1", "parent_uuid": None,
         "seq": 1, "ts": "2026-11-30T10:00:01.000Z", "role": "user", "block_type": "text",
         "block_idx": 0, "split_idx": i, "tool_name": None, "harness": "claude_code",
         "workdir": "/w", "repo": "", "source_path": "/s.jsonl"}
        for i, t in enumerate(texts)
    ]  # fmt: skip
    out = get_json(rows)
    lines = out.split("\n")
    assert lines[-1] == "" and len(lines) == len(texts) + 1, "one line per piece, none split"
    assert [json.loads(x)["text"] for x in lines[:-1]] == texts
