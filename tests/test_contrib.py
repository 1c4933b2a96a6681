"""The custom-ingest example in contrib/ feeds the real pipeline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import REPO, jsonl, run_cmd


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
    chunks = jsonl(run_cmd("funes-chunk", input=out).stdout)
    assert (
        chunks[2]["text"]
        == "[tool_result] Running pip install cryptography\nerror: can't find Rust compiler"
    )
    assert {c["harness"] for c in chunks} == {"aider"}
