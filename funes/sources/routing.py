"""From paths to units to turns: which files a path or an agent's home holds, which source
reads each, and reading them with per-file accounting (``FileStats``)."""

from __future__ import annotations

import errno
import fnmatch
import itertools
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from funes.errors import FunesError, UsageError
from funes.records import Turn, fix_surrogates
from funes.sources.base import FileStats, Source, get_source, known_roots, registry
from funes.sources.facets import display_path
from funes.sources.jsonl import irregular, iter_json_lines, open_regular

_NO_WAL = frozenset((".jsonl", ".json", ".parquet"))  # formats that are no SQLite database


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
        long before the main file changes, so that file's size and mtime are part of it (a
        JSON, JSON-lines or Parquet file is no database: no `-wal` is looked for, which
        spares a failing stat per transcript in a sweep). A pinned unit's signature is its
        revision.
        """
        if self.revision is not None:
            return self.revision
        return file_signature(os.fspath(self.path))


def file_signature(path: str) -> str | None:
    """:meth:`Unit.signature` of the local file ``path`` (None when it cannot be stat'ed)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    sig = f"{st.st_size}:{int(st.st_mtime)}"
    if _suffix(path) in _NO_WAL:
        return sig
    try:
        wal = os.stat(f"{path}-wal")
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
        elif (why := irregular(p)) is not None:
            yield Unit(p, forced, error=why)  # never opened: a FIFO would block the reader
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
    units = [
        Unit(_entry_path(e), src, error=e[1]) for src, entries in _swept(home) for e in entries
    ]
    return _prune(units)


def sweep_paths(home: Path | None = None) -> list[tuple[str, Source, str | None]]:
    """What :func:`sweep` finds, as (path, source, why it cannot be read) with the path a
    string, grouped by source: for a count over every transcript (`funes status` asks which
    are not indexed yet: 9,030 at the 1M-chunk scale home) that needs no Path and no unit per
    file. A source that prunes (``Source.prune`` drops only its own units) is given its units
    as the sweep gives them."""
    out: list[tuple[str, Source, str | None]] = []
    pruned: dict[Source, list[Unit]] = {}
    for src, entries in _swept(home):
        if src.prune is None:
            out.extend((e[0], src, e[1]) for e in entries)
        else:
            pruned.setdefault(src, []).extend(
                Unit(_entry_path(e), src, error=e[1]) for e in entries
            )
    for src, units in pruned.items():
        assert src.prune is not None
        out.extend((str(u.path), src, u.error) for u in src.prune(units))
    return out


# A listed file: its path as a string, why it cannot be read (or None), and the directory
# (a Path) and name it was listed under — or the Path itself and None.
_Entry = tuple[str, str | None, Path, str | None]


def _entry_path(e: _Entry) -> Path:
    return e[2] if e[3] is None else e[2] / e[3]


def _swept(home: Path | None) -> Iterator[tuple[Source, list[_Entry]]]:
    """Each known root's source and what the sweep finds under it, in the sweep's order."""
    for src, root in known_roots(home):
        if root.is_dir():
            yield src, _listed(root, src)
        elif (why := irregular(root)) is not None:
            yield src, [(str(root), why, root, None)]
        elif root.is_file():
            yield src, [(str(root), None, root, None)]


def _prune(units: list[Unit]) -> list[Unit]:
    for src in registry():
        if src.prune is not None:
            units = src.prune(units)
    return units


def _walk(root: Path, forced: Source | None) -> list[tuple[Path, str | None]]:
    """Transcript files under ``root``, each with None, or with why it cannot be read (a
    directory that cannot be listed is one such entry: its transcripts are not lost silently)."""
    return [(_entry_path(e), e[1]) for e in _listed(root, forced)]


def _listed(root: Path, forced: Source | None) -> list[_Entry]:
    """:func:`_walk`'s files as the listing gives them, a Path made for none of them: a
    Path's name and str() are worked out again from its parts, and a sweep of 10,000
    transcripts spent more on that than on listing them."""
    srcs = [forced] if forced else list(registry())
    named = _name_test([p for s in srcs for p in s.patterns])
    claims = [s.claims for s in srcs if s.claims is not None]
    found: list[tuple[bool, _Entry]] = []

    def unreadable(e: OSError) -> None:
        p = Path(e.filename or root)
        found.append((p.name.startswith("agent-"), (str(p), os_reason(e), p, None)))

    for top, entry in _files(root, unreadable):
        name = entry.name
        # A regular file is told by the listing's file type; anything else is asked (stat).
        if not _is_file(entry) and (why := irregular(top / name)) is not None:
            # A source that claims files by content would open it: only names decide.
            if named(top, name):
                found.append((name.startswith("agent-"), (entry.path, why, top, name)))
        elif named(top, name) or any(claim(top / name) for claim in claims):
            found.append((name.startswith("agent-"), (entry.path, None, top, name)))
    # Path order, except that sub-agent sessions follow their parents (as the reference does).
    # (a name starting "agent-" keeps that start in its stem)
    found.sort(key=lambda ae: (ae[0], ae[1][0]))
    return [e for _, e in found]


def _files(
    root: Path, onerror: Callable[[OSError], None]
) -> Iterator[tuple[Path, os.DirEntry[str]]]:
    """The files under ``root`` as ``os.walk`` lists them (top-down, symlinked directories not
    entered, a directory that cannot be listed passed to ``onerror``), hidden directories
    skipped, in no particular order; each with its directory and its directory entry, whose
    type the listing gives without a stat, and whose ``path`` is the file's path as ``str()``
    of ``directory / name`` reads."""
    stack = [root]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as it:
                entries = list(it)
        except OSError as err:
            onerror(err)
            continue
        for e in entries:
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if not e.name.startswith(".") and not e.is_symlink():
                    stack.append(top / e.name)
            else:
                yield top, e


def _is_file(e: os.DirEntry[str]) -> bool:
    try:
        return e.is_file()
    except OSError:
        return False


def _name_test(patterns: Sequence[str]) -> Callable[[Path, str], bool]:
    """Whether a path matches any of ``patterns`` as ``Path.match`` says. The patterns of one
    part (``*.jsonl``), most of them, are matched against the name as one expression, not
    parsed into parts at every file (a sweep of 10,000 transcripts spent a third of its time
    there)."""
    one = [p for p in patterns if "/" not in p and os.sep not in p]
    parts = [p for p in patterns if p not in one]
    by_name = None
    if one:
        rx = "|".join(f"(?:{fnmatch.translate(os.path.normcase(p))})" for p in one)
        by_name = re.compile(rx).match

    fold = os.path.normcase("A") != "A"  # case-insensitive names (Windows)

    def test(top: Path, name: str) -> bool:
        """Whether the file ``name`` in the directory ``top`` matches."""
        if by_name is not None and by_name(os.path.normcase(name) if fold else name):
            return True
        return any((top / name).match(p) for p in parts)

    return test


def _suffix(path: str) -> str:
    """``Path(path).suffix``, from the string (a signature asks it of every swept file)."""
    name = path.rpartition(os.sep)[2]
    i = name.rfind(".")
    return name[i:] if 0 < i < len(name) - 1 else ""


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
    with open_regular(unit.path) as fp:
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
        stats.unrecognised = src.sniff is not None and not src.sniff(first)
    if src.parse_records is None:
        raise UsageError(f"{path}: the {src.name} source does not read JSONL transcripts")
    stats.harness, stats.source = src.harness, src.name
    for turn in src.parse_records(itertools.chain([first], records), path, stats):
        yield stats.count(turn)
