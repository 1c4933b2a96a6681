"""Agents' homes as they lay out their sessions, built in a test from each documented format.

Each ``write_<agent>(home)`` puts one small session where that agent keeps it under ``home``
and returns a :class:`Laid`: the agent's own session id, a phrase only that session's
assistant says (for recall), and the roles and block types its turns must come out with.
The formats follow the agents' sources and the peers' notes (see docs/sources.md); no real
user's transcript is copied here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import write_jsonl

from funes import sources
from funes.records import Turn
from funes.sources import FileStats


def swept(home: Path, name: str) -> tuple[list[Turn], list[FileStats]]:
    """The turns a bare sweep of ``home`` reads with the source ``name``, and each file's stats."""
    stats: list[FileStats] = []
    units = [u for u in sources.sweep(home) if u.source and u.source.name == name]
    return list(sources.parse_units(units, stats.append)), stats


def shape(turns: list[Turn]) -> list[tuple[str, list[str]]]:
    """Each turn's role and block types."""
    return [(t.role, [b.type for b in t.blocks]) for t in turns]


def snapshot(d: Path) -> dict[str, tuple[bytes, int]]:
    """Every file of ``d`` with its bytes and modification time (to show nothing was written)."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(d.iterdir())}


@dataclass(frozen=True)
class Laid:
    harness: str
    session_id: str
    phrase: str  # said by the assistant only in this session
    turns: list[tuple[str, list[str]]]  # (role, block types) of each turn, in order
    where: Path  # the file (or database) holding it


def pi_entries(session_id: str, cwd: str, phrase: str) -> list[dict[str, Any] | str]:
    """A pi-format session: header, user, assistant (thinking + tool call), tool result,
    assistant text; a model change and a truncated last line that a live writer left."""
    ts = "2026-05-02T09:00:0{}.000Z"
    return [
        {"type": "session", "version": 3, "id": session_id, "timestamp": ts.format(0), "cwd": cwd},
        {"type": "model_change", "id": "mc", "parentId": None, "timestamp": ts.format(0)},
        {
            "type": "message", "id": "u1", "parentId": "mc", "timestamp": ts.format(1),
            "message": {"role": "user", "content": [{"type": "text", "text": "why does the tile cache thrash?"}]},
        },
        {
            "type": "message", "id": "a1", "parentId": "u1", "timestamp": ts.format(2),
            "message": {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "look at the eviction order"},
                {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "rg evict"}},
            ]},
        },
        {
            "type": "message", "id": "r1", "parentId": "a1", "timestamp": ts.format(3),
            "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                        "content": [{"type": "text", "text": "cache.rs: fn evict_oldest"}]},
        },
        {
            "type": "message", "id": "a2", "parentId": "r1", "timestamp": ts.format(4),
            "message": {"role": "assistant", "content": [{"type": "text", "text": f"The eviction is FIFO, not LRU: {phrase}."}]},
        },
        '{"type":"message","id":"a3","parentId":"a2","message":{"role":"assi',
    ]  # fmt: skip


PI_TURNS = [
    ("user", ["text"]),
    ("assistant", ["thinking", "tool_use"]),
    ("tool", ["tool_result"]),
    ("assistant", ["text"]),
]


def write_openclaw(home: Path, state: Path | None = None) -> Laid:
    """A reset archive (most of a real home's history) beside the index ``sessions.json``."""
    sid = "0b6c2f4e-openclaw-reset"
    d = (state or home / ".openclaw") / "agents" / "main" / "sessions"
    f = write_jsonl(
        d / f"{sid}.jsonl.reset.2026-05-02T10-00-00.000Z",
        pi_entries(sid, "/home/ana/gateway", "openclaw swallowed the halibut"),
    )
    (d / "sessions.json").write_text(json.dumps({"agent:main:main": {"sessionId": "live-1"}}))
    return Laid("openclaw", sid, "openclaw swallowed the halibut", PI_TURNS, f)


def write_omp(home: Path) -> Laid:
    sid = "7d1e-omp-session"
    f = write_jsonl(
        home / ".omp/agent/sessions/-home-ana-tiles/2026-05-02T09-00-00-000Z_7d1e.jsonl",
        [
            *pi_entries(sid, "/home/ana/tiles", "omp juggled the marmalade")[:1],
            {"type": "title_change", "id": "t", "parentId": None, "title": "tiles"},
            {"type": "message", "id": "dv", "parentId": None,
             "message": {"role": "developer", "content": [{"type": "text", "text": "be brief"}]}},
            *pi_entries(sid, "/home/ana/tiles", "omp juggled the marmalade")[1:],
        ],
    )  # fmt: skip
    return Laid("omp", sid, "omp juggled the marmalade", PI_TURNS, f)


GEMINI_TURNS = [
    ("user", ["text"]),
    ("assistant", ["thinking", "text", "tool_use", "tool_result"]),
    ("user", ["text"]),
    ("assistant", ["text"]),
]


def gemini_records(session_id: str, phrase: str) -> list[dict[str, Any] | str]:
    """A JSONL session as Gemini CLI writes it: the assistant message is written three times as
    its tool call runs (the last copy wins), a rewound exchange, a metadata patch, a notice."""
    ts = "2026-05-03T08:00:{:02d}.000Z"
    call = {
        "id": "call-1",
        "name": "run_shell_command",
        "args": {"command": "rg evict"},
        "status": "executing",
        "timestamp": ts.format(2),
    }
    done = {
        **call,
        "status": "success",
        "result": [
            {
                "functionResponse": {
                    "id": "call-1",
                    "name": "run_shell_command",
                    "response": {"output": "cache.rs: fn evict_oldest"},
                }
            }
        ],
    }
    gem = {
        "id": "m2",
        "timestamp": ts.format(2),
        "type": "gemini",
        "content": "",
        "thoughts": [
            {"subject": "Eviction", "description": "check the order", "timestamp": ts.format(2)}
        ],
        "model": "gemini-2.5-pro",
    }
    return [
        {"sessionId": session_id, "projectHash": "h", "startTime": ts.format(0), "lastUpdated": ts.format(0), "kind": "main"},
        {"id": "m1", "timestamp": ts.format(1), "type": "user", "content": [{"text": "why does the tile cache thrash?"}]},
        gem,
        {**gem, "content": "Let me look.", "toolCalls": [call]},
        {**gem, "content": "Let me look.", "toolCalls": [done]},
        {"id": "m3", "timestamp": ts.format(3), "type": "user", "content": "no, the other cache"},
        {"id": "m4", "timestamp": ts.format(4), "type": "gemini", "content": "a rewound answer"},
        {"$rewindTo": "m3"},
        {"id": "m5", "timestamp": ts.format(5), "type": "user", "content": [{"text": "and the fix?"}]},
        {"id": "i1", "timestamp": ts.format(5), "type": "info", "content": "Request cancelled."},
        {"id": "m6", "timestamp": ts.format(6), "type": "gemini", "content": f"Make it LRU: {phrase}."},
        {"$set": {"lastUpdated": ts.format(6)}},
    ]  # fmt: skip


def write_gemini(home: Path, gemini_home: Path | None = None) -> Laid:
    sid = "5f0c9e2a-gemini-session"
    root = (gemini_home or home) / ".gemini"
    root.mkdir(parents=True, exist_ok=True)
    (root / "projects.json").write_text(json.dumps({"projects": {"/home/ana/tiles": "tiles"}}))
    f = write_jsonl(
        root / "tmp/tiles/chats/session-2026-05-03T08-00-5f0c9e2a.jsonl",
        gemini_records(sid, "gemini polished the anchovy"),
    )
    return Laid("gemini", sid, "gemini polished the anchovy", GEMINI_TURNS, f)


COPILOT_TURNS = [
    ("user", ["text"]),
    ("assistant", ["thinking", "tool_use"]),
    ("tool", ["tool_result"]),
    ("assistant", ["text"]),
]


def copilot_events(session_id: str, cwd: str, phrase: str) -> list[dict[str, Any] | str]:
    ts = "2026-05-04T07:00:{:02d}.000Z"

    def ev(i: int, type_: str, data: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {
            "type": type_,
            "data": data,
            "id": f"e{i}",
            "timestamp": ts.format(i),
            "parentId": f"e{i - 1}" if i else None,
            **extra,
        }

    return [
        ev(0, "session.start", {"sessionId": session_id, "producer": "copilot-agent",
                                "context": {"cwd": cwd}}),
        ev(1, "session.mcp_servers_loaded", {"servers": []}, ephemeral=True),
        ev(2, "system.message", {"role": "system", "content": "You are the GitHub Copilot CLI"}),
        ev(3, "user.message", {"content": "why does the tile cache thrash?",
                               "transformedContent": "<current_datetime/> why does the tile cache thrash?"}),
        ev(4, "assistant.turn_start", {"turnId": "0"}),
        ev(5, "assistant.message_delta", {"deltaContent": "Let"}, ephemeral=True),
        ev(6, "assistant.message", {"messageId": "m1", "content": "", "reasoningText": "check eviction",
                                    "toolRequests": [{"toolCallId": "call_1", "name": "bash",
                                                      "arguments": {"command": "rg evict"}}]}),
        ev(7, "tool.execution_start", {"toolCallId": "call_1", "toolName": "bash",
                                       "arguments": {"command": "rg evict"}}),
        ev(8, "tool.execution_complete", {"toolCallId": "call_1", "success": True,
                                          "result": {"content": "cache.rs: fn evict_oldest",
                                                     "detailedContent": "diff"}}),
        ev(9, "assistant.message", {"messageId": "m2", "content": f"It is FIFO: {phrase}."}),
        ev(10, "assistant.turn_end", {"turnId": "0"}),
        ev(11, "session.shutdown", {"shutdownType": "routine"}),
        '{"type":"user.message","data":{"content":"cut sh',
    ]  # fmt: skip


def write_copilot(home: Path) -> Laid:
    sid = "9a3e1c55-copilot-session"
    d = home / ".copilot/session-state" / sid
    f = write_jsonl(
        d / "events.jsonl", copilot_events(sid, "/home/ana/tiles", "copilot buttered the walrus")
    )
    (d / "workspace.yaml").write_text(f"id: {sid}\ncwd: /home/ana/tiles\nsummary: tile cache\n")
    return Laid("copilot", sid, "copilot buttered the walrus", COPILOT_TURNS, f)


QWEN_TURNS = [
    ("user", ["text"]),
    ("assistant", ["thinking", "tool_use"]),
    ("tool", ["tool_result"]),
    ("assistant", ["text"]),
]


def qwen_records(session_id: str, cwd: str, phrase: str) -> list[dict[str, Any] | str]:
    ts = "2026-05-05T06:00:{:02d}.000Z"

    def rec(i: int, type_: str, role: str | None, parts: list[Any], **extra: Any) -> dict[str, Any]:
        out = {
            "uuid": f"q{i}",
            "parentUuid": f"q{i - 1}" if i else None,
            "sessionId": session_id,
            "timestamp": ts.format(i),
            "type": type_,
            "cwd": cwd,
            "version": "0.9.0",
            **extra,
        }
        if role is not None:
            out["message"] = {"role": role, "parts": parts}
        return out

    return [
        rec(0, "user", "user", [{"text": "why does the tile cache thrash?"}]),
        rec(1, "system", None, [], subtype="ui_telemetry", systemPayload={"uiEvent": {"event.name": "api_response"}}),
        rec(2, "assistant", "model", [{"text": "eviction order?", "thought": True},
                                      {"functionCall": {"id": "fc1", "name": "run_shell_command",
                                                        "args": {"command": "rg evict"}}}]),
        rec(3, "tool_result", "user", [{"functionResponse": {"id": "fc1", "name": "run_shell_command",
                                                             "response": {"output": "cache.rs: fn evict_oldest"}}}]),
        rec(4, "assistant", "model", [{"text": f"FIFO, not LRU: {phrase}."}]),
        rec(5, "system", None, [], subtype="chat_compression"),
        '{"uuid":"q6","type":"user","mess',
    ]  # fmt: skip


def write_qwen(home: Path) -> Laid:
    sid = "c4d1-qwen-session"
    f = write_jsonl(
        home / ".qwen/projects/-home-ana-tiles/chats" / f"{sid}.jsonl",
        qwen_records(sid, "/home/ana/tiles", "qwen tickled the sturgeon"),
    )
    return Laid("qwen", sid, "qwen tickled the sturgeon", QWEN_TURNS, f)


OPENCODE_TURNS = [
    ("user", ["text"]),
    ("assistant", ["thinking", "tool_use", "tool_result", "text"]),
]

OPENCODE_SCHEMA = """
create table project (id text primary key, worktree text not null);
create table session (id text primary key, project_id text, parent_id text, directory text,
                      title text, time_created integer, time_updated integer);
create table message (id text primary key, session_id text not null, time_created integer,
                      time_updated integer, data text not null);
create table part (id text primary key, message_id text not null, session_id text not null,
                   time_created integer, time_updated integer, data text not null);
create table event (id text primary key, data text);
create index message_session on message(session_id);
create index part_session on part(session_id);
"""


def opencode_rows(
    session_id: str, phrase: str
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """(message rows, part rows) of one exchange, as OpenCode stores them."""
    t = 1_777_800_000_000
    msgs = [
        ("msg_01u", session_id, t, t, json.dumps({"role": "user", "time": {"created": t}})),
        (
            "msg_02a",
            session_id,
            t + 1000,
            t + 5000,
            json.dumps({"role": "assistant", "parentID": "msg_01u", "time": {"created": t + 1000}}),
        ),
    ]
    parts = [
        ("prt_01", "msg_01u", session_id, t, t, json.dumps({"type": "text", "text": "why does the tile cache thrash?"})),
        ("prt_02", "msg_02a", session_id, t, t, json.dumps({"type": "step-start"})),
        ("prt_03", "msg_02a", session_id, t, t, json.dumps({"type": "reasoning", "text": "eviction order"})),
        ("prt_04", "msg_02a", session_id, t, t, json.dumps({
            "type": "tool", "tool": "bash", "callID": "call_1",
            "state": {"status": "completed", "input": {"command": "rg evict"}, "output": "cache.rs: fn evict_oldest"}})),
        ("prt_05", "msg_02a", session_id, t, t, json.dumps({"type": "text", "text": f"It is FIFO: {phrase}."})),
        ("prt_06", "msg_02a", session_id, t, t, json.dumps({"type": "file", "url": "data:image/png;base64,AAAA"})),
        ("prt_07", "msg_02a", session_id, t, t, json.dumps({"type": "step-finish", "reason": "stop"})),
    ]  # fmt: skip
    return msgs, parts


def opencode_db(db: Path, session_id: str, phrase: str, cwd: str = "/home/ana/tiles") -> None:
    import sqlite3

    db.parent.mkdir(parents=True, exist_ok=True)
    msgs, parts = opencode_rows(session_id, phrase)
    conn = sqlite3.connect(db)
    conn.executescript(OPENCODE_SCHEMA)
    conn.execute("insert into project values ('prj_1', ?)", (cwd,))
    conn.execute(
        "insert into session values (?, 'prj_1', NULL, ?, 'tiles', 0, 0)", (session_id, cwd)
    )
    conn.executemany("insert into message values (?, ?, ?, ?, ?)", msgs)
    conn.executemany("insert into part values (?, ?, ?, ?, ?, ?)", parts)
    conn.execute("insert into event values ('e1', ?)", (parts[-3][5],))  # repeats a part
    conn.commit()
    conn.close()


def write_opencode(home: Path) -> Laid:
    sid = "ses_3f1opencode"
    db = home / ".local/share/opencode/opencode.db"
    opencode_db(db, sid, "opencode waxed the narwhal")
    return Laid("opencode", sid, "opencode waxed the narwhal", OPENCODE_TURNS, db)


CURSOR_CLI_TURNS = [
    ("user", ["text"]),
    ("assistant", ["tool_use"]),
    ("user", ["tool_result"]),
    ("assistant", ["text"]),
]
CURSOR_IDE_TURNS = [
    ("user", ["text"]),
    ("assistant", ["thinking", "text", "tool_use", "tool_result"]),
]


def cursor_lines(phrase: str) -> list[dict[str, Any] | str]:
    return [
        {"role": "user", "message": {"content": [{"type": "text", "text": "why does the tile cache thrash?"}]}},
        {"role": "assistant", "message": {"content": [
            {"type": "thinking", "thinking": "[REDACTED]"},
            {"type": "tool_use", "id": "tu1", "name": "Shell", "input": {"command": "rg evict"}}]}},
        {"role": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "tu1", "content": "cache.rs: fn evict_oldest"}]}},
        {"type": "turn_ended", "status": "success"},
        {"role": "assistant", "message": {"content": f"FIFO\u2028not LRU: {phrase}."}},
        '{"role":"assistant","message":{"content":[{"type":"te',
    ]  # fmt: skip


def write_cursor_cli(home: Path) -> Laid:
    sid = "b7e2c0de-cursor-chat"
    f = write_jsonl(
        home / ".cursor/projects/home-ana-tiles/agent-transcripts" / f"{sid}.jsonl",
        cursor_lines("cursor ironed the mackerel"),
    )
    return Laid("cursor", sid, "cursor ironed the mackerel", CURSOR_CLI_TURNS, f)


def cursor_db(db: Path, composer: str, phrase: str) -> None:
    import sqlite3

    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db)
    conn.execute("create table ItemTable (key text unique on conflict replace, value blob)")
    conn.execute("create table cursorDiskKV (key text unique on conflict replace, value blob)")
    rows = {
        f"composerData:{composer}": {
            "composerId": composer, "name": "tile cache", "createdAt": 1_777_900_000_000,
            "fullConversationHeadersOnly": [{"bubbleId": "bu1", "type": 1}, {"bubbleId": "ba1", "type": 2}],
        },
        f"bubbleId:{composer}:bu1": {"type": 1, "text": "why does the tile cache thrash?",
                                      "createdAt": "2026-05-04T12:00:00.000Z",
                                      "workspaceProjectDir": "/home/ana/tiles"},
        f"bubbleId:{composer}:ba1": {"type": 2, "text": f"FIFO, not LRU: {phrase}.",
                                      "thinking": {"text": "eviction order"},
                                      "toolFormerData": {"name": "run_terminal_cmd", "toolCallId": "t1",
                                                         "rawArgs": "{\"command\":\"rg evict\"}",
                                                         "result": "{\"output\":\"cache.rs\"}"}},
        "composerData:empty": {"composerId": "empty"},
        "bubbleId:other:zz": {"type": 1, "text": "belongs to a composer not listed"},
    }  # fmt: skip
    conn.executemany(
        "insert into cursorDiskKV values (?, ?)", [(k, json.dumps(v)) for k, v in rows.items()]
    )
    conn.commit()
    conn.close()


def write_cursor_ide(home: Path) -> Laid:
    composer = "4c0ffee0-composer"
    db = home / ".config/Cursor/User/globalStorage/state.vscdb"
    cursor_db(db, composer, "cursor pickled the halibut")
    return Laid("cursor", composer, "cursor pickled the halibut", CURSOR_IDE_TURNS, db)


CLINE_TURNS = [
    ("user", ["text", "text"]),
    ("assistant", ["thinking", "text"]),
    ("user", ["text"]),
    ("assistant", ["text"]),
]


def cline_messages(phrase: str) -> list[dict[str, Any]]:
    """A Cline task's API history: tools asked for in XML, results back as user text."""
    return [
        {"role": "user", "content": [
            {"type": "text", "text": "<task>\nwhy does the tile cache thrash?\n</task>"},
            {"type": "text", "text": "<environment_details>\n# Current Working Directory (/home/ana/tiles)\n</environment_details>"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "read the eviction code"},
            {"type": "text", "text": "<execute_command>\n<command>rg evict</command>\n</execute_command>"}]},
        {"role": "user", "content": [
            {"type": "text", "text": "[execute_command for 'rg evict'] Result:\ncache.rs: fn evict_oldest"},
            {"type": "image", "source": {"type": "base64", "data": "AAAA"}}]},
        {"role": "assistant", "content": f"<attempt_completion><result>FIFO, not LRU: {phrase}.</result></attempt_completion>"},
    ]  # fmt: skip


def cline_task(home: Path, extension: str, task_id: str, phrase: str, host: str = "Code") -> Path:
    gs = home / ".config" / host / "User/globalStorage" / extension
    f = gs / "tasks" / task_id / "api_conversation_history.json"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps(cline_messages(phrase)))
    (f.parent / "ui_messages.json").write_text(
        json.dumps([{"ts": 1, "type": "say", "text": "partial", "partial": True}])
    )
    (gs / "state").mkdir(exist_ok=True)
    (gs / "state/taskHistory.json").write_text(
        json.dumps(
            [
                {
                    "id": task_id,
                    "ts": int(task_id),
                    "task": "tiles",
                    "cwdOnTaskInitialization": "/home/ana/tiles",
                }
            ]
        )
    )
    return f


def write_cline(home: Path) -> Laid:
    tid = "1777700000000"
    f = cline_task(home, "saoudrizwan.claude-dev", tid, "cline mended the octopus")
    return Laid("cline", tid, "cline mended the octopus", CLINE_TURNS, f)


def write_roo(home: Path) -> Laid:
    tid = "1777700000111"
    f = cline_task(home, "rooveterinaryinc.roo-cline", tid, "roo varnished the lobster")
    (f.parent / "history_item.json").write_text(
        json.dumps({"id": tid, "workspace": "/home/ana/roo"})
    )
    return Laid("roo", tid, "roo varnished the lobster", CLINE_TURNS, f)


def write_kilo(home: Path) -> Laid:
    tid = "1777700000222"
    f = cline_task(home, "kilocode.kilo-code", tid, "kilo starched the squid", host="Cursor")
    return Laid("kilo", tid, "kilo starched the squid", CLINE_TURNS, f)


def write_kilo_db(home: Path) -> Laid:
    """Kilo since its move onto OpenCode: OpenCode's database in Kilo's own data directory."""
    sid = "ses_7a2kilo"
    db = home / ".local/share/kilo/kilo.db"
    opencode_db(db, sid, "kilo ironed the haddock", cwd="/home/ana/kiln")
    return Laid("kilo", sid, "kilo ironed the haddock", OPENCODE_TURNS, db)


# Every agent home above, one session each (the end-to-end test indexes them all at once).
ALL = (
    write_openclaw, write_omp, write_gemini, write_copilot, write_qwen, write_opencode,
    write_cursor_cli, write_cursor_ide, write_cline, write_roo, write_kilo, write_kilo_db,
)  # fmt: skip
