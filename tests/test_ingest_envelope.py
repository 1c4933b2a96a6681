"""`funes ingest`: whole-session envelopes from a file or stdin, validated whole, at most 64 MiB,
session ids namespaced by harness."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from funes.errors import FunesError
from funes.sources import envelope


def session(**over: Any) -> dict[str, Any]:
    doc = {
        "version": 1, "harness": "aider", "session_id": "chat-7", "cwd": "/home/ana/tiles",
        "turns": [
            {"turn_uuid": "u1", "ts": "2026-05-01T10:00:00Z", "role": "user",
             "blocks": [{"block_type": "text", "text": "why is the tile cache thrashing?"}]},
            {"turn_uuid": "a1", "ts": "2026-05-01T10:00:05Z", "role": "assistant", "parent_uuid": "u1",
             "blocks": [{"block_type": "text", "text": "the porcupine says: FIFO eviction"},
                        {"block_type": "tool_use", "text": "rg evict", "tool_name": "shell"}]},
        ],
    }  # fmt: skip
    return {**doc, **over}


def test_envelope_turns_are_namespaced_by_harness() -> None:
    (doc,) = envelope.envelopes(json.dumps(session()).encode(), "x")
    turns = list(envelope.turns_of(doc, "x"))
    assert [(t.session_id, t.turn_uuid, t.seq, t.harness) for t in turns] == [
        ("aider:chat-7", "u1", 0, "aider"), ("aider:chat-7", "a1", 1, "aider"),
    ]  # fmt: skip
    assert [b.type for b in turns[1].blocks] == ["text", "tool_use"]
    assert turns[0].workdir == "-home-ana-tiles"


@pytest.mark.parametrize(
    ("doc", "says"),
    [
        (session(extra=1), "unknown field 'extra' on an envelope"),
        (session(version=2), "version 2 is not one funes knows"),
        (session(harness="Aider"), "harness 'Aider' must be lowercase"),
        (
            session(turns=[{"turn_uuid": "u", "ts": "yesterday", "role": "user", "blocks": []}]),
            "is not RFC 3339",
        ),
        (
            session(
                turns=[
                    {
                        "turn_uuid": "u",
                        "ts": "2026-05-01T10:00:00Z",
                        "role": "user",
                        "blocks": [],
                        "mood": "x",
                    }
                ]
            ),
            "unknown field 'mood' on a turn (0)",
        ),
    ],
)
def test_a_bad_envelope_is_refused_whole(doc: dict[str, Any], says: str) -> None:
    with pytest.raises(FunesError, match="nothing of this input was stored") as e:
        envelope.envelopes(json.dumps(doc).encode(), "in.json")
    assert says in str(e.value) and str(e.value).startswith("in.json: ")


def test_more_than_64_mib_is_refused_before_parsing() -> None:
    with pytest.raises(FunesError, match="more than 64 MiB"):
        envelope.envelopes(b" " * (envelope.MAX_BYTES + 1), "big.json")


@pytest.mark.slow
def test_ingest_from_stdin_stores_and_recall_names_the_namespaced_session(
    private_home: Path, tmp_path: Path
) -> None:
    lines = "\n".join(json.dumps(session(session_id=s)) for s in ("chat-7", "chat-8")) + "\n"
    r = run_cli("funes", "ingest", "--no-embed", "--json", input=lines)
    assert r.returncode == 0, r.stderr.decode()
    assert json.loads(r.stdout.decode().splitlines()[-1])["chunks"] == 6
    out = run_cli("funes", "recall", "porcupine FIFO", "-k", "2").stdout.decode()
    assert "→ get aider:chat-7 " in out or "→ get 'aider:chat-7' " in out
    again = run_cli("funes", "ingest", "--no-embed", "--json", input=lines)  # nothing new
    assert (
        again.returncode == 0 and json.loads(again.stdout.decode().splitlines()[-1])["chunks"] == 0
    )
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(session(session_id="chat-9", extra=True)))
    r = run_cli("funes", "ingest", bad)
    assert (
        r.returncode == 1
        and r.stderr.decode().count("\n") == 1
        and "unknown field 'extra'" in r.stderr.decode()
    )
    assert "chat-9" not in run_cli("funes", "sessions", "--json").stdout.decode()
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob("funes-ingest-*"))
