"""What a question is and what recall answers: plain data, below the floors that print it.

- :class:`Filters` — the pre-filters of both legs, and the SQL they narrow by;
- :class:`Query` — a question with its parameters;
- :class:`Hit`, :class:`Result` — what :mod:`funes.retrieval` returns, and the hit and miss
  records (:mod:`funes.records`) a result becomes;
- :func:`get_args` — the one builder of the `get` a hit or a range points at, behind every
  `→ get` and `funes get` line the CLI, the MCP server and `ask` print, and
  :data:`GET_REFERENCE`, which reads a session back out of one;

Ranking lives in :mod:`funes.retrieval`, which re-exports these names; :mod:`funes.render`
types its formats with them. Importing this module is cheap (no numpy, no LanceDB).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from funes.errors import UsageError
from funes.records import CHUNK_FIELDS, HitRecord, MissRecord

POOL_PER_LEG = 100  # candidates each leg hands the second stage (pool recall: bench/README.md)
DEFAULT_HALF_LIFE = 90.0  # days
MAX_QUERY_CHARS = 4096  # a question, or an error message pasted whole; not a document

# ---------------------------------------------------------------------------- the `get` line

# What every reference to a turn or a range starts with: an agent reads `→ get …` (recall's and
# get's agent formats, the MCP tools, ask's prompt), a person at a terminal `funes get …`.
GET_ARROW = "→ get"
GET_COMMAND = "funes get"


def get_args(
    session_id: str,
    turn_uuid: str | None = None,
    *,
    seq_from: int | None = None,
    seq_to: int | None = None,
    memory: str | None = None,
) -> str:
    """`SESSION [TURN] [--from A] [--to B] [--memory LABEL]`, each value quoted only where a
    shell needs it: the arguments of the `get` that reads a turn (or a range of seqs). Values
    are used as given — the agent formats pass them through ``one_line`` first."""
    args = [shlex.quote(session_id)]
    if turn_uuid is not None:
        args.append(shlex.quote(turn_uuid))
    if seq_from is not None:
        args += ["--from", str(seq_from)]
    if seq_to is not None:
        args += ["--to", str(seq_to)]
    if memory:
        args += ["--memory", shlex.quote(memory)]
    return " ".join(args)


def get_command(session_id: str, turn_uuid: str | None = None, memory: str | None = None) -> str:
    """`funes get SESSION TURN [--memory LABEL]`: a command that runs as printed."""
    return f"{GET_COMMAND} {get_args(session_id, turn_uuid, memory=memory)}"


# A reference to a turn in text an agent wrote — `→ get SESSION TURN [--memory M]` or
# `funes get …`, as :func:`get_args` prints them, spacing loosened — for `ask`'s check of the
# sessions an answer cites: group 1 is the session; the turn id and the memory are not sessions
# (a Claude Code turn id is a UUID too).
GET_REFERENCE = re.compile(
    r"(?:→|\bfunes)\s*get\s+(\S+)(?:[ \t]+(?!-)\S+)?(?:[ \t]+--memory[ \t]+\S+)?"
)


# ---------------------------------------------------------------------------- a question


@dataclass
class Filters:
    """Pre-filters of both legs (applied inside each leg's search, before its top k). Every
    field narrows; None means any. ``harness`` and ``role`` may name several values,
    comma-separated (``claude,codex``): any of them."""

    block_type: str | None = None
    harness: str | None = None
    workdir: str | None = None
    repo: str | None = None
    session: str | None = None
    since: str | None = None
    until: str | None = None
    role: str | None = None

    def where(self, now: datetime | None = None) -> str | None:
        # lazy: funes.sources stays off fast commands' start-up
        from funes import sources
        from funes.store.table import sql_str

        conds = []
        if self.block_type:
            conds.append(f"block_type = {sql_str(self.block_type)}")
        if self.harness:
            names = [sources.get_source(h.strip()).harness for h in self.harness.split(",")]
            conds.append(_any_of("harness", names))
        if self.role:
            conds.append(_any_of("role", [r.strip() for r in self.role.split(",")]))
        if self.workdir:
            munged = sources.munge_workdir(self.workdir) or self.workdir
            conds.append(f"(workdir = {sql_str(munged)} OR workdir = {sql_str(self.workdir)})")
        if self.repo:
            conds.append(f"repo LIKE {sql_str('%' + _like_escape(self.repo) + '%')} ESCAPE '\\'")
        if self.session:
            conds.append(f"session_id = {sql_str(self.session)}")
        if self.since:
            conds.append(f"ts >= {sql_str(parse_when(self.since, now))}")
        if self.until:
            conds.append(f"ts < {sql_str(parse_when(self.until, now, end=True))}")
        return " AND ".join(conds) or None


def _any_of(column: str, values: list[str]) -> str:
    # lazy: the store's table module (and the models' pins under it) stays off start-up
    from funes.store.table import sql_in, sql_str

    values = list(dict.fromkeys(values))
    return f"{column} = {sql_str(values[0])}" if len(values) == 1 else sql_in(column, values)


def _like_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


_RELATIVE = re.compile(r"^(\d+)\s*([hdwmy])$")


def parse_when(value: str, now: datetime | None = None, end: bool = False) -> str:
    """An ISO-8601 UTC bound from `2026-03-01`, `2026-03-01T10:00`, or `7d`/`12h`/`2w`/`6m`/`1y` ago.

    A bare date as an upper bound means the end of that day (``--until 2026-03-01`` includes
    the 1st). Stored timestamps are ISO strings, so bounds compare as strings.
    """
    v = value.strip()
    now = now or datetime.now(UTC)
    if m := _RELATIVE.match(v):
        n, unit = int(m[1]), m[2]
        days = {"h": n / 24, "d": n, "w": 7 * n, "m": 30 * n, "y": 365 * n}[unit]
        return _iso(now - timedelta(days=days))
    try:
        t = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"cannot read the time {value!r} — use 2026-03-01, 2026-03-01T10:00 or 7d/12h/2w"
        ) from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    if end and len(v) == 10:
        t += timedelta(days=1)
    return _iso(t)


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


@dataclass
class Query:
    text: str
    k: int = 8
    candidates: int = POOL_PER_LEG
    neighbors: int = 1
    half_life: float = DEFAULT_HALF_LIFE
    filters: Filters = field(default_factory=Filters)
    id: Any = None

    def __post_init__(self) -> None:
        if len(self.text) > MAX_QUERY_CHARS:
            raise UsageError(
                f"the query is {len(self.text):,} characters; funes reads at most "
                f"{MAX_QUERY_CHARS:,} — ask with the distinctive words (names, errors, options)"
            )


@dataclass
class Hit:
    rank: int
    score: float
    row: dict[str, Any]
    scores: dict[str, Any]
    neighbors: list[dict[str, Any]] = field(default_factory=list)
    memory: str | None = None  # label of the memory this hit came from
    trusted: bool = True  # False: from a shared memory, someone else's words
    # other places holding the same text (session_id, turn_uuid, seq, ts), collapsed into this hit
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    # the other chunks of this hit's turn that the pool held (one hit per turn)
    turn_chunks: list[dict[str, Any]] = field(default_factory=list)


# ---------------------------------------------------------------------------- an answer


@dataclass
class Result:
    query: Query
    hits: list[Hit]
    verdict: str  # "strong" | "weak"
    memory: str  # label of the memory read
    reranked: bool = False
    signals: dict[str, float] = field(default_factory=dict)
    note: str = ""  # one-line notices for the output (a remote read from cache, offline, …)

    def records(self) -> list[HitRecord] | list[MissRecord]:
        """Hit records (docs/records.md), or one miss record when there are no hits."""
        if not self.hits:
            return [MissRecord(memory=self.memory, query=self.query.text, query_id=self.query.id)]
        answerable = self.signals.get("answerable")
        out = []
        for h in self.hits:
            mem = h.memory or self.memory
            out.append(
                HitRecord(
                    rank=h.rank,
                    score=round(h.score, 6),
                    scores=h.scores,
                    memory=mem,
                    chunk={f: h.row.get(f) for f in CHUNK_FIELDS},
                    neighbors=h.neighbors,
                    duplicates=[
                        {**d, "get": get_command(d["session_id"], d["turn_uuid"], mem)}
                        for d in h.duplicates
                    ],
                    turn_chunks=h.turn_chunks,
                    trusted=h.trusted,
                    verdict=self.verdict,
                    answerable=None if answerable is None else round(answerable, 4),
                    query=self.query.text,
                    query_id=self.query.id,
                )
            )
        return out
