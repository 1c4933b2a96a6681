"""`funes-parse` and `funes-chunk` as a user runs them: pipes, determinism, bad input."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import BIN, REPO, jsonl, run_cli, write_jsonl

from funes.cli._pipe import PIPE_BYTES, widen_pipe

SAMPLES = REPO / "contrib" / "samples"


def claude_line(uuid: str, text: str, parent: str | None = None) -> dict[str, object]:
    return {
        "type": "user" if uuid.startswith("u") else "assistant",
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": "2026-05-01T12:00:00.000Z",
        "cwd": "/home/bo/app",
        "message": {"role": "user" if uuid.startswith("u") else "assistant", "content": text},
    }


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(SAMPLES, root)
    return root


def test_parse_a_tree_into_turn_lines(tree: Path) -> None:
    r = run_cli("funes-parse", tree)
    assert r.returncode == 0, r.stderr
    turns = jsonl(r.stdout)
    assert {t["kind"] for t in turns} == {"turn"}
    assert {t["harness"] for t in turns} == {"claude_code", "codex"}
    assert len({t["session_id"] for t in turns}) == 3
    assert b"3 files: 3 sessions" in r.stderr


def test_verbose_prints_a_summary_per_file(tree: Path) -> None:
    r = run_cli("funes-parse", "-v", tree)
    lines = r.stderr.decode().splitlines()
    assert sum(": 1 session, " in line for line in lines) == 3


def test_parsing_the_same_tree_twice_gives_identical_bytes(tree: Path) -> None:
    a = run_cli("funes-parse", tree)
    b = run_cli("funes-parse", tree)
    assert a.stdout == b.stdout and a.stdout


def test_a_grown_session_keeps_every_old_chunk_id(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "s.jsonl", [claude_line("u1", "first"), claude_line("a1", "reply " * 400, "u1")]
    )
    before = {
        c["id"]
        for c in jsonl(run_cli("funes-chunk", input=run_cli("funes-parse", f).stdout).stdout)
    }
    with open(f, "a", encoding="utf-8") as fp:
        fp.write(json.dumps(claude_line("u2", "second", "a1")) + "\n")
        fp.write(json.dumps(claude_line("a2", "another reply", "u2")) + "\n")
    after = {
        c["id"]
        for c in jsonl(run_cli("funes-chunk", input=run_cli("funes-parse", f).stdout).stdout)
    }
    assert before < after and len(after - before) == 2


def test_chunk_is_idempotent_on_its_own_output(tree: Path) -> None:
    turns = run_cli("funes-parse", tree).stdout
    once = run_cli("funes-chunk", input=turns)
    twice = run_cli("funes-chunk", input=once.stdout)
    assert once.returncode == twice.returncode == 0
    assert twice.stdout == once.stdout
    assert {c["kind"] for c in jsonl(once.stdout)} == {"chunk"}


def test_unknown_fields_and_kinds_survive_a_chunk_pass(tree: Path) -> None:
    turns = jsonl(run_cli("funes-parse", tree).stdout)
    turns[0]["x_ticket"] = "OPS-12"
    lines = [json.dumps(t) for t in turns[:2]]
    lines.insert(1, '{"kind":"note","v":1,"text":"mine",  "spacing":"kept"}')
    out = run_cli("funes-chunk", input="\n".join(lines) + "\n")
    assert out.returncode == 0
    rows = out.stdout.decode().splitlines()
    assert '{"kind":"note","v":1,"text":"mine",  "spacing":"kept"}' in rows
    chunks = [json.loads(r) for r in rows if '"kind":"chunk"' in r]
    first = [c for c in chunks if c["turn_uuid"] == turns[0]["turn_uuid"]]
    assert first and all(c["x_ticket"] == "OPS-12" for c in first)


def test_chunk_tiers_and_no_thinking(tree: Path) -> None:
    turns = run_cli("funes-parse", tree).stdout
    text = jsonl(run_cli("funes-chunk", "--tiers", "text", "--no-thinking", input=turns).stdout)
    assert text and {c["block_type"] for c in text} == {"text"}
    bad = run_cli("funes-chunk", "--tiers", "text,images", input=turns)
    assert bad.returncode == 2
    assert bad.stderr.decode().strip() == (
        "funes: unknown tier 'images' in --tiers (expected text, tool_use, tool_result)"
    )


def test_chunk_reports_bad_lines_with_line_numbers_and_exit_1(tree: Path) -> None:
    turns = run_cli("funes-parse", tree).stdout.decode().splitlines()
    data = "\n".join([turns[0], "{broken", '{"kind":"turn","blocks":[]}', turns[1]]) + "\n"
    r = run_cli("funes-chunk", input=data)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "<stdin>:2: invalid JSON" in err and "<stdin>:3: missing 'session_id'" in err
    assert "Traceback" not in err
    assert len(jsonl(r.stdout)) >= 2
    strict = run_cli("funes-chunk", "--strict", input=data)
    assert strict.returncode == 1 and "--strict" in strict.stderr.decode()


def test_stdin_transcripts_are_sniffed(tree: Path) -> None:
    codex = next(tree.rglob("rollout-*.jsonl")).read_bytes()
    r = run_cli("funes-parse", "-", input=codex)
    assert r.returncode == 0, r.stderr
    assert {t["harness"] for t in jsonl(r.stdout)} == {"codex"}


# ---------------------------------------------------------------- bad input


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    r = run_cli("funes-parse", tmp_path / "empty.jsonl")
    assert r.returncode == 1 and r.stdout == b""
    assert b"empty.jsonl: empty file, no turns" in r.stderr
    assert b"Traceback" not in r.stderr


def test_binary_file(tmp_path: Path) -> None:
    f = tmp_path / "blob.jsonl"
    f.write_bytes(bytes(range(256)) * 64)
    r = run_cli("funes-parse", f)
    assert r.returncode == 1 and r.stdout == b""
    assert b"blob.jsonl: not a transcript (binary data)" in r.stderr
    assert len(r.stderr.splitlines()) == 2  # the complaint and the summary


def test_truncated_last_line_is_skipped_and_counted(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "s.jsonl", [claude_line("u1", "kept"), claude_line("a1", "also kept", "u1")]
    )
    with open(f, "a", encoding="utf-8") as fp:
        fp.write('{"type":"user","uuid":"u2","message":{"role":"us')  # a write cut short
    r = run_cli("funes-parse", f)
    assert r.returncode == 1
    assert [t["turn_uuid"] for t in jsonl(r.stdout)] == ["u1", "a1"]
    assert b"s.jsonl:3: truncated line" in r.stderr
    assert b"1 skipped line" in r.stderr


def test_non_utf8_line_is_skipped_and_counted(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "s.jsonl", [claude_line("u1", "kept")])
    with open(f, "ab") as fp:
        fp.write(b'{"type":"user","uuid":"u2","message":{"content":"caf\xe9"}}\n')
        fp.write(json.dumps(claude_line("u3", "after")).encode() + b"\n")
    r = run_cli("funes-parse", f)
    assert r.returncode == 1
    assert [t["turn_uuid"] for t in jsonl(r.stdout)] == ["u1", "u3"]
    assert b"s.jsonl:2: not utf8 line" in r.stderr


def test_a_5mb_single_line_parses_and_chunks(tmp_path: Path) -> None:
    big = "\n".join(f"log line {i} " + "x" * 80 for i in range(55_000))
    assert len(big) > 5_000_000
    f = write_jsonl(tmp_path / "s.jsonl", [claude_line("u1", big)])
    r = run_cli("funes-parse", f)
    assert r.returncode == 0, r.stderr
    chunks = jsonl(run_cli("funes-chunk", input=r.stdout).stdout)
    assert len(chunks) > 4000
    assert all(len(c["text"]) <= 1200 for c in chunks)


def test_a_5mb_garbage_line_is_one_skipped_line(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "s.jsonl", [claude_line("u1", "kept"), "{" + "z" * 5_000_000])
    r = run_cli("funes-parse", f)
    assert r.returncode == 1 and len(jsonl(r.stdout)) == 1
    assert b"s.jsonl:2: malformed json line" in r.stderr


def test_directory_without_transcripts(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing here")
    r = run_cli("funes-parse", tmp_path)
    assert r.returncode == 1
    assert f"funes: {tmp_path}: no transcripts found in this directory".encode() in r.stderr


def test_missing_path_and_unknown_harness_are_usage_errors(tmp_path: Path) -> None:
    r = run_cli("funes-parse", tmp_path / "nope.jsonl")
    assert r.returncode == 2
    assert r.stderr.decode().startswith("funes: no such file or directory:")
    r = run_cli("funes-parse", "--harness", "aider", SAMPLES)
    assert r.returncode == 2
    assert 'unknown harness "aider"' in r.stderr.decode()


def test_empty_stdin_is_an_empty_transcript() -> None:
    r = run_cli("funes-parse", input=b"")
    assert r.returncode == 1 and b"<stdin>: empty file" in r.stderr


def test_closed_pipe_is_quiet(tree: Path) -> None:
    big = tree / "big.jsonl"
    write_jsonl(big, [claude_line(f"u{i}", "text " * 50) for i in range(20_000)])
    r = subprocess.run(
        f"'{BIN}/funes-parse' '{big}' | head -c 100 >/dev/null",
        shell=True, capture_output=True, check=False, executable="/bin/bash",
    )  # fmt: skip
    assert b"Traceback" not in r.stderr and b"Broken pipe" not in r.stderr


def test_a_pipe_between_stages_gives_the_bytes_a_file_does(tmp_path: Path) -> None:
    """Stages read standard input and fill their output pipe in big pieces: the chunks that
    come through a pipe are those of the same turns read from a file."""
    big = tmp_path / "big.jsonl"
    write_jsonl(big, [claude_line(f"u{i}", f"line {i} " * (i % 700)) for i in range(3_000)])
    piped = subprocess.run(
        f"'{BIN}/funes-parse' -q '{big}' | '{BIN}/funes-chunk'",
        shell=True, capture_output=True, check=True, executable="/bin/bash",
    ).stdout  # fmt: skip
    turns = tmp_path / "turns.jsonl"
    turns.write_bytes(run_cli("funes-parse", "-q", big).stdout)
    from_file = run_cli("funes-chunk", turns).stdout
    assert piped == from_file
    assert len(jsonl(piped)) > 3_000


@pytest.mark.skipif(not hasattr(fcntl, "F_GETPIPE_SZ"), reason="Linux's pipe sizes")
def test_a_stage_lets_its_output_pipe_hold_a_mebibyte(tmp_path: Path) -> None:
    r, w = os.pipe()
    try:
        with open(w, "wb", closefd=False) as out:
            widen_pipe(out)
        assert fcntl.fcntl(w, fcntl.F_GETPIPE_SZ) >= PIPE_BYTES
    finally:
        os.close(r)
        os.close(w)
    with open(tmp_path / "out", "wb") as f:  # not a pipe: left alone
        widen_pipe(f)
        f.write(b"x")
    assert (tmp_path / "out").read_bytes() == b"x"
