"""Every value a search or a read accepts, checked in one place.

`funes recall`, `funes-query` (its arguments and each stdin line), `funes get` and the MCP
server build their requests through :func:`query`, :func:`filters` and :func:`number`, so one bad
value gets the same one-line answer whoever asked: which value, what was wrong, what is
accepted. A bad value raises :class:`~funes.errors.UsageError` (exit 2) before any model loads
or any memory opens; nothing here does either.

Callers name values in their own spelling: ``style="cli"`` says ``-k`` and ``--type``, the JSON
of a `funes-query` line and MCP tool arguments say ``'k'`` and ``'block_type'``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from funes.errors import UsageError
from funes.records import BLOCK_TYPES, FILTERS, QUERY_NUMBERS

# plain data, cheap to import (no numpy, no LanceDB): the types a checked value becomes
from funes.results import Filters, Query, parse_when

# Inclusive ranges. Past these a request is a typo (`-k 1e12`), not a wish: the pool of a leg
# is capped far below 1,000 and a window of 1,000 turns either side is a whole session.
LIMITS: dict[str, tuple[int, int]] = {
    "k": (1, 1000),
    "candidates": (1, 1000),
    "neighbors": (0, 50),
    "window": (0, 1000),
    "half_life": (0, 36500),  # days; 0 turns recency off
    "limit": (0, 1_000_000),
    "batch": (1, 100_000),
    # the session verbs (sessions, scan, sketch, ranged get)
    "offset": (0, 10**9),
    "seq_from": (0, 10**12),
    "seq_to": (0, 10**12),
    "context": (0, 2000),
    "units": (1, 40),
    "max_chars": (1000, 40_000),
    "port": (1024, 65535),
}
INTEGERS = frozenset(
    ("k", "candidates", "neighbors", "window", "limit", "batch", "offset", "seq_from", "seq_to",
     "context", "units", "max_chars", "port")
)  # fmt: skip
CLI_NAMES = {
    "k": "-k",
    "block_type": "--type",
    "half_life": "--half-life",
    "query": "the query",
    "seq_from": "--from",
    "seq_to": "--to",
    "needle": "the needle",
}
MCP_NAMES = {"seq_from": "from_seq", "seq_to": "to_seq"}


def shown(key: str, style: str = "cli") -> str:
    """How the caller spells ``key``: ``-k``/``--type`` on a command line, ``'k'`` elsewhere."""
    if style == "cli":
        return CLI_NAMES.get(key, "--" + key.replace("_", "-"))
    return f"'{MCP_NAMES.get(key, key)}'"


def _value(v: Any) -> str:
    text = repr(v) if isinstance(v, str) else format(v, "g") if isinstance(v, float) else str(v)
    return text if len(text) <= 40 else text[:37] + "…"


def number(key: str, value: Any, style: str = "cli", bounds: tuple[int, int] | None = None) -> Any:
    """``value`` (a number, or a string as typed) as an int (or float for non-integer keys),
    inside ``bounds`` (default ``LIMITS[key]``)."""
    lo, hi = bounds or LIMITS[key]
    whole = key in INTEGERS
    kind = "a whole number" if whole else "a number"
    x: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        x = float(value)
    elif isinstance(value, str):
        try:
            x = float(value.strip())
        except ValueError:
            x = None
    ok = x is not None and math.isfinite(x) and (not whole or x == int(x)) and lo <= x <= hi
    if not ok or x is None:
        raise UsageError(
            f"{shown(key, style)} must be {kind} from {lo} to {hi} (got {_value(value)})"
        )
    return int(x) if whole else x


def text(key: str, value: Any, style: str = "cli") -> str:
    """A string argument that can be stored, searched and printed: valid UTF-8, no NUL."""
    if not isinstance(value, str):
        raise UsageError(f"{shown(key, style)} must be a string (got {_value(value)})")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a non-UTF-8 argv byte, kept by Python as a lone surrogate
        raise UsageError(f"{shown(key, style)} is not valid UTF-8") from None
    if "\x00" in value:
        raise UsageError(f"{shown(key, style)} contains a NUL character")
    return value


def block_type(value: Any, style: str = "cli") -> str:
    v = text("block_type", value, style).strip()
    if v not in BLOCK_TYPES:
        raise UsageError(
            f"{shown('block_type', style)} must be one of {', '.join(BLOCK_TYPES)} "
            f"(got {_value(value)})"
        )
    return v


def agent_names() -> list[str]:
    """The agents funes reads (sources with known places under $HOME), from the registry."""
    # lazy: funes.sources stays off fast commands' start-up
    from funes import sources

    return sorted(s.name for s in sources.registry() if s.roots)


def _several(key: str, value: Any, style: str) -> list[str]:
    """The values of a filter that may name several: a list, or one string with commas
    (``claude,codex``; ``--harness`` given twice arrives as a list)."""
    items = value if isinstance(value, (list, tuple)) else [value]
    out: list[str] = []
    for item in items:
        out += [v.strip() for v in text(key, item, style).split(",") if v.strip()]
    if not out:
        raise UsageError(f"{shown(key, style)} names no value (got {_value(value)})")
    return list(dict.fromkeys(out))


def harnesses(value: Any, style: str = "cli") -> str:
    """One agent or several (``claude,codex``, or a list) → their names, comma-joined."""
    return ",".join(dict.fromkeys(harness(v, style) for v in _several("harness", value, style)))


ROLE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def roles(value: Any, style: str = "cli") -> str:
    """One role or several (``user,assistant``) as stored on each turn, comma-joined."""
    out = _several("role", value, style)
    for r in out:
        if len(r) > 40 or not set(r) <= ROLE_CHARS:
            raise UsageError(
                f"{shown('role', style)} must be turn roles such as user, assistant, tool, "
                f"system, comma-separated (got {_value(value)})"
            )
    return ",".join(out)


def harness(value: Any, style: str = "cli") -> str:
    """An agent as the user may spell it (``claude``, ``claude_code``, an alias) → its name."""
    # lazy: funes.sources stays off fast commands' start-up
    from funes import sources

    v = text("harness", value, style).strip().lower()
    for src in sources.registry():
        if src.roots and v in (src.name, src.harness, *src.aliases):
            return src.name
    spellings = {
        alias: src.name
        for src in sources.registry()
        if src.roots
        for alias in (src.name, src.harness, *src.aliases)
    }
    import difflib  # lazy: only a misspelt value needs it (and `get` checks none)

    near = difflib.get_close_matches(v, sorted(spellings), n=1, cutoff=0.7)
    hint = f" — did you mean {spellings[near[0]]}?" if near else ""
    raise UsageError(
        f"{shown('harness', style)} must be an agent funes reads: {', '.join(agent_names())} "
        f"(got {_value(value)}{hint})"
    )


def when(key: str, value: Any, style: str = "cli") -> str:
    """A ``--since``/``--until`` bound that resolves to a date funes can compare."""

    v = text(key, value, style).strip()
    try:
        parse_when(v, end=key == "until")
    except (OverflowError, ValueError):
        # `99999y` reaches before year 1; a 5,000-digit count is not a number Python parses.
        raise UsageError(
            f"{shown(key, style)} must be a date (2026-03-01) or an age within 2,000 years "
            f"such as 7d, 12h, 2w, 6m, 5y (got {_value(value)})"
        ) from None
    except UsageError:
        raise UsageError(
            f"{shown(key, style)} must be a date (2026-03-01, 2026-03-01T10:00) or an age "
            f"such as 7d, 12h, 2w, 6m, 1y (got {_value(value)})"
        ) from None
    return v


def _blank(v: Any) -> bool:
    """None, a blank string, or a list of only blank strings: the filter is not set."""
    if isinstance(v, (list, tuple)):
        return all(_blank(x) for x in v)
    return v is None or (isinstance(v, str) and not v.strip())


def filters(raw: Mapping[str, Any], style: str = "cli") -> Filters:
    """Filters from ``raw`` (keys of :data:`FILTERS`; None or blank means any)."""

    out: dict[str, str | None] = {}
    for key in FILTERS:
        v = raw.get(key)
        if _blank(v):
            out[key] = None
        elif key == "block_type":
            out[key] = block_type(v, style)
        elif key == "harness":
            out[key] = harnesses(v, style)
        elif key == "role":
            out[key] = roles(v, style)
        elif key in ("since", "until"):
            out[key] = when(key, v, style)
        else:
            out[key] = text(key, v, style).strip()
    return Filters(**out)


def query(
    query_text: Any,
    raw: Mapping[str, Any] | None = None,
    style: str = "cli",
    id: Any = None,
) -> Query:
    """A checked :class:`~funes.results.Query`: the text, then ``k``, ``candidates``,
    ``neighbors``, ``half_life`` and the :data:`FILTERS` from ``raw`` (absent → defaults)."""

    raw = raw or {}
    words = text("query", query_text, style).strip()
    if not words:
        raise UsageError("empty query — say what to look for")
    defaults = Query("")
    nums = {
        key: number(key, raw[key], style) if raw.get(key) is not None else getattr(defaults, key)
        for key in QUERY_NUMBERS
    }
    return Query(
        words,
        nums["k"],
        nums["candidates"],
        nums["neighbors"],
        float(nums["half_life"]),
        filters(raw, style),
        id,
    )


def seq_range(seq_from: Any, seq_to: Any, style: str = "cli") -> tuple[int | None, int | None]:
    """``--from``/``--to`` seq bounds (inclusive; either may be absent), ``--to`` not before
    ``--from``."""
    lo = None if _blank(seq_from) else number("seq_from", seq_from, style)
    hi = None if _blank(seq_to) else number("seq_to", seq_to, style)
    if lo is not None and hi is not None and hi < lo:
        raise UsageError(
            f"{shown('seq_to', style)} {hi} is before {shown('seq_from', style)} {lo} — "
            "a range runs from the smaller seq to the larger"
        )
    return lo, hi


def session_filters(
    raw: Mapping[str, Any], style: str = "cli"
) -> tuple[str | None, str | None, str | None]:
    """The filters of a session listing (``harness``, ``repo``, ``workdir``, ``since``,
    ``until``) as (row filter, since bound, exclusive until bound): a session is listed when
    its rows pass the row filter and any of its turns falls between the bounds."""

    f = filters({k: raw.get(k) for k in ("harness", "repo", "workdir")}, style)
    since = when("since", raw["since"], style) if not _blank(raw.get("since")) else None
    until = when("until", raw["until"], style) if not _blank(raw.get("until")) else None
    return (
        f.where(),
        parse_when(since) if since else None,
        parse_when(until, end=True) if until else None,
    )


MAX_NEEDLE = 1000


def needle(value: Any, style: str = "cli") -> str:
    """What `scan` looks for: a non-empty literal string (kept exactly, spaces included)."""
    v = text("needle", value, style)
    if not v:
        raise UsageError(f"{shown('needle', style)} is empty — give the text to look for")
    if len(v) > MAX_NEEDLE:
        raise UsageError(
            f"{shown('needle', style)} is {len(v):,} characters; scan looks for at most "
            f"{MAX_NEEDLE:,} — give a distinctive part of it"
        )
    return v
