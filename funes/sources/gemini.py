"""Gemini CLI sessions: `~/.gemini/tmp/<project>/chats/session-*.json` and `*.jsonl`.

``GEMINI_CLI_HOME`` moves the home Gemini CLI puts ``.gemini`` in. ``<project>`` is a short
name (newer releases; ``.gemini/projects.json`` maps each workdir to it, and the project's
``.project_root`` file names the workdir too) or the sha256 of the workdir (older releases).

Two generations of session file, both read:

- ``session-<ts>-<id8>.json`` (older): one ConversationRecord, ``{sessionId, projectHash,
  startTime, lastUpdated, messages: [...]}``, rewritten whole on every change;
- ``session-<ts>-<id8>.jsonl`` (current): a metadata line, then records replayed in order as
  Gemini CLI itself loads them: a record with an ``id`` is a message, and a later copy of the
  same id replaces the earlier one in place (one message is written several times as its tool
  calls, results and tokens arrive); ``{"$rewindTo": id}`` drops that message and every one
  after it (all of them when the id is unknown); ``{"$set": {...}}`` patches the metadata, and a
  ``messages`` list in it is a checkpoint: the conversation is that list from then on (Gemini
  CLI writes one when it rewrites its history, after ``/compress`` or a masked tool output). A
  metadata line may carry ``messages`` too (a whole older session on one line): they are
  added. ``{"$patch": {...}}`` is read as ``$set`` is (Gemini CLI itself writes only ``$set``
  and ``$rewindTo``, as of its August 2026 source; a peer reader names ``$patch`` beside them).
  Subagents' sessions are ``chats/<parentSessionId>/<id>.jsonl``.

A session resumed from an older ``.json`` is copied into a ``.jsonl`` beside it; the ``.json``
is then not read.

Messages: ``type: user`` → role ``user`` (``content`` is a string or a list of parts; text
parts are kept, inline images are not text); ``type: gemini`` → role ``assistant``:
``thoughts`` (``{subject, description}``) → ``thinking`` blocks, ``content`` → ``text`` (a
part marked ``thought`` → ``thinking``), each of ``toolCalls`` → a ``tool_use`` block (its
``args``) and, once it ran, a ``tool_result`` block (the ``functionResponse`` output of its
``result``), both carrying the call's name and id. ``info`` / ``error`` / ``warning`` messages
are the CLI's notices to the user, not conversation.

Ids: the session id is the record's ``sessionId`` (what ``gemini --resume`` takes); a turn's
id is the message ``id``, stable across rewrites.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from funes.errors import FunesError
from funes.records import Block, Turn
from funes.sources import (
    FileStats,
    Source,
    TurnChain,
    Unit,
    compact_json,
    display_path,
    env_path,
    is_blank,
    iso_utc,
    iter_json_lines,
    munge_workdir,
    opt_str,
    read_json_document,
    repo_of,
    tool_blocks,
)

# Record kinds replayed or superseded rather than stored as turns, and the CLI's notices.
NOT_CONTENT = frozenset(
    (
        "session",
        "$set",
        "$patch",
        "$rewindTo",
        "superseded",
        "rewound",
        "message:info",
        "message:error",
        "message:warning",
    )
)
ROLES = {"user": "user", "gemini": "assistant", "model": "assistant", "qwen": "assistant"}


def locate(home: Path) -> list[Path]:
    return [(env_path("GEMINI_CLI_HOME") or home) / ".gemini" / "tmp"]


def claims(f: Path) -> bool:
    """A session file in a ``chats`` directory (a subagent's one directory further down), not
    in Qwen Code's home (its older sessions share this layout)."""
    if f.suffix not in (".json", ".jsonl") or ".qwen" in f.parts:
        return False
    if f.parent.name == "chats":
        return f.name.startswith("session-")
    return f.suffix == ".jsonl" and f.parent.parent.name == "chats"


def prune(units: list[Unit]) -> list[Unit]:
    """An older ``.json`` session resumed into a ``.jsonl`` beside it is read from the latter."""
    names = {str(u.path) for u in units if u.source is SOURCE}
    return [
        u
        for u in units
        if not (u.source is SOURCE and u.path.suffix == ".json" and f"{u.path}l" in names)
    ]


def parse_path(path: Path, stats: FileStats) -> Iterator[Turn]:
    if path.suffix == ".jsonl":
        with open(path, "rb") as fp:
            meta, messages = replay(iter_json_lines(fp, stats), stats)
        if not meta and not messages:
            raise FunesError(f"{display_path(path)}: no Gemini CLI session records")
    else:
        doc = read_json_document(path, stats)
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            raise FunesError(f"{display_path(path)}: not a Gemini CLI session (no messages list)")
        meta = doc
        messages = [m for m in doc["messages"] if isinstance(m, dict)]
        stats.records_kept += len(doc["messages"])
    yield from conversation_turns(meta, messages, path, stats, SOURCE.harness)


def replay(
    records: Iterable[dict[str, Any]], stats: FileStats
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The session metadata and its messages after replaying a JSONL session's records, in the
    order Gemini CLI's own loader tests them: a rewind, a message, a metadata update, the
    metadata line."""
    meta: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}  # insertion order: a replaced copy keeps its place
    for rec in records:
        target = rec.get("$rewindTo")
        if isinstance(target, str):
            stats.ignored["$rewindTo"] += 1
            ids = list(messages)
            drop = ids[ids.index(target) :] if target in messages else ids
            for mid in drop:
                del messages[mid]
            stats.ignored["rewound"] += len(drop)
        elif isinstance(rec.get("id"), str):
            if rec["id"] in messages:
                stats.ignored["superseded"] += 1
            messages[rec["id"]] = rec
        elif (key := _update_key(rec)) is not None:
            stats.ignored[key] += 1
            patch = rec[key]
            listed = patch.get("messages")
            if isinstance(listed, list):  # a checkpoint: the conversation from now on
                stats.ignored["superseded"] += len(messages)
                messages = {}
                _add(messages, listed)
            meta.update((k, v) for k, v in patch.items() if k != "messages")
        elif isinstance(rec.get("sessionId"), str):
            stats.ignored["session"] += 1
            listed = rec.get("messages")
            _add(messages, listed if isinstance(listed, list) else [])
            meta.update((k, v) for k, v in rec.items() if k != "messages")
        else:
            stats.ignored[_kind(rec)] += 1
    return meta, list(messages.values())


def _update_key(rec: dict[str, Any]) -> str | None:
    """``$set`` (or ``$patch``) when ``rec`` is a metadata update."""
    for key in ("$set", "$patch"):
        if isinstance(rec.get(key), dict):
            return key
    return None


def _add(messages: dict[str, dict[str, Any]], listed: list[Any]) -> None:
    for m in listed:
        if isinstance(m, dict) and isinstance(m.get("id"), str):
            messages[m["id"]] = m


def _kind(rec: dict[str, Any]) -> str:
    keys = sorted(k for k in rec if isinstance(k, str))
    return "record:" + ",".join(keys[:3]) if keys else "record:{}"


def conversation_turns(
    meta: dict[str, Any],
    messages: list[dict[str, Any]],
    path: Path,
    stats: FileStats,
    harness: str,
) -> Iterator[Turn]:
    """Turns of a ConversationRecord's messages (Gemini CLI's, and Qwen Code's older files)."""
    sid = meta.get("sessionId")
    session_id = sid if isinstance(sid, str) and sid.strip() else path.stem
    cwd = workdir_of(path, meta)
    workdir = munge_workdir(cwd) or _project_dir(path).name
    chain = TurnChain(harness, session_id, workdir, repo_of(cwd) if cwd else "", str(path))
    start = iso_utc(meta.get("startTime"))
    for msg in messages:
        mtype = msg.get("type")
        role = ROLES.get(mtype) if isinstance(mtype, str) else None
        if role is None:
            stats.ignored[f"message:{mtype}"] += 1
            continue
        blocks = _user_blocks(msg) if role == "user" else _assistant_blocks(msg)
        if not blocks:
            stats.empty[f"message:{mtype}"] += 1
            continue
        mid = msg.get("id")
        uuid = mid if isinstance(mid, str) and mid.strip() else f"{session_id}-{chain.seq}"
        yield chain.turn(uuid, role, iso_utc(msg.get("timestamp")) or start, blocks)


def _parts_text(content: Any) -> list[tuple[str, str]]:
    """(block type, text) of a string or a list of parts; images and other data are not text."""
    if isinstance(content, str):
        return [] if is_blank(content) else [("text", content)]
    if isinstance(content, dict):
        content = [content]
    out = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, str) and not is_blank(part):
            out.append(("text", part))
        elif isinstance(part, dict):
            text = part.get("text")
            if isinstance(text, str) and not is_blank(text):
                out.append(("thinking" if part.get("thought") is True else "text", text))
    return out


def _user_blocks(msg: dict[str, Any]) -> list[Block]:
    return [Block(kind, text) for kind, text in _parts_text(msg.get("content"))]


def _assistant_blocks(msg: dict[str, Any]) -> list[Block]:
    out = []
    thoughts = msg.get("thoughts")
    for th in thoughts if isinstance(thoughts, list) else []:
        if not isinstance(th, dict):
            continue
        desc, subject = opt_str(th.get("description")), opt_str(th.get("subject"))
        text = "\n".join(s for s in (subject, desc) if s and not is_blank(s))
        if text:
            out.append(Block("thinking", text))
    out += [Block(kind, text) for kind, text in _parts_text(msg.get("content"))]
    calls = msg.get("toolCalls")
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict):
            continue
        name, cid = opt_str(call.get("name")), opt_str(call.get("id"))
        out += tool_blocks(name, cid, call.get("args"), tool_output(call.get("result")))
    return out


def tool_output(result: Any) -> str:
    """The text a tool call returned: the ``output`` (or ``error``) of each ``functionResponse``
    part, or plain text parts."""
    if isinstance(result, str):
        return "" if is_blank(result) else result
    if isinstance(result, dict):
        result = [result]
    texts = []
    for part in result if isinstance(result, list) else []:
        if not isinstance(part, dict):
            continue
        fr = part.get("functionResponse")
        if isinstance(fr, dict):
            resp = fr.get("response")
            if isinstance(resp, dict):
                for key in ("output", "error", "content"):
                    v = resp.get(key)
                    if isinstance(v, str) and not is_blank(v):
                        texts.append(v)
                        break
                    if v is not None and not isinstance(v, str):
                        texts.append(compact_json(v))
                        break
            elif isinstance(resp, str) and not is_blank(resp):
                texts.append(resp)
        elif isinstance(part.get("text"), str) and not is_blank(part["text"]):
            texts.append(part["text"])
    return "\n".join(texts)


# ---------------------------------------------------------------------------- workdir


def _project_dir(path: Path) -> Path:
    """``tmp/<project>`` of a session file (its ``chats`` directory's parent)."""
    for p in path.parents:
        if p.name == "chats":
            return p.parent
    return path.parent


def workdir_of(path: Path, meta: dict[str, Any]) -> str:
    """The session's workdir: the project's ``.project_root``, else ``projects.json`` (by short
    name, or by the sha256 older releases name the directory with), else the first of the
    session's ``directories``; "" when nothing says."""
    project = _project_dir(path)
    try:
        marker = (project / ".project_root").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        marker = ""
    if marker:
        return marker
    gemini_dir = project.parent.parent  # .gemini/tmp/<project>
    try:
        st = (gemini_dir / "projects.json").stat()
        known = _projects(str(gemini_dir / "projects.json"), st.st_mtime_ns)
    except OSError:
        known = {}
    for key in (project.name, meta.get("projectHash")):
        if isinstance(key, str) and key in known:
            return known[key]
    dirs = meta.get("directories")
    if isinstance(dirs, list) and dirs and isinstance(dirs[0], str):
        return dirs[0]
    return ""


@lru_cache(maxsize=8)
def _projects(path: str, _mtime: int) -> dict[str, str]:
    """``projects.json`` inverted: short name → workdir, and sha256(workdir) → workdir."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    projects = data.get("projects") if isinstance(data, dict) else None
    out: dict[str, str] = {}
    for wd, short in projects.items() if isinstance(projects, dict) else []:
        if isinstance(wd, str) and isinstance(short, str):
            out[short] = wd
            out[hashlib.sha256(wd.encode("utf-8")).hexdigest()] = wd
    return out


SOURCE = Source(
    name="gemini",
    harness="gemini",
    roots=(".gemini/tmp",),
    aliases=("gemini-cli", "gemini_cli"),
    patterns=(),
    claims=claims,
    parse_path=parse_path,
    locate=locate,
    not_content=NOT_CONTENT,
    prune=prune,
)
