"""`funes-write`: chunk lines in, new ids appended, one JSON summary line out."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import jsonl, run_cli


def chunk_line(i: int, text: str, vector: list[float] | None = None, **extra: object) -> str:
    d: dict[str, object] = {
        "kind": "chunk", "v": 1, "id": f"{i:016x}", "text": text, "session_id": "s1",
        "turn_uuid": f"t{i}", "parent_uuid": None, "seq": i, "ts": "2026-11-01T00:00:00Z",
        "role": "user", "block_type": "text", "block_idx": 0, "split_idx": 0,
        "tool_name": None, "harness": "claude_code", "workdir": "-w", "repo": "",
        "source_path": "/x.jsonl",
    }  # fmt: skip
    if vector is not None:
        d["vector"] = vector
        d["model"] = "sentence-transformers/all-MiniLM-L6-v2"
    d.update(extra)
    return json.dumps(d)


def test_write_appends_new_ids_and_reports_one_summary_line(tmp_path: Path) -> None:
    lines = [chunk_line(1, "alpha beta"), chunk_line(2, "gamma", vector=[0.05] * 384)]
    r = run_cli("funes-write", "--memory", tmp_path / "m", input="\n".join(lines) + "\n")
    assert r.returncode == 0, r.stderr.decode()
    assert jsonl(r.stdout) == [{"written": 2, "skipped": 0, "memory": str(tmp_path / "m")}]
    more = [chunk_line(2, "gamma"), chunk_line(3, "delta")]
    r = run_cli("funes-write", "--memory", tmp_path / "m", input="\n".join(more) + "\n")
    assert jsonl(r.stdout)[0] == {"written": 1, "skipped": 1, "memory": str(tmp_path / "m")}
    from funes.store.memory import open_memory

    mem = open_memory(tmp_path / "m")
    assert mem.count() == 3 and mem.count_without_vectors() == 2
    assert mem.lexical_search("alpha")[0][0] == f"{1:016x}"


def test_parse_chunk_write_pipeline_fills_the_default_memory(private_home: Path) -> None:
    src = private_home / "s.jsonl"
    src.write_text(
        json.dumps(
            {
                "type": "user",
                "uuid": "u1",
                "timestamp": "2026-03-02T10:00:00Z",
                "cwd": "/p",
                "message": {"role": "user", "content": "fix ENOENT in sync_worker"},
            }
        )
        + "\n"
    )
    turns = run_cli("funes-parse", src).stdout
    chunks = run_cli("funes-chunk", input=turns).stdout
    r = run_cli("funes-write", input=chunks)
    assert r.returncode == 0, r.stderr.decode()
    assert jsonl(r.stdout)[0]["written"] == 1
    from funes.store.memory import open_memory

    assert open_memory().lexical_search("ENOENT")


def test_bad_lines_are_reported_and_good_ones_still_written(tmp_path: Path) -> None:
    lines = [
        chunk_line(1, "good one"),
        "{not json",
        chunk_line(2, "short vector", vector=[0.1] * 3),
        json.dumps({"kind": "turn", "v": 1, "session_id": "s", "turn_uuid": "t", "blocks": []}),
        chunk_line(3, "good two"),
    ]
    r = run_cli("funes-write", "--memory", tmp_path / "m", input="\n".join(lines) + "\n")
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "<stdin>:2:" in err and "<stdin>:3: vector has 3 dimensions" in err
    assert "<stdin>:4: not a chunk" in err
    assert jsonl(r.stdout)[0]["written"] == 2


def test_strict_stops_at_the_first_bad_line_without_writing_it(tmp_path: Path) -> None:
    lines = [chunk_line(1, "good"), "{bad"]
    r = run_cli("funes-write", "--strict", "--memory", tmp_path / "m", input="\n".join(lines))
    assert r.returncode == 1
    assert r.stderr.decode().startswith("funes-write: <stdin>:2:")
