"""The stdio MCP server: `recall`, `get` and `status` over the user's memories.

Each tool returns the same text the CLI prints in its agent format, so an agent reads one
format whether it shells out or calls a tool. A tool never fails the protocol for a user error:
the message comes back as text (`recall error: …`), and the server keeps answering.

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
from funes.errors import FunesError
from funes.store import memory_dir

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from funes.retrieval import Query, Result, Searcher
    from funes.store.memory import Memory

log = logging.getLogger("funes.mcp")

INSTRUCTIONS = """\
funes is the user's memory of their past coding-agent sessions (Claude Code, Codex, pi, \
Hermes): their prompts, your predecessors' answers and reasoning, tool calls and tool output, \
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
ids (and that memory) to read the turns around it. Both tools take `memory` to read a memory \
other than the default; `status` says what a memory holds."""

RECALL_DESCRIPTION = """\
Search the user's past coding-agent sessions for decisions, rationale and context. Returns \
ranked passages, each with its time, agent, project and score, the full passage, a \
`→ get <session_id> <turn_uuid> --memory <label>` line for `get`, and the neighbouring turns \
(`~` lines). Use it when the user references earlier work or when context may already exist; \
before re-deriving how an API or system behaves; before asserting something was never built or \
was dropped. A first line `weak evidence: …` means no passage closely matches. `no results` \
means nothing matched at all."""

GET_DESCRIPTION = """\
Read a turn of a past session and the turns around it (`window` turns either side), each \
block reassembled in full. Pass `session_id`, `turn_uuid` and `memory` exactly as a `recall` \
hit's `→ get` line gives them."""

STATUS_DESCRIPTION = """\
What a memory holds: chunk and session counts per agent, sessions still waiting to be indexed, \
when it was last indexed, and the models in use."""

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


def warm(memories: Memories) -> None:
    """Load what a first recall needs (models, the default memory, its lexical segments and
    the ONNX sessions' first run). Best-effort: a missing memory or model is for the first
    real call to report."""
    # lazy: funes.models and funes.retrieval stay off fast commands' start-up
    from funes.models import load_embedder, load_reranker
    from funes.retrieval import Query

    try:
        with _LOADING:
            load_embedder()
            load_reranker()
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
    memories: Memories, session_id: str, turn_uuid: str, window: int = 3, memory: str | None = None
) -> str:
    # lazy: funes.validate, funes.render.formats and funes.render.turns stay off fast commands' start-up
    from funes import validate
    from funes.render.formats import get_agent
    from funes.render.turns import window as turn_window

    width = validate.number("window", window, style="mcp")
    sid = validate.text("session_id", session_id, style="mcp").strip()
    turn = validate.text("turn_uuid", turn_uuid, style="mcp").strip()
    mem = memories.open(memory)
    try:
        turns = turn_window(mem, sid, turn, width)
    except FunesError:
        # Not stored: the reference answers with this line rather than an error.
        return f"turn {turn_uuid} not found in session {session_id}\n"
    return get_agent(turns, mem.note, mem.label, mem.trusted)


def status(memories: Memories, memory: str | None = None) -> str:
    # lazy: funes.ingest.pending, funes.models, funes.models.reranker, funes.render.status and numpy stay off fast commands' start-up
    from funes.ingest.pending import pending_sources
    from funes.models import EMBEDDER_PIN
    from funes.models.reranker import find_reranker
    from funes.render.status import status_text
    from funes.store import MemoryMissing, memory_dir, memory_label
    from funes.store.status import memory_status

    try:
        mem = memories.open(memory)
    except MemoryMissing as e:
        label = memory_label(memory_dir(memories.spec(memory)))
        return f"memory: {label}\n{e}\n"
    rr = find_reranker()
    return status_text(
        memory_status(mem, pending_sources(mem.path)),
        {"embedder": EMBEDDER_PIN.name, "reranker": rr.name if rr else None},
    )


def answer(tool: str, fn: Any, *args: Any, **kwargs: Any) -> str:
    """Run a tool body; any failure becomes the one-line `<tool> error: …` text."""
    try:
        return str(fn(*args, **kwargs))
    except FunesError as e:
        return f"{tool} error: {e}"
    except Exception as e:
        log.exception("%s failed", tool)
        return f"{tool} error: {type(e).__name__}: {e}"


def build_server(default_memory: str | None = None) -> "MCPServer":
    """The MCP server object, tools registered; nothing heavy is loaded until a tool runs."""
    # lazy: mcp and pydantic stay off fast commands' start-up
    from mcp.server.mcpserver import MCPServer
    from pydantic import Field

    memories = Memories(default_memory)
    server = MCPServer(
        name="funes", version=funes.__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
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
                description="only sessions of these agents: claude (= claude_code), codex, pi, "
                "hermes; several comma-separated (`claude,codex`)"
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
    ) -> str:
        return answer(
            "recall", recall, memories, query, k, block_type, harness, memory, role, since, until
        )

    @server.tool(name="get", description=GET_DESCRIPTION, structured_output=False)
    def get_tool(
        session_id: Annotated[str, Field(description="from the hit's `→ get` line")],
        turn_uuid: Annotated[str, Field(description="from the hit's `→ get` line")],
        window: Annotated[int, Field(description="turns either side (default 3)")] = 3,
        memory: Memory_ = "",
    ) -> str:
        with _LOADING:  # a call during the warm-up waits: numpy must not load from two threads
            return answer("get", get, memories, session_id, turn_uuid, window, memory)

    @server.tool(name="status", description=STATUS_DESCRIPTION, structured_output=False)
    def status_tool(memory: Memory_ = "") -> str:
        with _LOADING:
            return answer("status", status, memories, memory)

    return server


def serve(default_memory: str | None = None) -> None:
    """Serve on stdin/stdout until the client closes stdin. Logs go to stderr only."""
    build_server(default_memory).run("stdio")
