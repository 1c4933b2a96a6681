"""`.funes.jsonl`: the producer contract — turns written by another tool, in funes' own shape.

How a conversation reaches funes when funes has no parser for its source (an agent it does not
read, an issue tracker, a chat export): a *producer* writes one turn per line, and funes indexes
the file from any path given to `funes index` (never from a sweep). Compatible with the
reference implementation's format (docs/funes-jsonl.md there; docs/sources.md here).

A turn: ``format`` (integer, ``1`` when absent), ``session_id``, ``turn_uuid`` (strings, no
``:``), ``seq`` (integer, dense from 0), ``ts`` (RFC 3339 in UTC with a ``Z``), ``role``,
``harness`` (``[a-z0-9_-]+``, the stored facet), optional ``cwd`` (the workdir and repo facets
come from it) and ``parent_uuid``, and ``blocks``: ``{block_type, text, tool_name?,
tool_use_id?}``, ``block_type`` one of ``text``, ``thinking``, ``tool_use``, ``tool_result``.

A file is accepted or refused **whole**: a line that is not a JSON object, an unknown field (on
a turn or a block), a missing required field, a wrong type, an unknown ``block_type``, a ``ts``
not in UTC ``Z``, a ``format`` funes does not know, a ``:`` in an id, or a harness outside
``[a-z0-9_-]`` refuses it, with one error naming the file, the line and the field; nothing
from it is stored. Blocks are kept exactly as given (a blank one included), so chunk ids —
``session:turn:block_idx:split_idx``, never the text — are the producer's to keep stable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from funes.errors import FunesError
from funes.records import Block, TooDeep, Turn, load_json
from funes.sources import FileStats, Source, display_path, munge_workdir, repo_of

SUFFIX = ".funes.jsonl"
FORMATS = (1,)
BLOCK_TYPES = ("text", "thinking", "tool_use", "tool_result")
HARNESS = re.compile(r"[a-z0-9_-]+")
# field → (required, type)
TURN_FIELDS: dict[str, tuple[bool, type | tuple[type, ...]]] = {
    "format": (False, int),
    "session_id": (True, str),
    "turn_uuid": (True, str),
    "seq": (True, int),
    "ts": (True, str),
    "role": (True, str),
    "harness": (True, str),
    "cwd": (False, str),
    "parent_uuid": (False, str),
    "blocks": (True, list),
}
BLOCK_FIELDS: dict[str, tuple[bool, type | tuple[type, ...]]] = {
    "block_type": (True, str),
    "text": (True, str),
    "tool_name": (False, str),
    "tool_use_id": (False, str),
}


class Refused(FunesError):
    """A `.funes.jsonl` file refused whole: its first bad line and why."""


def claims(f: Path) -> bool:
    return f.name.endswith(SUFFIX)


def _check_fields(obj: dict[str, Any], spec: dict[str, Any], what: str) -> str | None:
    for key in obj:
        if key not in spec:
            return f"unknown field {key!r} on {what}"
    for key, (required, kind) in spec.items():
        if key not in obj or obj[key] is None:
            if required:
                return f"missing field {key!r} on {what}"
            continue
        value = obj[key]
        if isinstance(value, bool) or not isinstance(value, kind):
            return f"field {key!r} on {what} must be {_type_name(kind)}"
    return None


def _type_name(kind: type | tuple[type, ...]) -> str:
    names: dict[Any, str] = {str: "a string", int: "an integer", list: "an array"}
    return names.get(kind, "valid")


def utc_z(ts: str) -> bool:
    """RFC 3339 in UTC with a ``Z`` suffix: ``2026-09-18T09:41:07Z`` (fractions allowed)."""
    if not ts.endswith("Z") or "T" not in ts:
        return False
    try:
        datetime.fromisoformat(ts[:-1] + "+00:00")
    except ValueError:
        return False
    return True


def problem(rec: Any) -> str | None:
    """What makes one record unacceptable, or None."""
    if not isinstance(rec, dict):
        return "not a JSON object"
    why = _check_fields(rec, TURN_FIELDS, "a turn")
    if why:
        return why
    if rec.get("format", 1) not in FORMATS:
        return f"format {rec['format']} is not one funes knows ({', '.join(map(str, FORMATS))})"
    for key in ("session_id", "turn_uuid"):
        if ":" in rec[key] or not rec[key].strip():
            return f"{key} must be non-empty and may not contain ':'"
    if rec["seq"] < 0:
        return "seq must be 0 or more"
    if not utc_z(rec["ts"]):
        return f"ts {rec['ts']!r} is not RFC 3339 in UTC with a Z (2026-09-18T09:41:07Z)"
    if not HARNESS.fullmatch(rec["harness"]):
        return f"harness {rec['harness']!r} must be lowercase letters, digits, '-' or '_'"
    for i, block in enumerate(rec["blocks"]):
        if not isinstance(block, dict):
            return f"block {i} is not a JSON object"
        why = _check_fields(block, BLOCK_FIELDS, f"a block ({i})")
        if why:
            return why
        if block["block_type"] not in BLOCK_TYPES:
            return f"block {i}: block_type {block['block_type']!r} is not one of {', '.join(BLOCK_TYPES)}"
    return None


def read(path: Path, stats: FileStats) -> list[dict[str, Any]]:
    """Every record of the file, validated; Refused at the first bad line."""
    name = display_path(path)
    records: list[dict[str, Any]] = []
    with open(path, "rb") as fp:
        for lineno, raw in enumerate(fp, 1):
            stats.lines = lineno
            line = raw.strip()
            if not line:
                continue
            try:
                rec, _ = load_json(line)
            except (UnicodeDecodeError, TooDeep, json.JSONDecodeError, ValueError):
                rec = None
                why: str | None = "not valid JSON"
            else:
                why = problem(rec)
            if why:
                raise Refused(
                    f"{name}: line {lineno}: {why} — a .funes.jsonl file is accepted or refused "
                    "whole; nothing from it was stored"
                )
            records.append(rec)
    if not records:
        raise Refused(f"{name}: no turns")
    stats.records_kept = len(records)
    return records


def parse_path(path: Path, stats: FileStats) -> Iterator[Turn]:
    records = read(path, stats)  # all of it validated before the first turn is yielded
    for rec in records:
        cwd = rec.get("cwd") or ""
        yield Turn(
            harness=rec["harness"],
            session_id=rec["session_id"],
            turn_uuid=rec["turn_uuid"],
            parent_uuid=rec.get("parent_uuid"),
            seq=rec["seq"],
            ts=rec["ts"],
            role=rec["role"],
            workdir=munge_workdir(cwd) or rec["harness"],
            repo=repo_of(cwd) if cwd else "",
            source_path=str(path),
            blocks=[
                Block(b["block_type"], b["text"], b.get("tool_name"), b.get("tool_use_id"))
                for b in rec["blocks"]
            ],
        )


SOURCE = Source(
    name="funes-jsonl",
    harness="funes-jsonl",  # each turn names its own
    aliases=("funes_jsonl",),
    patterns=(),
    claims=claims,
    parse_path=parse_path,
    sniff_order=10,
)
