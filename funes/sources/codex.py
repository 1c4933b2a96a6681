"""Codex rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`.

Each line is an envelope `{timestamp, type, payload}`; every kept
`response_item` is its own turn, with the synthesized id `<session>-<seq>` so a grown log keeps
its ids. Roles are verbatim (`developer` messages are kept as `developer`); tool outputs are
role `tool`; a user message Codex itself wrote (:data:`CONTEXT_PREFIXES`) is role `meta`, as
Claude Code's `isMeta` text is. Encrypted reasoning is never read — only the reasoning summaries.
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
    is_blank,
    munge_workdir,
    opt_str,
    repo_of,
    workdir_of_path,
)

# How the user messages Codex writes itself begin (codex-rs: user and AGENTS.md instructions,
# skill bodies, and its "session prefix" tags), compared case-insensitively after leading
# whitespace. Such a message is not something the user typed: it is role `meta`, so `funes
# sessions` shows the user's own first prompt and `--role user` finds what they asked.
CONTEXT_PREFIXES = (
    "# agents.md instructions for ",
    "<user_instructions>",
    "<skill>",
    "<environment_context>",
    "<turn_aborted>",
    "<context_update>",
    "<subagent_notification>",
    "<tool_context>",
    "<reasoning_context>",
    "<pinned_notes>",
)


def injected(blocks: list[Block]) -> bool:
    """Whether every text of a user message is context Codex wrote (:data:`CONTEXT_PREFIXES`)."""
    return bool(blocks) and all(
        b.text.lstrip().lower().startswith(CONTEXT_PREFIXES) for b in blocks
    )


def sniff(first: dict[str, Any]) -> bool:
    return first.get("type") in ("session_meta", "response_item", "turn_context") and isinstance(
        first.get("payload"), dict
    )


def parse_records(
    records: Iterable[dict[str, Any]], path: Path, stats: FileStats
) -> Iterator[Turn]:
    session_id: str | None = None
    workdir: str | None = None
    repo = ""
    names: dict[str, str] = {}
    pending: list[tuple[str, dict[str, Any], list[Block]]] = []  # until session_meta names us
    seq = 0
    for rec in records:
        rtype = rec.get("type")
        payload = rec.get("payload")
        if rtype == "session_meta" and isinstance(payload, dict):
            if session_id is None:
                sid = payload.get("id")
                session_id = sid if isinstance(sid, str) and sid else None
                workdir = munge_workdir(payload.get("cwd"))
                if workdir:
                    repo = repo_of(payload["cwd"].strip())
            stats.ignored["session_meta"] += 1
            continue
        if rtype != "response_item" or not isinstance(payload, dict):
            stats.ignored[str(rtype)] += 1
            continue
        item = _item(payload, names)
        if item is None:
            stats.ignored[f"response_item:{payload.get('type')}"] += 1
            continue
        role, blocks = item
        if not blocks:
            stats.empty[f"response_item:{payload.get('type')}"] += 1
            continue
        ts = rec.get("timestamp")
        pending.append((ts if isinstance(ts, str) else "", {"role": role}, blocks))
        if session_id is not None:
            for t in _release(
                pending, session_id, workdir or workdir_of_path(path), repo, path, seq
            ):
                seq += 1
                yield t
    sid = session_id or path.stem
    for t in _release(pending, sid, workdir or workdir_of_path(path), repo, path, seq):
        seq += 1
        yield t


def _release(
    pending: list[tuple[str, dict[str, Any], list[Block]]],
    session_id: str,
    workdir: str,
    repo: str,
    path: Path,
    seq: int,
) -> Iterator[Turn]:
    for i, (ts, meta, blocks) in enumerate(pending):
        yield Turn(
            harness=SOURCE.harness,
            session_id=session_id,
            turn_uuid=f"{session_id}-{seq + i}",
            parent_uuid=None,
            seq=seq + i,
            ts=ts,
            role=meta["role"],
            workdir=workdir,
            repo=repo,
            source_path=str(path),
            blocks=blocks,
        )
    pending.clear()


def _item(p: dict[str, Any], names: dict[str, str]) -> tuple[str, list[Block]] | None:
    """(role, blocks) of one response item; None for item types that never become turns."""
    ptype = p.get("type")
    if ptype == "message":
        role = p.get("role")
        content = p.get("content")
        blocks = []
        if isinstance(content, str):
            if not is_blank(content):
                blocks.append(Block("text", content))
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") in ("input_text", "output_text"):
                    text = part.get("text")
                    if isinstance(text, str) and not is_blank(text):
                        blocks.append(Block("text", text))
        role = role if isinstance(role, str) else ""
        return ("meta" if role == "user" and injected(blocks) else role, blocks)
    if ptype == "reasoning":
        summary = p.get("summary")
        texts = [
            s["text"]
            for s in (summary if isinstance(summary, list) else [])
            if isinstance(s, dict)
            and s.get("type") == "summary_text"
            and isinstance(s.get("text"), str)
        ]
        joined = "\n".join(texts)
        return ("assistant", [] if is_blank(joined) else [Block("thinking", joined)])
    if ptype in ("function_call", "custom_tool_call"):
        args = p["arguments"] if "arguments" in p else p.get("input")
        name, call_id = opt_str(p.get("name")), opt_str(p.get("call_id"))
        if call_id is not None and name is not None:
            names[call_id] = name
        text = args if isinstance(args, str) else "{}"
        return ("assistant", [Block("tool_use", text, name, call_id)])
    if ptype in ("function_call_output", "custom_tool_call_output"):
        out = p.get("output")
        text = out if isinstance(out, str) else "" if out is None else compact_json(out)
        call_id = opt_str(p.get("call_id"))
        name = names.get(call_id) if call_id else None
        return ("tool", [] if is_blank(text) else [Block("tool_result", text, name, call_id)])
    return None


SOURCE = Source(
    name="codex",
    harness="codex",
    roots=(".codex/sessions",),
    sniff=sniff,
    parse_records=parse_records,
    sniff_order=10,
    # Session and turn settings, and `event_msg` (UI events mirroring the response items).
    not_content=frozenset(("session_meta", "event_msg", "turn_context", "world_state")),
)
