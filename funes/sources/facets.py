"""Field helpers every source shares: timestamps, the workdir and repo facets, content blocks,
and the chain that numbers a session's turns."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes.records import Block, Turn, fix_surrogates

if TYPE_CHECKING:
    from funes.sources.base import FileStats


# ---------------------------------------------------------------------------- timestamps


def iso_from_epoch(value: float) -> str:
    """An epoch timestamp as ISO-8601 UTC with milliseconds: `2026-03-04T09:00:02.500Z`.

    Values from 1e11 up are read as milliseconds (1e11 s is the year 5138, 1e11 ms is 1973),
    smaller ones as seconds. Out of range → "".
    """
    try:
        ms = round(value) if abs(value) >= 1e11 else round(value * 1000)
        return _iso(_EPOCH + timedelta(milliseconds=ms))
    except (OverflowError, ValueError):
        return ""


def iso_utc(value: Any) -> str:
    """A timestamp of any common shape (epoch s/ms number, ISO string) as ISO-8601 UTC `Z`.

    An ISO string without an offset is local time of this machine (how Python's
    `datetime.now().isoformat()` writes it). Unparseable strings are kept verbatim; anything
    else gives "".
    """
    if isinstance(value, bool):
        return ""
    if isinstance(value, (int, float)):
        return iso_from_epoch(value)
    if not isinstance(value, str) or not value.strip():
        return ""
    try:
        dt = datetime.fromisoformat(value.strip())
        return _iso(dt if dt.tzinfo is not None else dt.astimezone())
    except (ValueError, OverflowError, OSError):
        return value


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _iso(dt: datetime) -> str:
    dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


# ---------------------------------------------------------------------------- shared facets


def munge_workdir(cwd: Any) -> str | None:
    """Claude Code's project-dir naming: every non-ASCII-alphanumeric char becomes '-'.

    `/home/ubuntu/llama.cpp` → `-home-ubuntu-llama-cpp`. None when nothing usable remains.
    """
    if not isinstance(cwd, str):
        return None
    out = "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd.strip())
    return out if out.strip("-") else None


def workdir_of_path(path: Path) -> str:
    """Fallback workdir: the component after `projects`, else the parent directory's name."""
    parts = path.parts
    for i, part in enumerate(parts[:-1]):
        if part == "projects" and i + 1 < len(parts) - 1:
            return parts[i + 1]
    return path.parent.name


@cache
def repo_of(cwd: str) -> str:
    """`owner/name` of each git remote of the checkout at ``cwd``, sorted, space-joined.

    Any failure (directory gone, not a repository, no git) gives "".
    """
    if not cwd or not os.path.isdir(cwd):
        return ""
    try:
        out = subprocess.run(
            ["git", "-C", cwd, "remote", "-v"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    names = {n for line in out.splitlines() if (n := _owner_name(line))}
    return " ".join(sorted(names))


def _owner_name(remote_line: str) -> str | None:
    fields = remote_line.split()
    if len(fields) < 2:
        return None
    url = fields[1].rstrip("/").removesuffix(".git")
    if "://" in url:
        path = url.split("://", 1)[1].split("/", 1)[1] if "/" in url.split("://", 1)[1] else ""
    elif ":" in url:
        path = url.split(":", 1)[1]
    else:
        path = url
    segs = [s for s in path.split("/") if s]
    return "/".join(segs[-2:]) if len(segs) >= 2 else None


def compact_json(value: Any) -> str:
    """JSON with no spaces, keys in source order, non-ASCII literal (tool inputs as stored)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def flatten_tool_content(content: Any) -> str:
    """A tool result's content: a string as-is; parts → their text joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") == "text":
                t = part.get("text")
                if isinstance(t, str):
                    parts.append(t)
        return "\n".join(parts)
    return ""


def line_id(stats: FileStats, seq: int) -> str:
    """The turn id of a record that carries none usable (missing, empty, not a string): fixed
    by where the record sits — its line and its turn number — so re-reading the file, or a
    grown copy of it, gives the same id, and two such turns never share one. Counted in
    ``stats.repaired`` as ``missing_uuid``."""
    stats.repair(stats.lines, "missing_uuid")
    return f"line{stats.lines}-turn{seq}"


def opt_str(v: Any) -> str | None:
    """``v`` when it is a string, else None (optional string fields of agent records)."""
    return v if isinstance(v, str) else None


def is_blank(text: str) -> bool:
    return not text.strip()


def display_path(path: Path | str) -> str:
    """A path as text that can be written anywhere: a file name that is not valid UTF-8 (read
    by Python with surrogate escapes) has each undecodable byte shown as U+FFFD."""
    s = str(path)
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return fix_surrogates(s)
    return s


def text_part(part: Any) -> Block | None:
    """The ``text`` block of a ``{"type": "text", "text": …}`` part; None for any other part, and
    for text that is blank."""
    if not isinstance(part, dict) or part.get("type") != "text":
        return None
    text = part.get("text")
    return Block("text", text) if isinstance(text, str) and not is_blank(text) else None


def text_blocks(content: Any) -> list[Block]:
    """A string, or the text parts of a part list (images and other parts are not text)."""
    if isinstance(content, str):
        return [] if is_blank(content) else [Block("text", content)]
    return [b for part in content if (b := text_part(part))] if isinstance(content, list) else []


def thinking_block(text: Any) -> Block | None:
    """A ``thinking`` block of ``text``; None when it is not a string, is blank, or is the
    literal ``[REDACTED]`` an agent writes in place of reasoning it withheld."""
    if not isinstance(text, str) or is_blank(text) or text.strip() == "[REDACTED]":
        return None
    return Block("thinking", text)


def tool_blocks(name: str | None, call_id: str | None, args: Any, result: Any) -> list[Block]:
    """A tool call as blocks: ``tool_use`` holding its arguments (compact JSON; a string, such as
    arguments the agent stored raw, as it is) and, once it returned text, ``tool_result``
    (a result that is not a string as compact JSON)."""
    use = args if isinstance(args, str) else compact_json({} if args is None else args)
    out = [Block("tool_use", use, name, call_id)]
    if result is not None and not isinstance(result, str):
        result = compact_json(result)
    if isinstance(result, str) and not is_blank(result):
        out.append(Block("tool_result", result, name, call_id))
    return out


def anthropic_blocks(content: Any) -> list[Block]:
    """Anthropic-style message content (Cursor, Cline, Roo, Kilo, and pi's assistant messages):
    a string, or ``text`` / ``thinking`` / ``tool_use`` / ``tool_result`` parts (pi names a call
    ``toolCall`` and its input ``arguments``); images are not text, and reasoning an agent
    withheld (the literal ``[REDACTED]``) is dropped."""
    if isinstance(content, str):
        return text_blocks(content)
    out = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        ptype = part.get("type")
        if ptype == "text":
            if b := text_part(part):
                out.append(b)
        elif ptype in ("thinking", "reasoning"):
            if b := thinking_block(part.get("thinking", part.get("text"))):
                out.append(b)
        elif ptype in ("tool_use", "toolCall"):
            name, call_id = opt_str(part.get("name")), opt_str(part.get("id"))
            out += tool_blocks(name, call_id, part.get("input", part.get("arguments")), None)
        elif ptype == "tool_result":
            text = flatten_tool_content(part.get("content"))
            if not is_blank(text):
                out.append(Block("tool_result", text, None, opt_str(part.get("tool_use_id"))))
    return out


# ---------------------------------------------------------------------------- turn chains

_PREVIOUS = object()


@dataclass
class TurnChain:
    """The turns of one session, in order: each gets the next ``seq`` and, unless the record
    names its own parent, the previous turn's id as its parent (how a linear transcript links)."""

    harness: str
    session_id: str
    workdir: str
    repo: str
    source_path: str
    seq: int = 0
    prev: str | None = None

    def turn(
        self, uuid: str, role: str, ts: str, blocks: list[Block], parent: Any = _PREVIOUS
    ) -> Turn:
        up = self.prev if parent is _PREVIOUS else parent
        where = (self.workdir, self.repo, self.source_path)
        t = Turn(self.harness, self.session_id, uuid, up, self.seq, ts, role, *where, blocks)
        self.seq += 1
        self.prev = uuid
        return t
