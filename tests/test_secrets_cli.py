"""`funes-parse | funes-chunk` redacts secrets by default; `--no-redact` keeps them."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import jsonl, run_cli, write_jsonl
from test_secrets import bench

from funes.chunking import reassemble

CWD = "/home/ana/proj"


def _rec(kind: str, uuid: str, parent: str | None, content: object) -> dict[str, object]:
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": "2026-11-30T10:00:00.000Z",
        "cwd": CWD,
        "sessionId": "sess-secrets",
        "message": {"role": "assistant" if kind == "assistant" else "user", "content": content},
    }


def seeded_transcript(path: Path, seed: int = 31) -> list[str]:
    """A Claude Code session carrying one fake secret of every type; returns the values.

    Secrets sit in user prose, in tool input (which funes-parse renders as compact JSON, so
    newlines and quotes arrive JSON-escaped), in tool output, and in a long line that the
    chunker must split.
    """
    rng = random.Random(seed)
    values = []
    records: list[dict[str, object]] = []
    prev: str | None = None
    for i, kind in enumerate(bench.KINDS):
        value = kind.make(rng)
        values.append(value)
        contexts = dict(bench._contexts(kind, value, rng))
        u, a, t = f"u{i}", f"a{i}", f"t{i}"
        records.append(_rec("user", u, prev, contexts["prose"]))
        tool_input = {"command": contexts["shell"], "description": "configure"}
        records.append(
            _rec(
                "assistant",
                a,
                u,
                [
                    {"type": "text", "text": "Setting up the environment."},
                    {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": tool_input},
                ],
            )
        )
        output = contexts["tool_output"] + "\n" + contexts["straddle"]
        records.append(
            _rec(
                "user",
                t,
                a,
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"toolu_{i}",
                        "content": [{"type": "text", "text": output}],
                    }
                ],
            )
        )
        prev = t
    write_jsonl(path, records)
    return values


def _pipeline(transcript: Path, *chunk_args: str) -> tuple[list[dict[str, object]], str]:
    parse = run_cli("funes-parse", transcript)
    assert parse.returncode == 0, parse.stderr.decode()[-300:]
    chunk = run_cli("funes-chunk", *chunk_args, input=parse.stdout)
    assert chunk.returncode == 0
    return jsonl(chunk.stdout), parse.stderr.decode() + chunk.stderr.decode()


def _blocks(chunks: list[dict[str, object]]) -> list[str]:
    """Each block's text, reassembled from its chunks."""
    by_block: dict[tuple[object, object], list[tuple[int, str]]] = {}
    for c in chunks:
        key = (c["turn_uuid"], c["block_idx"])
        by_block.setdefault(key, []).append((int(c["split_idx"]), str(c["text"])))  # type: ignore[call-overload]
    return [reassemble(t for _, t in sorted(v)) for v in by_block.values()]


def test_parse_then_chunk_output_contains_no_seeded_secret(tmp_path: Path) -> None:
    values = seeded_transcript(tmp_path / "sess-secrets.jsonl")
    chunks, stderr = _pipeline(tmp_path / "sess-secrets.jsonl")
    assert chunks and all(c["kind"] == "chunk" for c in chunks)
    texts = [str(c["text"]) for c in chunks] + _blocks(chunks)
    leaked = [i for i, v in enumerate(values) if any(bench.leaked(v, t) for t in texts)]
    assert leaked == []  # indexes only: a failing test must not print the values
    assert sum("[REDACTED:" in t for t in texts) >= len(values)
    assert not any(bench.leaked(v, stderr) for v in values)


def test_no_redact_keeps_every_seeded_secret(tmp_path: Path) -> None:
    values = seeded_transcript(tmp_path / "sess-secrets.jsonl")
    chunks, _ = _pipeline(tmp_path / "sess-secrets.jsonl", "--no-redact")
    blocks = _blocks(chunks)
    kept = [i for i, v in enumerate(values) if any(bench.leaked(v, b) for b in blocks)]
    assert kept == list(range(len(values)))
    assert not any("[REDACTED:" in b for b in blocks)


def test_redaction_does_not_change_chunk_ids_or_count_on_clean_text(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "clean.jsonl",
        [_rec("user", "u1", None, "Why does split() prefer newlines? " * 80)],
    )
    redacted, _ = _pipeline(f)
    plain, _ = _pipeline(f, "--no-redact")
    assert redacted == plain


@pytest.mark.parametrize("flag", ["--no-redact"])
def test_chunk_help_documents_the_flag(flag: str) -> None:
    out = run_cli("funes-chunk", "--help").stdout.decode()
    assert flag in out and "REDACTED" in out


def test_redacted_chunk_text_is_valid_json_lines(tmp_path: Path) -> None:
    seeded_transcript(tmp_path / "s.jsonl", seed=5)
    chunks, _ = _pipeline(tmp_path / "s.jsonl")
    for c in chunks:
        assert json.loads(json.dumps(c)) == c
