"""The texts of the session verbs — `sessions`, `scan`, ranged `get`, `sketch` — shared by the
CLI and the MCP server. Like recall's agent format: metadata on one printable line, passage
text escaped where it would read as structure, someone else's memory fenced; every line that
continues a capped answer is a `→` line naming the command that reads the rest."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import Any

from funes.hub.untrusted import FENCE_CLOSE, FENCE_OPEN, defuse, flag_line, instruction_spans
from funes.render.formats import escape_passage, get_agent, get_args, one_line
from funes.render.turns import group_turns
from funes.results import GET_ARROW, GET_COMMAND
from funes.store.sessions import ScanResult, SessionPage, TurnRange
from funes.store.sketch import Sketch

PROMPT_SHOWN = 200  # characters of an opening prompt in the text listing


def _q(value: Any) -> str:
    return shlex.quote(one_line(value))


def _memory_arg(memory: str | None) -> str:
    return f" --memory {_q(memory)}" if memory else ""


def fenced(text: str, memory: str) -> str:
    """Text from someone else's memory, fenced and flagged as recall fences a hit."""
    spans = instruction_spans(text)
    source = one_line(memory.removeprefix("hf://datasets/"))
    head = flag_line(spans) if spans else ""
    return f"{head}{FENCE_OPEN.format(source=source)}\n{defuse(text)}{FENCE_CLOSE}\n"


# ---------------------------------------------------------------------------- sessions


def sessions_text(
    page: SessionPage, memory_arg: str | None = None, untrusted: Sequence[str] = ()
) -> str:
    """One header line per session, newest first, its opening prompt below it (quoted, cut);
    a last `→` line with the `--offset` of the next page when there is one. ``untrusted``
    names the memories whose prompts are someone else's words (fenced)."""
    if not page.sessions:
        if page.total:
            return f"no sessions past offset {page.offset} (there are {page.total})\n"
        return "no sessions\n"
    out = []
    for s in page.sessions:
        where = s.repo or s.workdir or "-"
        turns = f"{s.turns} turn{'s' if s.turns != 1 else ''}"
        out.append(
            f"[{one_line(s.first_ts)}] {one_line(s.harness)} {one_line(where)} {turns} "
            f"{one_line(s.session_id)}\n"
        )
        if s.prompt:
            text = one_line(s.prompt)
            if len(text) > PROMPT_SHOWN:
                text = text[: PROMPT_SHOWN - 1] + "…"
            line = f"  > {text}\n"
            out.append(fenced(line, s.memory) if s.memory in untrusted else line)
    first, last = page.offset + 1, page.offset + len(page.sessions)
    out.append(f"sessions {first}–{last} of {page.total}\n")
    if page.next_offset is not None:
        out.append(
            f"→ sessions --offset {page.next_offset} --limit {page.limit}"
            f"{_memory_arg(memory_arg)}\n"
        )
    return "".join(out)


def sessions_json(page: SessionPage) -> str:
    """One JSON object per session (``kind: "session"``), newest first."""
    return "".join(
        json.dumps({"kind": "session", "v": 1, **s.to_dict()}, ensure_ascii=False) + "\n"
        for s in page.sessions
    )


# ---------------------------------------------------------------------------- scan


def scan_text(res: ScanResult, ignore_case: bool = False, memory_arg: str | None = None) -> str:
    """Each occurrence as a header (time, role, seq, turn, block, offset) and one line of
    context around it; a plain sentence when there is none; a `→` line with the `--from`
    that continues when the cap was reached."""
    span = _span(res.seq_from, res.seq_to)
    needle = json.dumps(res.needle, ensure_ascii=False)
    if not res.hits:
        return (
            f"no occurrence of {needle} in session {one_line(res.session_id)}{span} "
            f"({res.turns} turns, {res.blocks} blocks scanned)\n"
        )
    out = []
    for h in res.hits:
        b = h.block
        out.append(
            f"[{one_line(b.ts)}] {one_line(b.role)} seq{b.seq} turn={one_line(b.turn_uuid)} "
            f"{one_line(b.block_type)} @{h.start}\n"
        )
        before = ("…" if h.more_before else "") + one_line(h.before)
        after = one_line(h.after) + ("…" if h.more_after else "")
        line = f"  {before}{one_line(h.match)}{after}\n"
        line = escape_passage(line)
        out.append(line if res.trusted else fenced(line, res.memory))
    n = len(res.hits)
    out.append(f"{n} occurrence{'s' if n != 1 else ''} of {needle}{span}\n")
    if res.next_from is not None:
        if res.cut_turn is not None:
            turn = get_args(res.session_id, seq_from=res.cut_turn, seq_to=res.cut_turn)
            out.append(
                f"(turn seq{res.cut_turn} holds more than {n} occurrences; the rest of it is "
                f"not shown — `get {turn}` reads it)\n"
            )
        flags = " -i" if ignore_case else ""
        to = f" --to {res.seq_to}" if res.seq_to is not None else ""
        out.append(
            f"→ scan {_q(res.needle)} {_q(res.session_id)} --from {res.next_from}{to}"
            f"{flags}{_memory_arg(memory_arg)}\n"
        )
    return "".join(out)


def _span(lo: int | None, hi: int | None) -> str:
    if lo is None and hi is None:
        return ""
    if hi is None:
        return f" from seq {lo}"
    if lo is None:
        return f" up to seq {hi}"
    return f" in seq {lo}–{hi}"


# ---------------------------------------------------------------------------- ranged get


def range_agent(tr: TurnRange, note: str = "", memory_arg: str | None = None) -> str:
    """The turns of a range in `get`'s agent format, then a `→` line naming the `--from` that
    reads the turns the character cap left out."""
    out = get_agent(group_turns(tr.rows), note, tr.memory, tr.trusted)
    if not tr.rows:
        out += f"no turns in seq {tr.seq_from}–{tr.seq_to} of session {one_line(tr.session_id)}\n"
    return out + range_rest(tr, memory_arg)


def range_rest(tr: TurnRange, memory_arg: str | None = None) -> str:
    """What the character cap left out of a range, and the `→ get` line that reads it ("" when
    nothing was)."""
    out = ""
    if tr.cut:
        out += f"(the last turn shown is cut: {tr.cut:,} more characters)\n"
    if tr.next_from is not None:
        s = "s" if tr.left != 1 else ""
        rest = get_args(tr.session_id, seq_from=tr.next_from, seq_to=tr.seq_to, memory=memory_arg)
        out += (
            f"{tr.left} more turn{s} of seq {tr.seq_from}–{tr.seq_to} past the "
            f"{tr.max_chars:,}-character cap\n"
            f"{GET_ARROW} {rest}\n"
        )
    return out


# ---------------------------------------------------------------------------- sketch


def sketch_text(sk: Sketch, note: str = "") -> str:
    """A header naming the session and what the digest chose from, then each unit as a turn
    header (with the seqs of near-duplicates sharing its place) and its passage cut to the
    unit's share of the characters; a clear line when the session has no vectors yet."""
    sid = one_line(sk.session_id)
    span = _span(sk.seq_from, sk.seq_to)
    if not sk.units:
        if sk.without_vectors:
            return note + (
                f"session {sid}{span} has no vectors yet ({_passages(sk.without_vectors)} "
                "waiting for one), so it cannot be sketched — `funes index --backfill` embeds "
                "them; "
                f"meanwhile `{GET_COMMAND} {get_args(sk.session_id, seq_from=0)}` reads it\n"
            )
        return note + f"session {sid} has no turns{span}\n"
    out = [note]
    n = len(sk.units)
    out.append(
        f"sketch of session {sid}{span}: {n} passage{'s' if n != 1 else ''} of {sk.passages}"
        + (f" ({sk.without_vectors} without vectors left out)" if sk.without_vectors else "")
        + "\n---\n"
    )
    for u in sk.units:
        r = u.row
        extra = f" ({u.why})" if u.why else ""
        if u.alike:
            shown = ", ".join(str(s) for s in u.alike[:8]) + (", …" if len(u.alike) > 8 else "")
            extra += f" (+{len(u.alike)} alike: seq {shown})"
        out.append(
            f"[{one_line(r['ts'])}] {one_line(r['role'])} seq{r['seq']} "
            f"turn={one_line(r['turn_uuid'])} {one_line(r['block_type'])}{extra}\n"
        )
        text = r["text"] or ""
        if len(text) > sk.unit_chars:
            text = text[: sk.unit_chars - 1] + "…"
        body = escape_passage(text) + "\n"
        out.append(body if sk.trusted else fenced(body, sk.memory))
        out.append("---\n")
    return "".join(out)


def _passages(n: int) -> str:
    return f"{n} passage{'s' if n != 1 else ''}"
