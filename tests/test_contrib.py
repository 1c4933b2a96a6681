"""The custom-ingest example in contrib/ feeds the real pipeline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import REPO, jsonl, run_cli


def test_aider_history_becomes_turns_that_chunk(tmp_path: Path) -> None:
    history = tmp_path / ".aider.chat.history.md"
    history.write_text(
        "# aider chat started at 2026-05-02 10:11:12\n\n"
        "#### why does the build fail on arm64?\n\n"
        "The `cryptography` wheel is missing for arm64, so pip builds it from source.\n\n"
        "> Running pip install cryptography\n> error: can't find Rust compiler\n\n"
        "Install rustc or pin cryptography<42.\n"
    )
    out = subprocess.run(
        [sys.executable, str(REPO / "contrib" / "aider_to_turns.py"), str(history)],
        capture_output=True,
        check=True,
    ).stdout
    turns = jsonl(out)
    assert [(t["role"], t["seq"]) for t in turns] == [
        ("user", 0),
        ("assistant", 1),
        ("tool", 2),
        ("assistant", 3),
    ]
    chunks = jsonl(run_cli("funes-chunk", input=out).stdout)
    assert (
        chunks[2]["text"]
        == "[tool_result] Running pip install cryptography\nerror: can't find Rust compiler"
    )
    assert {c["harness"] for c in chunks} == {"aider"}


def test_github_issue_producer_writes_a_file_funes_accepts(
    tmp_path: Path, private_home: Path
) -> None:
    issue = {
        "number": 42, "id": "I_kw01", "title": "tile cache thrashes", "body": "under load",
        "author": {"login": "ana"}, "createdAt": "2026-06-02T14:03:55Z",
        "comments": [
            {"id": "IC_kw02", "author": {"login": "bo"}, "authorAssociation": "MEMBER",
             "body": "FIFO eviction", "createdAt": "2026-06-03T08:00:00Z", "updatedAt": "2026-06-03T08:12:40Z"},
            {"id": "IC_kw03", "author": {"login": "cy"}, "authorAssociation": "CONTRIBUTOR",
             "body": "confirmed", "createdAt": "2026-06-04T09:00:00Z", "updatedAt": "2026-06-04T09:00:00Z"},
        ],
    }  # fmt: skip
    out = subprocess.run(
        [
            sys.executable,
            str(REPO / "contrib" / "github_issue_to_funes_jsonl.py"),
            "--repo",
            "acme/tiles",
        ],
        input=json.dumps(issue).encode(),
        capture_output=True,
        check=True,
    ).stdout
    turns = jsonl(out)
    assert [(t["seq"], t["role"], t["turn_uuid"]) for t in turns] == [
        (0, "author", "I_kw01"), (1, "member", "IC_kw02@20260603T081240Z"), (2, "contributor", "IC_kw03"),
    ]  # fmt: skip
    f = tmp_path / "issue-42.funes.jsonl"
    f.write_bytes(out)
    r = run_cli("funes", "index", "--check", f)
    assert r.returncode == 0, r.stderr.decode()
    assert "3 turns" in r.stdout.decode() and "0 refused" in r.stdout.decode()
