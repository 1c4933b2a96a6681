"""Qwen Code sessions: `~/.qwen/projects/<encoded-cwd>/chats/<sessionId>.jsonl`.

``QWEN_RUNTIME_DIR`` moves where Qwen Code keeps its runtime data (``projects/`` and ``tmp/``).
Older releases, forked from Gemini CLI, wrote ``~/.qwen/tmp/<hash>/chats/session-*.json``:
Gemini CLI's whole-session ConversationRecord with the assistant's messages typed ``qwen``
(read as Gemini CLI's older files are, see ``funes.sources.gemini``). Newer releases lower-case
the encoded project folder; nothing here depends on its spelling.

Each JSONL line is a record ``{uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd,
message: {role, parts}}``:

- ``type: user`` → role ``user``: text parts, and any ``functionResponse`` parts as
  ``tool_result`` blocks;
- ``type: assistant`` (``message.role: model``) → role ``assistant``: parts marked ``thought``
  → ``thinking``, other text → ``text``, ``functionCall`` → ``tool_use`` (its ``args``, name
  and id);
- ``type: tool_result`` → role ``tool``: each ``functionResponse`` part → ``tool_result``
  (its ``response.output``, else the response as JSON, else the record's ``resultDisplay``);
- ``type: system``: events that shape how the CLI rebuilds history (compression checkpoints,
  slash commands, telemetry, titles, …) — not conversation, counted as ``system:<subtype>``;
  a ``mid_turn_user_message`` with text is the user's, and kept as role ``user``.

Ids: the session id is the records' ``sessionId`` (what ``qwen -r`` takes); several files can
share one, so it does not name a file. A turn's id is the record's ``uuid``, its parent the
record's ``parentUuid``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from funes.errors import FunesError
from funes.records import Block, Turn
from funes.sources import (
    FileStats,
    Source,
    compact_json,
    display_path,
    env_path,
    gemini,
    is_blank,
    iso_utc,
    iter_json_lines,
    line_id,
    munge_workdir,
    opt_str,
    read_json_document,
    repo_of,
    workdir_of_path,
)

SYSTEM_SUBTYPES = (
    "session_notes chat_compression slash_command ui_telemetry at_command attribution_snapshot "
    "notification background_task_completed cron custom_title parent_session session_source "
    "session_execution_engine omni_recall session_model session_approval_mode rewind "
    "agent_bootstrap agent_launch_prompt agent_retry agent_session_ready file_history_snapshot "
    "user_text_elements session_artifact_event session_artifact_snapshot "
    "session_sources_snapshot branch_checkpoint goal_state goal_runtime goal_turn_end "
    "realtime_message turn_result managed_session_header_v1 managed_session_event_v1 "
    "managed_session_commit_v1 None"
).split()
NOT_CONTENT = frozenset(f"system:{s}" for s in SYSTEM_SUBTYPES) | gemini.NOT_CONTENT


def locate(home: Path) -> list[Path]:
    base = env_path("QWEN_RUNTIME_DIR") or home / ".qwen"
    return [base / "projects", base / "tmp"]


def claims(f: Path) -> bool:
    """A session in a ``chats`` directory, not in Gemini CLI's home (the same layout)."""
    if f.parent.name != "chats" or ".gemini" in f.parts:
        return False
    return f.suffix == ".jsonl" or (f.suffix == ".json" and f.name.startswith("session-"))


def sniff(first: dict[str, Any]) -> bool:
    msg = first.get("message")
    return (
        isinstance(first.get("sessionId"), str)
        and isinstance(msg, dict)
        and isinstance(msg.get("parts"), list)
    )


def parse_path(path: Path, stats: FileStats) -> Iterator[Turn]:
    if path.suffix == ".json":
        doc = read_json_document(path, stats)
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            raise FunesError(f"{display_path(path)}: not a Qwen Code session (no messages list)")
        stats.records_kept += len(doc["messages"])
        messages = [m for m in doc["messages"] if isinstance(m, dict)]
        yield from gemini.conversation_turns(doc, messages, path, stats, SOURCE.harness)
        return
    with open(path, "rb") as fp:
        yield from parse_records(iter_json_lines(fp, stats), path, stats)


def parse_records(
    records: Iterable[dict[str, Any]], path: Path, stats: FileStats
) -> Iterator[Turn]:
    fallback = path.stem
    workdir, repo = "", ""
    seq = 0
    for rec in records:
        cwd = rec.get("cwd")
        if not workdir and isinstance(cwd, str) and (wd := munge_workdir(cwd)):
            workdir, repo = wd, repo_of(cwd.strip())
        rtype = rec.get("type")
        got = _turn(rec, rtype)
        if got is None:
            kind = f"system:{rec.get('subtype')}" if rtype == "system" else str(rtype)
            stats.ignored[kind] += 1
            continue
        role, blocks = got
        if not blocks:
            stats.empty[str(rtype)] += 1
            continue
        sid = rec.get("sessionId")
        uuid = rec.get("uuid")
        parent = rec.get("parentUuid")
        yield Turn(
            harness=SOURCE.harness,
            session_id=sid if isinstance(sid, str) and sid.strip() else fallback,
            turn_uuid=uuid if isinstance(uuid, str) and uuid.strip() else line_id(stats, seq),
            parent_uuid=parent if isinstance(parent, str) else None,
            seq=seq,
            ts=iso_utc(rec.get("timestamp")),
            role=role,
            workdir=workdir or workdir_of_path(path),
            repo=repo,
            source_path=str(path),
            blocks=blocks,
        )
        seq += 1


def _turn(rec: dict[str, Any], rtype: Any) -> tuple[str, list[Block]] | None:
    msg = rec.get("message")
    parts = msg.get("parts") if isinstance(msg, dict) else None
    parts = parts if isinstance(parts, list) else []
    if rtype == "user":
        return "user", _blocks(parts)
    if rtype == "assistant":
        return "assistant", _blocks(parts)
    if rtype == "tool_result":
        blocks = _blocks(parts)
        if not blocks:
            display = rec.get("resultDisplay")
            call = rec.get("toolCallResult")
            cid = opt_str(call.get("callId")) if isinstance(call, dict) else None
            if isinstance(display, str) and not is_blank(display):
                blocks = [Block("tool_result", display, None, cid)]
        return "tool", blocks
    if rtype == "system" and rec.get("subtype") == "mid_turn_user_message":
        return "user", _blocks(parts)
    return None


def _blocks(parts: list[Any]) -> list[Block]:
    out = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        text = part.get("text")
        if isinstance(text, str):
            if not is_blank(text):
                out.append(Block("thinking" if part.get("thought") is True else "text", text))
            continue
        call = part.get("functionCall")
        if isinstance(call, dict):
            args = call.get("args")
            name, cid = opt_str(call.get("name")), opt_str(call.get("id"))
            out.append(Block("tool_use", compact_json({} if args is None else args), name, cid))
            continue
        resp = part.get("functionResponse")
        if isinstance(resp, dict):
            result = gemini.tool_output([part])
            if result:
                out.append(
                    Block("tool_result", result, opt_str(resp.get("name")), opt_str(resp.get("id")))
                )
    return out


SOURCE = Source(
    name="qwen",
    harness="qwen",
    roots=(".qwen/projects", ".qwen/tmp"),
    aliases=("qwen-code", "qwen_code"),
    patterns=(),
    claims=claims,
    sniff=sniff,
    parse_records=parse_records,
    parse_path=parse_path,
    locate=locate,
    sniff_order=40,
    not_content=NOT_CONTENT,
)
