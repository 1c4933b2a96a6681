"""Whole-session envelopes, what `funes ingest` takes (the reference's proposed `ingest`).

An envelope is one session: ``{"version": 1, "harness", "session_id", "cwd"?, "turns": [...]}``,
each turn ``{"turn_uuid", "seq"?, "ts", "role", "parent_uuid"?, "blocks": [...]}`` with the
blocks of the producer contract (``funes.sources.funes_jsonl``: ``block_type``, ``text``,
``tool_name``?, ``tool_use_id``?). An input holds one envelope, or several, one per line. It is
validated whole like a ``.funes.jsonl`` file: an unknown field, a missing or mistyped one, a
``ts`` not in UTC ``Z``, a harness outside ``[a-z0-9_-]`` refuses the input with one line naming
the envelope, the turn and the field, and nothing of it is stored.

Ids are namespaced by harness: the stored session id is ``<harness>:<session_id>`` (so two
tools' ids never meet); a turn without ``seq`` takes its position. A file named
``*.funes-envelope.json`` given to `funes index` is read the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from funes.errors import FunesError
from funes.records import Block, TooDeep, Turn, load_json
from funes.sources import FileStats, Source, display_path, munge_workdir, repo_of
from funes.sources.funes_jsonl import BLOCK_FIELDS, BLOCK_TYPES, HARNESS, _check_fields, utc_z

SUFFIX = ".funes-envelope.json"
MAX_BYTES = 64 * 1024 * 1024
VERSIONS = (1,)
ENVELOPE_FIELDS: dict[str, tuple[bool, type]] = {
    "version": (True, int),
    "harness": (True, str),
    "session_id": (True, str),
    "cwd": (False, str),
    "turns": (True, list),
}
TURN_FIELDS: dict[str, tuple[bool, type]] = {
    "turn_uuid": (True, str),
    "seq": (False, int),
    "ts": (True, str),
    "role": (True, str),
    "parent_uuid": (False, str),
    "blocks": (True, list),
}


def claims(f: Path) -> bool:
    return f.name.endswith(SUFFIX)


def envelopes(data: bytes, name: str) -> list[dict[str, Any]]:
    """The envelopes of one input, validated; FunesError naming the first problem."""
    if len(data) > MAX_BYTES:
        raise FunesError(f"{name}: more than 64 MiB in one input; send one session per input")
    text = data.removeprefix(b"\xef\xbb\xbf")
    if not text.strip():
        raise FunesError(f"{name}: empty input, no session")
    try:
        value, _ = load_json(text)
        docs = value if isinstance(value, list) else [value]
    except (json.JSONDecodeError, UnicodeDecodeError, TooDeep, ValueError):
        docs = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                docs.append(load_json(line)[0])
            except (json.JSONDecodeError, UnicodeDecodeError, TooDeep, ValueError):
                raise FunesError(f"{name}: line {lineno}: not valid JSON") from None
    for i, doc in enumerate(docs, 1):
        why = _problem(doc)
        if why:
            where = f"envelope {i}" if len(docs) > 1 else "the envelope"
            raise FunesError(f"{name}: {where}: {why} — nothing of this input was stored")
    return docs


def _problem(doc: Any) -> str | None:
    if not isinstance(doc, dict):
        return "not a JSON object"
    why = _check_fields(doc, ENVELOPE_FIELDS, "an envelope")
    if why:
        return why
    if doc["version"] not in VERSIONS:
        return f"version {doc['version']} is not one funes knows (1)"
    if not HARNESS.fullmatch(doc["harness"]):
        return f"harness {doc['harness']!r} must be lowercase letters, digits, '-' or '_'"
    if not doc["session_id"].strip():
        return "session_id is empty"
    for n, turn in enumerate(doc["turns"]):
        if not isinstance(turn, dict):
            return f"turn {n} is not a JSON object"
        why = _check_fields(turn, TURN_FIELDS, f"a turn ({n})")
        if why:
            return why
        if not utc_z(turn["ts"]):
            return f"turn {n}: ts {turn['ts']!r} is not RFC 3339 in UTC with a Z"
        for i, block in enumerate(turn["blocks"]):
            if not isinstance(block, dict):
                return f"turn {n}: block {i} is not a JSON object"
            why = _check_fields(block, BLOCK_FIELDS, f"a block ({n}.{i})")
            if why:
                return why
            if block["block_type"] not in BLOCK_TYPES:
                return f"turn {n}: block_type {block['block_type']!r} is not one of {', '.join(BLOCK_TYPES)}"
    return None


def turns_of(doc: dict[str, Any], source_path: str) -> Iterator[Turn]:
    harness, cwd = doc["harness"], doc.get("cwd") or ""
    workdir, repo = munge_workdir(cwd) or harness, repo_of(cwd) if cwd else ""
    for n, t in enumerate(doc["turns"]):
        yield Turn(
            harness=harness,
            session_id=f"{harness}:{doc['session_id']}",
            turn_uuid=t["turn_uuid"],
            parent_uuid=t.get("parent_uuid"),
            seq=t.get("seq", n),
            ts=t["ts"],
            role=t["role"],
            workdir=workdir,
            repo=repo,
            source_path=source_path,
            blocks=[
                Block(b["block_type"], b["text"], b.get("tool_name"), b.get("tool_use_id"))
                for b in t["blocks"]
            ],
        )


def parse_path(path: Path, stats: FileStats) -> Iterator[Turn]:
    docs = envelopes(path.read_bytes(), display_path(path))
    stats.records_kept = sum(len(d["turns"]) for d in docs)
    for doc in docs:
        yield from turns_of(doc, str(path))


SOURCE = Source(
    name="envelope",
    harness="envelope",  # each envelope names its own
    patterns=(),
    claims=claims,
    parse_path=parse_path,
    sniff_order=10,
)
