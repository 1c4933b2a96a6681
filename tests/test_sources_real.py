"""Real transcripts, committed to public repositories under a licence that lets us keep them,
laid out where each agent keeps its sessions and read by a bare sweep.

Each fixture under ``tests/fixtures/real/<agent>/`` is a whole file as its repository holds it
(``ATTRIBUTION`` beside it names the repository, commit, path and licence); each was checked
with ``eval-reserved/check`` first. What each test expects is worked out from the raw file
here (which records are messages, how many tool calls they hold), not copied from our output.

Agents with a real fixture: Gemini CLI (the older whole-session JSON) and OpenClaw (a live
transcript and a ``.jsonl.reset.<ts>`` archive).

Agents without one, whose tests use fixtures built from the documented format (their own test
modules): Gemini CLI's JSONL form (introduced April 2026), GitHub Copilot CLI, OpenCode, Cursor,
Qwen Code, Cline, Roo Code, Kilo Code and omp. Searched: the code index for each format's
distinctive records (``"$rewindTo"``, ``{"$set":{"lastUpdated"``, ``"projectHash"`` metadata
lines, ``session.start`` events with ``copilot-agent``, ``api_conversation_history.json`` and
``ui_messages.json`` at any path, ``events.jsonl`` beside ``workspace.yaml``, ``.omp/agent``,
``agent-transcripts``, ``opencode.db`` / ``kilo.db`` / ``state.vscdb``); the repositories
named ``*copilot-session*``, ``*transcripts*``, ``*session-logs*``; and every repository
already mirrored on this machine. What turned up was test data of other parsers, files in
repositories without a licence (OpenClaw homes, most of them, which we only read to check the
parser: see ``trajectory.jsonl`` in ``funes.sources.openclaw``), or repositories reserved for
evaluation.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from agent_homes import swept

from funes import sources
from funes.sources import FileStats

REAL = Path(__file__).parent / "fixtures" / "real"


def assert_fully_explained(stats: list[FileStats]) -> None:
    for st in stats:
        report = sources.coverage(st)
        assert report["error"] is None, report["error"]
        assert report["unexplained"] == {}, (st.path, report["unexplained"])
        assert report["skipped"] == {}, (st.path, report["skipped"])


# ---------------------------------------------------------------------------- Gemini CLI


def _gemini_expected(doc: dict[str, Any]) -> tuple[list[str], int, int]:
    """(ids of the conversation's messages that hold content, tool calls, calls with output)."""
    ids, calls, outputs = [], 0, 0
    for m in doc["messages"]:
        if m["type"] not in ("user", "gemini"):
            continue
        content = m.get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        has = bool(text.strip()) or bool(m.get("thoughts")) or bool(m.get("toolCalls"))
        for call in m.get("toolCalls") or []:
            calls += 1
            outputs += bool(call.get("result"))
        if has:
            ids.append(m["id"])
    return ids, calls, outputs


def test_real_gemini_json_session_is_swept_whole(private_home: Path) -> None:
    (src,) = sorted((REAL / "gemini").glob("session-*.json"))
    doc = json.loads(src.read_text(encoding="utf-8"))
    chats = private_home / ".gemini" / "tmp" / doc["projectHash"] / "chats"
    chats.mkdir(parents=True)
    shutil.copy(src, chats / src.name)

    turns, stats = swept(private_home, "gemini")

    ids, calls, outputs = _gemini_expected(doc)
    assert [t.turn_uuid for t in turns] == ids
    assert {t.session_id for t in turns} == {doc["sessionId"]}  # what `gemini --resume` takes
    assert {t.role for t in turns} == {"user", "assistant"}
    blocks = [b for t in turns for b in t.blocks]
    assert sum(b.type == "tool_use" for b in blocks) == calls > 0
    assert sum(b.type == "tool_result" for b in blocks) == outputs > 0
    assert any(b.type == "thinking" for b in blocks)
    notices = sum(m["type"] in ("info", "error", "warning") for m in doc["messages"])
    assert sum(stats[0].ignored.values()) == notices > 0
    assert_fully_explained(stats)


# ---------------------------------------------------------------------------- OpenClaw


def _pi_expected(path: Path) -> tuple[str, list[str], int, int]:
    """(header id, ids of messages holding content, tool calls, tool results with text)."""
    header, ids, calls, results = "", [], 0, 0
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["type"] == "session":
            header = rec["id"]
        if rec["type"] != "message":
            continue
        msg = rec["message"]
        parts = msg["content"] if isinstance(msg["content"], list) else []
        calls += sum(p.get("type") == "toolCall" for p in parts)
        texts = [p.get("text") or p.get("thinking") or "" for p in parts]
        if msg["role"] == "toolResult":
            results += any(t.strip() for t in texts)
        if any(t.strip() for t in texts) or any(p.get("type") == "toolCall" for p in parts):
            ids.append(rec["id"])
    return header, ids, calls, results


def test_real_openclaw_live_transcript_and_reset_archive_are_swept(private_home: Path) -> None:
    sessions_dir = private_home / ".openclaw" / "agents" / "main" / "sessions"
    sessions_dir.mkdir(parents=True)
    files = sorted(p for p in (REAL / "openclaw").iterdir() if ".jsonl" in p.name)
    assert any(".jsonl.reset." in p.name for p in files)
    for f in files:
        shutil.copy(f, sessions_dir / f.name)

    turns, stats = swept(private_home, "openclaw")

    assert sorted(Path(st.path).name for st in stats) == [f.name for f in files]
    for f in files:
        header, ids, calls, results = _pi_expected(f)
        mine = [t for t in turns if Path(t.source_path).name == f.name]
        assert [t.turn_uuid for t in mine] == ids
        assert {t.session_id for t in mine} == {header}
        assert f.name.startswith(header)  # the id the transcript is named after
        blocks = [b for t in mine for b in t.blocks]
        assert sum(b.type == "tool_use" for b in blocks) == calls
        assert sum(b.type == "tool_result" for b in blocks) == results
    assert {t.harness for t in turns} == {"openclaw"}
    assert any(b.type == "thinking" for t in turns for b in t.blocks)
    assert_fully_explained(stats)
