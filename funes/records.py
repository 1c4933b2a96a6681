"""The records that cross funes pipes: turns and chunks, and their JSON form.

One record per line, UTF-8 JSON. Every record carries ``kind`` and ``v`` (the schema
version). Fields a stage does not know are kept in ``extra`` and written back after the
known ones, so a record survives any number of stages unchanged. The canonical form —
known fields in contract order, then unknown ones in the order they arrived, compact
separators, non-ASCII written literally — round-trips byte for byte.

See docs/records.md for every field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1

BLOCK_TYPES = ("text", "thinking", "tool_use", "tool_result")

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


class RecordError(ValueError):
    """A line that is not a usable record: the message says which field is wrong."""


# ---------------------------------------------------------------------------- hostile JSON

# Deeper than this, a value is refused: every later stage (json.dumps, Arrow, the chunker) may
# recurse over it, and real transcripts nest a few dozen levels at most.
MAX_DEPTH = 200


class TooDeep(RecordError):
    """A JSON value nested deeper than :data:`MAX_DEPTH` levels."""

    def __init__(self) -> None:
        super().__init__(f"JSON nested deeper than {MAX_DEPTH} levels")


# A `\\uD800`-`\\uDFFF` escape: the only way JSON text holds a surrogate. (A pair decodes to one
# character; a lone one, or an escaped backslash before `u`, only costs a walk.)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_LINE_BREAKS = re.compile("[\x85\u2028\u2029]")


def load_json(text: str | bytes) -> tuple[Any, int]:
    """``json.loads`` for untrusted lines: (value, strings repaired).

    A lone UTF-16 surrogate escape (``"\\ud83d"``: an emoji cut in half, seen in real Claude
    Code sessions) decodes to a string that cannot be written as UTF-8; each becomes U+FFFD and
    the strings so repaired are counted. Raises :class:`TooDeep` for a value nested deeper than
    :data:`MAX_DEPTH` (never ``RecursionError``), ``json.JSONDecodeError`` for invalid JSON and
    ``UnicodeDecodeError`` for bytes that are not UTF-8.
    """
    raw = text if isinstance(text, bytes) else None
    if raw is not None:
        text = raw.decode("utf-8")
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep() from None
    return check_value(value, raw if raw is not None else text)


def check_value(value: Any, source: str | bytes) -> tuple[Any, int]:
    """The depth check and surrogate repair of :func:`load_json` for a value parsed from
    ``source`` (its JSON text, or that text's UTF-8 bytes: cheaper to scan)."""
    # Scans of the raw bytes keep both walks off the hot path: a value cannot nest deeper than
    # its brackets, nor hold a surrogate without a surrogate escape (a regex finds one faster
    # than `in`: JSON is full of backslashes).
    raw = source if isinstance(source, bytes) else source.encode("utf-8", "surrogatepass")
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        raise TooDeep()
    if _SURROGATE_ESCAPE.search(raw):
        return _repair(value)
    return value, 0


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether containers nest more than ``limit`` levels (level by level: a record is a few
    dozen containers, so this costs microseconds; JSON decodes to exact dicts and lists)."""
    level = [value] if type(value) in _CONTAINERS else []
    depth = 1
    while level:
        if depth > limit:
            return True
        nxt: list[Any] = []
        for v in level:
            nxt += [x for x in (v.values() if type(v) is dict else v) if type(x) in _CONTAINERS]
        level = nxt
        depth += 1
    return False


_CONTAINERS = (dict, list)


def fix_surrogates(s: str) -> str:
    """``s`` with every lone surrogate (or surrogate-escaped byte) replaced by U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", s)


def _repair(value: Any) -> tuple[Any, int]:
    if isinstance(value, str):
        fixed = fix_surrogates(value)
        return fixed, int(fixed != value)
    if isinstance(value, list):
        n = 0
        out = []
        for x in value:
            y, k = _repair(x)
            out.append(y)
            n += k
        return out, n
    if isinstance(value, dict):
        n = 0
        d = {}
        for key, x in value.items():
            k2, a = _repair(key)
            y, b = _repair(x)
            d[k2] = y
            n += a + b
        return d, n
    return value, 0


@dataclass(slots=True)
class Block:
    type: str
    text: str
    tool_name: str | None = None
    tool_use_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "type": self.type,
            "text": self.text,
            "tool_name": self.tool_name,
            "tool_use_id": self.tool_use_id,
        }
        _merge_extra(d, self.extra)
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Block:
        if not isinstance(d, dict):
            raise RecordError("block is not a JSON object")
        return cls(
            type=_str(d, "type", required=True),
            text=_str(d, "text", required=True),
            tool_name=_opt_str(d, "tool_name"),
            tool_use_id=_opt_str(d, "tool_use_id"),
            extra=_extra(d, _BLOCK_FIELDS),
        )


@dataclass(slots=True)
class Turn:
    """One message of a session, normalised across agents."""

    harness: str
    session_id: str
    turn_uuid: str
    parent_uuid: str | None
    seq: int
    ts: str
    role: str
    workdir: str
    repo: str
    source_path: str
    blocks: list[Block]
    extra: dict[str, Any] = field(default_factory=dict)
    v: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "kind": "turn",
            "v": self.v,
            "harness": self.harness,
            "session_id": self.session_id,
            "turn_uuid": self.turn_uuid,
            "parent_uuid": self.parent_uuid,
            "seq": self.seq,
            "ts": self.ts,
            "role": self.role,
            "workdir": self.workdir,
            "repo": self.repo,
            "source_path": self.source_path,
            "blocks": [b.to_dict() for b in self.blocks],
        }
        _merge_extra(d, self.extra)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Turn:
        blocks = d.get("blocks")
        if not isinstance(blocks, list):
            raise RecordError("turn has no 'blocks' list")
        return cls(
            harness=_str(d, "harness"),
            session_id=_str(d, "session_id", required=True),
            turn_uuid=_str(d, "turn_uuid", required=True),
            parent_uuid=_opt_str(d, "parent_uuid"),
            seq=_int(d, "seq"),
            ts=_str(d, "ts"),
            role=_str(d, "role"),
            workdir=_str(d, "workdir"),
            repo=_str(d, "repo"),
            source_path=_str(d, "source_path"),
            blocks=[Block.from_dict(b) for b in blocks],
            extra=_extra(d, _TURN_FIELDS),
            v=_version(d),
        )


@dataclass(slots=True)
class Chunk:
    """One stored, searchable piece of one block (the unit of recall)."""

    id: str
    text: str
    session_id: str
    turn_uuid: str
    parent_uuid: str | None
    seq: int
    ts: str
    role: str
    block_type: str
    block_idx: int
    split_idx: int
    tool_name: str | None
    harness: str
    workdir: str
    repo: str
    source_path: str
    vector: list[float] | None = None
    model: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    v: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "kind": "chunk",
            "v": self.v,
            "id": self.id,
            "text": self.text,
            "session_id": self.session_id,
            "turn_uuid": self.turn_uuid,
            "parent_uuid": self.parent_uuid,
            "seq": self.seq,
            "ts": self.ts,
            "role": self.role,
            "block_type": self.block_type,
            "block_idx": self.block_idx,
            "split_idx": self.split_idx,
            "tool_name": self.tool_name,
            "harness": self.harness,
            "workdir": self.workdir,
            "repo": self.repo,
            "source_path": self.source_path,
        }
        if self.vector is not None:
            d["vector"] = self.vector
        if self.model is not None:
            d["model"] = self.model
        _merge_extra(d, self.extra)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Chunk:
        vector = d.get("vector")
        if vector is not None and not (
            isinstance(vector, list) and all(isinstance(x, (int, float)) for x in vector)
        ):
            raise RecordError("chunk 'vector' is not a list of numbers")
        return cls(
            id=_str(d, "id", required=True),
            text=_str(d, "text", required=True),
            session_id=_str(d, "session_id", required=True),
            turn_uuid=_str(d, "turn_uuid", required=True),
            parent_uuid=_opt_str(d, "parent_uuid"),
            seq=_int(d, "seq"),
            ts=_str(d, "ts"),
            role=_str(d, "role"),
            block_type=_str(d, "block_type"),
            block_idx=_int(d, "block_idx"),
            split_idx=_int(d, "split_idx"),
            tool_name=_opt_str(d, "tool_name"),
            harness=_str(d, "harness"),
            workdir=_str(d, "workdir"),
            repo=_str(d, "repo"),
            source_path=_str(d, "source_path"),
            vector=vector,
            model=_opt_str(d, "model"),
            extra=_extra(d, _CHUNK_FIELDS),
            v=_version(d),
        )


Record = Turn | Chunk

_BLOCK_FIELDS = frozenset(("type", "text", "tool_name", "tool_use_id"))
_TURN_FIELDS = frozenset(
    ("kind", "v", "harness", "session_id", "turn_uuid", "parent_uuid", "seq", "ts", "role",
     "workdir", "repo", "source_path", "blocks")
)  # fmt: skip
_CHUNK_FIELDS = frozenset(
    ("kind", "v", "id", "text", "session_id", "turn_uuid", "parent_uuid", "seq", "ts", "role",
     "block_type", "block_idx", "split_idx", "tool_name", "harness", "workdir", "repo",
     "source_path", "vector", "model")
)  # fmt: skip

_KINDS: dict[str, Any] = {"turn": Turn, "chunk": Chunk}


def dumps(record: Record | dict[str, Any]) -> str:
    """The canonical JSON line (without newline) for a record or a plain dict.

    Non-ASCII is written literally, except the three characters that line-oriented readers
    (Python's ``str.splitlines``, JavaScript before ES2019) take for line breaks: U+0085, U+2028
    and U+2029 are escaped, so no text inside a record can split its line in two."""
    line = _dumps(record if isinstance(record, dict) else record.to_dict())
    if not _LINE_BREAKS.search(line):
        return line
    return _LINE_BREAKS.sub(lambda m: f"\\u{ord(m[0]):04x}", line)


def loads(line: str | bytes) -> Record | dict[str, Any]:
    """Parse one JSON line into a Turn or Chunk; other kinds come back as plain dicts.

    Raises RecordError (a ValueError) for invalid JSON, a non-object, a missing ``kind``
    or a known kind missing a required field.
    """
    try:
        d, _ = load_json(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise RecordError(f"invalid JSON ({_short(e)})") from None
    return from_dict(d)


def from_dict(d: Any) -> Record | dict[str, Any]:
    if not isinstance(d, dict):
        raise RecordError("not a JSON object")
    kind = d.get("kind")
    if not isinstance(kind, str):
        raise RecordError("no 'kind' field")
    cls = _KINDS.get(kind)
    if cls is None:
        return d
    rec: Record = cls.from_dict(d)
    return rec


def _short(e: Exception) -> str:
    if isinstance(e, json.JSONDecodeError):
        return f"{e.msg} at column {e.colno}"
    return "not UTF-8"


def _merge_extra(d: dict[str, Any], extra: dict[str, Any]) -> None:
    for k, val in extra.items():
        if k not in d:
            d[k] = val


def _extra(d: dict[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {k: val for k, val in d.items() if k not in known}


def _version(d: dict[str, Any]) -> int:
    v = d.get("v", SCHEMA_VERSION)
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise RecordError("'v' must be a positive integer")
    return v


def _str(d: dict[str, Any], key: str, required: bool = False) -> str:
    val = d.get(key)
    if isinstance(val, str):
        return val
    if val is None and not required:
        return ""
    raise RecordError(f"'{key}' must be a string" if val is not None else f"missing '{key}'")


def _opt_str(d: dict[str, Any], key: str) -> str | None:
    val = d.get(key)
    if val is None or isinstance(val, str):
        return val
    raise RecordError(f"'{key}' must be a string or null")


def _int(d: dict[str, Any], key: str) -> int:
    val = d.get(key, 0)
    if isinstance(val, int) and not isinstance(val, bool):
        return val
    raise RecordError(f"'{key}' must be an integer")
