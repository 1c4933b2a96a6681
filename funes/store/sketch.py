"""A digest of one session that needs no question (`funes sketch`): the passages that span
what the session talked about, chosen from the vectors already stored.

Pivoted Gram–Schmidt: centre the session's passage vectors on their mean, take the opening
ask and the last word first, then repeatedly take the passage with the largest residual once
what was already taken is projected out — each pick is the passage least explained by the
picks before it. A passage whose vector nearly repeats a pick (cosine ≥
:data:`NEAR_DUPLICATE`) shares that pick's place instead of taking its own.

The choice is cached per session content and model (the ids of the passages with vectors,
the range, the number of units), under ``$FUNES_HOME/cache/sketch``: a second sketch of an
unchanged session reads the few chosen rows and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from funes.store import redaction
from funes.store.memory import Memory, sql_in, sql_str
from funes.store.paths import funes_home
from funes.store.private import private_dir
from funes.store.sessions import no_such_session

UNITS = 8
MAX_UNITS = 40
MAX_CHARS = 8000
MAX_MAX_CHARS = 40_000
UNIT_CHARS = 240  # every unit shows at least this much of its passage
NEAR_DUPLICATE = 0.95
CACHE_VERSION = 1


@dataclass
class Unit:
    row: dict[str, Any]  # id, session_id, turn_uuid, seq, ts, role, block_type, …, text
    alike: list[int] = field(default_factory=list)  # seqs of near-duplicates sharing its place
    why: str = ""  # "opening ask", "last word", or "" for a pick by residual


@dataclass
class Sketch:
    session_id: str
    memory: str
    units: list[Unit]
    passages: int  # passages with vectors the digest chose from
    without_vectors: int  # rows of the range still waiting for a vector (or never embedded)
    seq_from: int | None
    seq_to: int | None
    unit_chars: int
    cached: bool = False
    trusted: bool = True


def sketch(
    mem: Memory,
    session_id: str,
    units: int = UNITS,
    max_chars: int = MAX_CHARS,
    seq_from: int | None = None,
    seq_to: int | None = None,
) -> Sketch:
    """The digest of one session (or a seq range of it): ``units`` passages in seq order,
    each cut to ``max(UNIT_CHARS, max_chars // units)`` characters. A session that has rows
    but no vectors yet gives a Sketch without units (``without_vectors`` says how many wait);
    a session the memory does not hold is a FunesError."""
    return mem.retrying(lambda: _sketch(mem, session_id, units, max_chars, seq_from, seq_to))


def _sketch(
    mem: Memory,
    session_id: str,
    units: int,
    max_chars: int,
    seq_from: int | None,
    seq_to: int | None,
) -> Sketch:
    cond = f"session_id = {sql_str(session_id)}"
    if seq_from is not None:
        cond += f" AND seq >= {int(seq_from)}"
    if seq_to is not None:
        cond += f" AND seq <= {int(seq_to)}"
    meta = mem.rows(cond, ("id", "seq", "block_idx", "split_idx", "role", "block_type"))
    unit_chars = max(UNIT_CHARS, max_chars // max(units, 1))
    if not meta.num_rows:
        if not mem.count(f"session_id = {sql_str(session_id)}"):
            raise no_such_session(mem, session_id)
        return Sketch(session_id, mem.label, [], 0, 0, seq_from, seq_to, unit_chars)
    rows = meta.to_pylist()
    rows.sort(key=lambda r: (r["seq"] or 0, r["block_idx"] or 0, r["split_idx"] or 0, r["id"]))
    key = _key(mem, session_id, [r["id"] for r in rows], units, seq_from, seq_to)
    picked = _cached(key)
    cached = picked is not None
    with_vectors = None
    if picked is None:
        vec = mem.rows(f"{cond} AND vector IS NOT NULL", ("id", "vector"))
        ids = [str(x) for x in vec.column("id").to_pylist()]
        with_vectors = len(ids)
        if not ids:
            return Sketch(session_id, mem.label, [], 0, len(rows), seq_from, seq_to, unit_chars)
        flat = vec.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        x = np.asarray(flat, dtype=np.float32).reshape(len(ids), -1)
        order = {r["id"]: i for i, r in enumerate(rows)}
        pos = np.argsort([order[i] for i in ids], kind="stable")
        ids = [ids[i] for i in pos]
        x = x[pos]
        by_id = {r["id"]: r for r in rows}
        picked = _choose(ids, x, [by_id[i] for i in ids], units)
        picked["passages"] = len(ids)
        _store(key, picked)
    chosen = [u["id"] for u in picked["units"]]
    cols = ("id", "session_id", "turn_uuid", "seq", "ts", "role", "block_type", "block_idx",
            "split_idx", "text")  # fmt: skip
    fetched = {r["id"]: r for r in mem.rows(sql_in("id", chosen), cols).to_pylist()}
    redaction.mask_for_serving(mem, list(fetched.values()))
    out = [
        Unit(fetched[u["id"]], u["alike"], u["why"]) for u in picked["units"] if u["id"] in fetched
    ]
    n = int(picked["passages"])
    waiting = len(rows) - n if with_vectors is None else len(rows) - with_vectors
    return Sketch(
        session_id, mem.label, out, n, waiting, seq_from, seq_to, unit_chars, cached, mem.trusted
    )


def _choose(ids: list[str], x: np.ndarray, rows: list[dict[str, Any]], units: int) -> dict:
    """Pivoted Gram–Schmidt over ``x`` (rows in session order): the opening ask and the last
    word first, then the largest residual each time; near-duplicates of a pick join it."""
    n = len(ids)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    unit_x = x / np.where(norms > 0, norms, 1)
    resid = (x - x.mean(axis=0)).astype(np.float64)
    taken = np.zeros(n, dtype=bool)
    picks: list[tuple[int, str]] = []
    first = next((i for i, r in enumerate(rows) if r["role"] == "user" and
                  r["block_type"] == "text"), 0)  # fmt: skip
    last = next((i for i in range(n - 1, -1, -1) if rows[i]["role"] == "assistant" and
                 rows[i]["block_type"] == "text"), n - 1)  # fmt: skip

    def take(i: int, why: str) -> None:
        nonlocal resid
        taken[i] = True
        # near-duplicates share this pick's place: never picked on their own
        taken[(unit_x @ unit_x[i]) >= NEAR_DUPLICATE] = True
        picks.append((i, why))
        q = resid[i]
        length = float(np.linalg.norm(q))
        if length > 1e-9:
            q = q / length
            resid = resid - np.outer(resid @ q, q)

    take(first, "opening ask" if rows[first]["role"] == "user" else "first passage")
    if last != first and len(picks) < units:
        take(last, "last word" if rows[last]["role"] == "assistant" else "last passage")
    while len(picks) < units and not taken.all():
        r = np.linalg.norm(resid, axis=1)
        r[taken] = -1.0
        i = int(np.argmax(r))
        if r[i] <= 1e-6:
            break
        take(i, "")
    # every passage joins the pick it most resembles, if it nearly repeats it
    chosen = [i for i, _ in picks]
    sims = unit_x @ unit_x[chosen].T
    alike: dict[int, list[int]] = {i: [] for i in chosen}
    for j in range(n):
        if j in alike:
            continue
        k = int(np.argmax(sims[j]))
        if sims[j, k] >= NEAR_DUPLICATE:
            alike[chosen[k]].append(int(rows[j]["seq"] or 0))
    ordered = sorted(picks, key=lambda p: p[0])
    return {
        "units": [
            {"id": ids[i], "why": why, "alike": sorted(set(alike[i]) - {rows[i]["seq"]})}
            for i, why in ordered
        ]
    }


# ---------------------------------------------------------------------------- cache


def _key(
    mem: Memory,
    session_id: str,
    ids: list[str],
    units: int,
    seq_from: int | None,
    seq_to: int | None,
) -> str:
    """The session's content (its row ids in order, and how many have a vector), the model,
    the range and the number of units."""
    h = hashlib.sha256()
    waiting = mem.count(
        f"session_id = {sql_str(session_id)} AND vector IS NULL"
        + (f" AND seq >= {int(seq_from)}" if seq_from is not None else "")
        + (f" AND seq <= {int(seq_to)}" if seq_to is not None else "")
    )
    head = [CACHE_VERSION, mem.model, session_id, units, seq_from, seq_to, waiting]
    h.update(json.dumps(head).encode())
    for i in ids:
        h.update(i.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def _cache_dir() -> Any:
    return funes_home() / "cache" / "sketch"


def _cached(key: str) -> dict | None:
    try:
        doc = json.loads((_cache_dir() / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("units"), list) else None


def _store(key: str, doc: dict) -> None:
    """Best-effort: a sketch that cannot be cached is still printed."""
    try:
        d = private_dir(_cache_dir())
        tmp = d / f".{key}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(doc), encoding="utf-8")
        tmp.replace(d / f"{key}.json")
    except OSError:
        pass
