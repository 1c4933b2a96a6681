"""Hermes: `~/.hermes/state.db` (SQLite, WAL) and the per-session `~/.hermes/sessions/*.jsonl`.

The database is opened read-only (a `mode=ro` URI, so funes can never
write it) and read in one transaction, so a Hermes process appending meanwhile is neither
blocked nor seen half-way. Columns are probed, not assumed: older schemas lack
`sessions.cwd`, `messages.reasoning_content`, `messages.tool_name`, and a missing one reads
as NULL. Rows are ordered by `messages.id` (Hermes' timestamps are not monotonic).

The session files (which the reference does not read) hold the same conversations: a
`{"role":"session_meta", …}` line (session fields: cwd, model, tools, …), then one OpenAI-style
message per line (`user` / `assistant` with `reasoning` and `tool_calls` / `tool`), with
`timestamp` fields. Both are normalised alike, so one conversation gives the same blocks from
either:

- one message → one turn, role verbatim (`system` rows are kept as role `system`; a
  `session_meta` row is not content);
- `assistant` → `thinking` (from `reasoning_content`, else `reasoning` when that is
  NULL/absent), `text` (`content`), then a `tool_use` per `tool_calls[]` element
  (`function.arguments` verbatim when a string, else compact JSON; `{}` when missing);
- `tool` → a `tool_result` named by the row's `tool_name`, else by the preceding call with
  that `tool_call_id` (the session files carry no tool name);
- `ts` → ISO-8601 UTC (epoch seconds in the database; ISO strings in the files, where one
  without an offset is this machine's local time, as Hermes writes it);
- workdir → the munged session cwd, else `hermes`; repo → the git remotes of that cwd.

Ids differ by container: the database's turns are `<message id>` (as in the reference), a
session file's are `<session>-<seq>` (its lines have no ids). So that a sweep reads each
conversation once, a session file whose session is also in state.db is pruned from the sweep.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from funes.errors import FunesError
from funes.records import Block, NumberTooLong, TooDeep, Turn, load_json
from funes.sources import (
    FileStats,
    NotATranscript,
    Source,
    Unit,
    compact_json,
    is_blank,
    iso_from_epoch,
    iso_utc,
    iter_json_lines,
    munge_workdir,
    open_regular,
    repo_of,
)

SQLITE_MAGIC = b"SQLite format 3\0"
FALLBACK_WORKDIR = "hermes"
NOT_CONTENT = frozenset(("session_meta",))
_MESSAGE_COLUMNS = (
    "id",
    "session_id",
    "role",
    "content",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "timestamp",
    "reasoning",
    "reasoning_content",
)


def sniff(first: dict[str, Any]) -> bool:
    # OpenAI-style messages carry `role` and no `type`; Codex's session_meta is a `type`.
    return isinstance(first.get("role"), str) and "type" not in first and "message" not in first


def is_database(path: Path) -> bool:
    try:
        with open_regular(path) as f:  # never blocks on a FIFO
            return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except (OSError, FunesError):
        return False


# Files that are never a database: a walk over transcript trees need not open them.
TEXT_SUFFIXES = frozenset((".jsonl", ".json", ".md", ".txt", ".log", ".parquet"))


def claims(path: Path) -> bool:
    """A Hermes database, recognised by content (SQLite magic, then a `messages` table with
    Hermes' columns), whatever the file is called: `state.db`, `backup.db`, `hermes.sqlite`."""
    if path.suffix.lower() in TEXT_SUFFIXES or not is_database(path):
        return False
    # state.db is Hermes' by name: a damaged one is reported as Hermes', not as unknown data.
    return path.name == "state.db" or is_hermes_database(path)


def is_hermes_database(path: Path) -> bool:
    try:
        conn = connect(path)
    except FunesError:
        return False
    try:
        return {"session_id", "role", "content"} <= _columns(conn, "messages")
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def parse_path(path: Path, stats: FileStats) -> Iterator[Turn]:
    """A Hermes database, or (given explicitly, or under ~/.hermes/sessions) a session file."""
    if is_database(path):
        yield from read_database(path, stats)
        return
    with open_regular(path) as fp:
        records = iter_json_lines(fp, stats)
        yield from parse_records(records, path, stats)
    if stats.records_kept == 0:
        what = "empty file" if stats.lines == 0 else f"all {stats.lines} lines unreadable"
        raise NotATranscript(f"{path}: {what}, no turns")


# ---------------------------------------------------------------------------- session files


def parse_records(
    records: Iterable[dict[str, Any]], path: Path, stats: FileStats
) -> Iterator[Turn]:
    session_id = path.stem
    workdir, repo = FALLBACK_WORKDIR, ""
    names: dict[str, str] = {}
    seq = 0
    for rec in records:
        role = rec.get("role")
        if role == "session_meta":
            if seq == 0:
                sid = rec.get("session_id", rec.get("id"))
                if isinstance(sid, str) and sid:
                    session_id = sid
                if wd := munge_workdir(rec.get("cwd")):
                    workdir, repo = wd, repo_of(rec["cwd"].strip())
            stats.ignored["session_meta"] += 1
            continue
        if not isinstance(role, str):
            stats.ignored[f"role:{role}"] += 1
            continue
        blocks = _blocks(
            role,
            rec.get("content"),
            rec.get("reasoning_content") if "reasoning_content" in rec else None,
            rec.get("reasoning"),
            rec.get("tool_calls"),
            rec.get("tool_call_id"),
            rec.get("tool_name"),
            names,
        )
        if not blocks:
            stats.empty[role] += 1
            continue
        uuid = f"{session_id}-{seq}"
        yield Turn(
            harness=SOURCE.harness,
            session_id=session_id,
            turn_uuid=uuid,
            parent_uuid=None,
            seq=seq,
            ts=iso_utc(rec.get("timestamp")),
            role=role,
            workdir=workdir,
            repo=repo,
            source_path=str(path),
            blocks=blocks,
        )
        seq += 1


# ---------------------------------------------------------------------------- state.db


def connect(path: Path) -> sqlite3.Connection:
    """A read-only connection: funes never writes, and never blocks, Hermes' database."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=10, check_same_thread=False)
        # A text value that is not valid UTF-8 is read with U+FFFD, not fatal to the database.
        conn.text_factory = lambda b: b.decode("utf-8", "replace")
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.Error as e:
        raise FunesError(f"{path}: cannot open the Hermes database read-only ({e})") from None
    return conn


def read_database(path: Path, stats: FileStats) -> Iterator[Turn]:
    conn = connect(path)
    try:
        yield from _read(conn, path, stats)
    except sqlite3.Error as e:
        raise FunesError(f"{path}: cannot read the Hermes database ({e})") from None
    finally:
        conn.close()


def session_ids(path: Path) -> set[str]:
    """The ids of the sessions holding messages in a Hermes database."""
    conn = connect(path)
    try:
        if not _columns(conn, "messages"):
            return set()
        return {r[0] for r in conn.execute("SELECT DISTINCT session_id FROM messages")}
    except sqlite3.Error:
        return set()
    finally:
        conn.close()


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM pragma_table_info(?)", (table,))}


def _read(conn: sqlite3.Connection, path: Path, stats: FileStats) -> Iterator[Turn]:
    conn.execute("BEGIN")  # one snapshot for both queries, whatever Hermes writes meanwhile
    have = _columns(conn, "messages")
    missing = {"id", "session_id", "role", "content"} - have
    if missing:
        what = "no messages table" if not have else f"messages lacks {', '.join(sorted(missing))}"
        raise FunesError(f"{path}: not a Hermes state database ({what})")
    cwds: dict[str, str] = {}
    if "cwd" in _columns(conn, "sessions"):
        cwds = {
            sid: cwd
            for sid, cwd in conn.execute("SELECT id, cwd FROM sessions")
            if isinstance(sid, str) and isinstance(cwd, str)
        }
    select = ", ".join(c if c in have else f"NULL AS {c}" for c in _MESSAGE_COLUMNS)
    rows = conn.execute(f"SELECT {select} FROM messages ORDER BY session_id, id")
    current: str | None = None
    workdir, repo = FALLBACK_WORKDIR, ""
    names: dict[str, str] = {}
    seq = 0
    for mid, sid, role, content, call_id, calls, tool_name, ts, reasoning, r_content in rows:
        stats.records_kept += 1
        stats.lines += 1
        sid = str(sid)
        if sid != current:
            current, seq, names = sid, 0, {}
            cwd = cwds.get(sid)
            workdir = munge_workdir(cwd) or FALLBACK_WORKDIR
            repo = repo_of(cwd.strip()) if cwd and workdir != FALLBACK_WORKDIR else ""
        if role == "session_meta" or not isinstance(role, str):
            stats.ignored["session_meta" if role == "session_meta" else f"role:{role}"] += 1
            continue
        blocks = _blocks(role, content, r_content, reasoning, calls, call_id, tool_name, names)
        if not blocks:
            stats.empty[role] += 1
            continue
        yield Turn(
            harness=SOURCE.harness,
            session_id=sid,
            turn_uuid=str(mid),
            parent_uuid=None,
            seq=seq,
            ts=iso_from_epoch(ts) if isinstance(ts, (int, float)) else iso_utc(ts),
            role=role,
            workdir=workdir,
            repo=repo,
            source_path=str(path),
            blocks=blocks,
        )
        seq += 1
    conn.execute("COMMIT")


# ---------------------------------------------------------------------------- shared


def _blocks(
    role: str,
    content: Any,
    reasoning_content: Any,
    reasoning: Any,
    tool_calls: Any,
    tool_call_id: Any,
    tool_name: Any,
    names: dict[str, str],
) -> list[Block]:
    text = _text(content)
    if role == "tool":
        if is_blank(text):
            return []
        call_id = tool_call_id if isinstance(tool_call_id, str) else None
        name = tool_name if isinstance(tool_name, str) else names.get(call_id or "")
        return [Block("tool_result", text, name, call_id)]
    out = []
    if role == "assistant":
        thinking = reasoning if reasoning_content is None else reasoning_content
        if isinstance(thinking, str) and not is_blank(thinking):
            out.append(Block("thinking", thinking))
    if not is_blank(text):
        out.append(Block("text", text))
    if role == "assistant":
        out.extend(_tool_uses(tool_calls, names))
    return out


def _text(content: Any) -> str:
    """A string; OpenAI content parts → their text joined by newlines (images dropped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        )
    return ""


def _tool_uses(tool_calls: Any, names: dict[str, str]) -> list[Block]:
    calls = tool_calls
    if isinstance(calls, str):  # the database stores the JSON text
        try:
            calls, _ = load_json(calls)
        except (json.JSONDecodeError, TooDeep, NumberTooLong):
            return []
    if not isinstance(calls, list):
        return []
    out = []
    for call in calls:
        if not isinstance(call, dict):
            continue
        fn = call.get("function")
        fn = fn if isinstance(fn, dict) else {}
        args = fn.get("arguments")
        text = args if isinstance(args, str) else compact_json({} if args is None else args)
        name = fn.get("name") if isinstance(fn.get("name"), str) else None
        call_id = call.get("id") if isinstance(call.get("id"), str) else None
        if call_id is not None and name is not None:
            names[call_id] = name
        out.append(Block("tool_use", text, name, call_id))
    return out


def prune(units: list[Unit]) -> list[Unit]:
    """Drop Hermes session files whose session the swept state.db already holds."""
    dbs = [u.path for u in units if u.source is SOURCE and is_database(u.path)]
    if not dbs:
        return units
    held: set[str] = set()
    for db in dbs:
        try:
            held |= session_ids(db)
        except FunesError:
            continue  # the db unit itself will report why it cannot be read
    return [
        u
        for u in units
        if not (u.source is SOURCE and u.path.suffix == ".jsonl" and u.path.stem in held)
    ]


SOURCE = Source(
    name="hermes",
    harness="hermes",
    roots=(".hermes/state.db", ".hermes/sessions"),
    sniff=sniff,
    parse_records=parse_records,
    claims=claims,
    parse_path=parse_path,
    sniff_order=30,
    not_content=NOT_CONTENT,
    prune=prune,
)
