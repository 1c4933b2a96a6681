"""Histories at scale, in the four agents' real on-disk layouts, made from eval-dev's sessions.

    .venv/bin/python -m bench.synth HOME_DIR [--sessions 2000 | --chunks 1000000] [--seed 0]

Writes under HOME_DIR what those agents leave in a home directory:

- ``.claude/projects/<munged cwd>/<uuid>.jsonl``
- ``.codex/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl``
- ``.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl``
- ``.hermes/state.db`` (SQLite, WAL mode, ``sessions`` + ``messages``)

Each synthetic session stitches one to three windows of consecutive records cut from eval-dev
sessions of the same agent (Hermes, absent from eval-dev, gets windows of any agent's turns,
rewritten as its message rows), then re-identifies them — new session ids, record uuids and
parent links, all drawn from the seed — and shifts their timestamps into the year before
2026-11-30, so the sweep sees a spread of ages. File mtimes are set to the session's last turn.
The same seed gives a byte-identical tree (files, contents and mtimes); every line parses with
0 skipped (concatenated records in the sources are split onto their own lines).

``--chunks N`` asks for a history of about N chunks instead: N / :data:`CHUNKS_PER_SESSION`
sessions (the same tree as ``--sessions`` of that count; 10,000 sessions, ~1 M chunks and
~1.5 GB, take about a minute here). The exact count is what funes makes of it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sqlite3
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

EVAL_DEV = Path(__file__).resolve().parents[2] / "shared" / "eval-dev"
END = datetime(2026, 11, 30, tzinfo=UTC)
SPAN_DAYS = 365
# Share of sessions per agent.
AGENTS = (("claude", 0.45), ("codex", 0.25), ("pi", 0.2), ("hermes", 0.1))
PROJECTS = (
    "api-gateway", "billing", "cli", "dashboard", "data-pipeline", "docs-site", "funes",
    "infra", "ios-app", "ml-training", "mobile-web", "monorepo", "payments", "search",
    "shop-frontend", "telemetry", "website", "worker",
)  # fmt: skip
WINDOW = (10, 70)  # records per window
AGENT_DIRS = {"claude": "claude-code", "codex": "codex", "pi": "pi"}
CHUNKS_PER_SESSION = 100  # what funes makes of a session of these histories on average (~102)


@dataclass
class Source:
    agent: str
    records: list[dict[str, Any]]  # the session's records, header line(s) excluded
    header: dict[str, Any] | None = None  # codex session_meta / pi session line


@dataclass
class Stats:
    sessions: dict[str, int] = field(default_factory=lambda: {a: 0 for a, _ in AGENTS})
    records: int = 0
    bytes: int = 0


def split_records(line: str) -> Iterator[dict[str, Any]]:
    """JSON objects of one line, also when several were written back to back."""
    dec = json.JSONDecoder()
    i, n = 0, len(line)
    while i < n:
        while i < n and line[i].isspace():
            i += 1
        if i >= n:
            return
        try:
            obj, i = dec.raw_decode(line, i)
        except ValueError:
            return
        if isinstance(obj, dict):
            yield obj


def load_sources(corpus: Path) -> dict[str, list[Source]]:
    out: dict[str, list[Source]] = {a: [] for a in AGENT_DIRS}
    for agent, sub in AGENT_DIRS.items():
        for f in sorted((corpus / sub).glob("*.jsonl")):
            recs = [r for line in f.read_text("utf-8").splitlines() for r in split_records(line)]
            header = None
            if agent == "codex":
                header = next((r for r in recs if r.get("type") == "session_meta"), None)
                recs = [r for r in recs if r.get("type") != "session_meta"]
            elif agent == "pi":
                header = next((r for r in recs if r.get("type") == "session"), None)
                recs = [r for r in recs if r.get("type") != "session"]
            out[agent].append(Source(agent, recs, header))
    return out


# ---------------------------------------------------------------------------- time


def parse_ts(value: Any) -> datetime | None:
    if not isinstance(value, str) or len(value) < 19:
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def fmt_ts(t: datetime) -> str:
    """Claude Code / Codex / pi style: UTC, milliseconds, Z."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def window_delta(records: list[dict[str, Any]], cursor: datetime) -> tuple[timedelta, datetime]:
    """The shift that moves the window's first timestamp to ``cursor``; and its shifted end."""
    stamps = [t for r in records if (t := parse_ts(r.get("timestamp"))) is not None]
    if not stamps:
        return timedelta(0), cursor
    delta = cursor - stamps[0]
    return delta, max(stamps) + delta


def shift(value: Any, delta: timedelta) -> Any:
    t = parse_ts(value)
    return value if t is None else fmt_ts(t + delta)


# ---------------------------------------------------------------------------- ids


def new_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def munge(cwd: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", cwd.strip())


# ---------------------------------------------------------------------------- windows


def windows(rng: random.Random, pool: list[Source]) -> list[tuple[Source, list[dict[str, Any]]]]:
    out = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        src = rng.choice(pool)
        n = min(len(src.records), rng.randint(*WINDOW))
        start = rng.randrange(0, len(src.records) - n + 1)
        out.append((src, [json.loads(json.dumps(r)) for r in src.records[start : start + n]]))
    return out


def claude_session(
    rng: random.Random, pool: list[Source], sid: str, cwd: str, start: datetime
) -> tuple[list[dict[str, Any]], datetime]:
    lines: list[dict[str, Any]] = []
    last_uuid = None
    cursor = start
    for _, recs in windows(rng, pool):
        delta, end = window_delta(recs, cursor)
        ids: dict[str, str] = {}
        for r in recs:
            if isinstance(r.get("uuid"), str):
                ids[r["uuid"]] = new_uuid(rng)
        for r in recs:
            if "sessionId" in r:
                r["sessionId"] = sid
            if "cwd" in r:
                r["cwd"] = cwd
            if "timestamp" in r:
                r["timestamp"] = shift(r["timestamp"], delta)
            if isinstance(r.get("uuid"), str):
                if "parentUuid" in r:
                    r["parentUuid"] = ids.get(r["parentUuid"], last_uuid)
                r["uuid"] = ids[r["uuid"]]
                last_uuid = r["uuid"]
            lines.append(r)
        cursor = end + timedelta(seconds=rng.randint(30, 3600))
    return lines, cursor


def codex_session(
    rng: random.Random, pool: list[Source], sid: str, cwd: str, start: datetime
) -> tuple[list[dict[str, Any]], datetime]:
    head_src = rng.choice([s for s in pool if s.header is not None])
    meta = json.loads(json.dumps(head_src.header))
    meta["timestamp"] = fmt_ts(start)
    payload = meta.setdefault("payload", {})
    payload.update(id=sid, cwd=cwd, timestamp=fmt_ts(start))
    if "session_id" in payload:
        payload["session_id"] = sid
    lines = [meta]
    cursor = start + timedelta(seconds=1)
    for _, recs in windows(rng, pool):
        delta, end = window_delta(recs, cursor)
        for r in recs:
            if "timestamp" in r:
                r["timestamp"] = shift(r["timestamp"], delta)
            p = r.get("payload")
            if isinstance(p, dict) and r.get("type") == "turn_context" and "cwd" in p:
                p["cwd"] = cwd
            lines.append(r)
        cursor = end + timedelta(seconds=rng.randint(30, 3600))
    return lines, cursor


def pi_session(
    rng: random.Random, pool: list[Source], sid: str, cwd: str, start: datetime
) -> tuple[list[dict[str, Any]], datetime]:
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": sid, "timestamp": fmt_ts(start), "cwd": cwd}
    ]
    last = None
    cursor = start + timedelta(seconds=1)
    for _, recs in windows(rng, pool):
        delta, end = window_delta(recs, cursor)
        ids = {r["id"]: f"{rng.getrandbits(32):08x}" for r in recs if isinstance(r.get("id"), str)}
        for r in recs:
            if "timestamp" in r:
                r["timestamp"] = shift(r["timestamp"], delta)
            msg = r.get("message")
            if isinstance(msg, dict) and isinstance(msg.get("timestamp"), int | float):
                msg["timestamp"] = int(msg["timestamp"] + delta.total_seconds() * 1000)
            if isinstance(r.get("id"), str):
                r["parentId"] = ids.get(str(r.get("parentId")), last)
                r["id"] = ids[r["id"]]
                last = r["id"]
            lines.append(r)
        cursor = end + timedelta(seconds=rng.randint(30, 3600))
    return lines, cursor


def hermes_rows(
    rng: random.Random, sources: dict[str, list[Source]], start: datetime
) -> tuple[list[tuple[Any, ...]], datetime]:
    """Message rows (role, content, tool_call_id, tool_calls, tool_name, timestamp, reasoning)
    from windows of parsed turns of any eval-dev agent."""
    from funes.sources import FileStats, get_source

    rows: list[tuple[Any, ...]] = []
    cursor = start
    for _ in range(rng.choice((1, 1, 2, 3))):
        agent = rng.choice(sorted(AGENT_DIRS))
        src = rng.choice(sources[agent])
        head = [src.header] if src.header is not None else []
        turns = list(
            get_source(agent).parse_records(
                iter(head + src.records), Path("x.jsonl"), FileStats("")
            )  # type: ignore[misc]
        )
        n = min(len(turns), rng.randint(*WINDOW))
        i0 = rng.randrange(0, len(turns) - n + 1)
        for t in turns[i0 : i0 + n]:
            cursor += timedelta(seconds=rng.randint(1, 90))
            ts = round(cursor.timestamp(), 3)
            texts = [b.text for b in t.blocks if b.type == "text"]
            thinking = [b.text for b in t.blocks if b.type == "thinking"]
            calls = [
                {"id": b.tool_use_id or f"call_{rng.getrandbits(48):012x}", "type": "function",
                 "function": {"name": b.tool_name or "tool", "arguments": b.text}}
                for b in t.blocks if b.type == "tool_use"
            ]  # fmt: skip
            results = [b for b in t.blocks if b.type == "tool_result"]
            if t.role == "user" and texts:
                rows.append(("user", "\n".join(texts), None, None, None, ts, None))
            elif t.role == "assistant" and (texts or thinking or calls):
                rows.append(
                    ("assistant", "\n".join(texts), None, json.dumps(calls) if calls else None,
                     None, ts, "\n".join(thinking) or None)
                )  # fmt: skip
            for b in results:
                rows.append(("tool", b.text, b.tool_use_id, None, b.tool_name, ts, None))
        cursor += timedelta(seconds=rng.randint(30, 3600))
    return rows, cursor


# ---------------------------------------------------------------------------- writing


def write_jsonl(path: Path, lines: list[dict[str, Any]], mtime: datetime, stats: Stats) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines).encode("utf-8")
    path.write_bytes(data)
    t = mtime.timestamp()
    os.utime(path, (t, t))
    stats.records += len(lines)
    stats.bytes += len(data)


HERMES_SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, model TEXT, started_at REAL,
  ended_at REAL, cwd TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, role TEXT,
  content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL,
  reasoning TEXT, reasoning_content TEXT);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
"""


def build(
    home: Path, sessions: int, seed: int = 0, corpus: Path = EVAL_DEV / "corpus"
) -> dict[str, Any]:
    """Write a history of ``sessions`` sessions under ``home``; returns counts."""
    rng = random.Random(seed)
    sources = load_sources(corpus)
    stats = Stats()
    hermes: list[tuple[str, str, datetime, list[tuple[Any, ...]]]] = []
    names = [a for a, _ in AGENTS]
    weights = [w for _, w in AGENTS]
    for _ in range(sessions):
        agent = rng.choices(names, weights)[0]
        start = END - timedelta(seconds=rng.uniform(3600, SPAN_DAYS * 86400))
        cwd = f"/home/dev/{rng.choice(PROJECTS)}"
        sid = new_uuid(rng)
        stats.sessions[agent] += 1
        if agent == "claude":
            lines, end = claude_session(rng, sources["claude"], sid, cwd, start)
            path = home / ".claude" / "projects" / munge(cwd) / f"{sid}.jsonl"
        elif agent == "codex":
            lines, end = codex_session(rng, sources["codex"], sid, cwd, start)
            day = start.strftime("%Y/%m/%d")
            path = (
                home
                / ".codex"
                / "sessions"
                / day
                / f"rollout-{start:%Y-%m-%dT%H-%M-%S}-{sid}.jsonl"
            )
        elif agent == "pi":
            lines, end = pi_session(rng, sources["pi"], sid, cwd, start)
            stamp = fmt_ts(start).replace(":", "-").replace(".", "-")
            path = home / ".pi" / "agent" / "sessions" / f"-{munge(cwd)}--" / f"{stamp}_{sid}.jsonl"
        else:
            hid = f"{start:%Y%m%d_%H%M%S}_{sid[:6]}"
            rows, end = hermes_rows(rng, sources, start)
            hermes.append((hid, cwd, start, rows))
            continue
        write_jsonl(path, lines, end, stats)
    if hermes:
        write_hermes(home / ".hermes" / "state.db", hermes, stats)
    return {"sessions": sessions, "by_agent": stats.sessions, "records": stats.records,
            "bytes": stats.bytes, "seed": seed}  # fmt: skip


def write_hermes(
    db: Path, sessions: list[tuple[str, str, datetime, list[tuple[Any, ...]]]], stats: Stats
) -> None:
    db.parent.mkdir(parents=True, exist_ok=True)
    db.unlink(missing_ok=True)
    conn = sqlite3.connect(db)
    conn.executescript(HERMES_SCHEMA)
    # Hermes writes sessions as they happen: insert oldest first so message ids grow with time.
    for hid, cwd, start, rows in sorted(sessions, key=lambda s: (s[2], s[0])):
        end = rows[-1][5] if rows else start.timestamp()
        conn.execute(
            "INSERT INTO sessions VALUES (?, 'cli', 'hermes-4', ?, ?, ?)",
            (hid, start.timestamp(), end, cwd),
        )
        conn.executemany(
            "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, "
            "tool_name, timestamp, reasoning) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(hid, *r) for r in rows],
        )
        stats.records += len(rows)
    conn.commit()
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    stats.bytes += db.stat().st_size
    t = max(s[2] for s in sessions).timestamp()
    os.utime(db, (t, t))


def sessions_for(chunks: int) -> int:
    """Sessions of a history of about ``chunks`` chunks."""
    return max(1, round(chunks / CHUNKS_PER_SESSION))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("home", type=Path, help="directory to write the agents' trees under")
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--sessions", type=int, default=2000)
    size.add_argument("--chunks", type=int, help="about this many chunks (sessions = N / 100)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    sessions = args.sessions if args.chunks is None else sessions_for(args.chunks)
    print(json.dumps(build(args.home, sessions, args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
