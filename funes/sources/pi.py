"""pi sessions: `~/.pi/agent/sessions/--<munged-cwd>--/<timestamp>_<uuid>.jsonl`.

Differences from the reference implementation, all deliberate:

- a user message whose `content` is a plain string is kept (the reference drops it);
- a numeric timestamp (epoch milliseconds) becomes ISO-8601 UTC (`…T21:20:35.055Z`) so recency
  can age it; a line without a timestamp takes its message's `timestamp` (epoch ms);
- entries that carry conversation text besides messages are kept, each as its own turn with a
  role naming what it is, so filters can include or exclude them:
  - `compaction` → role `compaction`, the summary as a `text` block. After a compaction pi
    sends the model this summary instead of the history before it; it is the agent's own
    account of what was decided and why, often the only compact statement of it, and it is
    not a system prompt (hence not role `system`);
  - `branch_summary` → role `branch_summary` (the summary of a branch left via `/tree`);
  - `custom_message` (extension text that pi sends to the model) and `custom` messages →
    role `custom`;
  - a `bashExecution` message (a command the user ran with `!`) → role `user`, a `tool_use`
    block named `bash` holding `{"command": …}` and a `tool_result` block holding its output;
- `toolResult` messages are role `tool` (as in the reference).

Not content, ignored by design: the `session` header, `model_change`, `thinking_level_change`,
`custom` entries (extension state, never sent to the model), `label`, `session_info`.

Session id: the `session` header's `id` — pi's own session id, the one its UI and
`--session` show and what `funes recall --session` takes — else the file stem (the reference
always uses the stem, `<timestamp>_<uuid>`, so its hits all read `2026-04-`).

Ids: `turn_uuid`/`parent_uuid` are the line's `id`/`parentId` (v3 trees). Versions 1 and 2
have no ids; their entries are a linear chain (pi's own migration links each to the one
before), so turns get `<session>-<seq>` and each points at the previous turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from funes.records import Block, Turn
from funes.sources import (
    FileStats,
    Source,
    anthropic_blocks,
    flatten_tool_content,
    is_blank,
    iso_from_epoch,
    line_id,
    munge_workdir,
    opt_str,
    repo_of,
    text_blocks,
    tool_blocks,
    workdir_of_path,
)

NOT_CONTENT = frozenset(
    ("session", "model_change", "thinking_level_change", "custom", "label", "session_info")
)
# Entries (besides `message`) whose `summary` is conversation text, and the role they get.
SUMMARIES = {"compaction": "compaction", "branch_summary": "branch_summary"}
# Message roles pi keeps in memory and may persist, beyond user/assistant/toolResult.
SUMMARY_ROLES = {"compactionSummary": "compaction", "branchSummary": "branch_summary"}


def sniff(first: dict[str, Any]) -> bool:
    rtype = first.get("type")
    return rtype == "session" or (rtype == "message" and isinstance(first.get("message"), dict))


def parse_records(
    records: Iterable[dict[str, Any]], path: Path, stats: FileStats
) -> Iterator[Turn]:
    return parse_pi_records(records, path, stats, "pi")


def parse_pi_records(
    records: Iterable[dict[str, Any]], path: Path, stats: FileStats, harness: str
) -> Iterator[Turn]:
    """pi's JSONL as ``harness``: agents built on pi (OpenClaw, omp) write the same entries."""
    session_id = path.name.split(".jsonl", 1)[0] if ".jsonl" in path.name else path.stem
    workdir: str | None = None
    repo = ""
    seq = 0
    prev_uuid: str | None = None
    for rec in records:
        rtype = rec.get("type")
        if rtype == "session":
            if workdir is None and (wd := munge_workdir(rec.get("cwd"))):
                workdir, repo = wd, repo_of(rec["cwd"].strip())
            if seq == 0 and isinstance(rec.get("id"), str) and rec["id"].strip():
                session_id = rec["id"]
            stats.ignored["session"] += 1
            continue
        got = _entry(rec)
        if got is None:
            stats.ignored[_kind(rec)] += 1
            continue
        role, blocks = got
        if not blocks:
            stats.empty[_kind(rec)] += 1
            continue
        if "id" in rec:
            uuid = rec["id"] if isinstance(rec["id"], str) and rec["id"].strip() else ""
            uuid = uuid or line_id(stats, seq)
            parent = rec.get("parentId")
            parent = parent if isinstance(parent, str) else None
        else:  # v1/v2: a linear chain without ids
            uuid, parent = f"{session_id}-{seq}", prev_uuid
        yield Turn(
            harness=harness,
            session_id=session_id,
            turn_uuid=uuid,
            parent_uuid=parent,
            seq=seq,
            ts=_ts(rec),
            role=role,
            workdir=workdir or workdir_of_path(path),
            repo=repo,
            source_path=str(path),
            blocks=blocks,
        )
        seq += 1
        prev_uuid = uuid


def _kind(rec: dict[str, Any]) -> str:
    """The name a record is counted under: its type, and a message's role."""
    rtype = str(rec.get("type"))
    msg = rec.get("message")
    if rtype == "message" and isinstance(msg, dict):
        return f"message:{msg.get('role')}"
    return rtype


def _ts(rec: dict[str, Any]) -> str:
    ts = rec.get("timestamp")
    if isinstance(ts, str):
        return ts
    if isinstance(ts, (int, float)) and not isinstance(ts, bool):
        return iso_from_epoch(ts)
    msg = rec.get("message")
    inner = msg.get("timestamp") if isinstance(msg, dict) else None
    if isinstance(inner, (int, float)) and not isinstance(inner, bool):
        return iso_from_epoch(inner)
    return inner if isinstance(inner, str) else ""


def _entry(rec: dict[str, Any]) -> tuple[str, list[Block]] | None:
    """(role, blocks) of a content entry; None for entries that never hold content."""
    rtype = rec.get("type")
    if isinstance(rtype, str) and rtype in SUMMARIES:
        return SUMMARIES[rtype], text_blocks(rec.get("summary"))
    if rtype == "custom_message":
        return "custom", text_blocks(rec.get("content"))
    msg = rec.get("message")
    if rtype != "message" or not isinstance(msg, dict):
        return None
    role = msg.get("role")
    content = msg.get("content")
    if role == "user":
        return "user", text_blocks(content)
    if role == "assistant":
        return "assistant", anthropic_blocks(content)
    if role == "toolResult":
        text = flatten_tool_content(content)
        name, call_id = opt_str(msg.get("toolName")), opt_str(msg.get("toolCallId"))
        return "tool", [] if is_blank(text) else [Block("tool_result", text, name, call_id)]
    if role == "bashExecution":
        return "user", _bash_blocks(msg)
    if role == "custom":
        return "custom", text_blocks(content)
    if isinstance(role, str) and role in SUMMARY_ROLES:
        return SUMMARY_ROLES[role], text_blocks(msg.get("summary"))
    return None


def _bash_blocks(msg: dict[str, Any]) -> list[Block]:
    command = msg.get("command")
    if not isinstance(command, str) or is_blank(command):
        return []
    output = msg.get("output")
    return tool_blocks(
        "bash", None, {"command": command}, output if isinstance(output, str) else None
    )


SOURCE = Source(
    name="pi",
    harness="pi",
    roots=(".pi/agent/sessions",),
    sniff=sniff,
    parse_records=parse_records,
    sniff_order=20,
    not_content=NOT_CONTENT,
)
