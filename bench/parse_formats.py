"""`funes-parse` throughput and memory on pi, Hermes (state.db and session files) and parquet.

Generates a few tens of MB of each format in a temporary directory (synthetic sessions shaped
like real ones: prompts, thinking, tool calls with JSON arguments, tool results of a few KB),
then times the installed `funes-parse` on each, turns written to /dev/null. Peak RSS is the
child's, read with getrusage(RUSAGE_CHILDREN) in a fresh intermediate process per run so one
format's peak never hides another's.

    .venv/bin/python bench/parse_formats.py            # ~30 MB per format
    .venv/bin/python bench/parse_formats.py --mb 60 --runs 3
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
    "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(dt, rss, r.returncode, r.stderr.decode().strip().splitlines()[-1:])\n"
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


def size_of(p: Path) -> int:
    return (
        sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
        if p.is_dir()
        else p.stat().st_size
    )


def measure(path: Path, *extra: str) -> tuple[float, int, str]:
    cmd = [sys.executable, "-c", MEASURE, str(BIN / "funes-parse"), *extra, str(path)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split(" ", 3)
    secs, rss_kb, rc = float(out[0]), int(out[1]), int(out[2])
    if rc != 0:
        raise SystemExit(f"funes-parse failed on {path}: {out[3]}")
    return secs, rss_kb, out[3].strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=30, help="size of each format's input (MB)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per format (best is kept)")
    args = ap.parse_args()
    target = int(args.mb * 1e6)
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="funes-bench-") as tmp:
        root = Path(tmp)
        inputs = {
            "pi (jsonl files)": gen_pi(root, target, rng),
            "hermes state.db": gen_hermes_db(root, target, rng),
            "hermes session files": gen_hermes_files(root, target, rng),
            "parquet": gen_parquet(root, target, rng),
        }
        print(
            f"{'format':22} {'MB':>6} {'JSON MB':>8} {'s (best)':>9} {'MB/s':>6} "
            f"{'JSON MB/s':>10} {'peak RSS MB':>12}  summary"
        )
        for name, path in inputs.items():
            mb = size_of(path) / 1e6
            raw = RAW_BYTES.get(path, size_of(path)) / 1e6
            best = min((measure(path) for _ in range(args.runs)), key=lambda r: r[0])
            secs, rss_kb, summary = best
            print(
                f"{name:22} {mb:6.1f} {raw:8.1f} {secs:9.2f} {mb / secs:6.1f} {raw / secs:10.1f} "
                f"{rss_kb / 1024:12.0f}  {summary}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
