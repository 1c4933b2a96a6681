"""`funes-parse` throughput and memory on each transcript format funes reads.

pi, Hermes (state.db and session files), parquet, and the newer agents: OpenClaw (pi's JSONL),
Gemini CLI (replayed JSONL), Copilot CLI (events.jsonl), Qwen Code, OpenCode and Kilo (the
same SQLite database), Cursor (CLI JSONL and the IDE's state.vscdb) and Cline (whole-file task
JSON, as Roo Code and Kilo's legacy extension write it).

Generates a few tens of MB of each format in a temporary directory (synthetic sessions shaped
like real ones: prompts, thinking, tool calls with JSON arguments, tool results of a few KB),
then times the installed `funes-parse` on each, turns written to /dev/null. Peak RSS is the
child's, read with getrusage(RUSAGE_CHILDREN) in a fresh intermediate process per run so one
format's peak never hides another's.

    .venv/bin/python bench/parse_formats.py            # ~30 MB per format
    .venv/bin/python bench/parse_formats.py --mb 60 --runs 3
    .venv/bin/python bench/parse_formats.py --only gemini copilot   # some formats
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

BIN = Path(sys.executable).parent
RAW_BYTES: dict[Path, int] = {}  # parquet: the JSON text its compressed file holds
WORDS = (
    "the index chunk embed query recall session turn block tool result parser lance vector "
    "lexical rerank fusion recency neighbor schema append lock writer reader stream batch "
    "config path file error retry budget token model pin hash cache memory hub push"
).split()
MEASURE = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "dt = time.perf_counter() - t\n"
    "ru = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(dt, ru.ru_maxrss, r.returncode, ru.ru_utime + ru.ru_stime,"
    " r.stderr.decode().strip().splitlines()[-1:])\n"
)


def prose(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def conversation(rng: random.Random, turns: int) -> Iterator[tuple[str, dict[str, object]]]:
    """(kind, fields) of one synthetic session: user, assistant (+tool call), tool result…"""
    for i in range(turns):
        yield "user", {"text": prose(rng, rng.randint(8, 60))}
        call = f"call_{i}"
        yield (
            "assistant",
            {
                "thinking": prose(rng, rng.randint(20, 120)),
                "text": prose(rng, rng.randint(10, 80)),
                "call": (call, "bash", {"command": f"rg -n {rng.choice(WORDS)} src/ | head -50"}),
            },
        )
        yield "tool", {"call": call, "name": "bash", "text": prose(rng, rng.randint(100, 900))}


def gen_pi(root: Path, target: int, rng: random.Random) -> Path:
    d = root / "pi"
    d.mkdir()
    size, n = 0, 0
    while size < target:
        f = d / f"2026-03-{1 + n % 28:02d}T10-00-00_{n:06d}.jsonl"
        lines = [{"type": "session", "version": 3, "id": f"s{n}", "cwd": "/home/dev/proj",
                  "timestamp": "2026-03-01T10:00:00.000Z"}]  # fmt: skip
        prev = None
        for j, (kind, fields) in enumerate(conversation(rng, 40)):
            msg: dict[str, object]
            if kind == "user":
                msg = {"role": "user", "content": fields["text"], "timestamp": 1772359200000 + j}
            elif kind == "assistant":
                cid, name, args = fields["call"]  # type: ignore[misc]
                msg = {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": fields["thinking"]},
                    {"type": "text", "text": fields["text"]},
                    {"type": "toolCall", "id": cid, "name": name, "arguments": args}]}  # fmt: skip
            else:
                msg = {"role": "toolResult", "toolCallId": fields["call"], "toolName": "bash",
                       "content": [{"type": "text", "text": fields["text"]}], "isError": False}  # fmt: skip
            lines.append({"type": "message", "id": f"e{j}", "parentId": prev,
                          "timestamp": f"2026-03-01T10:{j // 60 % 60:02d}:{j % 60:02d}.000Z",
                          "message": msg})  # fmt: skip
            prev = f"e{j}"
        data = "".join(json.dumps(x) + "\n" for x in lines).encode()
        f.write_bytes(data)
        size += len(data)
        n += 1
    return d


def hermes_rows(rng: random.Random, sid: str) -> Iterator[dict[str, object]]:
    for kind, fields in conversation(rng, 40):
        if kind == "user":
            yield {"role": "user", "content": fields["text"]}
        elif kind == "assistant":
            cid, name, args = fields["call"]  # type: ignore[misc]
            call = {"id": cid, "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)}}  # fmt: skip
            yield {"role": "assistant", "content": fields["text"], "reasoning": fields["thinking"],
                   "tool_calls": [call]}  # fmt: skip
        else:
            yield {"role": "tool", "content": fields["text"], "tool_call_id": fields["call"],
                   "tool_name": "bash"}  # fmt: skip


def gen_hermes_db(root: Path, target: int, rng: random.Random) -> Path:
    db = root / "state.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT);"
        "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, role TEXT,"
        " content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL,"
        " reasoning TEXT, reasoning_content TEXT);"
        "CREATE INDEX idx_messages_session ON messages(session_id, timestamp);"
    )
    n = 0
    while db.stat().st_size < target:
        for _ in range(20):
            sid = f"20260301_100000_{n:06d}"
            conn.execute("INSERT INTO sessions VALUES (?, '/home/dev/proj')", (sid,))
            conn.executemany(
                "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls,"
                " tool_name, timestamp, reasoning) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        sid,
                        m["role"],
                        m["content"],
                        m.get("tool_call_id"),
                        json.dumps(m["tool_calls"]) if "tool_calls" in m else None,
                        m.get("tool_name"),
                        1772359200.0 + j,
                        m.get("reasoning"),
                    )
                    for j, m in enumerate(hermes_rows(rng, sid))
                ],
            )
            n += 1
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db


def gen_hermes_files(root: Path, target: int, rng: random.Random) -> Path:
    d = root / "hermes-sessions"
    d.mkdir()
    size, n = 0, 0
    while size < target:
        sid = f"20260301_100000_{n:06d}"
        lines: list[dict[str, object]] = [{"role": "session_meta", "cwd": "/home/dev/proj"}]
        lines += [{**m, "timestamp": "2026-03-01T10:00:00"} for m in hermes_rows(rng, sid)]
        data = "".join(json.dumps(x) + "\n" for x in lines).encode()
        (d / f"{sid}.jsonl").write_bytes(data)
        size += len(data)
        n += 1
    return d


def gen_parquet(root: Path, target: int, rng: random.Random) -> Path:
    f = root / "traces.parquet"
    schema = pa.schema([("session_id", pa.string()), ("messages", pa.list_(pa.string())),
                        ("sent_at", pa.string()), ("harness", pa.string()),
                        ("metadata", pa.string())])  # fmt: skip
    with pq.ParquetWriter(f, schema) as w:
        n, raw = 0, 0
        while raw < target:
            rows = []
            for _ in range(50):
                msgs = []
                for m in hermes_rows(rng, str(n)):
                    m = dict(m)
                    if "reasoning" in m:
                        m["reasoning_content"] = m.pop("reasoning")
                    msgs.append(json.dumps(m))
                raw += sum(map(len, msgs))
                rows.append({"session_id": f"s{n}", "messages": msgs,
                             "sent_at": "2026-03-01T10:00:00Z", "harness": "hermes",
                             "metadata": '{"cwd": "/home/dev/proj"}'})  # fmt: skip
                n += 1
            w.write_table(pa.Table.from_pylist(rows, schema=schema))
    RAW_BYTES[f] = raw
    return f


# ---------------------------------------------------------------------------- newer agents


def _files(d: Path, target: int, one: Any) -> Path:
    """Write sessions with ``one(n) -> (relative path, bytes)`` until ``target`` bytes."""
    size, n = 0, 0
    while size < target:
        rel, data = one(n)
        f = d / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(data)
        size += len(data)
        n += 1
    return d


def _jsonl(lines: list[Any]) -> bytes:
    return "".join(json.dumps(x) + "\n" for x in lines).encode()


def gen_openclaw(root: Path, target: int, rng: random.Random) -> Path:
    d = root / "openclaw"  # pi's sessions (written by gen_pi first), as reset archives

    def one(n: int) -> tuple[str, bytes]:
        src = next((root / "pi").glob("*.jsonl"))
        return f"agents/main/sessions/s{n}.jsonl.reset.2026-03-01", src.read_bytes()

    return _files(d, target, one)


def gen_gemini(root: Path, target: int, rng: random.Random) -> Path:
    def one(n: int) -> tuple[str, bytes]:
        lines: list[Any] = [
            {"sessionId": f"g{n}", "projectHash": "h", "startTime": "2026-03-01T10:00:00Z"}
        ]
        for j, (kind, f) in enumerate(conversation(rng, 40)):
            if kind == "user":
                lines.append(
                    {
                        "id": f"m{j}",
                        "type": "user",
                        "timestamp": "2026-03-01T10:00:00Z",
                        "content": [{"text": f["text"]}],
                    }
                )
            elif kind == "assistant":
                cid, name, args = f["call"]  # type: ignore[misc]
                msg = {
                    "id": f"m{j}",
                    "type": "gemini",
                    "timestamp": "2026-03-01T10:00:00Z",
                    "content": f["text"],
                    "thoughts": [{"subject": "s", "description": f["thinking"]}],
                    "toolCalls": [{"id": cid, "name": name, "args": args, "status": "executing"}],
                }
                lines.append(msg)  # written again once the tool ran, as Gemini CLI does
            else:
                last = dict(lines[-1])
                last["toolCalls"] = [
                    {
                        **last["toolCalls"][0],
                        "status": "success",
                        "result": [
                            {
                                "functionResponse": {
                                    "id": f["call"],
                                    "response": {"output": f["text"]},
                                }
                            }
                        ],
                    }
                ]
                lines.append(last)
        return f"tmp/p/chats/session-{n:06d}.jsonl", _jsonl(lines)

    return _files(root / "gemini", target, one)


def gen_copilot(root: Path, target: int, rng: random.Random) -> Path:
    def one(n: int) -> tuple[str, bytes]:
        lines: list[Any] = [
            {
                "type": "session.start",
                "id": "e0",
                "data": {"sessionId": f"c{n}", "context": {"cwd": "/home/dev/proj"}},
            }
        ]
        for j, (kind, f) in enumerate(conversation(rng, 40)):
            ts = "2026-03-01T10:00:00.000Z"
            if kind == "user":
                lines.append(
                    {
                        "type": "user.message",
                        "id": f"e{j}u",
                        "timestamp": ts,
                        "data": {"content": f["text"]},
                    }
                )
            elif kind == "assistant":
                cid, name, args = f["call"]  # type: ignore[misc]
                lines.append(
                    {
                        "type": "assistant.message",
                        "id": f"e{j}a",
                        "timestamp": ts,
                        "data": {
                            "content": f["text"],
                            "reasoningText": f["thinking"],
                            "toolRequests": [{"toolCallId": cid, "name": name, "arguments": args}],
                        },
                    }
                )
                lines.append(
                    {
                        "type": "assistant.message_delta",
                        "id": f"e{j}d",
                        "ephemeral": True,
                        "data": {"deltaContent": "x"},
                    }
                )
            else:
                lines.append(
                    {
                        "type": "tool.execution_complete",
                        "id": f"e{j}t",
                        "timestamp": ts,
                        "data": {
                            "toolCallId": f["call"],
                            "success": True,
                            "result": {"content": f["text"]},
                        },
                    }
                )
        return f"session-state/c{n}/events.jsonl", _jsonl(lines)

    return _files(root / "copilot", target, one)


def gen_qwen(root: Path, target: int, rng: random.Random) -> Path:
    def one(n: int) -> tuple[str, bytes]:
        lines: list[Any] = []
        for j, (kind, f) in enumerate(conversation(rng, 40)):
            base = {
                "uuid": f"q{j}",
                "parentUuid": f"q{j - 1}" if j else None,
                "sessionId": f"q{n}",
                "timestamp": "2026-03-01T10:00:00Z",
                "cwd": "/home/dev/proj",
            }
            if kind == "user":
                lines.append(
                    {
                        **base,
                        "type": "user",
                        "message": {"role": "user", "parts": [{"text": f["text"]}]},
                    }
                )
            elif kind == "assistant":
                cid, name, args = f["call"]  # type: ignore[misc]
                lines.append(
                    {
                        **base,
                        "type": "assistant",
                        "message": {
                            "role": "model",
                            "parts": [
                                {"text": f["thinking"], "thought": True},
                                {"text": f["text"]},
                                {"functionCall": {"id": cid, "name": name, "args": args}},
                            ],
                        },
                    }
                )
                lines.append(
                    {
                        **base,
                        "uuid": f"t{j}",
                        "type": "system",
                        "subtype": "ui_telemetry",
                        "systemPayload": {},
                    }
                )
            else:
                lines.append(
                    {
                        **base,
                        "type": "tool_result",
                        "message": {
                            "role": "user",
                            "parts": [
                                {
                                    "functionResponse": {
                                        "id": f["call"],
                                        "name": "bash",
                                        "response": {"output": f["text"]},
                                    }
                                }
                            ],
                        },
                    }
                )
        return f"projects/-home-dev-proj/chats/q{n}.jsonl", _jsonl(lines)

    return _files(root / "qwen", target, one)


def gen_cursor_cli(root: Path, target: int, rng: random.Random) -> Path:
    def one(n: int) -> tuple[str, bytes]:
        lines: list[Any] = []
        for kind, f in conversation(rng, 40):
            if kind == "user":
                lines.append(
                    {"role": "user", "message": {"content": [{"type": "text", "text": f["text"]}]}}
                )
            elif kind == "assistant":
                cid, name, args = f["call"]  # type: ignore[misc]
                lines.append(
                    {
                        "role": "assistant",
                        "message": {
                            "content": [
                                {"type": "thinking", "thinking": f["thinking"]},
                                {"type": "text", "text": f["text"]},
                                {"type": "tool_use", "id": cid, "name": name, "input": args},
                            ]
                        },
                    }
                )
            else:
                lines.append(
                    {
                        "role": "user",
                        "message": {
                            "content": [
                                {
                                    "type": "tool_result",
                                    "tool_use_id": f["call"],
                                    "content": f["text"],
                                }
                            ]
                        },
                    }
                )
        return f"projects/home-dev-proj/agent-transcripts/k{n}.jsonl", _jsonl(lines)

    return _files(root / "cursor-cli", target, one)


def gen_cline(root: Path, target: int, rng: random.Random) -> Path:
    def one(n: int) -> tuple[str, bytes]:
        msgs: list[Any] = []
        for kind, f in conversation(rng, 40):
            if kind == "user":
                msgs.append({"role": "user", "content": [{"type": "text", "text": f["text"]}]})
            elif kind == "assistant":
                msgs.append(
                    {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "text",
                                "text": f["text"]
                                + "\n<execute_command><command>rg x</command></execute_command>",
                            }
                        ],
                    }
                )
            else:
                msgs.append(
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "[execute_command] Result:\n" + f["text"]}
                        ],
                    }
                )
        return f"tasks/{1772359200000 + n}/api_conversation_history.json", json.dumps(msgs).encode()

    return _files(root / "cline", target, one)


def gen_opencode(root: Path, target: int, rng: random.Random) -> Path:
    db = root / "opencode" / "opencode.db"
    db.parent.mkdir()
    conn = sqlite3.connect(db)
    conn.executescript(
        "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, directory TEXT);"
        "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, data TEXT);"
        "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT);"
        "CREATE INDEX m_s ON message(session_id); CREATE INDEX p_s ON part(session_id);"
    )
    n = 0
    while db.stat().st_size < target:
        for _ in range(20):
            sid = f"ses_{n:06d}"
            conn.execute("INSERT INTO session VALUES (?, 'p', '/home/dev/proj')", (sid,))
            msgs, parts = [], []
            for j, (kind, f) in enumerate(conversation(rng, 40)):
                mid = f"msg_{n:06d}_{j:04d}"
                role = "user" if kind == "user" else "assistant"
                msgs.append((mid, sid, 1772359200000 + j, json.dumps({"role": role})))
                if kind == "user":
                    parts.append(
                        (f"prt_{mid}_0", mid, sid, json.dumps({"type": "text", "text": f["text"]}))
                    )
                elif kind == "assistant":
                    cid, name, args = f["call"]  # type: ignore[misc]
                    parts += [
                        (f"prt_{mid}_0", mid, sid, json.dumps({"type": "step-start"})),
                        (
                            f"prt_{mid}_1",
                            mid,
                            sid,
                            json.dumps({"type": "reasoning", "text": f["thinking"]}),
                        ),
                        (f"prt_{mid}_2", mid, sid, json.dumps({"type": "text", "text": f["text"]})),
                        (
                            f"prt_{mid}_3",
                            mid,
                            sid,
                            json.dumps(
                                {
                                    "type": "tool",
                                    "tool": name,
                                    "callID": cid,
                                    "state": {"input": args, "output": prose(rng, 300)},
                                }
                            ),
                        ),
                    ]
            conn.executemany("INSERT INTO message VALUES (?, ?, ?, ?)", msgs)
            conn.executemany("INSERT INTO part VALUES (?, ?, ?, ?)", parts)
            n += 1
        conn.commit()
    conn.close()
    return db


def gen_kilo_db(root: Path, target: int, rng: random.Random) -> Path:
    """Kilo keeps OpenCode's rows in its own ``kilo/kilo.db``, read under harness ``kilo``."""
    (root / "kilo-gen").mkdir()
    db = (root / "kilo").joinpath("kilo.db")
    db.parent.mkdir()
    return gen_opencode(root / "kilo-gen", target, rng).rename(db)


def gen_cursor_ide(root: Path, target: int, rng: random.Random) -> Path:
    db = root / "Cursor/User/globalStorage/state.vscdb"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    n = 0
    while db.stat().st_size < target:
        rows = []
        for _ in range(20):
            cid = f"composer-{n:06d}"
            headers, j = [], 0
            for kind, f in conversation(rng, 40):
                bid = f"b{j:04d}"
                j += 1
                if kind == "tool":
                    continue
                headers.append({"bubbleId": bid, "type": 1 if kind == "user" else 2})
                bubble: dict[str, Any] = {"type": 1 if kind == "user" else 2, "text": f["text"]}
                if kind == "assistant":
                    bubble["thinking"] = {"text": f["thinking"]}
                    bubble["toolFormerData"] = {
                        "name": "run_terminal_cmd",
                        "rawArgs": "{}",
                        "result": prose(rng, 300),
                    }
                rows.append((f"bubbleId:{cid}:{bid}", json.dumps(bubble)))
            rows.append(
                (
                    f"composerData:{cid}",
                    json.dumps({"composerId": cid, "fullConversationHeadersOnly": headers}),
                )
            )
            n += 1
        conn.executemany("INSERT INTO cursorDiskKV VALUES (?, ?)", rows)
        conn.commit()
    conn.close()
    return db


def size_of(p: Path) -> int:
    return (
        sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
        if p.is_dir()
        else p.stat().st_size
    )


def measure(path: Path, *extra: str) -> tuple[float, int, float, str]:
    """(wall s, peak RSS KB, CPU s (user + sys), summary line) of one funes-parse run."""
    cmd = [sys.executable, "-c", MEASURE, str(BIN / "funes-parse"), *extra, str(path)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split(" ", 4)
    secs, rss_kb, rc, cpu = float(out[0]), int(out[1]), int(out[2]), float(out[3])
    if rc != 0:
        raise SystemExit(f"funes-parse failed on {path}: {out[4]}")
    return secs, rss_kb, cpu, out[4].strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=30, help="size of each format's input (MB)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per format (best is kept)")
    ap.add_argument("--only", nargs="*", help="formats whose name starts with one of these")
    args = ap.parse_args()
    target = int(args.mb * 1e6)
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="funes-bench-") as tmp:
        root = Path(tmp)
        # name: (generator, the --harness it is read as, or None to route by path/content)
        formats: dict[str, tuple[Any, str | None]] = {
            "pi (jsonl files)": (gen_pi, None),
            "hermes state.db": (gen_hermes_db, None),
            "hermes session files": (gen_hermes_files, None),
            "parquet": (gen_parquet, None),
            "openclaw": (gen_openclaw, "openclaw"),
            "gemini (jsonl)": (gen_gemini, "gemini"),
            "copilot events": (gen_copilot, "copilot"),
            "qwen (jsonl)": (gen_qwen, "qwen"),
            "opencode.db": (gen_opencode, "opencode"),
            "kilo.db": (gen_kilo_db, "kilo"),
            "cursor cli": (gen_cursor_cli, "cursor"),
            "cursor state.vscdb": (gen_cursor_ide, "cursor"),
            "cline tasks": (gen_cline, "cline"),
        }
        if args.only:
            formats = {k: v for k, v in formats.items() if k.startswith(tuple(args.only))}
            if "openclaw" in formats and not any(k.startswith("pi") for k in formats):
                gen_pi(root, target, rng)  # openclaw copies pi's sessions
        inputs = {name: (gen(root, target, rng), h) for name, (gen, h) in formats.items()}
        # CPU time (user + sys) is the figure to compare on a shared machine; wall beside it.
        print(
            f"{'format':22} {'MB':>6} {'JSON MB':>8} {'wall s':>7} {'CPU s':>6} {'MB/CPU s':>9} "
            f"{'JSON MB/CPU s':>14} {'peak RSS MB':>12}  summary"
        )
        for name, (path, harness) in inputs.items():
            mb = size_of(path) / 1e6
            raw = RAW_BYTES.get(path, size_of(path)) / 1e6
            extra = ("--harness", harness) if harness else ()
            best = min((measure(path, *extra) for _ in range(args.runs)), key=lambda r: r[2])
            secs, rss_kb, cpu, summary = best
            print(
                f"{name:22} {mb:6.1f} {raw:8.1f} {secs:7.2f} {cpu:6.2f} {mb / cpu:9.1f} "
                f"{raw / cpu:14.1f} {rss_kb / 1024:12.0f}  {summary}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
