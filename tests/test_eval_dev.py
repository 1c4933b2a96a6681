"""The real Claude Code and Codex sessions of ../shared/eval-dev parse without losing content."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import EVAL_DEV

from funes import sources
from funes.sources import FileStats

# Record types that carry no conversation content (bookkeeping, hook output, UI state).
NOT_CONTENT = {
    "claude_code": {"progress", "file-history-snapshot", "system", "summary", "queue-operation",
                    "attachment", "last-prompt"},
    "codex": {"session_meta", "event_msg", "turn_context", "world_state"},
}  # fmt: skip


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in (
                "signature",
                "encrypted_content",
                "type",
                "id",
                "tool_use_id",
                "call_id",
                "source",
            ):
                yield from strings(v)


def records_with_content(path: Path) -> int:
    """An independent count of the records holding user/assistant/tool content."""
    n = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("type") in ("user", "assistant"):
            content = rec["message"].get("content")
            has_tool_use = isinstance(content, list) and any(
                isinstance(p, dict) and p.get("type") == "tool_use" for p in content
            )
            n += has_tool_use or any(s.strip() for s in strings(content))
        elif rec.get("type") == "response_item":
            p = rec["payload"]
            if p["type"] in ("function_call", "custom_tool_call"):
                n += 1
            elif p["type"] == "reasoning":
                n += any(s.strip() for s in strings(p.get("summary")))
            else:
                n += any(s.strip() for s in strings(p.get("content") or p.get("output")))
    return n


FILES = sorted((EVAL_DEV / "corpus").glob("claude-code/*.jsonl")) + sorted(
    (EVAL_DEV / "corpus").glob("codex/*.jsonl")
)

pytestmark = pytest.mark.skipif(not FILES, reason="../shared/eval-dev is not beside this checkout")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:40])
def test_real_sessions_parse_with_nothing_skipped(path: Path) -> None:
    got: list[FileStats] = []
    turns = list(sources.parse([path], on_file=got.append))
    (st,) = got
    assert st.error is None
    assert st.skipped_lines == 0, dict(st.skipped)
    assert set(st.ignored) <= NOT_CONTENT[st.harness], dict(st.ignored)
    # Every record that holds any non-blank text became a turn (the rest are empty thinking
    # signatures, empty tool outputs, encrypted-only reasoning, binary attachments such as a
    # base64 PDF `document` part, which holds no text to index).
    assert len(turns) == records_with_content(path)
    assert turns and [t.seq for t in turns] == list(range(len(turns)))
    assert {"user", "assistant"} <= {t.role for t in turns}
