"""Claude Code transcripts: `~/.claude/projects/<munged-cwd>/<session>.jsonl` (+ sub-agents).

Kept: `user` and `assistant` records. Roles are carried faithfully: a `user` record holding only tool results is role `tool` (as in Codex and pi), and an
`isMeta` record (text Claude Code injects, not typed by the user) is role `meta`. Sidechain
records are indexed; sub-agent files are their own sessions (`agent-<hash>`).

Tool-name back-fill: a `tool_result` takes the name of the latest `tool_use` with its id seen
before it in the file. (The reference resolves against the whole file; Claude Code always writes
the call before its result, and resolving as we go keeps memory flat on huge files.)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from funes.records import Block, Turn
from funes.sources import (
    FileStats,
    Source,
    compact_json,
    flatten_tool_content,
    is_blank,
    line_id,
    munge_workdir,
    opt_str,
    repo_of,
    workdir_of_path,
)

KEPT_TYPES = ("user", "assistant")


def sniff(first: dict[str, Any]) -> bool:
    return first.get("type") in ("user", "assistant", "summary") or "sessionId" in first


def parse_records(
    records: Iterable[dict[str, Any]], path: Path, stats: FileStats
) -> Iterator[Turn]:
    session_id = path.stem
    source_path = str(path)
    workdir: str | None = None
    repo = ""
    names: dict[str, str] = {}  # tool_use_id -> tool name, for back-filling results
    pending: list[Turn] = []  # held until the first usable cwd names the workdir
    seq = 0
    for rec in records:
        rtype = rec.get("type")
        if rtype not in KEPT_TYPES:
            stats.ignored[str(rtype)] += 1
            continue
        if workdir is None and (wd := munge_workdir(rec.get("cwd"))):
            workdir = wd
            repo = repo_of(rec["cwd"].strip())
        if path.name == "-" and isinstance(rec.get("sessionId"), str):
            session_id = rec["sessionId"]
        msg = rec.get("message")
        blocks = _blocks(msg.get("content") if isinstance(msg, dict) else None, names)
        if not blocks:
            stats.empty[str(rtype)] += 1
            continue
        role = msg.get("role") if isinstance(msg, dict) else None
        role = role if isinstance(role, str) else str(rtype)
        if rec.get("isMeta") is True:
            role = "meta"
        elif role == "user" and all(b.type == "tool_result" for b in blocks):
            role = "tool"
        for b in blocks:
            if b.type == "tool_result" and b.tool_use_id:
                b.tool_name = names.get(b.tool_use_id)
        uuid = rec.get("uuid")
        if not isinstance(uuid, str) or not uuid.strip():
            uuid = line_id(stats, seq)
        parent = rec.get("parentUuid")
        ts = rec.get("timestamp")
        pending.append(
            Turn(
                harness=SOURCE.harness,
                session_id=session_id,
                turn_uuid=uuid,
                parent_uuid=parent if isinstance(parent, str) else None,
                seq=seq,
                ts=ts if isinstance(ts, str) else "",
                role=role,
                workdir="",
                repo="",
                source_path=source_path,
                blocks=blocks,
            )
        )
        seq += 1
        if workdir is not None:
            yield from _release(pending, session_id, workdir, repo)
    yield from _release(pending, session_id, workdir or workdir_of_path(path), repo)


def _release(pending: list[Turn], session_id: str, workdir: str, repo: str) -> Iterator[Turn]:
    for t in pending:
        t.session_id, t.workdir, t.repo = session_id, workdir, repo
        yield t
    pending.clear()


def _blocks(content: Any, names: dict[str, str]) -> list[Block]:
    if isinstance(content, str):
        return [] if is_blank(content) else [Block("text", content)]
    if not isinstance(content, list):
        return []
    out = []
    for part in content:
        if not isinstance(part, dict):
            continue
        ptype = part.get("type")
        if ptype == "text":
            text = part.get("text")
            if isinstance(text, str) and not is_blank(text):
                out.append(Block("text", text))
        elif ptype == "thinking":
            text = part.get("thinking")
            if isinstance(text, str) and not is_blank(text):
                out.append(Block("thinking", text))
        elif ptype == "tool_use":
            name, tid = opt_str(part.get("name")), opt_str(part.get("id"))
            inp = part.get("input")
            out.append(Block("tool_use", compact_json({} if inp is None else inp), name, tid))
            if tid is not None and name is not None:
                names[tid] = name
        elif ptype == "tool_result":
            text = flatten_tool_content(part.get("content"))
            if not is_blank(text):
                out.append(Block("tool_result", text, None, opt_str(part.get("tool_use_id"))))
    return out


SOURCE = Source(
    name="claude",
    harness="claude_code",
    roots=(".claude/projects",),
    aliases=("claude-code", "claudecode"),
    sniff=sniff,
    parse_records=parse_records,
    sniff_order=90,
    # Bookkeeping, hook output and UI state: no conversation content (`last-prompt` repeats a
    # user prompt already kept).
    not_content=frozenset(
        {"progress", "file-history-snapshot", "system", "summary", "queue-operation"}
        | {"attachment", "last-prompt"}
    ),
)
