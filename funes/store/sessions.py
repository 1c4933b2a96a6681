"""Sessions as a reader sees them: which sessions a memory holds (`funes sessions`), one
session's blocks stitched back together (`funes scan`, ranged `funes get`), all read from the
table with projected scans — no model, no lexical index.

Every text served here is masked for secrets first when the memory is not vouched for
(:func:`funes.store.redaction.mask_for_serving`), exactly as recall and `get` serve it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from funes.chunking import reassemble
from funes.errors import FunesError
from funes.store import redaction
from funes.store.table import sql_in, sql_str

if TYPE_CHECKING:
    from funes.store.memory import Memory

MAX_SESSIONS = 200  # a page of `funes sessions`
PROMPT_CHARS = 2000  # of an opening prompt, kept whole in --json, cut in text
SCAN_HITS = 200  # hits of one `funes scan` before it names the --from that continues
RANGE_TURNS = 20  # turns of a ranged `get` when only --from is given
RANGE_CHARS = 40_000  # of a ranged `get` before it names the --from that continues

_SUMMARY = ("session_id", "seq", "ts", "harness", "workdir", "repo")


@dataclass
class SessionInfo:
    """One session of a memory: when it started and last moved, which agent and project,
    how many turns, and what the user asked first."""

    session_id: str
    harness: str
    workdir: str
    repo: str
    first_ts: str
    last_ts: str
    turns: int
    memory: str
    prompt: str | None = None  # the first user text block, stitched; None if it has none

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class SessionPage:
    sessions: list[SessionInfo]
    total: int  # sessions that pass the filters, over every memory read
    offset: int
    limit: int

    @property
    def next_offset(self) -> int | None:
        end = self.offset + len(self.sessions)
        return end if end < self.total else None


def list_sessions(
    mems: Sequence[Memory],
    where: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> SessionPage:
    """The sessions of ``mems`` newest first (by their first turn), ``offset`` skipped, at most
    ``limit`` of them, each with its opening prompt.

    ``where`` filters rows (agent, repo, workdir: facets every row of a session shares);
    ``since``/``until`` (ISO bounds, ``until`` exclusive) keep a session with any turn between
    them. A session held by several memories (a local one and its pushed copy) is listed
    once, from the first memory named.
    """
    seen: dict[str, SessionInfo] = {}
    mem_of: dict[str, Memory] = {}
    for mem in mems:
        for s in mem.retrying(partial(_summaries, mem, where)):
            if s.session_id in seen:
                continue
            if since is not None and s.last_ts < since:
                continue
            if until is not None and s.first_ts >= until:
                continue
            seen[s.session_id] = s
            mem_of[s.session_id] = mem
    ordered = sorted(seen.values(), key=lambda s: (s.first_ts, s.session_id), reverse=True)
    page = ordered[offset : offset + limit]
    by_mem: dict[int, list[SessionInfo]] = {}
    for s in page:
        by_mem.setdefault(id(mem_of[s.session_id]), []).append(s)
    for group in by_mem.values():
        mem = mem_of[group[0].session_id]
        prompts = mem.retrying(partial(_opening_prompts, mem, [s.session_id for s in group]))
        for s in group:
            s.prompt = prompts.get(s.session_id)
    return SessionPage(page, len(ordered), offset, limit)


def _summaries(mem: Memory, where: str | None) -> list[SessionInfo]:
    # lazy: pyarrow stays off fast commands' start-up (funes --help)
    import pyarrow as pa
    import pyarrow.compute as pc

    t = mem.rows(where, _SUMMARY)
    if not t.num_rows:
        return []
    t = t.set_column(
        t.schema.get_field_index("ts"), "ts", pc.fill_null(t.column("ts"), pa.scalar(""))
    )
    g = t.group_by("session_id").aggregate(
        [
            ("ts", "min"),
            ("ts", "max"),
            ("seq", "count_distinct"),
            ("harness", "min"),
            ("workdir", "min"),
            ("repo", "min"),
        ]
    )
    cols = {name: g.column(name).to_pylist() for name in g.column_names}
    label = mem.label
    return [
        SessionInfo(
            session_id=sid,
            harness=cols["harness_min"][i] or "",
            workdir=cols["workdir_min"][i] or "",
            repo=cols["repo_min"][i] or "",
            first_ts=cols["ts_min"][i] or "",
            last_ts=cols["ts_max"][i] or "",
            turns=int(cols["seq_count_distinct"][i]),
            memory=label,
        )
        for i, sid in enumerate(cols["session_id"])
    ]


def _opening_prompts(mem: Memory, session_ids: list[str]) -> dict[str, str]:
    """Each session's first user text block (its splits stitched), masked for serving."""
    if not session_ids:
        return {}
    cond = f"{sql_in('session_id', session_ids)} AND role = 'user' AND block_type = 'text'"
    first = mem.rows(cond, ("session_id", "seq")).to_pylist()
    start: dict[str, int] = {}
    for r in first:
        seq = r["seq"] or 0
        if seq < start.get(r["session_id"], seq + 1):
            start[r["session_id"]] = seq
    if not start:
        return {}
    pick = " OR ".join(
        f"(session_id = {sql_str(s)} AND seq = {int(q)})" for s, q in sorted(start.items())
    )
    cols = (
        "session_id",
        "turn_uuid",
        "seq",
        "role",
        "block_type",
        "block_idx",
        "split_idx",
        "text",
    )
    rows = mem.rows(f"({pick}) AND role = 'user' AND block_type = 'text'", cols).to_pylist()
    redaction.mask_for_serving(mem, rows, whole_blocks=True)
    out: dict[str, str] = {}
    for b in stitch_blocks(rows):
        if b.session_id not in out and b.text.strip():
            out[b.session_id] = b.text.strip()[:PROMPT_CHARS]
    return out


# ---------------------------------------------------------------------------- one session


@dataclass
class BlockText:
    """One block of a turn, its splits stitched back together."""

    session_id: str
    turn_uuid: str
    seq: int
    ts: str
    role: str
    block_type: str
    block_idx: int
    text: str


def stitch_blocks(rows: Sequence[dict[str, Any]]) -> list[BlockText]:
    """Rows → blocks in (seq, turn, block) order, each block's pieces reassembled."""
    key = lambda r: (r["seq"] or 0, r["turn_uuid"], r["block_idx"] or 0, r["split_idx"] or 0)  # noqa: E731
    blocks: list[BlockText] = []
    pieces: list[str] = []
    last: tuple[Any, ...] | None = None
    for r in sorted(rows, key=key):
        k = (r["session_id"], r["seq"] or 0, r["turn_uuid"], r["block_idx"] or 0)
        if k != last:
            if blocks:
                blocks[-1].text = reassemble(pieces)
            pieces = []
            last = k
            blocks.append(
                BlockText(
                    r["session_id"], r["turn_uuid"], r["seq"] or 0, r.get("ts") or "",
                    r.get("role") or "", r.get("block_type") or "", r["block_idx"] or 0, "",
                )
            )  # fmt: skip
        pieces.append(r["text"] or "")
    if blocks:
        blocks[-1].text = reassemble(pieces)
    return blocks


def no_such_session(mem: Memory, session_id: str) -> FunesError:
    """The error for a session id the memory does not hold; when ids start with it (the
    8-character id a hit header shows), it names them, since the commands take whole ids."""
    like = (
        mem.rows(f"starts_with(session_id, {sql_str(session_id)})", ("session_id",))
        .column("session_id")
        .unique()
        .to_pylist()
        if session_id
        else []
    )
    if len(like) == 1:
        return FunesError(
            f"session {session_id} not found in {mem.label} — did you mean {like[0]}? "
            "(sessions are named by their whole id)"
        )
    if like:
        shown = ", ".join(sorted(like)[:5]) + (", …" if len(like) > 5 else "")
        return FunesError(
            f"session {session_id} not found in {mem.label} — {len(like)} sessions start with "
            f"it ({shown}); name one by its whole id"
        )
    return FunesError(
        f"session {session_id} not found in {mem.label} — `funes sessions` lists the "
        "sessions it holds"
    )


_BLOCK_COLUMNS = (
    "session_id", "turn_uuid", "seq", "ts", "role", "block_type", "block_idx", "split_idx", "text",
)  # fmt: skip


def session_blocks(
    mem: Memory, session_id: str, seq_from: int | None = None, seq_to: int | None = None
) -> list[BlockText]:
    """The stitched, served (masked) blocks of one session, optionally a seq range (inclusive).
    FunesError when the memory holds no such session."""
    return mem.retrying(lambda: _session_blocks(mem, session_id, seq_from, seq_to))


def _session_blocks(
    mem: Memory, session_id: str, seq_from: int | None, seq_to: int | None
) -> list[BlockText]:
    rows = mem.session_rows(session_id, seq_from, seq_to, columns=_BLOCK_COLUMNS)
    if not rows and not mem.count(f"session_id = {sql_str(session_id)}"):
        raise no_such_session(mem, session_id)
    redaction.mask_for_serving(mem, rows, whole_blocks=True)
    return stitch_blocks(rows)


# ---------------------------------------------------------------------------- scan


@dataclass
class ScanHit:
    block: BlockText
    start: int  # character offset of the match in the block's text
    end: int
    before: str
    match: str
    after: str
    more_before: bool = False  # the block goes on before ``before`` (context cut)
    more_after: bool = False


@dataclass
class ScanResult:
    session_id: str
    needle: str
    memory: str
    hits: list[ScanHit]
    blocks: int  # blocks scanned
    turns: int  # turns scanned
    seq_from: int | None
    seq_to: int | None
    next_from: int | None = None  # when the scan stopped at the cap: the --from that continues
    cut_turn: int | None = None  # a turn with more hits than the cap: the seq it stopped in
    trusted: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


def scan(
    mem: Memory,
    session_id: str,
    needle: str,
    ignore_case: bool = False,
    context: int = 100,
    seq_from: int | None = None,
    seq_to: int | None = None,
    cap: int = SCAN_HITS,
) -> ScanResult:
    """Every occurrence of ``needle`` — a literal string, never a pattern — in one session's
    stitched blocks (``seq_from``..``seq_to`` inclusive), up to ``cap`` hits; past the cap the
    result names the seq a next scan starts from (``next_from``), stopping at a whole turn."""
    if not needle:
        raise FunesError("the needle is empty — say what text to look for")
    blocks = session_blocks(mem, session_id, seq_from, seq_to)
    pattern = re.compile(re.escape(needle), re.IGNORECASE if ignore_case else 0)
    hits: list[ScanHit] = []
    res = ScanResult(
        session_id, needle, mem.label, hits, len(blocks), len({(b.seq, b.turn_uuid) for b in blocks}),
        seq_from, seq_to, trusted=mem.trusted,
    )  # fmt: skip
    for b in blocks:
        for m in pattern.finditer(b.text):
            if len(hits) == cap:
                _stop(res, b.seq)
                return res
            s, e = m.span()
            before, after = b.text[max(0, s - context) : s], b.text[e : e + context]
            more = (s > context, e + context < len(b.text))
            hits.append(ScanHit(b, s, e, before, m.group(0), after, *more))
    return res


def _stop(res: ScanResult, seq: int) -> None:
    """The scan is full and the next hit is in turn ``seq``: continue from a whole turn."""
    hits = res.hits
    if hits[-1].block.seq != seq:
        res.next_from = seq
        return
    whole = [h for h in hits if h.block.seq != seq]
    if whole:  # drop the part of turn ``seq`` already shown: the next scan shows it whole
        res.hits[:] = whole
        res.next_from = seq
    else:  # one turn holds more hits than the cap: move past it, saying so
        res.cut_turn = seq
        res.next_from = seq + 1


# ---------------------------------------------------------------------------- ranges


@dataclass
class TurnRange:
    """The turns of a seq range that fit the character cap, and what was left out."""

    session_id: str
    memory: str
    rows: list[dict[str, Any]]  # served rows of the turns shown (masked, every piece)
    seq_from: int
    seq_to: int
    shown: int  # turns shown
    left: int  # turns of the range not shown (the cap)
    next_from: int | None  # the --from that reads them
    cut: int = 0  # characters of the last shown turn left out (one turn bigger than the cap)
    trusted: bool = True
    max_chars: int = RANGE_CHARS


# The columns a range is measured and rendered from.
RANGE_COLUMNS = ("turn_uuid", "seq", "ts", "role", "text", "block_type", "block_idx", "split_idx")


def turn_range(
    mem: Memory,
    session_id: str,
    seq_from: int | None = None,
    seq_to: int | None = None,
    max_chars: int = RANGE_CHARS,
    columns: tuple[str, ...] = RANGE_COLUMNS,
) -> TurnRange:
    """Turns ``seq_from``..``seq_to`` (inclusive; ``seq_to`` defaults to :data:`RANGE_TURNS`
    turns on) of one session, whole turns while they fit ``max_chars`` characters of text;
    a first turn bigger than that is cut at it. Rows hold ``columns`` (at least
    :data:`RANGE_COLUMNS`)."""
    return mem.retrying(lambda: _turn_range(mem, session_id, seq_from, seq_to, max_chars, columns))


def _turn_range(
    mem: Memory,
    session_id: str,
    seq_from: int | None,
    seq_to: int | None,
    max_chars: int,
    columns: tuple[str, ...],
) -> TurnRange:
    if seq_from is None:
        seqs = mem.rows(f"session_id = {sql_str(session_id)}", ("seq",)).column("seq")
        if not len(seqs):
            _session_blocks(mem, session_id, None, None)  # raises: no such session
        seq_from = min(x or 0 for x in seqs.to_pylist())
    if seq_to is None:
        seq_to = seq_from + RANGE_TURNS - 1
    cols = tuple(dict.fromkeys((*RANGE_COLUMNS, *columns)))
    rows = mem.session_rows(session_id, seq_from, seq_to, columns=cols)
    if not rows:
        _session_blocks(mem, session_id, None, None)  # raises when the session is unknown
    redaction.mask_for_serving(mem, rows, whole_blocks=True)
    by_turn: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for r in rows:
        by_turn.setdefault((r["seq"] or 0, r["turn_uuid"]), []).append(r)
    keep: list[dict[str, Any]] = []
    total = 0
    shown = 0
    cut = 0
    turns = sorted(by_turn)
    for key in turns:
        size = sum(len(r["text"] or "") for r in by_turn[key])
        if shown and total + size > max_chars:
            break
        if not shown and size > max_chars:
            keep += _cut(by_turn[key], max_chars)
            cut = size - max_chars
        else:
            keep += by_turn[key]
        total += size
        shown += 1
    left = len(turns) - shown
    next_from = turns[shown][0] if left else None
    return TurnRange(
        session_id, mem.label, keep, seq_from, seq_to, shown, left, next_from, cut, mem.trusted,
        max_chars,
    )  # fmt: skip


def _cut(rows: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """The pieces of one turn up to ``budget`` characters (the last one shortened)."""
    out = []
    for r in rows:
        text = r["text"] or ""
        if budget <= 0:
            break
        out.append({**r, "text": text[:budget]})
        budget -= len(text)
    return out
