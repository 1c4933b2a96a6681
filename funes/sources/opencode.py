"""OpenCode sessions: `${XDG_DATA_HOME:-~/.local/share}/opencode/opencode.db` (Linux and macOS).

The database (SQLite) has a ``session`` table (``id``, ``directory``, ``project_id``), a
``message`` table (``id``, ``session_id``, ``time_created``, JSON ``data`` with the ``role``) and
a ``part`` table (``id``, ``message_id``, JSON ``data``): a message's content is its parts. Stores
reach several gigabytes, so the database is opened read-only (see ``funes.sources.sqlite``:
never created, never written, no files left beside it), read one session at a time, and only
the parts that hold conversation are read whole (``text``, ``reasoning``, ``tool``); of the
others (step markers, snapshots, patches, attached files) only the type is read, to count them.
The ``event`` table repeats part updates and is never read (it would count each part twice).
A database that is locked or damaged is one error naming it; the run goes on.

Older releases kept the same records as JSON files under ``storage/``:
``session/<projectID>/<sessionID>.json``, ``message/<sessionID>/<messageID>.json`` and
``part/<messageID>/<partID>.json``; each session file is read with its messages and parts.

A message becomes one turn, role from its ``role`` (``user`` / ``assistant``); its parts, in
order: ``text`` → ``text``, ``reasoning`` → ``thinking``, ``tool`` → ``tool_use`` (the call's
``state.input``, named ``tool``, id ``callID``) and, once it ran, ``tool_result``
(``state.output``, or ``state.error``). A message cut off mid-turn (a database copied while
OpenCode wrote) is read as far as it goes.

Ids: the session id is OpenCode's (``ses_…``, what ``opencode --session`` takes); a turn's id is
the message id, its parent the message's ``parentID`` (an answer names its question).

Kilo, a fork of OpenCode, keeps the same database and files in its own data directory; its
source reads them with ``reader("kilo")`` (see ``funes.sources.kilo``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from funes.errors import FunesError
from funes.records import Block, Turn
from funes.sources import (
    FileStats,
    Source,
    TurnChain,
    display_path,
    env_path,
    is_blank,
    iso_from_epoch,
    iso_utc,
    munge_workdir,
    opt_str,
    read_json_document,
    repo_of,
    tool_blocks,
)
from funes.sources.sqlite import columns, connect_readonly

CONTENT_PARTS = ("text", "reasoning", "tool")
NOT_CONTENT = frozenset(
    f"part:{t}"
    for t in (
        "step-start",
        "step-finish",
        "snapshot",
        "patch",
        "file",
        "agent",
        "retry",
        "compaction",
        "subtask",
    )
)


def locate(home: Path) -> list[Path]:
    base = (env_path("XDG_DATA_HOME") or home / ".local/share") / "opencode"
    return [base / "opencode.db", base / "storage/session"]


def claims(f: Path) -> bool:
    return f.name == "opencode.db" or storage_session_of(f) not in (None, "kilo")


def storage_session_of(f: Path) -> str | None:
    """The name of the data directory holding ``f`` when ``f`` is a session file of the older
    JSON storage (``<data>/storage/session/<projectID>/<sessionID>.json``), else None."""
    parents = f.parents
    if (
        f.suffix == ".json"
        and len(parents) >= 4
        and parents[1].name == "session"
        and parents[2].name == "storage"
    ):
        return parents[3].name
    return None


def reader(harness: str) -> Callable[[Path, FileStats], Iterator[Turn]]:
    """The reader of OpenCode's database and storage files, storing turns under ``harness``
    (OpenCode's own, or a fork's that keeps the same records)."""

    def parse_path(path: Path, stats: FileStats) -> Iterator[Turn]:
        if path.suffix == ".json":
            yield from _storage_session(path, stats, harness)
        else:
            yield from _database(path, stats, harness)

    return parse_path


# ---------------------------------------------------------------------------- database


def _database(path: Path, stats: FileStats, harness: str) -> Iterator[Turn]:
    conn = connect_readonly(path, "OpenCode database")
    try:
        yield from _read_database(conn, path, stats, harness)
    except sqlite3.Error as e:
        raise FunesError(f"{display_path(path)}: cannot read the OpenCode database ({e})") from None
    finally:
        conn.close()


def _read_database(
    conn: sqlite3.Connection, path: Path, stats: FileStats, harness: str
) -> Iterator[Turn]:
    cols = {t: columns(conn, t) for t in ("session", "message", "part", "project")}
    if (
        not {"id", "session_id", "data"} <= cols["message"]
        or not {"message_id", "data"} <= cols["part"]
    ):
        raise FunesError(
            f"{display_path(path)}: not an OpenCode database (no message and part tables)"
        )
    worktrees: dict[str, str] = {}
    if {"id", "worktree"} <= cols["project"]:
        worktrees = {
            pid: wt
            for pid, wt in conn.execute("SELECT id, worktree FROM project")
            if isinstance(pid, str) and isinstance(wt, str)
        }
    directory = "directory" if "directory" in cols["session"] else "NULL"
    project = "project_id" if "project_id" in cols["session"] else "NULL"
    sessions = conn.execute(
        f"SELECT id, {directory}, {project} FROM session ORDER BY id"
    ).fetchall()
    order = "time_created, id" if "time_created" in cols["message"] else "id"
    created = "time_created" if "time_created" in cols["message"] else "NULL"
    # json_extract raises on a row that is not JSON: such a row is counted, not fatal.
    valid = "json_valid(p.data)"
    type_of = f"CASE WHEN {valid} THEN json_extract(p.data, '$.type') END"
    wanted = ", ".join(f"'{t}'" for t in CONTENT_PARTS)
    select = f"SELECT p.message_id, {valid}, {type_of}, CASE WHEN {type_of} IN ({wanted}) THEN p.data END"
    if "session_id" in cols["part"]:
        part_sql = f"{select} FROM part p WHERE p.session_id = ? ORDER BY p.message_id, p.id"
    else:
        part_sql = (
            f"{select} FROM part p JOIN message m ON m.id = p.message_id "
            "WHERE m.session_id = ? ORDER BY p.message_id, p.id"
        )
    for sid, sdir, pid in sessions:
        if not isinstance(sid, str):
            continue
        cwd = sdir if isinstance(sdir, str) and sdir else worktrees.get(pid or "", "")
        conn.execute("BEGIN")  # one snapshot per session, whatever OpenCode writes meanwhile
        try:
            rows = conn.execute(
                f"SELECT id, {created}, data FROM message WHERE session_id = ? ORDER BY {order}",
                (sid,),
            ).fetchall()
            parts: dict[str, list[dict[str, Any]]] = {}
            for mid, ok, ptype, data in conn.execute(part_sql, (sid,)):
                if not ok:
                    stats.skip(stats.lines, "malformed_json")
                    continue
                parts.setdefault(mid, []).append(_part(ptype, data, stats))
        finally:
            conn.rollback()
        messages = []
        for mid, ts, data in rows:
            stats.records_kept += 1
            stats.lines += 1
            info = _loads(data)
            if ts is not None and "time_created" not in info:
                info["time_created"] = ts
            messages.append((mid, info, parts.get(mid, [])))
        yield from _turns(sid, cwd, messages, path, stats, harness)


def _loads(data: Any) -> dict[str, Any]:
    if not isinstance(data, str):
        return {}
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _part(ptype: Any, data: Any, stats: FileStats) -> dict[str, Any]:
    if data is None:  # a part type whose body is not read
        return {"type": ptype}
    part = _loads(data)
    if not part:
        stats.skip(stats.lines, "malformed_json")
    return part


# ---------------------------------------------------------------------------- storage files


def _storage_session(path: Path, stats: FileStats, harness: str) -> Iterator[Turn]:
    info = read_json_document(path, stats)
    if not isinstance(info, dict):
        raise FunesError(f"{display_path(path)}: not an OpenCode session (not an object)")
    storage = path.parent.parent.parent
    raw_id = info.get("id")
    sid: str = raw_id if isinstance(raw_id, str) else path.stem
    cwd = info.get("directory") if isinstance(info.get("directory"), str) else ""
    if not cwd and isinstance(info.get("projectID"), str):
        project = _json_file(storage / "project" / f"{info['projectID']}.json", stats)
        cwd = project.get("worktree") if isinstance(project.get("worktree"), str) else ""
    messages = []
    for mfile in _json_files(storage / "message" / sid):
        msg = _json_file(mfile, stats)
        stats.records_kept += 1
        stats.lines += 1
        raw_mid = msg.get("id")
        mid: str = raw_mid if isinstance(raw_mid, str) else mfile.stem
        parts = [_json_file(p, stats) for p in _json_files(storage / "part" / mid)]
        messages.append((mid, msg, parts))
    messages.sort(key=lambda m: (_created(m[1]), m[0]))
    yield from _turns(sid, cwd or "", messages, path, stats, harness)


def _json_files(d: Path) -> list[Path]:
    try:
        return sorted(p for p in d.iterdir() if p.suffix == ".json")
    except OSError:
        return []


def _json_file(path: Path, stats: FileStats) -> dict[str, Any]:
    try:
        value = read_json_document(path, stats)
    except (FunesError, OSError):
        stats.skip(stats.lines, "malformed_json")
        return {}
    return value if isinstance(value, dict) else {}


# ---------------------------------------------------------------------------- turns


def _created(msg: dict[str, Any]) -> float:
    t = msg.get("time")
    v = t.get("created") if isinstance(t, dict) else msg.get("time_created")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def _turns(
    sid: str,
    cwd: str,
    messages: Iterable[tuple[str, dict[str, Any], list[dict[str, Any]]]],
    path: Path,
    stats: FileStats,
    harness: str,
) -> Iterator[Turn]:
    repo = repo_of(cwd) if cwd else ""
    chain = TurnChain(harness, sid, munge_workdir(cwd) or harness, repo, str(path))
    for mid, msg, parts in messages:
        role = msg.get("role")
        if role not in ("user", "assistant"):
            stats.ignored[f"message:{role}"] += 1
            continue
        blocks: list[Block] = []
        for part in parts:
            got = part_blocks(part)
            if got is None:
                stats.ignored[f"part:{part.get('type')}"] += 1
            else:
                blocks += got
        if not blocks:
            stats.empty[f"message:{role}"] += 1
            continue
        parent = msg.get("parentID")
        created = msg.get("time", {}).get("created") if isinstance(msg.get("time"), dict) else None
        created = created if created is not None else msg.get("time_created")
        ts = iso_from_epoch(created) if isinstance(created, (int, float)) else iso_utc(created)
        yield chain.turn(mid, role, ts, blocks, parent if isinstance(parent, str) else chain.prev)


def part_blocks(part: dict[str, Any]) -> list[Block] | None:
    """The blocks of one part; None for a part type that never holds conversation."""
    ptype = part.get("type")
    if ptype in ("text", "reasoning"):
        text = part.get("text")
        if not isinstance(text, str) or is_blank(text):
            return []
        return [Block("text" if ptype == "text" else "thinking", text)]
    if ptype != "tool":
        return None
    name, cid = opt_str(part.get("tool")), opt_str(part.get("callID"))
    state = part.get("state")
    state = state if isinstance(state, dict) else {}
    return tool_blocks(name, cid, state.get("input"), state.get("output", state.get("error")))


SOURCE = Source(
    name="opencode",
    harness="opencode",
    roots=(".local/share/opencode/opencode.db", ".local/share/opencode/storage/session"),
    patterns=(),
    claims=claims,
    parse_path=reader("opencode"),
    locate=locate,
    not_content=NOT_CONTENT,
)
