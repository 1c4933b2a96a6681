"""The records that cross funes pipes — turns, chunks, hits, misses and query lines — and
their JSON form, derived from their dataclasses.

One record per line, UTF-8 JSON. Every record funes writes carries ``kind`` and ``v`` (the
schema version). Fields a stage does not know are kept in ``extra`` and written back after the
known ones, so a record survives any number of stages unchanged. The canonical form —
known fields in contract order, then unknown ones in the order they arrived, compact
separators, non-ASCII written literally — round-trips byte for byte.

See docs/records.md for every field.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from types import MappingProxyType
from typing import Any, ClassVar, Self

SCHEMA_VERSION = 1

BLOCK_TYPES = ("text", "thinking", "tool_use", "tool_result")

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
# One JSON value in the canonical form (line breaks not escaped: see `dumps`), for a writer that
# assembles a record's line from parts it reuses (funes-chunk's chunk lines).
dumps_value = _dumps


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


class NumberTooLong(RecordError):
    """A JSON integer with more digits than Python converts (4,300 by default): converting
    one costs time quadratic in its length, so Python refuses, and so does funes — the line is
    one bad line, never the end of the run."""

    def __init__(self) -> None:
        super().__init__("a number too long to read (more than 4,300 digits)")


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
    :data:`MAX_DEPTH` (never ``RecursionError``), :class:`NumberTooLong` for an integer too
    long to convert, ``json.JSONDecodeError`` for invalid JSON and ``UnicodeDecodeError`` for
    bytes that are not UTF-8.
    """
    raw = text if isinstance(text, bytes) else None
    if raw is not None:
        text = raw.decode("utf-8")
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep() from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # the only other one json raises: int()'s digit limit
        raise NumberTooLong() from None
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


# ---------------------------------------------------------------------------- fields


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


# ---------------------------------------------------------------------------- record types
#
# A record's JSON form is derived from its dataclass: ``kind`` and ``v`` first (for records that
# have a kind), then its fields in declaration order, then the unknown fields it arrived with
# (``extra``). Field metadata says what a declaration cannot:
#   required  reading refuses a record without this string
#   omitted   written only when it differs from its default
#   check     a test of the whole line, run before any field is read
#   read      how the field is read, when its type does not say (str, str | None, int do)
#   write     how the value is written, when it is not JSON as it stands
#   inline    a mapping written key by key at the record's own level (these keys)
#   also      other keys this field is read from (so they are not unknown fields)
#   option    a QueryLine key that sets a search option: a "number" or a "filter"

REQUIRED: Mapping[str, Any] = MappingProxyType({"required": True})
OMITTED: Mapping[str, Any] = MappingProxyType({"omitted": True})

Reader = Callable[[dict[str, Any], str], Any]


class _Field:
    """How one field is read from and written to JSON (see the metadata above)."""

    __slots__ = ("check", "default", "inline", "name", "omitted", "read", "type", "write")

    def __init__(self, f: Field[Any]) -> None:
        m = f.metadata
        self.name = f.name
        self.type = str(f.type)  # the annotation, as written
        self.default: Any = None
        if f.default is not MISSING:
            self.default = f.default
        elif f.default_factory is not MISSING:
            self.default = f.default_factory()
        self.read: Reader = m.get("read") or _reader(
            self.type, bool(m.get("required")), self.default
        )
        self.write: Callable[[Any], Any] | None = m.get("write")
        self.check: Callable[[dict[str, Any]], None] | None = m.get("check")
        self.omitted = bool(m.get("omitted"))
        self.inline: tuple[str, ...] = tuple(m.get("inline", ()))


def _derive_then_read(cls: Any, d: dict[str, Any]) -> Any:
    return _derive(cls)(cls, d)


class JsonRecord:
    """What every record type shares: its JSON form, derived from its dataclass fields the
    first time a record of its type is read or written."""

    __slots__ = ()
    KIND: ClassVar[str | None] = None  # the "kind" of its lines; None: neither kind nor v
    _LAYOUT: ClassVar[tuple[_Field, ...]]
    _KNOWN: ClassVar[frozenset[str]]  # every key that is not an unknown field
    _FROM_DICT: ClassVar[Callable[[Any, dict[str, Any]], Any]] = _derive_then_read
    extra: dict[str, Any]
    v: int

    def to_dict(self) -> dict[str, Any]:
        _derive(type(self))  # replaces this method with the type's own
        return self.to_dict()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        rec: Self = cls._FROM_DICT(cls, d)
        return rec


def _derive(cls: type[JsonRecord]) -> Callable[[Any, dict[str, Any]], Any]:
    """Derive the JSON layout of the record dataclass ``cls`` from its fields, and compile its
    conversions (as :mod:`dataclasses` compiles ``__init__``: a chunk line is read or written
    per chunk, and straight-line code costs what hand-written conversions cost). Done on first
    use, so a command pays only for the record types it handles; returns ``from_dict``."""
    if "_FROM_DICT" in cls.__dict__:
        return cls._FROM_DICT
    own = [f for f in fields(cls) if f.name not in ("extra", "v")]  # type: ignore[arg-type]
    layout = tuple(_Field(f) for f in own)
    known: set[str] = set() if cls.KIND is None else {"kind", "v"}
    for f in own:
        known.update(f.metadata.get("inline") or (f.name,), f.metadata.get("also", ()))
    cls._LAYOUT = layout
    cls._KNOWN = frozenset(known)
    to_dict, from_dict = _compile(cls.KIND, layout, cls._KNOWN)
    setattr(cls, "to_dict", to_dict)  # noqa: B010 — mypy refuses assigning to a method
    cls._FROM_DICT = from_dict
    return from_dict


def _compile(
    kind: str | None, layout: tuple[_Field, ...], known: frozenset[str]
) -> tuple[Callable[[Any], dict[str, Any]], Callable[[Any, dict[str, Any]], Any]]:
    """``to_dict`` and ``from_dict`` for ``layout``, as straight-line code."""
    ns: dict[str, Any] = {"KIND": kind, "KNOWN": known, "_extra": _extra,
                          "_version": _version, "_merge_extra": _merge_extra,
                          "_is_default": _is_default}  # fmt: skip
    entries = ['"kind": KIND', '"v": rec.v'] if kind is not None else []
    after: list[str] = []  # once a field may be left out, the later ones follow in order
    checks: list[str] = []
    args: list[str] = []
    for i, f in enumerate(layout):
        ns[f"read{i}"], ns[f"write{i}"], ns[f"check{i}"] = f.read, f.write, f.check
        ns[f"default{i}"] = f.default
        value = f"rec.{f.name}" if f.write is None else f"write{i}(rec.{f.name})"
        if f.check is not None:
            checks.append(f"    check{i}(d)")
        if f.inline:
            pairs = [(repr(k), f"rec.{f.name}.get({k!r})") for k in f.inline]
            args.append(f"{f.name}={{{', '.join(f'{k!r}: d.get({k!r})' for k in f.inline)}}}")
        else:
            pairs = [(repr(f.name), value)]
            args.append(f"{f.name}=read{i}(d, {f.name!r})")
        if f.omitted:
            if f.default is None or isinstance(f.default, bool):  # None, True, False: by identity
                after.append(f"    if rec.{f.name} is not default{i}:")
            else:
                after.append(f"    if not _is_default(rec.{f.name}, default{i}):")
            after.append(f"        d[{f.name!r}] = {value}")
        elif after:
            after += [f"    d[{k}] = {v}" for k, v in pairs]
        else:
            entries += [f"{k}: {v}" for k, v in pairs]
    args.append("extra=_extra(d, KNOWN)")
    if kind is not None:
        args.append("v=_version(d)")
    source = "\n".join([
        "def to_dict(rec):",
        f"    d = {{{', '.join(entries)}}}",
        *after,
        "    _merge_extra(d, rec.extra)",
        "    return d",
        "def from_dict(cls, d):",
        *checks,
        f"    return cls({', '.join(args)})",
    ])  # fmt: skip
    exec(source, ns)  # the source is built above from field names only
    return ns["to_dict"], ns["from_dict"]


def _reader(annotation: str, required: bool, default: Any) -> Reader:
    if annotation == "str":
        return _required_str if required else _str
    if annotation == "str | None":
        return _opt_str
    if annotation == "int":
        return _int

    def read(d: dict[str, Any], key: str) -> Any:
        return d[key] if key in d else copy.copy(default)

    return read


def _is_default(val: Any, default: Any) -> bool:
    return val is default or (type(val) is type(default) and val == default)


def _required_str(d: dict[str, Any], key: str) -> str:
    return _str(d, key, required=True)


@dataclass(slots=True)
class Block(JsonRecord):
    type: str = field(metadata=REQUIRED)
    text: str = field(metadata=REQUIRED)
    tool_name: str | None = None
    tool_use_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Any) -> Self:
        if not isinstance(d, dict):
            raise RecordError("block is not a JSON object")
        rec: Self = cls._FROM_DICT(cls, d)
        return rec


def _has_blocks(d: dict[str, Any]) -> None:
    if not isinstance(d.get("blocks"), list):
        raise RecordError("turn has no 'blocks' list")


@dataclass(slots=True)
class Turn(JsonRecord):
    """One message of a session, normalised across agents."""

    KIND = "turn"
    harness: str
    session_id: str = field(metadata=REQUIRED)
    turn_uuid: str = field(metadata=REQUIRED)
    parent_uuid: str | None
    seq: int
    ts: str
    role: str
    workdir: str
    repo: str
    source_path: str
    blocks: list[Block] = field(
        metadata={
            "check": _has_blocks,
            "read": lambda d, key: [Block.from_dict(b) for b in d[key]],
            "write": lambda blocks: [b.to_dict() for b in blocks],
        }
    )
    extra: dict[str, Any] = field(default_factory=dict)
    v: int = SCHEMA_VERSION


def _vector_is_numbers(d: dict[str, Any]) -> None:
    vector = d.get("vector")
    if vector is None:
        return
    if not (isinstance(vector, list) and all(isinstance(x, (int, float)) for x in vector)):
        raise RecordError("chunk 'vector' is not a list of numbers")
    # inf and nan (JSON `1e999`, Python's `Infinity`/`NaN`), or a number past float32's range
    # (stored as inf): one such element makes every cosine against the memory nan.
    if not all(-FLOAT32_MAX <= x <= FLOAT32_MAX for x in vector):  # nan compares False
        raise RecordError("chunk 'vector' holds a number that is not finite (inf, nan or huge)")


FLOAT32_MAX = 3.4028234663852886e38  # vectors are stored as float32


@dataclass(slots=True)
class Chunk(JsonRecord):
    """One stored, searchable piece of one block (the unit of recall)."""

    KIND = "chunk"
    id: str = field(metadata=REQUIRED)
    text: str = field(metadata=REQUIRED)
    session_id: str = field(metadata=REQUIRED)
    turn_uuid: str = field(metadata=REQUIRED)
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
    # Added by funes-embed.
    vector: list[float] | None = field(
        default=None, metadata={"check": _vector_is_numbers, **OMITTED}
    )
    model: str | None = field(default=None, metadata=OMITTED)
    extra: dict[str, Any] = field(default_factory=dict)
    v: int = SCHEMA_VERSION

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Chunk:
        """A chunk from a table row, whose columns may all be null: a null string field is
        ``""``, a null number ``0``, an optional field stays null; the vector becomes a list."""
        _derive(cls)
        kw: dict[str, Any] = {f.name: row.get(f.name) for f in cls._LAYOUT}
        for f in cls._LAYOUT:
            if kw[f.name] is None and f.type in _NULL:
                kw[f.name] = _NULL[f.type]
        if kw["vector"] is not None:
            kw["vector"] = list(kw["vector"])
        return cls(**kw)


_NULL = {"str": "", "int": 0}  # what Chunk.from_row makes of a null

# The fields every chunk carries (``vector`` and ``model`` come later, from funes-embed): what a
# hit shows of its chunk, and what is stored of one besides its vector.
CHUNK_FIELDS = tuple(
    f.name for f in fields(Chunk) if f.name not in ("vector", "model", "extra", "v")
)


@dataclass(slots=True, kw_only=True)
class HitRecord(JsonRecord):
    """One answer of `funes-query` / `funes recall --json`: a chunk and why it was found."""

    KIND = "hit"
    rank: int
    score: float
    scores: dict[str, Any]  # lexical_rank, vector_rank, rerank, relevance, recency
    memory: str  # label of the memory read
    chunk: dict[str, Any] = field(metadata={"inline": CHUNK_FIELDS})  # as stored; never a vector
    neighbors: list[dict[str, Any]]
    # other places holding the same text: session_id, turn_uuid, seq, ts and the get command
    duplicates: list[dict[str, Any]] = field(default_factory=list, metadata=OMITTED)
    # the other chunks of the hit's turn found by the same query (id, seq, block_type,
    # block_idx, split_idx): one hit per turn shows its best chunk
    turn_chunks: list[dict[str, Any]] = field(default_factory=list, metadata=OMITTED)
    trusted: bool = field(default=True, metadata=OMITTED)  # False: from a shared memory
    verdict: str
    answerable: float | None = field(default=None, metadata=OMITTED)
    query: str
    query_id: Any = field(default=None, metadata=OMITTED)
    extra: dict[str, Any] = field(default_factory=dict)
    v: int = SCHEMA_VERSION


@dataclass(slots=True, kw_only=True)
class MissRecord(JsonRecord):
    """The one answer of a query with no hits."""

    KIND = "miss"
    memory: str
    verdict: str = "weak"
    query: str
    query_id: Any = field(default=None, metadata=OMITTED)
    extra: dict[str, Any] = field(default_factory=dict)
    v: int = SCHEMA_VERSION


def _query_text(d: dict[str, Any], key: str) -> str:
    q = d.get(key)
    if not isinstance(q, str) or not q.strip():
        raise RecordError("needs a non-empty string 'query'")
    return q


def _block_type(d: dict[str, Any], key: str) -> Any:
    return d[key] if d.get(key) is not None else d.get("type")


NUMBER = MappingProxyType({"option": "number"})  # a QueryLine option: a number
FILTER = MappingProxyType({"option": "filter"})  # a QueryLine option: a filter


@dataclass(slots=True)
class QueryLine(JsonRecord):
    """One line of `funes-query`'s input: a question, the ``id`` its answers carry back (as
    ``query_id``), and options that override the command's. Values stay as given (``type`` is
    read as ``block_type``, like ``--type``); :func:`funes.validate.query` checks them."""

    query: str = field(metadata={"read": _query_text})
    id: Any = None
    k: Any = field(default=None, metadata=NUMBER)
    candidates: Any = field(default=None, metadata=NUMBER)
    neighbors: Any = field(default=None, metadata=NUMBER)
    half_life: Any = field(default=None, metadata=NUMBER)
    block_type: Any = field(
        default=None, metadata={**FILTER, "read": _block_type, "also": ("type",)}
    )
    harness: Any = field(default=None, metadata=FILTER)
    workdir: Any = field(default=None, metadata=FILTER)
    repo: Any = field(default=None, metadata=FILTER)
    session: Any = field(default=None, metadata=FILTER)
    since: Any = field(default=None, metadata=FILTER)
    until: Any = field(default=None, metadata=FILTER)
    role: Any = field(default=None, metadata=FILTER)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, line: str | bytes) -> QueryLine:
        """A query line from its JSON text; RecordError says what is wrong with it."""
        try:
            d = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            raise RecordError("invalid JSON") from None
        except ValueError:  # int()'s digit limit
            raise NumberTooLong() from None
        if not isinstance(d, dict):
            raise RecordError("needs a non-empty string 'query'")
        return cls.from_dict(d)

    def options(self) -> dict[str, Any]:
        """The options this line sets (None: not set), keyed as funes.validate.query reads them."""
        return {k: getattr(self, k) for k in QUERY_OPTIONS if getattr(self, k) is not None}


_OPTIONS = [f for f in fields(QueryLine) if "option" in f.metadata]
QUERY_OPTIONS = tuple(f.name for f in _OPTIONS)  # what a query line may set besides query, id
QUERY_NUMBERS = tuple(f.name for f in _OPTIONS if f.metadata["option"] == "number")
FILTERS = tuple(f.name for f in _OPTIONS if f.metadata["option"] == "filter")


Record = Turn | Chunk

_KINDS: dict[str, Any] = {"turn": Turn, "chunk": Chunk}


def dumps(record: JsonRecord | dict[str, Any]) -> str:
    """The canonical JSON line (without newline) for a record or a plain dict.

    Non-ASCII is written literally, except the three characters that line-oriented readers
    (Python's ``str.splitlines``, JavaScript before ES2019) take for line breaks: U+0085, U+2028
    and U+2029 are escaped, so no text inside a record can split its line in two."""
    line = _dumps(record if isinstance(record, dict) else record.to_dict())
    return line if line.isascii() else escape_line_breaks(line)


def escape_line_breaks(line: str) -> str:
    """``line`` with U+0085, U+2028 and U+2029 written as JSON escapes (see :func:`dumps`)."""
    # three `in`s find a character faster than a class regex scans (and most lines hold none)
    if "\u2028" not in line and "\u2029" not in line and "\x85" not in line:
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
