#!/usr/bin/env python3
"""Custom ingest example: aider's `.aider.chat.history.md` → funes turn JSONL.

    python contrib/aider_to_turns.py path/to/.aider.chat.history.md | funes-chunk | …

aider writes one markdown file per project: `# aider chat started at <time>` opens a session,
`#### <text>` lines are the user's messages, `> ` lines are tool/command output, everything
else is the assistant's reply. This script turns it into `turn` records (docs/records.md) so
the rest of the funes pipeline indexes it like any agent's transcript. It uses only the
standard library, as any custom source can.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

START = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)")


def turns(path: Path):
    session = None
    ts = ""
    seq = 0
    role, lines = None, []

    def flush():
        nonlocal seq, role, lines
        text = "\n".join(lines).strip()
        if session and role and text:
            block_type = "tool_result" if role == "tool" else "text"
            yield {
                "kind": "turn", "v": 1, "harness": "aider", "session_id": session,
                "turn_uuid": f"{session}-{seq}", "parent_uuid": None, "seq": seq, "ts": ts,
                "role": role, "workdir": path.resolve().parent.name, "repo": "",
                "source_path": str(path.resolve()),
                "blocks": [{"type": block_type, "text": text, "tool_name": None, "tool_use_id": None}],
            }  # fmt: skip
            seq += 1
        role, lines = None, []

    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if m := START.match(line):
            yield from flush()
            session, ts, seq = f"aider-{m[1]}T{m[2]}", f"{m[1]}T{m[2]}Z", 0
            continue
        kind = (
            "user" if line.startswith("#### ") else "tool" if line.startswith("> ") else "assistant"
        )
        if kind != role:
            yield from flush()
            role = kind
        lines.append(line[5:] if kind == "user" else line[2:] if kind == "tool" else line)
    yield from flush()


if __name__ == "__main__":
    for arg in sys.argv[1:] or [".aider.chat.history.md"]:
        for t in turns(Path(arg)):
            print(json.dumps(t, ensure_ascii=False, separators=(",", ":")))
