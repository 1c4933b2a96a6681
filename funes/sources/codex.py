"""Codex rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`.

Each line is an envelope `{timestamp, type, payload}`; every kept
`response_item` is its own turn, with the synthesized id `<session>-<seq>` so a grown log keeps
its ids. Roles are verbatim (`developer` messages are kept as `developer`); tool outputs are
role `tool`; a user message Codex itself wrote (:data:`CONTEXT_PREFIXES`) is role `meta`, as
Claude Code's `isMeta` text is. Encrypted reasoning is never read — only the reasoning summaries.

Older rollouts (codex-rs of mid 2025, before the envelope) have no envelope: line 1 is a bare
header `{id, timestamp, instructions, git?, cwd?}`, then bare response items
(`{"type":"message",...}`, no `payload`, usually no timestamp) between `{"record_type":"state"}`
markers. They are read into the same turns: the session id and time come from the header (or,
without one, from the name `rollout-YYYY-MM-DDTHH-MM-SS-<uuid>.jsonl`), the workdir from the
header's `cwd` or else the `<cwd>` of the first `<environment_context>` message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
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


# The response item types a rollout holds (in the older format, bare at the top level).
ITEM_TYPES = frozenset(
    (
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "ghost_snapshot",
        "compaction",
    )
)
# `rollout-2025-08-28T12-05-24-934df0e1-738e-477c-8310-886dd25042cf.jsonl`
ROLLOUT_NAME = re.compile(
    r"rollout-(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-"
    r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$"
)
ENV_CWD = re.compile(r"<cwd>([^<\n]+)</cwd>")


def legacy_header(rec: dict[str, Any]) -> bool:
    """Whether ``rec`` is the bare first line of an older rollout: `{id, timestamp, instructions,
    git?, cwd?}` with no `type`/`payload` envelope."""
    return (
        "type" not in rec
        and "payload" not in rec
        and isinstance(rec.get("id"), str)
        and isinstance(rec.get("timestamp"), str)
        and any(k in rec for k in ("instructions", "git", "cli_version", "originator"))
    )


def sniff(first: dict[str, Any]) -> bool:
    if first.get("type") in ("session_meta", "response_item", "turn_context") and isinstance(
        first.get("payload"), dict
    ):
        return True
    return legacy_header(first) or (first.get("record_type") == "state" and "type" not in first)


def name_parts(path: Path) -> tuple[str, str] | None:
    """(session uuid, ISO time) from a rollout's file name, or None if it is not so named."""
    m = ROLLOUT_NAME.match(path.stem)
    if m is None:
        return None
    day, hh, mm, ss, uuid = m.groups()
    return uuid.lower(), f"{day}T{hh}:{mm}:{ss}Z"


def parse_records(
    records: Iterable[dict[str, Any]], path: Path, stats: FileStats
) -> Iterator[Turn]:
    s = _Session()
    names: dict[str, str] = {}
    pending: list[tuple[str, dict[str, Any], list[Block]]] = []  # until session_meta names us
    seq = 0
    for rec in records:
        payload = _response_item(rec, s, stats)
        if payload is None:
            continue
        item = _item(payload, names)
        if item is None:
            stats.ignored[f"response_item:{payload.get('type')}"] += 1
            continue
        role, blocks = item
        if not blocks:
            stats.empty[f"response_item:{payload.get('type')}"] += 1
            continue
        if s.legacy and s.workdir is None and role == "meta":
            s.workdir, s.repo = _env_cwd(blocks)
        ts = rec.get("timestamp")
        pending.append((ts if isinstance(ts, str) else s.header_ts, {"role": role}, blocks))
        # An older rollout names its workdir only in its first context message: hold its
        # turns until then (or the end), so every turn of a session gets the same workdir.
        if s.session_id is not None and not (s.legacy and s.workdir is None):
            for t in _release(
                pending, s.session_id, s.workdir or workdir_of_path(path), s.repo, path, seq
            ):
                seq += 1
                yield t
    named = name_parts(path)
    if s.session_id is None and s.legacy and named is not None:
        s.session_id = named[0]
        pending[:] = [(ts or named[1], meta, b) for ts, meta, b in pending]
    sid = s.session_id or path.stem
    for t in _release(pending, sid, s.workdir or workdir_of_path(path), s.repo, path, seq):
        seq += 1
        yield t


@dataclass
class _Session:
    """What a rollout's records say of its session so far."""

    session_id: str | None = None
    workdir: str | None = None
    repo: str = ""
    legacy: bool = False  # an older, envelope-less rollout (see the module doc)
    header_ts: str = ""


def _response_item(rec: dict[str, Any], s: _Session, stats: FileStats) -> dict[str, Any] | None:
    """The payload of a response item (what holds a turn's blocks), or None: a record that
    names the session (a legacy header, ``session_meta``) is read into ``s``, and every
    other one counted in ``stats`` as ignored."""
    rtype = rec.get("type")
    payload = rec.get("payload")
    if "payload" not in rec and (rtype in ITEM_TYPES or "record_type" in rec):
        s.legacy = True
    if rtype is None and legacy_header(rec):
        s.legacy = True
        if s.session_id is None:
            s.session_id = rec["id"] or None
            s.header_ts = rec["timestamp"]
            s.workdir = munge_workdir(rec.get("cwd"))
            if s.workdir:
                s.repo = repo_of(rec["cwd"].strip())
        stats.ignored["session_header"] += 1
        return None
    if rtype is None and "record_type" in rec:
        stats.ignored[f"record_type:{rec['record_type']}"] += 1
        return None
    if "payload" not in rec and rtype in ITEM_TYPES:
        rtype, payload = "response_item", rec
    if rtype == "session_meta" and isinstance(payload, dict):
        if s.session_id is None:
            sid = payload.get("id")
            s.session_id = sid if isinstance(sid, str) and sid else None
            s.workdir = munge_workdir(payload.get("cwd"))
            if s.workdir:
                s.repo = repo_of(payload["cwd"].strip())
        stats.ignored["session_meta"] += 1
        return None
    if rtype != "response_item" or not isinstance(payload, dict):
        stats.ignored[str(rtype)] += 1
        return None
    return payload


def _env_cwd(blocks: list[Block]) -> tuple[str | None, str]:
    """(workdir, repo) from the `<cwd>` of an `<environment_context>` message, if it has one."""
    for b in blocks:
        if b.text.lstrip().startswith("<environment_context>"):
            m = ENV_CWD.search(b.text)
            if m is not None:
                wd = munge_workdir(m.group(1))
                if wd:
                    return wd, repo_of(m.group(1).strip())
    return None, ""


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
    if ptype == "local_shell_call":
        action = p.get("action")
        call_id = opt_str(p.get("call_id"))
        if call_id is not None:
            names[call_id] = "local_shell"
        text = compact_json(action) if isinstance(action, dict) else "{}"
        return ("assistant", [Block("tool_use", text, "local_shell", call_id)])
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
    # Session and turn settings, and `event_msg` (UI events mirroring the response items); in
    # older rollouts the bare header and the `{"record_type":"state"}` markers, and `ghost_snapshot`
    # items (a git commit id for undo).
    not_content=frozenset(
        (
            "session_meta",
            "event_msg",
            "turn_context",
            "world_state",
            "session_header",
            "record_type:state",
            "response_item:ghost_snapshot",
        )
    ),
)
