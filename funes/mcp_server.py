"""The MCP server: `recall`, `sessions`, `scan`, `sketch`, `get` and `status` over the user's
memories.

Each tool returns the same text the CLI prints in its agent format, so an agent reads one
format whether it shells out or calls a tool. A tool never fails the protocol for a user error:
the message comes back as a tool result marked ``isError`` (`recall error: …`), and the server
keeps answering.

`initialize` answers at once; as soon as it is answered, a background thread loads the models and the default memory and runs one throw-away search, so
an agent's first recall does not pay for them. They stay warm for the life of the process. The memory behind each call is reopened (a few milliseconds) so turns indexed by
the agents' hooks while the server runs are found at once.

The `mcp` SDK is imported inside :func:`build_server` only: importing this module stays cheap.
"""

# No `from __future__ import annotations`: the SDK reads the tools' annotations, which name
# pydantic's Field imported inside build_server.
import logging
import threading
from typing import TYPE_CHECKING, Annotated, Any

import funes
from funes.errors import FunesError, UsageError
from funes.store import memory_dir

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from funes.results import Query, Result
    from funes.retrieval import Searcher
    from funes.store.memory import Memory

log = logging.getLogger("funes.mcp")

INSTRUCTIONS = """\
funes is the user's memory of their past coding-agent sessions (of every agent it reads: \
Claude Code, Codex, Gemini CLI, Cursor, …): their prompts, your predecessors' answers and reasoning, tool calls and tool output, \
searched by words and by meaning, each passage with where it came from.

Call `recall` before you answer from assumption whenever the past may hold the answer:
- the user refers to earlier work ("like last time", "the bug we fixed", "why did we…");
- you need a decision, its rationale or a constraint agreed earlier in this project;
- before re-deriving how an API, tool, build or system here behaves — a past session may have \
worked it out, often a research sub-agent;
- before asserting that something was never built, was removed, or was decided a certain way.
Query with the distinctive words the passage would contain (names of files, functions, \
errors, options) or the question itself. A first line `weak evidence: …` means nothing \
closely matched: use the hits as leads, and say you found no record rather than inventing one.

Each hit carries a `→ get <session_id> <turn_uuid> --memory <label>` line: call `get` with those \
ids (and that memory) to read the turns around it. To find a session rather than a passage \
(the last session in a repo, what was asked last week) call `sessions`; to find every place a \
known string (an error, a file name, a hash) occurs in one session call `scan`; to learn what \
a long session was about without a question call `sketch`; to read a \
session from its start or page through it call `get` with `from_seq`/`to_seq`. A line \
starting `→ ` at the end of an answer names the call that continues it. Every tool takes \
`memory` to read a memory other than the default; `status` says what a memory holds and helps \
when results are thin or empty."""

RECALL_DESCRIPTION = """\
Search the user's past coding-agent sessions for decisions, rationale and context. Returns \
ranked passages, each with its time, agent, project and score, the full passage, a \
`→ get <session_id> <turn_uuid> --memory <label>` line for `get`, and the neighbouring turns \
(`~` lines). Use it when the user references earlier work or when context may already exist; \
before re-deriving how an API or system behaves; before asserting something was never built or \
was dropped. A first line `weak evidence: …` means no passage closely matches. `no results` \
means nothing matched at all."""

GET_DESCRIPTION = """\
Read turns of a past session, each block reassembled in full. Either a turn and the turns \
around it: pass `session_id`, `turn_uuid` and `memory` exactly as a `recall` hit's `→ get` \
line gives them (`window` turns either side). Or a range by seq: `session_id` with \
`from_seq` (and `to_seq`, default 20 turns on; no turn_uuid) — to read a session `sessions` \
listed, or the turns a `scan` hit points at. A range stops near 40,000 characters; its last \
line `→ get <session_id> --from <seq> --to <seq>` names the from_seq/to_seq that continue. \
`json` true: the same turns as chunk records, one JSON object per line (what \
`funes get --json` prints), a range's `→ get` line after them."""

SESSIONS_DESCRIPTION = """\
List the user's past sessions, newest first: start time, agent, repo (or working directory), \
number of turns, session id and the opening prompt. Use it to find a session rather than a \
passage — "what did we do in this repo last week", "the session where I asked about X" when \
the words are unknown — then read it with `get` (session_id, from_seq=0) or search it with \
`scan`. Filters: repo (owner/name), harness, since, until; pages of `limit` (≤ 200) from \
`offset`, the last line naming the next offset."""

SKETCH_DESCRIPTION = """\
A digest of one past session that needs no question: its opening ask, its last word and the \
passages that differ most from those (chosen from the stored vectors; repeats share one \
place), in session order, each cut to its share of `max_chars`. Use it to learn what a long \
session was about before reading it with `get` or searching it with `recall`/`scan` — e.g. \
for a session `sessions` listed. `units` passages (≤ 40), `max_chars` in all (≤ 40,000), \
optionally a seq range. A session whose passages have no vectors yet says so."""

SCAN_DESCRIPTION = """\
Find every occurrence of a literal string (never a regular expression) in one session: its \
prompts, answers, tool calls and tool output. Each hit gives the turn's time, role, seq and \
turn id and `context` characters around the match. Use it when you know the exact text (an \
error message, a file or function name, a commit hash, a URL) and want every place it appears \
in a session `recall` or `sessions` named; `recall` is for questions. At most 200 hits, then \
a `→ scan … --from <seq>` line: call again with that from_seq. "no occurrence" is a clean \
answer, not an error."""

STATUS_DESCRIPTION = """\
What a memory holds: chunk and session counts per agent, sessions still waiting to be indexed, \
when it was last indexed, and the models in use; for a Hub memory, which cached copy of it this \
machine reads and what it has not pushed there."""

QUERY_HELP = "what to look for: the question, or distinctive words the passage would contain"
MEMORY_HELP = (
    "a memory as on a hit's `→ get` line: a directory, or a Hugging Face dataset `owner/name`; "
    "several separated by commas (`local,owner/team`); omit for the server's memory "
    "(`local` = your default memory)"
)


class Memories:
    """The memories this server reads, by resolved path, each with one cached Searcher.

    Precedence per call: a non-blank tool ``memory`` argument, then the server's
    ``--memory``, then the default local memory.
    """

    def __init__(self, default: str | None = None) -> None:
        self.default = default.strip() if default and default.strip() else None
        self._searchers: dict[str, Searcher] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def spec(self, memory: str | None) -> str | None:
        return memory.strip() if memory and memory.strip() else self.default

    def open(self, memory: str | None) -> "Memory":
        # lazy: numpy stays off fast commands' start-up
        from funes.memories import open_one

        return open_one(self.spec(memory))

    def open_all(self, memory: str | None) -> "list[Memory]":
        # lazy: numpy stays off fast commands' start-up
        from funes.memories import open_all

        return open_all(self.spec(memory))

    def search(self, memory: str | None, query: "Query") -> "Result":
        """Run a Query on the memory's Searcher (models loaded on first use, then reused)."""
        with _LOADING:
            return self._search(memory, query)

    def _search(self, memory: str | None, query: "Query") -> "Result":
        # lazy: numpy, funes.models and funes.retrieval stay off fast commands' start-up
        from funes.memories import open_all
        from funes.models import load_embedder, load_reranker
        from funes.retrieval import MultiSearcher, Searcher

        spec = self.spec(memory)
        key = str(memory_dir(spec)) if spec is None else spec
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            mems = open_all(spec)  # the latest version of each: hooks append while we serve
            searcher = self._searchers.get(key)
            if searcher is None:
                searcher = Searcher(mems[0], load_embedder(), load_reranker())
                self._searchers[key] = searcher
            searcher.memory = mems[0]
            if len(mems) == 1:
                return searcher.search(query)
            many = [Searcher(m, searcher.embedder, searcher.reranker) for m in mems]
            return MultiSearcher(many).search(query)


# Held while models and memories load or search: a first call arriving during the warm-up
# waits for it instead of importing numpy/onnxruntime from a second thread at the same time
# (seen: "partially initialized module numpy._core._multiarray_umath").
_LOADING = threading.RLock()


def warm(memories: Memories, say: bool = False) -> None:
    """Load what a first recall needs (models, the default memory, its lexical segments and
    the ONNX sessions' first run). Best-effort: a missing memory or model is for the first
    real call to report. ``say``: one line on stderr once the models are loaded."""
    # lazy: funes.models and funes.retrieval stay off fast commands' start-up
    import sys
    import time

    from funes.models import load_embedder, load_reranker
    from funes.retrieval import Query

    t0 = time.monotonic()
    try:
        with _LOADING:
            embedder = load_embedder()
            reranker = load_reranker()
            if say:
                names = embedder.name + (f" and {reranker.name}" if reranker else "")
                print(
                    f"funes mcp: models loaded once for every client ({names}, "
                    f"{time.monotonic() - t0:.1f} s)",
                    file=sys.stderr,
                    flush=True,
                )
            memories.search(None, Query("warm up", k=1, neighbors=0))
    except Exception as e:  # the first real call reports it properly
        log.debug("warm-up stopped: %s", e)


def recall(
    memories: Memories,
    query: str,
    k: int = 8,
    block_type: str | None = None,
    harness: str | None = None,
    memory: str | None = None,
    role: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> str:
    # lazy: funes.validate and funes.render.formats stay off fast commands' start-up
    from funes import validate
    from funes.render.formats import recall_agent

    raw = {"k": k, "block_type": block_type, "harness": harness, "role": role,
           "since": since, "until": until}  # fmt: skip
    q = validate.query(" ".join(query.split()), raw, style="mcp")  # before any model loads
    return recall_agent(memories.search(memory, q))


def get(
    memories: Memories,
    session_id: str,
    turn_uuid: str = "",
    window: int = 3,
    memory: str | None = None,
    from_seq: int | None = None,
    to_seq: int | None = None,
    json: bool = False,
) -> str:
    # lazy: funes.validate, funes.render.formats and funes.render.turns stay off fast commands' start-up
    from funes import validate
    from funes.records import CHUNK_FIELDS
    from funes.render.formats import get_agent, get_json
    from funes.render.sessions import range_agent, range_rest
    from funes.render.turns import window as turn_window
    from funes.render.turns import window_rows
    from funes.store.sessions import turn_range

    sid = validate.text("session_id", session_id, style="mcp").strip()
    turn = validate.text("turn_uuid", turn_uuid or "", style="mcp").strip()
    if not turn or from_seq is not None or to_seq is not None:
        if turn:
            raise UsageError("give 'turn_uuid' or a range ('from_seq', 'to_seq'), not both")
        lo, hi = validate.seq_range(from_seq, to_seq, style="mcp")
        mem = memories.open(memory)
        if json:  # the records, then the line that continues a capped range (as the CLI's stderr)
            tr = turn_range(mem, sid, lo, hi, columns=CHUNK_FIELDS)
            return get_json(tr.rows) + range_rest(tr, mem.label)
        return range_agent(turn_range(mem, sid, lo, hi), mem.note, mem.label)
    width = validate.number("window", window, style="mcp")
    mem = memories.open(memory)
    try:
        if json:
            return get_json(window_rows(mem, sid, turn, width, CHUNK_FIELDS))
        turns = turn_window(mem, sid, turn, width)
    except FunesError:
        # Not stored: the reference's line, marked isError (the CLI exits 1 on it).
        raise Unanswered(f"turn {turn_uuid} not found in session {session_id}\n") from None
    return get_agent(turns, mem.note, mem.label, mem.trusted)


def sessions(
    memories: Memories,
    repo: str = "",
    harness: str = "",
    since: str = "",
    until: str = "",
    limit: int = 50,
    offset: int = 0,
    memory: str | None = None,
) -> str:
    # lazy: funes.validate, funes.render.sessions and the store stay off fast commands' start-up
    from funes import validate
    from funes.render.sessions import sessions_text
    from funes.store.sessions import MAX_SESSIONS, list_sessions

    raw = {"repo": repo, "harness": harness, "since": since, "until": until}
    where, lo, hi = validate.session_filters(raw, style="mcp")
    n = validate.number("limit", limit, style="mcp", bounds=(1, MAX_SESSIONS))
    skip = validate.number("offset", offset, style="mcp")
    mems = memories.open_all(memory)
    page = list_sessions(mems, where, lo, hi, n, skip)
    notes = "".join(dict.fromkeys(m.note for m in mems))
    untrusted = [m.label for m in mems if not m.trusted]
    shown = memory.strip() if memory and memory.strip() else memories.default
    return notes + sessions_text(page, shown, untrusted)


def scan(
    memories: Memories,
    needle: str,
    session_id: str,
    ignore_case: bool = False,
    context: int = 100,
    from_seq: int | None = None,
    to_seq: int | None = None,
    memory: str | None = None,
) -> str:
    # lazy: funes.validate, funes.render.sessions and the store stay off fast commands' start-up
    from funes import validate
    from funes.render.sessions import scan_text
    from funes.store.sessions import scan as scan_session

    text = validate.needle(needle, style="mcp")
    sid = validate.text("session_id", session_id, style="mcp").strip()
    ctx = validate.number("context", context, style="mcp")
    lo, hi = validate.seq_range(from_seq, to_seq, style="mcp")
    mem = memories.open(memory)
    res = scan_session(mem, sid, text, bool(ignore_case), ctx, lo, hi)
    return mem.note + scan_text(res, bool(ignore_case), mem.label)


def sketch(
    memories: Memories,
    session_id: str,
    units: int = 8,
    max_chars: int = 8000,
    from_seq: int | None = None,
    to_seq: int | None = None,
    memory: str | None = None,
) -> str:
    # lazy: funes.validate, funes.render.sessions and the store stay off fast commands' start-up
    from funes import validate
    from funes.render.sessions import sketch_text
    from funes.store.sketch import sketch as sketch_session

    sid = validate.text("session_id", session_id, style="mcp").strip()
    n = validate.number("units", units, style="mcp")
    chars = validate.number("max_chars", max_chars, style="mcp")
    lo, hi = validate.seq_range(from_seq, to_seq, style="mcp")
    mem = memories.open(memory)
    return sketch_text(sketch_session(mem, sid, n, chars, lo, hi), mem.note)


def status(memories: Memories, memory: str | None = None) -> str:
    """What `funes status` prints for the same memory (funes.status): a remote read from this
    machine's cached copy says so."""
    # lazy: funes.status (the Hub's status, the store, funes.ingest.pending and funes.models)
    # stays off fast commands' start-up
    from funes.status import status as memory_status
    from funes.store import MemoryMissing, memory_dir, memory_label

    spec = memories.spec(memory)
    try:
        return memory_status(spec)
    except MemoryMissing as e:
        label = memory_label(memory_dir(spec))
        raise Unanswered(f"memory: {label}\n{e}\n") from None


class Unanswered(FunesError):
    """A tool's failure worded as the reference words it, without the `<tool> error:` prefix (a
    turn that is not stored, a memory not built yet): still a tool result marked ``isError``,
    as the CLI exits 1 on it."""


def answer(tool: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a tool body: its text, or on any failure the one-line `<tool> error: …` text as a
    tool result marked ``isError``, so an agent tells a failure from an answer without
    reading the text (the SDK's own ToolError would prefix it with "Error executing tool")."""
    # lazy: funes.render (records, chunking) stays off the server's start-up: `initialize`
    # answers at once
    from funes.render.formats import neutralise

    try:
        return neutralise(str(fn(*args, **kwargs)))
    except Unanswered as e:
        return error_result(neutralise(str(e)))
    except FunesError as e:
        return error_result(neutralise(f"{tool} error: {e}"))
    except Exception as e:  # a bug fails its call, logged, never the server every client shares
        log.exception("%s failed", tool)
        return error_result(neutralise(f"{tool} error: {type(e).__name__}: {e}"))


def error_result(text: str) -> Any:
    # lazy: the mcp SDK stays off fast commands' start-up (the CLI imports this module)
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def build_server(default_memory: str | None = None, warm_now: bool = False) -> "MCPServer":
    """The MCP server object, tools registered; nothing heavy is loaded until a tool runs, or
    the first handshake is answered — or at once with ``warm_now`` (the HTTP server, which
    every agent of the machine shares, loads the models before its first client comes)."""
    # lazy: mcp stays off fast commands' start-up
    from mcp.server.mcpserver import MCPServer

    memories = Memories(default_memory)
    # lazy: the sources registry names the agents, only when a server is built
    from funes import validate

    agents = ", ".join(validate.agent_names())
    server = MCPServer(
        name="funes", version=funes.__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    _warm_behind(server, memories, warm_now)
    _add_recall(server, memories, agents)
    _add_readers(server, memories, agents)
    return server


def _warm_behind(server: "MCPServer", memories: Memories, warm_now: bool) -> None:
    """Load the models and open the memory behind the first handshake (or at once, with
    ``warm_now``), on a thread of its own."""
    warming = threading.Event()

    async def warm_after_initialize(ctx: Any, call_next: Any) -> Any:
        # The first message of a session is its handshake (`initialize`, or `server/discover`
        # from a client of the newer protocol): once it is answered, warm up behind it.
        result = await call_next(ctx)
        if not warming.is_set():
            warming.set()
            threading.Thread(target=warm, args=(memories,), name="funes-warm", daemon=True).start()
        return result

    server.middleware.append(warm_after_initialize)
    if warm_now:
        warming.set()
        threading.Thread(target=warm, args=(memories, True), name="funes-warm", daemon=True).start()


def _add_recall(server: "MCPServer", memories: Memories, agents: str) -> None:
    """The `recall` tool; ``agents`` names the agents its ``harness`` takes."""
    # lazy: pydantic stays off fast commands' start-up
    from pydantic import Field

    # Optional strings default to "" (blank = absent): a plain string schema suits every client.
    Memory_ = Annotated[str, Field(description=MEMORY_HELP)]

    @server.tool(name="recall", description=RECALL_DESCRIPTION, structured_output=False)
    def recall_tool(
        query: Annotated[str, Field(description=QUERY_HELP)],
        k: Annotated[int, Field(description="passages to return (default 8)")] = 8,
        block_type: Annotated[
            str, Field(description="only this kind of block: text, thinking, tool_use, tool_result")
        ] = "",
        harness: Annotated[
            str,
            Field(
                description=f"only sessions of these agents: {agents} (claude_code = claude); "
                "several comma-separated (`claude,codex`)"
            ),
        ] = "",
        memory: Memory_ = "",
        role: Annotated[
            str,
            Field(
                description="only turns of this role: `user` (what the user asked), "
                "`assistant`, `tool`; several comma-separated"
            ),
        ] = "",
        since: Annotated[
            str, Field(description="only turns at or after: 2026-03-01, or an age: 7d, 12h, 2w")
        ] = "",
        until: Annotated[
            str, Field(description="only turns up to: 2026-03-01 (that whole day), or an age: 30d")
        ] = "",
    ) -> Any:
        return answer(
            "recall", recall, memories, query, k, block_type, harness, memory, role, since, until
        )


def _add_readers(server: "MCPServer", memories: Memories, agents: str) -> None:
    """The tools that read what a memory holds: `get`, `sessions`, `sketch`, `scan`, `status`."""
    # lazy: pydantic stays off fast commands' start-up
    from pydantic import Field

    Memory_ = Annotated[str, Field(description=MEMORY_HELP)]
    Seq_ = Annotated[
        int | None, Field(description="a turn's seq (as `get`, `scan` and `sessions` print it)")
    ]

    @server.tool(name="get", description=GET_DESCRIPTION, structured_output=False)
    def get_tool(
        session_id: Annotated[str, Field(description="from the hit's `→ get` line")],
        turn_uuid: Annotated[
            str, Field(description="from the hit's `→ get` line; omit to read a range by seq")
        ] = "",
        window: Annotated[int, Field(description="turns either side (default 3)")] = 3,
        memory: Memory_ = "",
        from_seq: Seq_ = None,
        to_seq: Seq_ = None,
        json: Annotated[
            bool,
            Field(
                description="chunk records instead of text: one JSON object per stored piece "
                "(as `funes get --json`)"
            ),
        ] = False,
    ) -> Any:
        with _LOADING:  # a call during the warm-up waits: numpy must not load from two threads
            return answer(
                "get", get, memories, session_id, turn_uuid, window, memory, from_seq, to_seq,
                json,
            )  # fmt: skip

    @server.tool(name="sessions", description=SESSIONS_DESCRIPTION, structured_output=False)
    def sessions_tool(
        repo: Annotated[
            str, Field(description="only sessions in this git remote: owner/name")
        ] = "",
        harness: Annotated[
            str, Field(description=f"only these agents: {agents} (comma-separated)")
        ] = "",
        since: Annotated[str, Field(description="with a turn at or after: 2026-03-01, 7d")] = "",
        until: Annotated[str, Field(description="with a turn up to: 2026-03-01, 30d")] = "",
        limit: Annotated[int, Field(description="sessions to list, 1–200 (default 50)")] = 50,
        offset: Annotated[int, Field(description="skip the newest N (default 0)")] = 0,
        memory: Memory_ = "",
    ) -> Any:
        with _LOADING:
            return answer(
                "sessions", sessions, memories, repo, harness, since, until, limit, offset, memory
            )

    @server.tool(name="sketch", description=SKETCH_DESCRIPTION, structured_output=False)
    def sketch_tool(
        session_id: Annotated[str, Field(description="the session, as `sessions` or a hit names")],
        units: Annotated[int, Field(description="passages to show, 1–40 (default 8)")] = 8,
        max_chars: Annotated[
            int, Field(description="characters in all, 1,000–40,000 (default 8,000)")
        ] = 8000,
        from_seq: Seq_ = None,
        to_seq: Seq_ = None,
        memory: Memory_ = "",
    ) -> Any:
        with _LOADING:
            return answer(
                "sketch", sketch, memories, session_id, units, max_chars, from_seq, to_seq, memory
            )

    @server.tool(name="scan", description=SCAN_DESCRIPTION, structured_output=False)
    def scan_tool(
        needle: Annotated[str, Field(description="the exact text to find (not a pattern)")],
        session_id: Annotated[str, Field(description="the session, as `sessions` or a hit names")],
        ignore_case: Annotated[bool, Field(description="match regardless of case")] = False,
        context: Annotated[int, Field(description="characters either side (default 100)")] = 100,
        from_seq: Seq_ = None,
        to_seq: Seq_ = None,
        memory: Memory_ = "",
    ) -> Any:
        with _LOADING:
            return answer(
                "scan", scan, memories, needle, session_id, ignore_case, context, from_seq,
                to_seq, memory,
            )  # fmt: skip

    @server.tool(name="status", description=STATUS_DESCRIPTION, structured_output=False)
    def status_tool(memory: Memory_ = "") -> Any:
        with _LOADING:
            return answer("status", status, memories, memory)


def serve(default_memory: str | None = None) -> None:
    """Serve on stdin/stdout until the client closes stdin. Logs go to stderr only."""
    build_server(default_memory).run("stdio")


DEFAULT_PORT = 8765
MCP_PATH = "/mcp"
LOOPBACK = "127.0.0.1"


def http_url(port: int = DEFAULT_PORT) -> str:
    """Where `funes mcp --http` answers (what `funes add --mcp-http` registers)."""
    return f"http://{LOOPBACK}:{port}{MCP_PATH}"


def http_security(port: int) -> Any:
    """Host and Origin allowlists against DNS rebinding: a page on another site that makes
    the browser resolve its own name to 127.0.0.1 sends its own Host (and Origin), and is
    refused; only loopback names on this port pass."""
    # lazy: the mcp SDK stays off fast commands' start-up
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{h}" for h in hosts],
    )


def serve_http(default_memory: str | None = None, port: int = DEFAULT_PORT) -> None:
    """Serve the streamable HTTP transport on 127.0.0.1:``port`` (loopback only, stateless,
    plain JSON replies) until interrupted: one server per machine, the models loaded once for
    every agent that connects."""
    import socket
    import sys

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((LOOPBACK, port))
        except OSError as e:
            raise FunesError(
                f"cannot listen on {LOOPBACK}:{port}: {e.strerror} — is `funes mcp --http` "
                "already running there (`funes doctor` checks)? Or pick another --port"
            ) from None
    server = build_server(default_memory, warm_now=True)
    print(f"funes mcp: serving {http_url(port)} (loopback only)", file=sys.stderr, flush=True)
    server.run(
        "streamable-http",
        host=LOOPBACK,
        port=port,
        streamable_http_path=MCP_PATH,
        json_response=True,
        stateless_http=True,
        transport_security=http_security(port),
    )
