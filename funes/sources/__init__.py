"""Agent transcript formats → Turns.

Each agent format is one module exposing a ``SOURCE`` (a :class:`Source`), registered under the
entry-point group ``funes.sources``; nothing else in funes knows the formats' names. This module
holds what they share: the registry, harness detection and routing, line-level JSONL reading with
skip accounting, and the workdir / repo facets.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import IO, Any

from funes.errors import FunesError, UsageError
from funes.records import Turn

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


@dataclass
class FileStats:
    """What reading one input produced and what it could not use, by reason."""

    path: str
    harness: str = ""
    lines: int = 0
    records_kept: int = 0
    sessions: set[str] = field(default_factory=set)
    turns: int = 0
    blocks: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)  # bad lines, by reason
    ignored: Counter[str] = field(default_factory=Counter)  # valid records of kinds we don't index
    empty: Counter[str] = field(default_factory=Counter)  # records kept but holding no content
    error: str | None = None
    bad_lines: list[tuple[int, str]] = field(default_factory=list)

    @property
    def skipped_lines(self) -> int:
        return sum(self.skipped.values())

    def skip(self, lineno: int, reason: str) -> None:
        self.skipped[reason] += 1
        if len(self.bad_lines) < 10:
            self.bad_lines.append((lineno, reason))

    def count(self, turn: Turn) -> Turn:
        self.sessions.add(turn.session_id)
        self.turns += 1
        self.blocks.update(b.type for b in turn.blocks)
        return turn


# ---------------------------------------------------------------------------- registry


@cache
def registry() -> tuple[Source, ...]:
    """All installed sources, from the ``funes.sources`` entry points."""
    found: dict[str, Source] = {}
    for ep in entry_points(group="funes.sources"):
        src = ep.load()
        if not isinstance(src, Source):
            raise FunesError(f"entry point {ep.name} ({ep.value}) is not a funes Source")
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
    """One input file and the source that reads it (None: decided by sniffing)."""

    path: Path
    source: Source | None

    def signature(self) -> str | None:
        """`<size>:<mtime>` — what incremental indexing compares to skip unchanged files."""
        try:
            st = self.path.stat()
        except OSError:
            return None
        return f"{st.st_size}:{int(st.st_mtime)}"


def discover(paths: Sequence[str | Path], harness: str | None = None) -> Iterator[Unit]:
    """Expand files and directory trees into units, in a stable (sorted path) order.

    Raises FunesError for a path that does not exist or a directory holding no transcripts.
    """
    forced = get_source(harness) if harness else None
    for raw in paths:
        p = Path(os.path.abspath(raw))  # provenance names the file, whatever the cwd was
        if p.is_dir():
            n = 0
            for f in _walk(p, forced):
                n += 1
                yield Unit(f, forced or _source_by_path(f))
            if n == 0:
                raise NotATranscript(f"{p}: no transcripts found in this directory")
        elif p.exists():
            yield Unit(p, forced or _source_by_path(p))
        else:
            raise UsageError(f"no such file or directory: {p}")


def _walk(root: Path, forced: Source | None) -> list[Path]:
    srcs = [forced] if forced else list(registry())
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            f = Path(dirpath, name)
            if any(_matches(f, s) for s in srcs):
                found.append(f)
    # Path order, except that sub-agent sessions follow their parents (as the reference does).
    return sorted(found, key=lambda f: (f.stem.startswith("agent-"), str(f)))


def _matches(f: Path, src: Source) -> bool:
    if src.claims is not None and src.claims(f):
        return True
    return any(f.match(pat) for pat in src.patterns)


def _source_by_path(p: Path) -> Source | None:
    for src in registry():
        if src.claims is not None and src.claims(p):
            return src
    parts = p.resolve().as_posix()
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
    for unit in discover(paths, harness):
        stats = FileStats(str(unit.path))
        try:
            yield from parse_unit(unit, stats)
        except FunesError as e:
            stats.error = str(e)
        except OSError as e:
            stats.error = f"cannot read: {e.strerror or e}"
        if on_file is not None:
            on_file(stats)


def parse_unit(unit: Unit, stats: FileStats) -> Iterator[Turn]:
    src = unit.source
    if src is not None and src.parse_path is not None:
        stats.harness = src.harness
        yield from (stats.count(t) for t in src.parse_path(unit.path, stats))
        return
    with open(unit.path, "rb") as fp:
        yield from parse_stream(fp, unit.path, stats, src)


def parse_stream(
    fp: IO[bytes], path: Path, stats: FileStats, src: Source | None = None
) -> Iterator[Turn]:
    """Parse one JSONL transcript from an open binary stream (a file or stdin)."""
    head = fp.peek(8192)[:8192] if hasattr(fp, "peek") else b""
    if b"\0" in head:
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
    stats.harness = src.harness
    for turn in src.parse_records(itertools.chain([first], records), path, stats):
        yield stats.count(turn)


def iter_json_lines(fp: IO[bytes], stats: FileStats) -> Iterator[dict[str, Any]]:
    """JSON objects of a JSONL stream; bad lines are counted in ``stats`` by reason, never fatal.

    Reasons: ``not_utf8``, ``malformed_json``, ``truncated`` (an unterminated last line that
    does not parse — a write caught mid-way), ``not_object``.
    """
    for lineno, raw in enumerate(fp, 1):
        stats.lines = lineno
        line = raw.strip()
        if not line:
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            stats.skip(lineno, "not_utf8")
            continue
        try:
            rec = json.loads(text)
        except json.JSONDecodeError:
            stats.skip(lineno, "malformed_json" if raw.endswith(b"\n") else "truncated")
            continue
        if not isinstance(rec, dict):
            stats.skip(lineno, "not_object")
            continue
        stats.records_kept += 1
        yield rec


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


def is_blank(text: str) -> bool:
    return not text.strip()
