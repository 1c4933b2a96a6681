"""Cline sessions: VS Code extension tasks and Cline CLI sessions, whole-file JSON.

Where (one directory per task or session):

- the VS Code extension (``saoudrizwan.claude-dev``): ``<host>/User/globalStorage/
  saoudrizwan.claude-dev/tasks/<taskId>/api_conversation_history.json``, for each host
  (VS Code, Insiders, VSCodium, Cursor, Windsurf) under ``~/.config`` (Linux) or
  ``~/Library/Application Support`` (macOS). The task's workdir is in
  ``state/taskHistory.json`` (``cwdOnTaskInitialization``);
- Cline CLI: ``${CLINE_SESSION_DATA_DIR:-${CLINE_DATA_DIR:-${CLINE_DIR:-~/.cline}/data}/
  sessions}/<id>/<id>.messages.json``, ``{sessionId, messages: [...]}``, with a ``<id>.json``
  manifest beside it naming the ``cwd``.

The conversation is the Anthropic messages the extension sends the model: ``{role, content,
ts?, id?}``, content a string or ``text`` / ``thinking`` / ``tool_use`` / ``tool_result`` /
``image`` parts (see ``anthropic_blocks``). Cline asks for tools in its own XML inside the
assistant's text and gets their results back as user text, so a tool's output is a user turn's
text. ``ui_messages.json`` (what the panel shows, without roles, with partial streaming rows) is
not read.

The file is rewritten whole on every change, so what is new is decided by content: a message's
turn id is its own ``id`` where it has one, else a digest of its role and content (with a
counter for a repeat of the same message), so ids stay stable however often the file is
rewritten, a rewrite with one more message adds exactly one turn, and a message that was
edited is stored as a new turn.

Session id: the task id (the task's directory name) or the CLI's ``sessionId``.
Roo Code and Kilo Code, forks of Cline, keep the same files in their own extension
directories and are read by this module's parser (see ``funes.sources.roo`` and
``funes.sources.kilo``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from funes.errors import FunesError
from funes.records import Turn
from funes.sources import (
    FileStats,
    Source,
    TurnChain,
    anthropic_blocks,
    compact_json,
    display_path,
    env_path,
    iso_utc,
    munge_workdir,
    read_json_document,
    repo_of,
)

HOSTS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
CONFIG_DIRS = (".config", "Library/Application Support")
EXTENSIONS = {
    "cline": "saoudrizwan.claude-dev",
    "roo": "rooveterinaryinc.roo-cline",
    "kilo": "kilocode.kilo-code",
}
HISTORY = "api_conversation_history.json"


def task_dirs(home: Path, extension: str) -> list[Path]:
    """``<host>/User/globalStorage/<extension>/tasks`` for every VS Code host, Linux and macOS
    (and ``$XDG_CONFIG_HOME`` when set)."""
    bases = [home / c for c in CONFIG_DIRS]
    xdg = env_path("XDG_CONFIG_HOME")
    if xdg is not None:
        bases.insert(0, xdg)
    return [b / host / "User/globalStorage" / extension / "tasks" for b in bases for host in HOSTS]


def locate(home: Path) -> list[Path]:
    sessions = env_path("CLINE_SESSION_DATA_DIR")
    if sessions is None:
        data = env_path("CLINE_DATA_DIR") or (env_path("CLINE_DIR") or home / ".cline") / "data"
        sessions = data / "sessions"
    return [*task_dirs(home, EXTENSIONS["cline"]), sessions]


def claims_for(name: str) -> Callable[[Path], bool]:
    """A task history file of this fork's extension (Cline also takes CLI sessions, and task
    histories found outside any extension directory)."""
    mine = EXTENSIONS[name]
    others = [ext for key, ext in EXTENSIONS.items() if key != name]

    def claims(f: Path) -> bool:
        if f.name == HISTORY:
            if mine in f.parts:
                return True
            return name == "cline" and not any(o in f.parts for o in others)
        return (
            name == "cline"
            and f.name.endswith(".messages.json")
            and f.name.removesuffix(".messages.json") == f.parent.name
        )

    return claims


def parse_task(path: Path, stats: FileStats, harness: str) -> Iterator[Turn]:
    doc = read_json_document(path, stats)
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):  # Cline CLI
        messages = doc["messages"]
        sid = doc.get("sessionId")
        session_id = sid if isinstance(sid, str) and sid.strip() else path.parent.name
        cwd = _manifest_cwd(path)
    elif isinstance(doc, list):
        messages = doc
        session_id = path.parent.name
        cwd = _task_cwd(path, session_id)
    else:
        raise FunesError(f"{display_path(path)}: not a task's conversation (no message list)")
    stats.records_kept += len(messages)
    repo = repo_of(cwd) if cwd else ""
    chain = TurnChain(harness, session_id, munge_workdir(cwd) or harness, repo, str(path))
    task_ts = iso_utc(int(session_id)) if session_id.isdigit() else ""
    seen: dict[str, int] = {}
    for lineno, msg in enumerate(messages, 1):
        stats.lines = lineno
        if not isinstance(msg, dict):
            stats.skip(lineno, "not_object")
            continue
        role = msg.get("role")
        if role not in ("user", "assistant"):
            stats.ignored[f"role:{role}"] += 1
            continue
        blocks = anthropic_blocks(msg.get("content"))
        if not blocks:
            stats.empty[str(role)] += 1
            continue
        ts = iso_utc(msg.get("ts")) or task_ts
        yield chain.turn(turn_id(msg, seen), str(role), ts, blocks)


def turn_id(msg: dict[str, Any], seen: dict[str, int]) -> str:
    """The message's own ``id``, else a digest of its role and content: the same message gets
    the same id in every rewrite of the file; its n-th repeat gets ``-n``."""
    own = msg.get("id")
    if isinstance(own, str) and own.strip():
        return own
    key = compact_json([msg.get("role"), msg.get("content")])
    digest = hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    n = seen.get(digest, 0)
    seen[digest] = n + 1
    return digest if n == 0 else f"{digest}-{n}"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def _task_cwd(path: Path, task_id: str) -> str:
    """A task's workdir: Roo's ``history_item.json`` beside it, else the extension's
    ``state/taskHistory.json`` entry for the task."""
    item = _read_json(path.parent / "history_item.json")
    if isinstance(item, dict) and isinstance(item.get("workspace"), str):
        return str(item["workspace"])
    history = _read_json(path.parent.parent.parent / "state" / "taskHistory.json")
    for entry in history if isinstance(history, list) else []:
        if isinstance(entry, dict) and entry.get("id") == task_id:
            for key in ("cwdOnTaskInitialization", "workspace"):
                if isinstance(entry.get(key), str):
                    return str(entry[key])
    return ""


def _manifest_cwd(path: Path) -> str:
    manifest = _read_json(path.parent / f"{path.parent.name}.json")
    if isinstance(manifest, dict):
        for key in ("cwd", "workspace_root"):
            if isinstance(manifest.get(key), str):
                return str(manifest[key])
    return ""


SOURCE = Source(
    name="cline",
    harness="cline",
    roots=(
        ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks",
        "Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/tasks",
        ".cline/data/sessions",
    ),
    patterns=(),
    claims=claims_for("cline"),
    parse_path=partial(parse_task, harness="cline"),
    locate=locate,
)
