"""Field helpers every source shares: timestamps, the workdir and repo facets, tool content."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes.records import Block, fix_surrogates

if TYPE_CHECKING:
    from funes.sources import FileStats


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


def anthropic_blocks(content: Any) -> list[Block]:
    """Anthropic-style message content (Cursor, Cline, Roo, Kilo): a string, or ``text`` /
    ``thinking`` / ``tool_use`` / ``tool_result`` parts; images are not text, and reasoning an
    agent withheld (the literal ``[REDACTED]``) is dropped."""
    if isinstance(content, str):
        return [] if is_blank(content) else [Block("text", content)]
    out = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        ptype = part.get("type")
        if ptype == "text":
            text = part.get("text")
            if isinstance(text, str) and not is_blank(text):
                out.append(Block("text", text))
        elif ptype in ("thinking", "reasoning"):
            text = part.get("thinking", part.get("text"))
            if isinstance(text, str) and not is_blank(text) and text.strip() != "[REDACTED]":
                out.append(Block("thinking", text))
        elif ptype == "tool_use":
            args = part.get("input")
            out.append(
                Block(
                    "tool_use",
                    compact_json({} if args is None else args),
                    opt_str(part.get("name")),
                    opt_str(part.get("id")),
                )
            )
        elif ptype == "tool_result":
            text = flatten_tool_content(part.get("content"))
            if not is_blank(text):
                out.append(Block("tool_result", text, None, opt_str(part.get("tool_use_id"))))
    return out
