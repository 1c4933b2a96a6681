"""`funes-embed` end to end, as a user runs it: a subprocess, JSONL on stdin and stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import model_cache_dir

from funes.models import EMBEDDER_PIN


@pytest.fixture
def env(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    e = dict(os.environ)
    e.update(
        HOME=str(tmp_path / "home"),
        FUNES_HOME=str(tmp_path / "funes-home"),
        # shared with tests/test_models.py: the int8 graph is derived once per test session
        FUNES_CACHE_DIR=str(model_cache_dir(tmp_path_factory)),
    )
    for v in ("FUNES_EMBEDDER_FILE", "FUNES_RERANKER"):  # no reranker: must not matter
        e.pop(v, None)
    return e


def embed(stdin: bytes, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "funes.cli.embed", *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=120,
    )


def chunk_line(cid: str, text: str, **extra: object) -> bytes:
    d = {
        "kind": "chunk", "v": 1, "id": cid, "text": text, "session_id": "s1", "turn_uuid": "t1",
        "parent_uuid": None, "seq": 3, "ts": "2026-11-30T00:00:00Z", "role": "assistant",
        "block_type": "text", "block_idx": 0, "split_idx": 0, "tool_name": None,
        "harness": "claude", "workdir": "/w", "repo": "r", "source_path": "/x.jsonl", **extra,
    }  # fmt: skip
    return json.dumps(d).encode() + b"\n"


def test_chunks_get_vectors_in_order_other_kinds_untouched_bad_line_reported(
    env: dict[str, str],
) -> None:
    other = b'{"kind": "note",  "v": 1, "text": "kept byte for byte"}\n'
    lines = [
        chunk_line("c1", "first chunk: the writer lock"),
        other,
        chunk_line("c2", "second chunk é ü", custom_field={"kept": True}),
        b'{"kind": "chunk", "v": 1, "id": "broken"\n',  # line 4: invalid JSON
        chunk_line("c3", "third chunk"),
        b'{"kind": "chunk", "v": 1, "id": "c4"}\n',  # line 6: misses text
    ]
    p = embed(b"".join(lines), env, "--batch", "2")
    assert p.returncode == 1
    out = p.stdout.splitlines(keepends=True)
    assert len(out) == 4
    assert out[1] == other
    recs = [json.loads(out[i]) for i in (0, 2, 3)]
    assert [r["id"] for r in recs] == ["c1", "c2", "c3"]
    for r in recs:
        assert r["model"] == EMBEDDER_PIN.name
        assert len(r["vector"]) == 384
        assert abs(np.linalg.norm(r["vector"]) - 1.0) < 1e-5
    assert recs[1]["custom_field"] == {"kept": True} and recs[1]["text"] == "second chunk é ü"
    err = p.stderr.decode()
    assert "<stdin>:4:" in err and "<stdin>:6:" in err and "Traceback" not in err


def test_same_chunk_same_vector_whatever_its_batch(env: dict[str, str]) -> None:
    target = chunk_line("t", "how the derived int8 graph is cached")
    filler = b"".join(chunk_line(f"f{i}", "filler text " * (i * 20 + 1)) for i in range(5))
    a = embed(target, env)
    b = embed(filler + target + filler, env, "--batch", "4")
    assert a.returncode == b.returncode == 0
    va = np.array(json.loads(a.stdout)["vector"])
    vb = np.array(json.loads(b.stdout.splitlines()[5])["vector"])
    assert np.abs(va - vb).max() <= 1e-5


def test_strict_stops_at_the_first_bad_line_after_writing_what_came_before(
    env: dict[str, str],
) -> None:
    stdin = chunk_line("c1", "fine") + b"not json\n" + chunk_line("c2", "never reached")
    p = embed(stdin, env, "--strict")
    assert p.returncode == 1
    assert [json.loads(x)["id"] for x in p.stdout.splitlines()] == ["c1"]
    err = p.stderr.decode().strip().splitlines()
    assert len(err) == 1 and err[0].startswith("funes: <stdin>:2:")


def test_empty_input_and_non_chunk_input_need_no_model(env: dict[str, str]) -> None:
    env = {**env, "FUNES_EMBEDDER_FILE": "/nonexistent/model.onnx"}
    assert embed(b"", env).returncode == 0
    p = embed(b'{"kind":"turn-ish","v":1}\n', env)
    assert p.returncode == 0 and p.stdout == b'{"kind":"turn-ish","v":1}\n'


def test_corrupted_weights_give_one_funes_line_not_a_traceback(
    env: dict[str, str], tmp_path: Path
) -> None:
    from funes.models.embedder import source_file

    data = bytearray(source_file()[0].read_bytes())
    data[1000] ^= 0x01
    bad = tmp_path / "model.onnx"
    bad.write_bytes(bytes(data))
    p = embed(chunk_line("c1", "text"), {**env, "FUNES_EMBEDDER_FILE": str(bad)})
    assert p.returncode == 1 and p.stdout == b""
    err = p.stderr.decode().strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("funes: the embedder weights") and "sha256" in err[0]
    assert "FUNES_EMBEDDER_FILE" in err[0]  # what to do
