"""Agent-traces parquet files: one row per session.

Columns: `session_id` and `messages` (a list of JSON-encoded OpenAI-style chat messages,
chronological) are required; `sent_at` (ts of every turn of the row), `harness` (the stored
facet, verbatim, "" when absent), `file_path` (source_path; default the parquet path) and
`metadata` (a JSON object whose `cwd` names the workdir; default the file's stem) are used
when present; any other column is not read. String columns may be `string` or `large_string`,
`messages` a `list` or `large_list` of either.

The file is read in row batches of only the needed columns, so memory follows the largest
batch, not the file. A row whose `session_id` or `messages` is null is skipped and counted; so
is a message that is null, not valid JSON or not an object.

Blocks per message, in order: `thinking` (`reasoning_content`, else `reasoning`), `text`
(`content`: a string, or the text of its parts), a `tool_use` per `tool_calls[]` element
(named by `function.name`, id `id`). Unlike the reference, a `tool` message that carries a
`tool_call_id` becomes a `tool_result` block, named after the call with that id earlier in the
session; a `tool` message without one stays a `text` block. Roles are not filtered (`system`
messages are kept as role `system`). Turn ids are `<session>-<seq>`, each turn's parent the
previous one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from funes.errors import FunesError
from funes.records import Block, NumberTooLong, TooDeep, Turn, load_json
from funes.sources import (
    FileStats,
    Source,
    compact_json,
    flatten_tool_content,
    is_blank,
    munge_workdir,
    repo_of,
)

BATCH_ROWS = 16  # rows are whole sessions; the row group read dominates anyway
REQUIRED = ("session_id", "messages")
OPTIONAL = ("sent_at", "harness", "file_path", "metadata")


def claims(path: Path) -> bool:
    return path.suffix.lower() == ".parquet"


def parse_path(path: Path, stats: FileStats, batch_rows: int = BATCH_ROWS) -> Iterator[Turn]:
    # lazy: pyarrow stays off fast commands' start-up
    import pyarrow as pa  # heavy: only when a parquet file is actually read
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as e:
        raise FunesError(f"{path}: not a readable parquet file ({e})") from None
    schema = pf.schema_arrow
    names = set(schema.names)
    for col in REQUIRED:
        if col not in names:
            raise FunesError(
                f"{path}: no '{col}' column — an agent-traces file has one row per session "
                "with 'session_id' and 'messages' (a list of JSON chat messages)"
            )
    _check_types(path, schema, pa)
    columns = [*REQUIRED, *(c for c in OPTIONAL if c in names)]
    row = 0
    try:
        for batch in pf.iter_batches(batch_size=batch_rows, columns=columns):
            for rec in batch.to_pylist():
                row += 1
                stats.lines = row
                yield from _session(rec, row, path, stats)
    except pa.ArrowException as e:
        raise FunesError(f"{path}: cannot read row {row + 1} ({e})") from None


def _check_types(path: Path, schema: Any, pa: Any) -> None:
    def is_str(t: Any) -> bool:
        return bool(pa.types.is_string(t) or pa.types.is_large_string(t))

    for field in schema:
        if field.name in ("session_id", *OPTIONAL) and not is_str(field.type):
            raise FunesError(f"{path}: column '{field.name}' is {field.type}, expected a string")
        if field.name == "messages":
            t = field.type
            if not ((pa.types.is_list(t) or pa.types.is_large_list(t)) and is_str(t.value_type)):
                raise FunesError(
                    f"{path}: column 'messages' is {t}, expected a list of JSON strings"
                )


def _session(rec: dict[str, Any], row: int, path: Path, stats: FileStats) -> Iterator[Turn]:
    session_id, messages = rec.get("session_id"), rec.get("messages")
    if session_id is None or messages is None:
        stats.skip(row, "null_session_id" if session_id is None else "null_messages")
        return
    cwd = _cwd(rec.get("metadata"))
    workdir = munge_workdir(cwd) or path.stem
    repo = repo_of(cwd.strip()) if cwd and munge_workdir(cwd) else ""
    ts = rec.get("sent_at") or ""
    harness = rec.get("harness") or ""
    source_path = rec.get("file_path") or str(path)
    names: dict[str, str] = {}
    seq = 0
    parent: str | None = None
    for raw in messages:
        msg = _message(raw, row, stats)
        if msg is None:
            continue
        role = msg.get("role")
        role = role if isinstance(role, str) else ""
        blocks = _blocks(msg, role, names)
        if not blocks:
            stats.empty[role or "message"] += 1
            continue
        uuid = f"{session_id}-{seq}"
        yield Turn(
            harness=harness,
            session_id=session_id,
            turn_uuid=uuid,
            parent_uuid=parent,
            seq=seq,
            ts=ts,
            role=role,
            workdir=workdir,
            repo=repo,
            source_path=source_path,
            blocks=blocks,
        )
        seq += 1
        parent = uuid


def _message(raw: str | None, row: int, stats: FileStats) -> dict[str, Any] | None:
    if raw is None:
        stats.skip(row, "null_message")
        return None
    try:
        msg, fixed = load_json(raw)
    except TooDeep:
        stats.skip(row, "too_deep")
        return None
    except NumberTooLong:
        stats.skip(row, "number_too_long")
        return None
    except json.JSONDecodeError:
        stats.skip(row, "malformed_json")
        return None
    if not isinstance(msg, dict):
        stats.skip(row, "not_object")
        return None
    if fixed:
        stats.repair(row, "lone_surrogate")
    stats.records_kept += 1
    return msg


def _cwd(metadata: str | None) -> str | None:
    if not metadata:
        return None
    try:
        meta, _ = load_json(metadata)
    except (json.JSONDecodeError, TooDeep, NumberTooLong):
        return None
    cwd = meta.get("cwd") if isinstance(meta, dict) else None
    return cwd if isinstance(cwd, str) else None


def _blocks(msg: dict[str, Any], role: str, names: dict[str, str]) -> list[Block]:
    out = []
    thinking = msg.get("reasoning_content")
    if thinking is None:
        thinking = msg.get("reasoning")
    if isinstance(thinking, str) and not is_blank(thinking):
        out.append(Block("thinking", thinking))
    text = flatten_tool_content(msg.get("content"))
    call_id = msg.get("tool_call_id")
    if role == "tool" and isinstance(call_id, str) and call_id:
        if not is_blank(text):
            out.append(Block("tool_result", text, names.get(call_id), call_id))
    elif not is_blank(text):
        out.append(Block("text", text))
    calls = msg.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict):
            continue
        fn = call.get("function")
        fn = fn if isinstance(fn, dict) else {}
        args = fn.get("arguments")
        name = fn.get("name") if isinstance(fn.get("name"), str) else None
        tid = call.get("id") if isinstance(call.get("id"), str) else None
        if tid is not None and name is not None:
            names[tid] = name
        text = args if isinstance(args, str) else compact_json({} if args is None else args)
        out.append(Block("tool_use", text, name, tid))
    return out


SOURCE = Source(
    name="parquet",
    harness="parquet",
    patterns=("*.parquet",),
    claims=claims,
    parse_path=parse_path,
    sniff_order=60,
)
