"""A fresh probe of credential shapes (tests/credential_shapes.py): a hundred-odd kinds of fake
credentials written from providers' documentation, in every place an agent meets them, placed
in transcripts of all four agents — as prose, as a tool call's input and as its output — then
redacted, parsed and chunked, indexed and served: no piece of any value in any stored byte or
any output (recall, get, funes-query, MCP, push)."""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import run_cli, write_jsonl
from credential_shapes import KINDS, cases, digest
from hubserver.helpers import Machine, hub
from hubserver.server import HubServer
from hypothesis import given, settings
from hypothesis import strategies as st
from test_secrets_probe import served

from funes.secrets import redact

__all__ = ["hub"]


def leaked(data: bytes, frags: list[str]) -> list[str]:
    """The frags found in ``data`` as written or JSON-escaped (named by digest, never shown)."""
    out = []
    for f in frags:
        forms = {
            f.encode(),
            json.dumps(f)[1:-1].encode(),
            json.dumps(f, ensure_ascii=False)[1:-1].encode(),
        }
        if any(x in data for x in forms):
            out.append(digest(f))
    return out


def test_the_generator_covers_many_kinds_and_its_texts_hold_their_values() -> None:
    assert len(KINDS) >= 100
    for kind, text, frags in cases(random.Random(3)):
        assert frags and leaked(text.encode(), frags), kind


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=30, deadline=None, derandomize=True)
def test_every_generated_credential_is_redacted(seed: int) -> None:
    missed = {
        kind: leaked(redact(text).encode(), frags)
        for kind, text, frags in cases(random.Random(seed))
    }
    assert {k: v for k, v in missed.items() if v} == {}


# --- four agents' transcripts ------------------------------------------------------------------

CWD = "/home/ana/acme"
NOTE = "shapes probe notes for the acme cluster"


def split(text: str) -> tuple[str | None, str]:
    """A `$ command` first line is a tool call and the rest its output; else prose."""
    if text.startswith("$ "):
        head, _, rest = text.partition("\n")
        return head[2:], rest
    return None, text


def write_sessions(home: Path, texts: list[str]) -> list[Path]:
    """The texts dealt round-robin into a Claude Code, a Codex, a pi and a Hermes session: a
    command with its output as a tool call and result, anything else as a message, alternately
    the user's and the assistant's; each file ends in a truncated line (Hermes: a NULL row)."""
    dealt = [texts[i::4] for i in range(4)]
    ts = "2026-11-30T11:{:02d}:{:02d}.000Z"
    paths = []

    sid = "5a1e7c3d-0000-4000-8000-0000000000c7"
    recs: list[dict[str, object] | str] = []
    parent = None

    def add(role: str, content: object) -> None:
        nonlocal parent
        n = len(recs)
        uuid = f"5a1e7c3d-turn-{n:04d}"
        recs.append({"type": role, "uuid": uuid, "parentUuid": parent, "sessionId": sid,
                     "timestamp": ts.format(n // 60, n % 60), "cwd": CWD,
                     "message": {"role": role, "content": content}})  # fmt: skip
        parent = uuid

    for n, t in enumerate(dealt[0]):
        cmd, body = split(t)
        if cmd is not None:
            add("assistant", [{"type": "tool_use", "id": f"toolu_{n}", "name": "Bash",
                               "input": {"command": cmd}}])  # fmt: skip
            add("user", [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": body}])
        elif n % 2:
            add("assistant", [{"type": "text", "text": body}])
        else:
            add("user", body)
    recs.append('{"type": "user", "message": {"role": "user", "content": "cut sho')
    paths.append(write_jsonl(home / ".claude/projects/-home-ana-acme" / f"{sid}.jsonl", recs))

    codex: list[dict[str, object] | str] = [
        {"timestamp": ts.format(0, 0), "type": "session_meta",
         "payload": {"id": "0190aa-c7", "cwd": CWD, "cli_version": "0.141.0"}}]  # fmt: skip
    for n, t in enumerate(dealt[1]):
        cmd, body = split(t)
        item = {"timestamp": ts.format(1, n), "type": "response_item"}
        if cmd is not None:
            args = json.dumps({"cmd": ["bash", "-lc", cmd]})
            codex.append({**item, "payload": {"type": "function_call", "name": "shell",
                                              "arguments": args, "call_id": f"c{n}"}})  # fmt: skip
            codex.append({**item, "payload": {"type": "function_call_output", "call_id": f"c{n}",
                                              "output": body}})  # fmt: skip
        else:
            role = "user" if n % 2 == 0 else "assistant"
            part = "input_text" if role == "user" else "output_text"
            codex.append({**item, "payload": {"type": "message", "role": role,
                                              "content": [{"type": part, "text": body}]}})  # fmt: skip
    codex.append('{"timestamp":"2026-11-30T11:59:00.000Z","type":"response_it')
    paths.append(write_jsonl(home / ".codex/sessions/2026/11/30/rollout-c7.jsonl", codex))

    pi: list[dict[str, object] | str] = [
        {"type": "session", "version": 3, "id": "pi-c7", "timestamp": ts.format(0, 0), "cwd": CWD}
    ]
    prev = None

    def pim(msg: dict[str, object]) -> None:
        nonlocal prev
        n = len(pi)
        pi.append({"type": "message", "id": f"m{n}", "parentId": prev,
                   "timestamp": ts.format(2, n % 60), "message": msg})  # fmt: skip
        prev = f"m{n}"

    for n, t in enumerate(dealt[2]):
        cmd, body = split(t)
        if cmd is not None:
            pim({"role": "assistant", "content": [
                {"type": "toolCall", "id": f"t{n}", "name": "bash", "arguments": {"command": cmd}}]})  # fmt: skip
            pim({"role": "toolResult", "toolCallId": f"t{n}", "toolName": "bash",
                 "content": [{"type": "text", "text": body}]})  # fmt: skip
        else:
            pim({"role": "user" if n % 2 == 0 else "assistant",
                 "content": [{"type": "text", "text": body}]})  # fmt: skip
    pi.append('{"type":"message","id":"mz","message":{"role":"assi')
    paths.append(write_jsonl(home / ".pi/agent/sessions/--home-ana-acme--/pi-c7.jsonl", pi))

    db = home / ".hermes" / "state.db"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.executescript((Path(__file__).parent / "fixtures/hermes/schema.sql").read_text())
    hsid = "20261130_110000_c7"
    conn.execute("INSERT INTO sessions (id, cwd) VALUES (?, ?)", (hsid, CWD))
    row = "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, timestamp) VALUES (?, ?, ?, ?, ?, ?)"
    k = 0
    for n, t in enumerate(dealt[3]):
        cmd, body = split(t)
        when = datetime(2026, 11, 30, 11, 3, tzinfo=UTC).timestamp() + k
        if cmd is not None:
            calls = json.dumps([{"id": f"h{n}", "type": "function",
                                 "function": {"name": "terminal", "arguments": json.dumps({"command": cmd})}}])  # fmt: skip
            conn.execute(row, (hsid, "assistant", "", None, calls, when))
            conn.execute(row, (hsid, "tool", body, f"h{n}", None, when + 0.5))
        else:
            conn.execute(row, (hsid, "user" if n % 2 == 0 else "assistant", body, None, None, when))
        k += 1
    conn.execute(row, (hsid, "user", None, None, None, k + 1.0))
    conn.commit()
    conn.close()
    paths.append(db)
    return paths


def probe_corpus(home: Path, seed: int) -> tuple[list[Path], list[str]]:
    """Every kind's case, each with the note before it, in the four sessions; and every frag."""
    cs = cases(random.Random(seed))
    texts = []
    for kind, text, _ in cs:
        cmd, body = split(text)
        texts.append(text if cmd is not None else f"{NOTE} ({kind}):\n{body}")
    return write_sessions(home, texts), [f for _, _, fs in cs for f in fs]


@pytest.mark.slow
def test_parse_and_chunk_of_four_agents_leave_no_value(tmp_path: Path, private_home: Path) -> None:
    paths, frags = probe_corpus(tmp_path / "home", 77)
    parsed = run_cli("funes-parse", *paths)
    assert b"3 skipped lines" in parsed.stderr  # the truncated lines, each counted (exit 1)
    assert leaked(parsed.stdout, frags)  # the transcripts hold them before redaction
    chunked = run_cli("funes-chunk", input=parsed.stdout)
    assert chunked.returncode == 0, chunked.stderr
    assert b"[REDACTED:" in chunked.stdout and NOTE.encode() in chunked.stdout
    harnesses = {json.loads(line)["harness"] for line in chunked.stdout.decode().splitlines()}
    assert len(harnesses) == 4, harnesses
    assert leaked(chunked.stdout + chunked.stderr + parsed.stderr, frags) == []


def dir_leaks(root: Path, frags: list[str]) -> list[str]:
    return [str(f.relative_to(root)) for f in sorted(root.rglob("*"))
            if f.is_file() and leaked(f.read_bytes(), frags)]  # fmt: skip


@pytest.mark.slow
def test_an_indexed_probe_leaves_no_value_on_disk_in_any_output_or_in_a_push(
    tmp_path: Path, private_home: Path, hub: HubServer
) -> None:
    paths, frags = probe_corpus(tmp_path / "home", 78)
    mem = tmp_path / "mem"
    r = run_cli("funes", "index", *paths, "--yes", "--no-embed", "--memory", mem)
    assert r.returncode == 0, r.stderr
    assert leaked(r.stdout + r.stderr, frags) == []
    assert dir_leaks(mem, frags) == []  # LanceDB files, lexical index, stamp: raw bytes
    out = served(mem)
    assert b"[REDACTED:" in out and NOTE.encode() in out
    assert leaked(out, frags) == []

    ana = Machine(tmp_path / "ana", hub)
    parsed = ana.run("funes-parse", *paths)
    ana.index([json.loads(line) for line in parsed.stdout.decode().splitlines()])
    p = ana.funes("push", "ana/shapes", "--create")
    assert p.returncode == 0, p.stderr
    assert leaked((p.stdout + p.stderr).encode(), frags) == []
    assert leaked(b"\n".join(hub.files("ana/shapes").values()), frags) == []
