"""The formats of `recall` and `get`, shared by the CLI and the MCP server.

The *agent* formats are a byte-stable contract (docs/funes-recall.md, docs/funes-get.md): they
are the formats of the reference implementation, so agents that know funes read them unchanged.
The human renderings, for a person at a terminal, are not a contract.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from typing import Any, Protocol

from funes.hub.untrusted import (
    FENCE_CLOSE,
    FENCE_OPEN,
    defuse,
    flag_line,
    instruction_spans,
    visible_start,
)
from funes.records import Chunk, dumps
from funes.render.text import neutralise, one_line
from funes.render.turns import TurnView
from funes.results import GET_ARROW, GET_COMMAND, Hit, Result
from funes.results import get_args as _get_args
from funes.store.paths import default_memory_dir, memory_label

WEAK_LINE = (
    "weak evidence: nothing in this memory closely matches the question — "
    "the nearest passages follow; treat them as leads, not answers"
)
# A passage longer than this (only a hand-made chunk can be: funes-chunk splits at 1,200
# characters) is cut in recall's output; `get` shows its whole turn.
PASSAGE_CHARS = 8000

# ---------------------------------------------------------------------------- escaping
#
# The agent format is read by agents, and a passage is text anyone may have written (a web
# page a tool fetched, another person's memory). Two rules keep its structure unforgeable:
# metadata is printed as one line of printable characters, and a passage line that would
# read as structure is escaped with a leading backslash (docs/funes-recall.md, "Escaping").

# Structure lines, after any indentation — spaces of any width and invisible characters
# included (funes.hub.untrusted.invisible) — are a `---` separator, a hit or turn header, a
# `→ get` line, a `~` neighbour line, a fence, a flag line, the weak-evidence line. A line that
# already starts with backslashes before one of these gets one more, so the escape stays
# reversible.
_GAP = r"[\s\ufffd]*"
_STRUCTURE = re.compile(
    rf"(?P<rule>-{{3,}})|→|~{_GAP}\[|<<<|>>>|!{_GAP}instruction-like|weak{_GAP}evidence:"
    r"|\[[^\]\n]*\][^\n]*(?:score=|turn=)"
)


def escape_passage(text: str) -> str:
    """``text`` with every line that would read as agent-format structure escaped by a leading
    backslash. Lines are split as any reader might split them (``\\r``, ``\\n``, U+2028, …);
    a line counts as structure also behind an invisible or space-like prefix (U+200B, U+00A0,
    U+3000, U+FEFF, …, by Unicode category). Nothing else changes."""
    if not _STRUCTURE.search(text):  # the common case: one scan, no split
        return text
    return "".join("\\" + ln if _is_structure(ln) else ln for ln in text.splitlines(keepends=True))


def _is_structure(line: str) -> bool:
    i = visible_start(line, also="\\")
    m = _STRUCTURE.match(line, i)
    if m is None:
        return False
    # a separator is dashes alone on its line (whatever invisible characters follow them)
    return m.lastgroup != "rule" or visible_start(line[m.end() :]) == len(line) - m.end()


def passage(text: str) -> str:
    """Passage text as the agent formats print it: neutralised, then structure escaped."""
    return escape_passage(neutralise(text))


def _cap(text: str) -> str:
    if len(text) <= PASSAGE_CHARS:
        return text
    more = len(text) - PASSAGE_CHARS
    return f"{text[:PASSAGE_CHARS]}\n… [{more:,} more characters — `get` shows the whole turn]"


def recall_agent(result: Result, note: str = "") -> str:
    """The reference agent format, with the verdict line first when evidence is weak.

    A hit from someone else's memory (``hit.trusted`` false) is fenced as untrusted text,
    its neighbours inside the fence, and instruction-like spans are flagged above it.
    Metadata is one printable line and structure-like passage lines are escaped, in every
    memory (see the module's escaping notes)."""
    note = note or getattr(result, "note", "")
    if not result.hits:
        return note + no_results(result) + "\n"
    out = [note]
    if result.verdict == "weak":
        out.append(WEAK_LINE + "\n")
    for h in result.hits:
        r = h.row
        memory = getattr(h, "memory", None) or result.memory
        trusted = getattr(h, "trusted", True)
        m = _Meta(r, None if trusted else memory)
        out.append(
            f"[{m('ts')}] {m('harness')} {m('workdir')}/{m('session_id')[:8]} "
            f"{m('block_type')}  score={h.score:.3f}{_also(h)}{m.flag}\n"
        )
        out.append(f"  {GET_ARROW} {get_args(r['session_id'], r['turn_uuid'], memory)}\n")
        body = [f"{passage(_cap(r['text']))}\n"]
        for n in h.neighbors:
            body.append(
                f"  ~ [{one_line(n['role'])} {one_line(n['block_type'])} seq{n['seq']}] "
                f"{one_line(n['text'])}\n"
            )
        if trusted:
            out.extend(body)
        else:
            out.extend(_fenced(body, memory))
        out.append("---\n")
    return "".join(out)


class _Meta:
    """A hit's or turn's metadata fields as header text: one printable line each. From someone
    else's memory (``remote`` names it) a field must also have its field's shape (a timestamp
    looks like one, a harness is a plain name, …) or it is shown as ``?`` — a remote's rows
    are its own to write, and a header is structure — and :attr:`flag` says whose it is."""

    def __init__(self, row: dict[str, Any], remote: str | None) -> None:
        self.row, self.remote = row, remote
        short = one_line(remote.removeprefix("hf://datasets/")) if remote else ""
        self.flag = f"  (metadata from {short}, unchecked)" if remote else ""

    def __call__(self, name: str) -> str:
        raw = self.row.get(name)
        value = one_line(raw)
        if self.remote is None or not value or (value == raw and _SHAPES[name].fullmatch(value)):
            return value
        return "?"


_SHAPES = {
    "ts": re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)"),
    "harness": re.compile(r"[a-z0-9][a-z0-9_.-]{0,39}"),
    "role": re.compile(r"[a-z][a-z_-]{0,39}"),
    "workdir": re.compile(r"[^\s\[\]<>→~`'\"\\]{1,200}"),
    "session_id": re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+-]{0,199}"),
    "turn_uuid": re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+~-]{0,199}"),
    "block_type": re.compile(r"text|thinking|tool_use|tool_result"),
}


_FLAG = {"block_type": "type"}  # a filter's field → its recall option


def no_results(result: Result) -> str:
    """`no results` and why: the filters that left nothing to rank (`--since 30d` over a
    memory whose sessions are older), or a question nothing in the memory matches."""
    filters = getattr(getattr(result, "query", None), "filters", None)
    given = [
        f"--{_FLAG.get(name, name)} {one_line(value)}"
        for name, value in vars(filters).items()
        if value not in (None, "")
    ] if filters is not None else []  # fmt: skip
    label = one_line(result.memory)
    if given:
        return (
            f"no results — nothing in {label} matches the filters ({', '.join(given)}); "
            "widen or drop them, or see what the memory holds with `funes status`"
        )
    return (
        f"no results — nothing in {label} matches the question; `funes status` says what it holds"
    )


class Style(Protocol):
    """How a terminal shows text (the CLI's ``funes.cli._tty.Style``): its width in columns and
    the emphasis it takes (plain text where colour is off)."""

    @property
    def width(self) -> int: ...
    def bold(self, text: str) -> str: ...
    def dim(self, text: str) -> str: ...
    def accent(self, text: str) -> str: ...
    def warn(self, text: str) -> str: ...


def recall_human(result: Result, style: Style) -> str:
    """Hits for a person at a terminal: a numbered header per hit, the full session id, the
    passage wrapped to the terminal, neighbours dimmed, and a `funes get` line that runs as
    printed (``--memory`` only when the hit is not from the default memory).

    Not a contract: agents read :func:`recall_agent` (what a pipe gets)."""
    note = getattr(result, "note", "")
    out = [note] if note else []
    if not result.hits:
        return "".join(out) + no_results(result) + "\n"
    width = style.width
    if result.verdict == "weak":
        out.append(style.warn(textwrap.fill(WEAK_LINE, width)) + "\n\n")
    for h in result.hits:
        r = h.row
        memory = getattr(h, "memory", None) or result.memory
        m = _Meta(r, None if getattr(h, "trusted", True) else memory)
        when = m("ts")[:16].replace("T", " ")
        head = f"{h.rank}. {when} · {m('harness')} · {m('workdir')} · {m('block_type')}"
        head = textwrap.fill(
            f"{head} · score {h.score:.3f}{_also(h)}{m.flag}", width, subsequent_indent="   "
        )
        out.append(style.bold(head) + "\n")
        shown = None if memory == default_label() else memory
        cmd = f"{GET_COMMAND} {get_args(r['session_id'], r['turn_uuid'], shown)}"
        out.append("   " + style.accent(cmd) + "\n")
        text = neutralise(_cap(r["text"]))
        if getattr(h, "trusted", True):
            for para in text.split("\n"):
                out.append(_wrap(para, width, "   ") + "\n")
        else:
            out.extend(_fenced([escape_passage(text) + "\n"], memory))
        for n in h.neighbors:
            line = (
                f"~ {one_line(n['role'])} {one_line(n['block_type'])} seq{n['seq']}: "
                f"{one_line(n['text'])}"
            )
            out.append(style.dim(_wrap(line, width, "   ")) + "\n")
        out.append("\n")
    return "".join(out)


def _wrap(text: str, width: int, indent: str) -> str:
    if not text.strip():
        return ""
    return textwrap.fill(
        text, width, initial_indent=indent, subsequent_indent=indent, replace_whitespace=False
    )


def default_label() -> str:
    """The label of the default local memory (what a `→ get` line may leave out)."""
    return memory_label(default_memory_dir())


def _also(hit: Hit) -> str:
    """Where else the hit's exact text occurs (identical passages collapse into one hit)."""
    dups = getattr(hit, "duplicates", None) or []
    if not dups:
        return ""
    others = {d["session_id"] for d in dups} - {hit.row["session_id"]}
    if others:
        return f"  also in {len(others)} other session{'s' if len(others) > 1 else ''}"
    return f"  repeated {len(dups) + 1}× in this session"


def _fenced(body: list[str], memory: str) -> list[str]:
    text = "".join(body)
    spans = instruction_spans(text)
    source = one_line(memory.removeprefix("hf://datasets/"))
    out = [flag_line(spans)] if spans else []
    out += [FENCE_OPEN.format(source=source) + "\n", defuse(text), FENCE_CLOSE + "\n"]
    return out


def get_args(
    session_id: str,
    turn_uuid: str | None = None,
    memory: str | None = None,
    *,
    seq_from: int | None = None,
    seq_to: int | None = None,
) -> str:
    """`<session> [<turn>] [--from A] [--to B] [--memory <label>]` as the agent and human
    formats print it: each value on one printable line (:func:`one_line`), quoted only where a
    shell needs it (:func:`funes.results.get_args`)."""
    return _get_args(
        one_line(session_id),
        None if turn_uuid is None else one_line(turn_uuid),
        seq_from=seq_from,
        seq_to=seq_to,
        memory=one_line(memory) if memory else None,
    )


def get_agent(
    turns: Sequence[TurnView], note: str = "", memory: str = "", trusted: bool = True
) -> str:
    """The reference agent format of `get`. Turns from a memory that is not the user's own
    (``trusted`` false) are fenced and flagged exactly as recall fences its hits."""
    out = [note]
    for t in turns:
        m = _Meta(
            {"ts": t.ts, "role": t.role, "turn_uuid": t.turn_uuid}, None if trusted else memory
        )
        out.append(f"[{m('ts')}] {m('role')} seq{t.seq} turn={m('turn_uuid')}{m.flag}\n")
        body = passage("\n\n".join(text for _, text in t.blocks)) + "\n"
        out.extend([body] if trusted else _fenced([body], memory))
        out.append("---\n")
    return "".join(out)


def get_json(rows: Sequence[dict[str, Any]]) -> str:
    """`get --json`: one chunk record per stored piece of the turns (the chunk fields a recall
    hit carries, no vector), in (seq, turn, block, split) order; text as served (masked), with
    JSON's escapes and no others."""
    ordered = sorted(
        rows, key=lambda r: (r["seq"] or 0, r["turn_uuid"] or "", r["block_idx"] or 0,
                             r["split_idx"] or 0),
    )  # fmt: skip
    return "".join(dumps(Chunk.from_row(r)) + "\n" for r in ordered)


def get_human(
    turns: Sequence[TurnView],
    centre: str,
    width: int,
    highlight: str | None = None,
    color: bool = False,
) -> str:
    """A readable rendering for a terminal ``width`` columns wide: headers, wrapped prose,
    compressed tool blocks."""
    dim, bold, rev, off = ("\x1b[2m", "\x1b[1m", "\x1b[7m", "\x1b[0m") if color else ("",) * 4
    out = []
    for t in turns:
        mark = " ◀" if t.turn_uuid == centre else ""
        when = one_line(t.ts)[:16].replace("T", " ")
        head = f"── {when} · {one_line(t.role)} · seq {t.seq}{mark} "
        out.append(f"{bold if mark else dim}{head}{'─' * max(0, width - len(head))}{off}")
        for btype, raw in t.blocks:
            text = neutralise(raw)  # a transcript's escape sequences never reach the terminal
            if btype in ("tool_use", "tool_result"):
                lines = text.splitlines() or [""]
                out.append(f"{dim}{lines[0][: width - 2]}{off}")
                out.extend(f"{dim}  {line[: width - 4]}{off}" for line in lines[1:7])
                if len(lines) > 7:
                    out.append(f"{dim}  … {len(lines) - 7} more lines{off}")
            else:
                prefix = "(thinking) " if btype == "thinking" else ""
                for para in (prefix + text).split("\n"):
                    wrapped = textwrap.fill(para, width) if para.strip() else ""
                    if highlight and color:
                        wrapped = _highlight(wrapped, highlight, rev, off)
                    out.append(wrapped)
        out.append("")
    return "\n".join(out) + "\n"


def _highlight(text: str, needle: str, on: str, off: str) -> str:
    words = needle.split()[:6]
    if not words:
        return text
    pattern = r"\s+".join(re.escape(w) for w in words)
    return re.sub(pattern, lambda m: f"{on}{m.group(0)}{off}", text, flags=re.IGNORECASE)
