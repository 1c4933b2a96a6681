"""Agent transcript formats → Turns.

Each agent format is one module exposing a ``SOURCE`` (a :class:`Source`), registered under the
entry-point group ``funes.sources``; nothing else in funes knows the formats' names. This module
holds what they share: the registry, harness detection and routing, line-level JSONL reading with
skip accounting, and the workdir / repo facets.
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import subprocess
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import IO, Any

from funes import plugins
from funes.errors import FunesError, UsageError
from funes.records import TooDeep, Turn, check_value, fix_surrogates, load_json

# A parser of JSONL records: (records, path, stats) -> turns.
RecordParser = Callable[[Iterable[dict[str, Any]], "Path", "FileStats"], Iterator[Turn]]


@dataclass(frozen=True)
class Source:
    """One agent format.

    ``name`` is the CLI spelling (``claude``), ``harness`` the stored facet (``claude_code``).
    ``roots`` are the format's known locations relative to ``$HOME``. A JSONL format gives
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
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    repaired_lines: list[tuple[int, str]] = field(default_factory=list)

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
        self.sessions.add(turn.session_id)
        self.turns += 1
        self.blocks.update(b.type for b in turn.blocks)
        return turn


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
        for rel in src.roots:
            p = home / rel
            if p.exists():
                out.append((src, p))
    return out


# ---------------------------------------------------------------------------- routing


class NotATranscript(FunesError):
    """An input that holds no transcript at all (binary data, nothing recognisable)."""


@dataclass(frozen=True)
class Unit:
    """One input file and the source that reads it (None: decided by sniffing).

    A file fetched from elsewhere (a shard of a Hub trace dataset) also has ``key``, the name
    state and provenance use instead of its local path, ``revision``, its signature (the commit
    it is pinned to), and ``fetch``, which puts it at ``path`` before it is read."""

    path: Path
    source: Source | None
    key: str | None = None
    revision: str | None = None
    fetch: Callable[[], object] | None = None
    error: str | None = None  # why this input cannot be read (found while walking a tree)

    @property
    def name(self) -> str:
        return self.key or str(self.path)

    def signature(self) -> str | None:
        """`<size>:<mtime>` — what incremental indexing compares to skip unchanged files.

        A SQLite database in WAL mode (Hermes' state.db) takes new rows into its `-wal` file
        long before the main file changes, so that file's size and mtime are part of it.
        A pinned unit's signature is its revision.
        """
        if self.revision is not None:
            return self.revision
        try:
            st = self.path.stat()
        except OSError:
            return None
        sig = f"{st.st_size}:{int(st.st_mtime)}"
        try:
            wal = self.path.with_name(self.path.name + "-wal").stat()
        except OSError:
            return sig
        return f"{sig}+{wal.st_size}:{int(wal.st_mtime)}"


def discover(paths: Sequence[str | Path], harness: str | None = None) -> Iterator[Unit]:
    """Expand files and directory trees into units, in a stable (sorted path) order.

    Raises FunesError for a path that does not exist or a directory holding no transcripts.
    """
    forced = get_source(harness) if harness else None
    for raw in paths:
        p = Path(os.path.abspath(raw))  # provenance names the file, whatever the cwd was
        if p.is_dir():
            units = [
                Unit(f, forced or _source_by_path(f)) if why is None else Unit(f, None, error=why)
                for f, why in _walk(p, forced)
            ]
            if not units:
                raise NotATranscript(f"{display_path(p)}: no transcripts found in this directory")
            yield from _prune(units)
        elif p.exists():
            yield Unit(p, forced or _source_by_path(p))
        else:
            raise UsageError(f"{_missing_reason(p)}: {display_path(p)}")


def os_reason(e: OSError) -> str:
    """What an OS error means, in words and without the path (the caller names the file)."""
    reasons = {
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.ELOOP: "symlink loop",
        errno.ENOENT: "no such file or directory",
        errno.EISDIR: "is a directory",
        errno.ENOTDIR: "a path component is not a directory",
        errno.ENAMETOOLONG: "file name too long",
        errno.EIO: "input/output error",
    }
    if e.errno in reasons:
        return reasons[e.errno]
    return (e.strerror or type(e).__name__).lower()


def _missing_reason(p: Path) -> str:
    """Why ``p`` does not exist for reading: a symlink loop, a dangling symlink, a directory
    that cannot be searched, or nothing there."""
    try:
        os.stat(p)
    except OSError as e:
        if e.errno == errno.ENOENT and os.path.islink(p):
            return f"dangling symlink (to {display_path(os.readlink(p))})"
        if e.errno == errno.ENOENT:
            return "no such file or directory"
        return os_reason(e)
    return "cannot be read"


def sweep(home: Path | None = None) -> list[Unit]:
    """Every transcript under the agents' known locations in ``home`` (default ``$HOME``).

    Each root is read by its own source (no sniffing); what one source already covers
    elsewhere is pruned (see ``Source.prune``). An absent root is simply not there.
    """
    units: list[Unit] = []
    for src, root in known_roots(home):
        if root.is_dir():
            units.extend(Unit(f, src, error=why) for f, why in _walk(root, src))
        elif root.is_file():
            units.append(Unit(root, src))
    return _prune(units)


def _prune(units: list[Unit]) -> list[Unit]:
    for src in registry():
        if src.prune is not None:
            units = src.prune(units)
    return units


def _walk(root: Path, forced: Source | None) -> list[tuple[Path, str | None]]:
    """Transcript files under ``root``, each with None, or with why it cannot be read (a
    directory that cannot be listed is one such entry: its transcripts are not lost silently)."""
    srcs = [forced] if forced else list(registry())
    found: list[tuple[Path, str | None]] = []

    def unreadable(e: OSError) -> None:
        found.append((Path(e.filename or root), os_reason(e)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            f = Path(dirpath, name)
            if any(_matches(f, s) for s in srcs):
                found.append((f, None))
    # Path order, except that sub-agent sessions follow their parents (as the reference does).
    return sorted(found, key=lambda fw: (fw[0].stem.startswith("agent-"), str(fw[0])))


def _matches(f: Path, src: Source) -> bool:
    if src.claims is not None and src.claims(f):
        return True
    return any(f.match(pat) for pat in src.patterns)


def _source_by_path(p: Path) -> Source | None:
    for src in registry():
        if src.claims is not None and src.claims(p):
            return src
    try:
        parts = p.resolve().as_posix()
    except (OSError, RuntimeError):  # a symlink loop: reading it will say so
        parts = p.as_posix()
    for src in registry():
        for rel in src.roots:
            if f"/{rel}/" in parts:
                return src
    return None


def sniff(first: dict[str, Any]) -> Source:
    """The source whose format this first record belongs to; Claude Code is the catch-all."""
    fallback = None
    for src in registry():
        if src.sniff is not None and src.sniff(first):
            return src
        if src.name == "claude":
            fallback = src
    if fallback is None:
        raise NotATranscript("no installed source recognises this format")
    return fallback


def parse(
    paths: Sequence[str | Path],
    harness: str | None = None,
    on_file: Callable[[FileStats], None] | None = None,
) -> Iterator[Turn]:
    """Turns from every transcript under ``paths``, streamed file by file.

    ``on_file`` receives each file's stats once the file is done (also for files that failed,
    with ``error`` set). A directory with no transcripts or a missing path raises FunesError.
    """
    yield from parse_units(discover(paths, harness), on_file)


def parse_units(
    units: Iterable[Unit], on_file: Callable[[FileStats], None] | None = None
) -> Iterator[Turn]:
    """Turns of each unit in turn (see ``parse``); a failing unit sets its stats' ``error``."""
    for unit in units:
        stats = FileStats(display_path(unit.path))
        try:
            yield from parse_unit(unit, stats)
        except FunesError as e:
            stats.error = str(e)
        except OSError as e:
            stats.error = f"{stats.path}: cannot read ({os_reason(e)})"
        if on_file is not None:
            on_file(stats)


def display_path(path: Path | str) -> str:
    """A path as text that can be written anywhere: a file name that is not valid UTF-8 (read
    by Python with surrogate escapes) has each undecodable byte shown as U+FFFD."""
    s = str(path)
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return fix_surrogates(s)
    return s


def parse_unit(unit: Unit, stats: FileStats) -> Iterator[Turn]:
    """The turns of one input. A file whose name is not valid UTF-8 is read all the same;
    the names derived from it (session id, source path) show its bad bytes as U+FFFD, and the
    file is counted under ``repaired`` as ``file_name_not_utf8``."""
    if display_path(unit.path) == str(unit.path):
        yield from _parse_unit(unit, stats)
        return
    stats.repair(0, "file_name_not_utf8")
    for t in _parse_unit(unit, stats):
        stats.sessions.discard(t.session_id)  # counted under its raw name: count it clean
        t.session_id, t.turn_uuid = fix_surrogates(t.session_id), fix_surrogates(t.turn_uuid)
        t.parent_uuid = fix_surrogates(t.parent_uuid) if t.parent_uuid else t.parent_uuid
        t.source_path, t.workdir = fix_surrogates(t.source_path), fix_surrogates(t.workdir)
        stats.sessions.add(t.session_id)
        yield t


def _parse_unit(unit: Unit, stats: FileStats) -> Iterator[Turn]:
    if unit.error is not None:
        raise FunesError(f"{display_path(unit.path)}: cannot read ({unit.error})")
    src = unit.source
    if unit.fetch is not None:
        unit.fetch()
    if src is not None and src.parse_path is not None:
        stats.harness, stats.source = src.harness, src.name
        local = str(unit.path)
        for t in src.parse_path(unit.path, stats):
            if unit.key and t.source_path == local:
                t.source_path = unit.key  # provenance names the shard, not a cache file
            yield stats.count(t)
        return
    with open(unit.path, "rb") as fp:
        yield from parse_stream(fp, unit.path, stats, src)


def parse_stream(
    fp: IO[bytes], path: Path, stats: FileStats, src: Source | None = None
) -> Iterator[Turn]:
    """Parse one JSONL transcript from an open binary stream (a file or stdin)."""
    head = fp.peek(8192)[:8192] if hasattr(fp, "peek") else b""
    if head.startswith((b"PAR1", b"SQLite format 3\0")) and str(path) in ("-", "<stdin>"):
        raise UsageError(
            f"{path}: parquet and SQLite inputs are read from a file path, not a stream"
        )
    if head.startswith(b"SQLite format 3\0"):  # by path, and no source claimed it
        raise NotATranscript(f"{path}: a SQLite database, but not Hermes' (no messages table)")
    if b"\0" in head.split(b"\n", 1)[0]:  # a NUL further on is one bad line, not a binary file
        raise NotATranscript(f"{path}: not a transcript (binary data)")
    records = iter_json_lines(fp, stats)
    first = next(records, None)
    if first is None:
        if stats.lines == 0:
            raise NotATranscript(f"{path}: empty file, no turns")
        raise NotATranscript(f"{path}: no JSON records (all {stats.lines} lines unreadable)")
    if src is None:
        src = sniff(first)
    if src.parse_records is None:
        raise UsageError(f"{path}: the {src.name} source does not read JSONL transcripts")
    stats.harness, stats.source = src.harness, src.name
    for turn in src.parse_records(itertools.chain([first], records), path, stats):
        yield stats.count(turn)


def iter_json_lines(fp: IO[bytes], stats: FileStats) -> Iterator[dict[str, Any]]:
    """JSON objects of a JSONL stream; bad lines are counted in ``stats`` by reason, never fatal.

    Reasons: ``not_utf8``, ``malformed_json``, ``truncated`` (an unterminated last line that
    does not parse — a write caught mid-way), ``not_object``, ``too_deep`` (nested deeper than
    ``records.MAX_DEPTH`` levels).

    Lines read despite a defect are counted in ``stats.repaired``:

    - ``lone_surrogate``: a JSON-escaped lone UTF-16 surrogate (an emoji cut in half) was read
      as U+FFFD;
    - ``concatenated_records``: a line holding several complete records back to back (a writer
      that appended to a file whose last line had lost its newline — seen in real pi sessions);
      each record is read.

    ``stats.lines`` is the number of the line a record came from while it is being consumed.
    """
    for lineno, raw in enumerate(fp, 1):
        stats.lines = lineno
        line = raw.strip()
        if not line:
            continue
        bad = "malformed_json" if raw.endswith(b"\n") else "truncated"
        # A line can be tens of megabytes: hold no copy of it while the record is consumed.
        del raw
        try:
            rec, fixed = load_json(line)
        except UnicodeDecodeError:
            stats.skip(lineno, "not_utf8")
            continue
        except TooDeep:
            stats.skip(lineno, "too_deep")
            continue
        except json.JSONDecodeError as e:
            glued = _concatenated(line.decode("utf-8")) if e.msg == "Extra data" else []
            if not glued:
                stats.skip(lineno, bad)
                continue
            try:
                glued, fixed = check_value(glued, line)
            except TooDeep:
                stats.skip(lineno, "too_deep")
                continue
            stats.repair(lineno, "concatenated_records")
            if fixed:
                stats.repair(lineno, "lone_surrogate")
            for part in glued:
                if part is None:  # a tail that does not parse: counted like any bad line
                    stats.skip(lineno, bad)
                elif not isinstance(part, dict):
                    stats.skip(lineno, "not_object")
                else:
                    stats.records_kept += 1
                    yield part
            continue
        del line
        if not isinstance(rec, dict):
            stats.skip(lineno, "not_object")
            continue
        if fixed:
            stats.repair(lineno, "lone_surrogate")
        stats.records_kept += 1
        yield rec


_DECODER = json.JSONDecoder()


def _concatenated(text: str) -> list[Any]:
    """The JSON values of a line holding several back to back; [] if the first one is bad.

    A tail that does not parse (or nests past the recursion limit) ends the list as ``None``.
    """
    out: list[Any] = []
    pos, end = 0, len(text)
    while pos < end:
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError):
            if not out:
                return []
            out.append(None)
            break
        out.append(value)
        while pos < end and text[pos] in " \t\r":
            pos += 1
    return out if len(out) > 1 else []


# ---------------------------------------------------------------------------- timestamps


def iso_from_epoch(value: float) -> str:
    """An epoch timestamp as ISO-8601 UTC with milliseconds: `2026-03-04T09:00:02.500Z`.

    Values from 1e11 up are read as milliseconds (1e11 s is the year 5138, 1e11 ms is 1973),
    smaller ones as seconds. Out of range → "".
    """
    try:
        ms = round(value) if abs(value) >= 1e11 else round(value * 1000)
        return _iso(_EPOCH + timedelta(milliseconds=ms))
    except (OverflowError, ValueError):
        return ""


def iso_utc(value: Any) -> str:
    """A timestamp of any common shape (epoch s/ms number, ISO string) as ISO-8601 UTC `Z`.

    An ISO string without an offset is local time of this machine (how Python's
    `datetime.now().isoformat()` writes it). Unparseable strings are kept verbatim; anything
    else gives "".
    """
    if isinstance(value, bool):
        return ""
    if isinstance(value, (int, float)):
        return iso_from_epoch(value)
    if not isinstance(value, str) or not value.strip():
        return ""
    try:
        dt = datetime.fromisoformat(value.strip())
        return _iso(dt if dt.tzinfo is not None else dt.astimezone())
    except (ValueError, OverflowError, OSError):
        return value


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _iso(dt: datetime) -> str:
    dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


# ---------------------------------------------------------------------------- shared facets


def munge_workdir(cwd: Any) -> str | None:
    """Claude Code's project-dir naming: every non-ASCII-alphanumeric char becomes '-'.

    `/home/ubuntu/llama.cpp` → `-home-ubuntu-llama-cpp`. None when nothing usable remains.
    """
    if not isinstance(cwd, str):
        return None
    out = "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd.strip())
    return out if out.strip("-") else None


def workdir_of_path(path: Path) -> str:
    """Fallback workdir: the component after `projects`, else the parent directory's name."""
    parts = path.parts
    for i, part in enumerate(parts[:-1]):
        if part == "projects" and i + 1 < len(parts) - 1:
            return parts[i + 1]
    return path.parent.name


@cache
def repo_of(cwd: str) -> str:
    """`owner/name` of each git remote of the checkout at ``cwd``, sorted, space-joined.

    Any failure (directory gone, not a repository, no git) gives "".
    """
    if not cwd or not os.path.isdir(cwd):
        return ""
    try:
        out = subprocess.run(
            ["git", "-C", cwd, "remote", "-v"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    names = {n for line in out.splitlines() if (n := _owner_name(line))}
    return " ".join(sorted(names))


def _owner_name(remote_line: str) -> str | None:
    fields = remote_line.split()
    if len(fields) < 2:
        return None
    url = fields[1].rstrip("/").removesuffix(".git")
    if "://" in url:
        path = url.split("://", 1)[1].split("/", 1)[1] if "/" in url.split("://", 1)[1] else ""
    elif ":" in url:
        path = url.split(":", 1)[1]
    else:
        path = url
    segs = [s for s in path.split("/") if s]
    return "/".join(segs[-2:]) if len(segs) >= 2 else None


def compact_json(value: Any) -> str:
    """JSON with no spaces, keys in source order, non-ASCII literal (tool inputs as stored)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def flatten_tool_content(content: Any) -> str:
    """A tool result's content: a string as-is; parts → their text joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") == "text":
                t = part.get("text")
                if isinstance(t, str):
                    parts.append(t)
        return "\n".join(parts)
    return ""


def line_id(stats: FileStats, seq: int) -> str:
    """The turn id of a record that carries none usable (missing, empty, not a string): fixed
    by where the record sits — its line and its turn number — so re-reading the file, or a
    grown copy of it, gives the same id, and two such turns never share one. Counted in
    ``stats.repaired`` as ``missing_uuid``."""
    stats.repair(stats.lines, "missing_uuid")
    return f"line{stats.lines}-turn{seq}"


def opt_str(v: Any) -> str | None:
    """``v`` when it is a string, else None (optional string fields of agent records)."""
    return v if isinstance(v, str) else None


def is_blank(text: str) -> bool:
    return not text.strip()
