"""Cursor: the CLI agent's JSONL transcripts and the IDE's chats in ``state.vscdb``.

CLI agent (``cursor-agent``): ``${CURSOR_CONFIG_DIR:-~/.cursor}/projects/<encoded-cwd>/
agent-transcripts/<chatId>.jsonl`` (a chat's sub-agents one directory further down). Each line
is ``{"role": "user" | "assistant", "message": {"content": …}}`` with Anthropic-style content
(a string, or ``text`` / ``thinking`` / ``tool_use`` / ``tool_result`` parts); control records
such as ``{"type": "turn_ended"}`` are not content. Transcripts may carry no ids, timestamps
or tool results: a turn's id is then its line number (stable, the file only grows) and its
time the file's modification time. Reasoning Cursor withheld is the literal text
``[REDACTED]`` and is dropped. A string may hold U+2028, so records are split on ``\\n`` only.
Session id: the file name, the chat id ``cursor-agent --resume`` takes.

IDE: ``globalStorage/state.vscdb`` under ``~/.config/Cursor/User`` (Linux; ``$XDG_CONFIG_HOME``
moves it) or ``~/Library/Application Support/Cursor/User`` (macOS). A large SQLite database
the editor keeps writing, so it is opened read-only and immutable (see
``funes.sources.sqlite``) and only two kinds of row of its ``cursorDiskKV`` table are read, by
key range: ``composerData:<composerId>`` (a chat: its name, times, and the order of its
bubbles in ``fullConversationHeadersOnly``) and ``bubbleId:<composerId>:<bubbleId>`` (one
message: ``type`` 1 is the user, 2 the assistant; ``text``, ``thinking.text``, and a tool call in
``toolFormerData`` with its ``rawArgs`` / ``params`` and ``result``). Chats of 2024 and earlier
kept inline ``conversation`` lists in ``composerData``, also read. A database with no
``cursorDiskKV`` table (older releases) holds no chats funes can read and yields none.
Session id: the composer id; turn id: the bubble id.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from funes.errors import FunesError
from funes.records import Block, Turn
from funes.sources import (
    FileStats,
    Source,
    TurnChain,
    anthropic_blocks,
    display_path,
    env_path,
    is_blank,
    iso_utc,
    iter_json_lines,
    munge_workdir,
    opt_str,
    repo_of,
    thinking_block,
    tool_blocks,
    workdir_of_path,
)
from funes.sources.sqlite import columns, connect_readonly

NOT_CONTENT = frozenset(("turn_ended", "turn_started", "bubble:other", "no cursorDiskKV table"))
IDE_USER_DIRS = (".config/Cursor/User", "Library/Application Support/Cursor/User")


def locate(home: Path) -> list[Path]:
    out = [(env_path("CURSOR_CONFIG_DIR") or home / ".cursor") / "projects"]
    xdg = env_path("XDG_CONFIG_HOME")
    if xdg is not None:
        out.append(xdg / "Cursor/User/globalStorage/state.vscdb")
    out += [home / d / "globalStorage/state.vscdb" for d in IDE_USER_DIRS]
    return out


def claims(f: Path) -> bool:
    if f.name == "state.vscdb":
        return f.parent.name == "globalStorage" and f.parent.parent.parent.name == "Cursor"
    return f.suffix == ".jsonl" and "agent-transcripts" in f.parts[-4:-1]


def parse_path(path: Path, stats: FileStats) -> Iterator[Turn]:
    if path.suffix == ".vscdb":
        yield from _ide(path, stats)
        return
    with open(path, "rb") as fp:
        yield from parse_records(iter_json_lines(fp, stats), path, stats)


# ---------------------------------------------------------------------------- CLI agent


def _mtime_iso(path: Path) -> str:
    try:
        return iso_utc(path.stat().st_mtime)
    except OSError:
        return ""


def _cli_workdir(path: Path) -> str:
    """``projects/<encoded-cwd>``: Cursor writes the cwd without its leading separator."""
    enc = workdir_of_path(path)
    return enc if enc.startswith("-") else f"-{enc}"


def parse_records(
    records: Iterable[dict[str, Any]], path: Path, stats: FileStats
) -> Iterator[Turn]:
    fallback_ts = _mtime_iso(path)
    chain = TurnChain(SOURCE.harness, path.stem, _cli_workdir(path), "", str(path))
    for rec in records:
        role = rec.get("role")
        msg = rec.get("message")
        if role not in ("user", "assistant") or not isinstance(msg, dict):
            kind = rec.get("type") if isinstance(rec.get("type"), str) else f"role:{role}"
            stats.ignored[str(kind)] += 1
            continue
        blocks = anthropic_blocks(msg.get("content"))
        if not blocks:
            stats.empty[str(role)] += 1
            continue
        rid = rec.get("id", msg.get("id"))
        uuid = rid if isinstance(rid, str) and rid.strip() else f"L{stats.lines}"
        yield chain.turn(uuid, str(role), iso_utc(rec.get("timestamp")) or fallback_ts, blocks)


# ---------------------------------------------------------------------------- IDE database


def _ide(path: Path, stats: FileStats) -> Iterator[Turn]:
    conn = connect_readonly(path, "Cursor database", immutable=True)
    try:
        if not {"key", "value"} <= columns(conn, "cursorDiskKV"):
            stats.ignored["no cursorDiskKV table"] += 1
            return
        yield from _composers(conn, path, stats)
    except sqlite3.Error as e:
        raise FunesError(f"{display_path(path)}: cannot read the Cursor database ({e})") from None
    finally:
        conn.close()


def _value(raw: Any) -> dict[str, Any]:
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    if not isinstance(raw, str):
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _composers(conn: sqlite3.Connection, path: Path, stats: FileStats) -> Iterator[Turn]:
    composers = conn.execute(
        "SELECT key, value FROM cursorDiskKV WHERE key >= 'composerData:' "
        "AND key < 'composerData;' ORDER BY key"
    ).fetchall()
    for key, raw in composers:
        cid = str(key).split(":", 1)[1]
        data = _value(raw)
        stats.lines += 1
        if not data:
            stats.skip(stats.lines, "malformed_json")
            continue
        lo, hi = f"bubbleId:{cid}:", f"bubbleId:{cid};"
        bubbles = {
            str(k)[len(lo) :]: _value(v)
            for k, v in conn.execute(
                "SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?", (lo, hi)
            )
        }
        headers = data.get("fullConversationHeadersOnly")
        order: list[tuple[str, dict[str, Any]]] = []
        if isinstance(headers, list):
            for h in headers:
                bid = h.get("bubbleId") if isinstance(h, dict) else None
                if isinstance(bid, str) and bid in bubbles:
                    order.append((bid, bubbles.pop(bid)))
        inline = data.get("conversation")
        for b in inline if isinstance(inline, list) else []:
            if isinstance(b, dict) and isinstance(b.get("bubbleId"), str):
                order.append((b["bubbleId"], b))
        order += sorted(bubbles.items(), key=lambda kv: _created(kv[1]))  # not in the headers
        yield from _bubble_turns(cid, data, order, path, stats)


def _created(bubble: dict[str, Any]) -> float:
    v = bubble.get("createdAt")
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        try:
            return datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp() * 1000
        except ValueError:
            return 0.0
    return 0.0


def _bubble_turns(
    cid: str,
    composer: dict[str, Any],
    bubbles: list[tuple[str, dict[str, Any]]],
    path: Path,
    stats: FileStats,
) -> Iterator[Turn]:
    cwd = next(
        (
            b["workspaceProjectDir"]
            for _, b in bubbles
            if isinstance(b.get("workspaceProjectDir"), str)
        ),
        "",
    )
    repo = repo_of(cwd) if cwd else ""
    chain = TurnChain(SOURCE.harness, cid, munge_workdir(cwd) or "cursor", repo, str(path))
    start = iso_utc(composer.get("createdAt"))
    for bid, bubble in bubbles:
        stats.records_kept += 1
        stats.lines += 1
        btype = bubble.get("type")
        role = {1: "user", 2: "assistant"}.get(btype) if isinstance(btype, int) else None
        if role is None:
            stats.ignored["bubble:other"] += 1
            continue
        blocks = _bubble_blocks(bubble)
        if not blocks:
            stats.empty[f"bubble:{role}"] += 1
            continue
        yield chain.turn(bid, role, iso_utc(bubble.get("createdAt")) or start, blocks)


def _bubble_blocks(bubble: dict[str, Any]) -> list[Block]:
    thinking = bubble.get("thinking")
    thought = thinking_block(thinking.get("text") if isinstance(thinking, dict) else thinking)
    out = [thought] if thought else []
    body = bubble.get("text")
    if not isinstance(body, str) or is_blank(body):
        body = bubble.get("rawText")
    if isinstance(body, str) and not is_blank(body):
        out.append(Block("text", body))
    tool = bubble.get("toolFormerData")
    if isinstance(tool, dict):
        name, cid = opt_str(tool.get("name")), opt_str(tool.get("toolCallId"))
        args = tool.get("rawArgs", tool.get("params"))
        out += tool_blocks(name, cid, args, tool.get("result"))
    return out


SOURCE = Source(
    name="cursor",
    harness="cursor",
    roots=(
        ".cursor/projects",
        ".config/Cursor/User/globalStorage/state.vscdb",
        "Library/Application Support/Cursor/User/globalStorage/state.vscdb",
    ),
    aliases=("cursor-agent",),
    patterns=(),
    claims=claims,
    parse_records=parse_records,
    parse_path=parse_path,
    locate=locate,
    not_content=NOT_CONTENT,
)
