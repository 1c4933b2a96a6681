"""GitHub Copilot CLI sessions: `~/.copilot/session-state/<sessionId>/events.jsonl`.

``COPILOT_HOME`` moves ``~/.copilot`` (releases before 1.0 kept it under
``$XDG_CONFIG_HOME/.copilot``, also swept). Beside each ``events.jsonl`` a ``workspace.yaml``
names the session (``id``) and its workdir (``cwd``). Older releases wrote one flat file per
session, ``session-state/<sessionId>.jsonl``, with the same events and no ``workspace.yaml``.

Each line is an event ``{type, data, id, parentId, timestamp, ephemeral?}``; the format is not
formally documented. What becomes a turn:

- ``user.message`` → role ``user``, its ``content`` (what the user typed; the
  ``transformedContent`` beside it is that text with injected context);
- ``assistant.message`` → role ``assistant``: ``reasoningText`` → ``thinking``, ``content`` →
  ``text``, each of ``toolRequests`` → ``tool_use`` (its ``arguments``, name and call id). Many
  are empty apart from their tool requests;
- ``assistant.reasoning`` with text → role ``assistant``, a ``thinking`` block (most carry only
  an encrypted id and no text; the same text as the next message's ``reasoningText`` is kept
  once);
- ``tool.execution_start`` for a call no message requested → role ``assistant``, ``tool_use``;
- ``tool.execution_complete`` → role ``tool``, a ``tool_result`` block: its ``result.content``
  (or the error's message), named by the call it answers;
- ``session.compaction_complete`` with a summary → role ``compaction``.

Not content, ignored by design: ``ephemeral`` events (streaming deltas, status), the session's
lifecycle (``session.start`` / ``resume`` / ``shutdown`` / ``model_change`` / ``info`` / …),
turn markers, hooks and sub-agent bookkeeping, and ``system.message`` (the system prompt, which
the older layout repeats before every turn).

Ids: the session id is ``session.start``'s ``sessionId`` (what ``copilot --resume`` takes), else
``workspace.yaml``'s ``id``, else the directory (or flat file) name; a turn's id is its event's
``id``.
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
    env_path,
    is_blank,
    iso_utc,
    line_id,
    munge_workdir,
    opt_str,
    repo_of,
)

NOT_CONTENT = frozenset(
    (
        "ephemeral",
        "session.start",
        "session.resume",
        "session.shutdown",
        "session.model_change",
        "session.info",
        "session.warning",
        "session.error",
        "session.usage_info",
        "session.truncation",
        "session.compaction_start",
        "session.compaction_complete",
        "session.context_changed",
        "session.title_changed",
        "session.plan_changed",
        "session.workspace_file_changed",
        "session.mode_changed",
        "session.handoff",
        "session.mcp_servers_loaded",
        "session.mcp_server_status_changed",
        "session.skills_loaded",
        "session.tools_updated",
        "system.message",
        "assistant.turn_start",
        "assistant.turn_end",
        "assistant.usage",
        "assistant.intent",
        "assistant.reasoning",
        "tool.execution_start",
        "tool.user_requested",
        "hook.start",
        "hook.end",
        "subagent.started",
        "subagent.completed",
        "subagent.failed",
        "subagent.selected",
        "skill.invoked",
        "abort",
    )
)


def locate(home: Path) -> list[Path]:
    out = [(env_path("COPILOT_HOME") or home / ".copilot") / "session-state"]
    xdg = env_path("XDG_CONFIG_HOME")
    if xdg is not None:
        out.append(xdg / ".copilot" / "session-state")
    return out


def claims(f: Path) -> bool:
    if f.name == "events.jsonl":
        return f.parent.parent.name == "session-state"
    return f.suffix == ".jsonl" and f.parent.name == "session-state"


def sniff(first: dict[str, Any]) -> bool:
    rtype = first.get("type")
    return (
        isinstance(rtype, str)
        and "." in rtype
        and isinstance(first.get("data"), dict)
        and rtype.split(".", 1)[0] in ("session", "user", "assistant", "tool", "system", "hook")
    )


def workspace(path: Path) -> dict[str, str]:
    """The top-level ``key: value`` scalars of the ``workspace.yaml`` beside ``events.jsonl``."""
    if path.name != "events.jsonl":
        return {}
    try:
        text = (path.parent / "workspace.yaml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        if not line or line[0] in " \t#-" or ":" not in line:
            continue
        key, _, value = line.partition(":")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[key.strip()] = value
    return out


def parse_records(
    records: Iterable[dict[str, Any]], path: Path, stats: FileStats
) -> Iterator[Turn]:
    ws = workspace(path)
    fallback = path.parent.name if path.name == "events.jsonl" else path.stem
    session_id = ws.get("id") or fallback
    cwd = ws.get("cwd", "")
    workdir, repo = munge_workdir(cwd) or "", repo_of(cwd) if cwd else ""
    started = False
    names: dict[str, str | None] = {}  # tool call id → tool name
    requested: set[str] = set()
    reasoning: set[str] = set()  # reasoning texts already kept as their own turn
    seq = 0
    prev: str | None = None
    for rec in records:
        rtype = rec.get("type")
        data = rec.get("data")
        data = data if isinstance(data, dict) else {}
        if rec.get("ephemeral") is True:
            stats.ignored["ephemeral"] += 1
            continue
        if rtype == "session.start" and not started:
            started = True
            sid = data.get("sessionId")
            if isinstance(sid, str) and sid.strip():
                session_id = sid
            ctx = data.get("context")
            start_cwd = ctx.get("cwd") if isinstance(ctx, dict) else None
            if isinstance(start_cwd, str) and (wd := munge_workdir(start_cwd)):
                workdir, repo = wd, repo_of(start_cwd.strip())
        got = _turn(rtype, data, names, requested, reasoning)
        if got is None:
            stats.ignored[str(rtype)] += 1
            continue
        role, blocks = got
        if not blocks:
            stats.empty[str(rtype)] += 1
            continue
        eid = rec.get("id")
        uuid = eid if isinstance(eid, str) and eid.strip() else line_id(stats, seq)
        yield Turn(
            harness=SOURCE.harness,
            session_id=session_id,
            turn_uuid=uuid,
            parent_uuid=prev,
            seq=seq,
            ts=iso_utc(rec.get("timestamp")),
            role=role,
            workdir=workdir or fallback,
            repo=repo,
            source_path=str(path),
            blocks=blocks,
        )
        seq += 1
        prev = uuid


def _turn(
    rtype: Any,
    data: dict[str, Any],
    names: dict[str, str | None],
    requested: set[str],
    reasoning: set[str],
) -> tuple[str, list[Block]] | None:
    """(role, blocks) of a content event; None for events that never hold content."""
    if rtype == "user.message":
        return "user", _text(data.get("content"))
    if rtype == "assistant.message":
        blocks: list[Block] = []
        thought = data.get("reasoningText")
        if isinstance(thought, str) and not is_blank(thought) and thought not in reasoning:
            blocks.append(Block("thinking", thought))
        blocks += _text(data.get("content"))
        reqs = data.get("toolRequests")
        for req in reqs if isinstance(reqs, list) else []:
            if not isinstance(req, dict):
                continue
            cid, name = opt_str(req.get("toolCallId")), opt_str(req.get("name"))
            if cid:
                names[cid] = name
                requested.add(cid)
            blocks.append(Block("tool_use", _args(req.get("arguments")), name, cid))
        return "assistant", blocks
    if rtype == "assistant.reasoning":
        text = data.get("content")
        if not isinstance(text, str) or is_blank(text):
            return None  # an encrypted reasoning id: nothing readable
        reasoning.add(text)
        return "assistant", [Block("thinking", text)]
    if rtype == "tool.execution_start":
        cid, name = opt_str(data.get("toolCallId")), opt_str(data.get("toolName"))
        if cid and cid in requested:
            return None  # already stored with the message that requested it
        if cid:
            names[cid] = name
            requested.add(cid)
        return "assistant", [Block("tool_use", _args(data.get("arguments")), name, cid)]
    if rtype == "tool.execution_complete":
        cid = opt_str(data.get("toolCallId"))
        name = names.get(cid) if cid else None
        name = name or opt_str(data.get("toolName"))
        text = _result(data)
        return "tool", [] if is_blank(text) else [Block("tool_result", text, name, cid)]
    if rtype == "session.compaction_complete":
        summary = data.get("summaryContent", data.get("summary"))
        if isinstance(summary, str) and not is_blank(summary):
            return "compaction", [Block("text", summary)]
        return None
    return None


def _text(content: Any) -> list[Block]:
    return [Block("text", content)] if isinstance(content, str) and not is_blank(content) else []


def _args(args: Any) -> str:
    if isinstance(args, str):
        return args
    return compact_json({} if args is None else args)


def _result(data: dict[str, Any]) -> str:
    result = data.get("result")
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        content = result.get("content")
        if isinstance(content, str):
            return content
    error = data.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return error if isinstance(error, str) else ""


SOURCE = Source(
    name="copilot",
    harness="copilot",
    roots=(".copilot/session-state",),
    aliases=("copilot-cli", "github-copilot"),
    patterns=(),
    claims=claims,
    sniff=sniff,
    parse_records=parse_records,
    locate=locate,
    sniff_order=30,
    not_content=NOT_CONTENT,
)
