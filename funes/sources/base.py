"""What every source shares — the :class:`Source` record a format module exposes, the
:class:`FileStats` of one file read — and the registry of the installed sources (the
``funes.sources`` entry points). Re-exported by ``funes.sources``."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes import plugins
from funes.errors import FunesError, UsageError
from funes.records import Turn

if TYPE_CHECKING:
    from funes.sources.routing import Unit

# A parser of JSONL records: (records, path, stats) -> turns.
RecordParser = Callable[[Iterable[dict[str, Any]], "Path", "FileStats"], Iterator[Turn]]


@dataclass(frozen=True)
class Source:
    """One agent format.

    ``name`` is the CLI spelling (``claude``), ``harness`` the stored facet (``claude_code``).
    ``roots`` are the format's known locations relative to ``$HOME`` (Linux and macOS), and
    ``locate``, when given, finds them for a home (environment variables included). A JSONL format gives
    ``sniff`` (does this first record look like mine?) and ``parse_records``; a format stored in
    some other container (a database, parquet) gives ``claims`` (is this file mine by its name?)
    and ``parse_path``.
    """

    name: str
    harness: str
    roots: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ("*.jsonl",)
    sniff: Callable[[dict[str, Any]], bool] | None = None
    parse_records: RecordParser | None = None
    claims: Callable[[Path], bool] | None = None
    parse_path: Callable[[Path, FileStats], Iterator[Turn]] | None = None
    # Lower sniffs first; the catch-all format (Claude Code) sniffs last.
    sniff_order: int = 50
    # Record kinds (as counted in ``FileStats.ignored``) known to hold no conversation content;
    # any other ignored kind is reported as unexplained by the coverage report.
    not_content: frozenset[str] = frozenset()
    # Drops units of this source that another unit already covers (Hermes: a session file
    # whose session is also in state.db), so a sweep reads each conversation once.
    prune: Callable[[list[Unit]], list[Unit]] | None = None
    # The format's locations for a home, honouring the agent's own environment variables for a
    # moved home (``GEMINI_CLI_HOME``, ``XDG_DATA_HOME``, …); default: ``home / root`` for each
    # of ``roots``.
    locate: Callable[[Path], Iterable[Path]] | None = None


@dataclass
class FileStats:
    """What reading one input produced and what it could not use, by reason."""

    path: str
    harness: str = ""
    source: str = ""  # the Source.name that read it
    lines: int = 0
    records_kept: int = 0
    sessions: set[str] = field(default_factory=set)
    turns: int = 0
    blocks: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)  # bad lines, by reason
    ignored: Counter[str] = field(default_factory=Counter)  # valid records of kinds we don't index
    empty: Counter[str] = field(default_factory=Counter)  # records kept but holding no content
    repaired: Counter[str] = field(default_factory=Counter)  # bad lines read anyway, by how
    error: str | None = None
    # Read by the catch-all (Claude Code) because no source recognised its first record.
    unrecognised: bool = False
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    repaired_lines: list[tuple[int, str]] = field(default_factory=list)
    turn_ids: set[tuple[str, str]] = field(default_factory=set, repr=False)

    @property
    def skipped_lines(self) -> int:
        return sum(self.skipped.values())

    def skip(self, lineno: int, reason: str) -> None:
        self.skipped[reason] += 1
        if len(self.bad_lines) < 10:
            self.bad_lines.append((lineno, reason))

    def repair(self, lineno: int, how: str) -> None:
        self.repaired[how] += 1
        if len(self.repaired_lines) < 10:
            self.repaired_lines.append((lineno, how))

    def count(self, turn: Turn) -> Turn:
        """Count ``turn`` in, first giving it an id of its own if an earlier turn of its
        session in this input already has its id (see :func:`distinct_id`)."""
        key = (turn.session_id, turn.turn_uuid)
        if key in self.turn_ids:
            turn.turn_uuid = distinct_id(turn, self.turn_ids)
            self.repair(self.lines, "duplicate_turn_id")
            key = (turn.session_id, turn.turn_uuid)
        self.turn_ids.add(key)
        self.sessions.add(turn.session_id)
        self.turns += 1
        self.blocks.update(b.type for b in turn.blocks)
        return turn


def distinct_id(turn: Turn, taken: set[tuple[str, str]]) -> str:
    """The id of a turn whose id an earlier turn of its session already has: ``<id>~<seq>``.

    Chunk ids are made from (session, turn id, block, piece), so two turns sharing an id would
    share chunk ids and all but the first would never be stored. Each is kept instead, the
    later ones named by their position in the session — the same on every read of the file
    and of a grown copy of it. (A turn written twice word for word is then stored twice;
    recall shows the copy under the first as a duplicate.)"""
    new = f"{turn.turn_uuid}~{turn.seq}"
    while (turn.session_id, new) in taken:
        new += "~"
    return new


def no_turns(st: FileStats) -> str | None:
    """Why a file its source read yielded no turns, for a notice — None if it yielded some, or
    failed (the failure is said instead), or held no records at all."""
    read = st.records_kept + st.skipped_lines
    if st.turns or st.error or not read:
        return None
    seen = Counter({**st.ignored, **st.skipped})
    seen.update(st.empty)
    kinds = ", ".join(
        f"{k if k not in ('None', '') else 'untyped'} {n}"  # a record with no type key at all
        for k, n in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    what = f"a {st.harness or st.source} transcript"
    if st.unrecognised:
        what += " (no agent's format matched its first record; docs/sources.md lists them)"
    return f"read as {what} but no turns came of its {read} records ({kinds})"


def coverage(st: FileStats) -> dict[str, Any]:
    """What one input held and what became of it — the `funes-parse --report` record.

    Every record read is accounted for: kept as a turn, kept but empty (no content after
    normalisation), ignored by design (a kind its source declares ``not_content``),
    ignored without explanation (any other kind — it might hold content), or unreadable
    (a bad line, by reason). Lines read despite a defect are listed under ``repaired``.
    """
    src = next((s for s in registry() if s.name == st.source), None)
    known = src.not_content if src is not None else frozenset()
    return {
        "path": st.path,
        "source": st.source,
        "harness": st.harness,
        "sessions": len(st.sessions),
        "records_read": st.records_kept + st.skipped_lines,
        "records_kept": st.turns,
        "turns": st.turns,
        "blocks": dict(st.blocks),
        "empty": dict(st.empty),
        "ignored": {k: n for k, n in st.ignored.items() if k in known},
        "unexplained": {k: n for k, n in st.ignored.items() if k not in known},
        "skipped": dict(st.skipped),
        "skipped_lines": [list(x) for x in st.bad_lines],
        "repaired": dict(st.repaired),
        "repaired_lines": [list(x) for x in st.repaired_lines],
        "error": st.error,
        "no_turns": no_turns(st),
    }


# ---------------------------------------------------------------------------- registry


@cache
def registry() -> tuple[Source, ...]:
    """All installed sources, from the ``funes.sources`` entry points."""
    found: dict[str, Source] = {}
    for name, value in plugins.entry_points(plugins.SOURCES).items():
        src = plugins.load(value)
        if not isinstance(src, Source):
            raise FunesError(f"entry point {name} ({value}) is not a funes Source")
        found.setdefault(src.name, src)
    if not found:
        raise FunesError(
            "no transcript sources are registered — is funes installed? (pip install -e .)"
        )
    return tuple(sorted(found.values(), key=lambda s: (s.sniff_order, s.name)))


def get_source(name: str) -> Source:
    """The source for a CLI harness spelling, a stored facet value or an alias."""
    key = name.strip().lower()
    for src in registry():
        if key in (src.name, src.harness, *src.aliases):
            return src
    names = [s.name for s in registry()]
    expected = ", ".join(names[:-1]) + f", or {names[-1]}" if len(names) > 1 else names[0]
    raise UsageError(f'unknown harness "{name}" (expected {expected})')


def known_roots(home: Path | None = None) -> list[tuple[Source, Path]]:
    """The known transcript locations that exist on this machine, in registry order."""
    home = home or Path.home()
    out = []
    for src in registry():
        where = src.locate(home) if src.locate is not None else (home / r for r in src.roots)
        seen: set[Path] = set()
        for p in where:
            if p not in seen and p.exists():
                seen.add(p)
                out.append((src, p))
    return out


def env_path(name: str) -> Path | None:
    """The directory an environment variable names, None when it is unset or blank (``~``
    expanded, as a shell would have done for a value written in a config file)."""
    value = os.environ.get(name, "").strip()
    return Path(os.path.expanduser(value)) if value else None
