"""What an index run will read, decided before anything heavy is loaded: the options of a run,
its plan (the files, and whether it is a budgeted sweep), and :func:`unchanged` — the cheap
check that finds a run with nothing to do from file sizes and mtimes against the memory's
`state.json`, before LanceDB, onnxruntime or the dataset are opened.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from funes import sources
from funes.chunking import TIERS
from funes.errors import FunesError, UsageError
from funes.hub.spec import parse_one
from funes.ingest.report import IndexReport
from funes.sources import Unit, discover, display_path, get_source
from funes.store.paths import TABLE, memory_dir, memory_label
from funes.store.state import IndexState, all_embedded

BUDGET_SECONDS = 60.0


@dataclass
class IndexOptions:
    paths: Sequence[str] = ()
    # Units resolved elsewhere (shards of a Hub trace dataset), indexed in full after ``paths``;
    # ``limit`` and ``harness`` do not apply to them.
    units: Sequence[Unit] = ()
    harness: str | None = None
    limit: int | None = None
    thinking: bool = True
    yes: bool = False
    memory: str | None = None
    budget: float | None = BUDGET_SECONDS  # sweeps only; None = no limit
    embed: bool = True
    home: Path | None = None  # where agent roots are looked for (default $HOME)
    interactive: bool | None = None  # default: stdin is a TTY


# ---------------------------------------------------------------------------- planning


def plan(opts: IndexOptions) -> tuple[list[Unit], bool]:
    """The files to index and whether this is a sweep (budgeted) run."""
    if opts.paths or opts.units:
        units = list(discover(list(opts.paths), opts.harness)) if opts.paths else []
        return [*_limit(units, opts.limit), *opts.units], False
    if opts.harness:
        src = get_source(opts.harness)
        units = [u for u in sources.sweep(opts.home) if u.source is not None and u.source == src]
        if not units:
            raise FunesError(f"no {src.name} session dir found on this machine")
    else:
        units = sources.sweep(opts.home)
        if not units:
            roots = ", ".join(
                f"~/{r}" for s in sources.registry() for r in s.roots
            )  # what we looked for
            raise FunesError(f"no agent sessions found (looked in {roots}); pass a path")
    return _limit(_newest_first(units), opts.limit), True


def _newest_first(units: list[Unit]) -> list[Unit]:
    def key(u: Unit) -> tuple[bool, float]:
        try:
            mtime = u.path.stat().st_mtime
        except OSError:
            mtime = 0.0
        return (u.path.stem.startswith("agent-"), -mtime)

    return sorted(units, key=key)


def _limit(units: list[Unit], limit: int | None) -> list[Unit]:
    """Per source, the most recent ``limit`` files."""
    if limit is None:
        return units
    if limit < 0:
        raise UsageError("--limit must be ≥ 0")
    by_src: dict[str, int] = {}
    keep = []
    for u in _newest_first(units):
        name = u.source.name if u.source else ""
        if by_src.get(name, 0) < limit:
            by_src[name] = by_src.get(name, 0) + 1
            keep.append(u)
    kept = set(keep)
    return [u for u in units if u in kept]


def key(u: Unit) -> str:
    """A unit's key in the memory's index state."""
    return u.name


def unchanged(opts: IndexOptions) -> IndexReport | None:
    """The report of a run with nothing to do — every file it would read is current at every
    tier it would index, and (when it embeds) no chunk of the memory waits for a vector — or
    None when the run has work, or when this cannot tell cheaply (a fresh memory, a Hub
    spec): the full run then decides. Only stats files and reads small JSON files."""
    if opts.units:
        return None
    spec = opts.memory
    if isinstance(spec, str) and spec.strip() not in ("", "local"):
        one = parse_one(spec)
        if one.repo_id is not None or one.path is None:
            return None  # a Hub memory: the full run refuses it with its one line
        path = one.path
    else:
        path = memory_dir(spec)
    if not (path / f"{TABLE}.lance").is_dir():
        return None
    if opts.embed and not all_embedded(path):
        return None
    try:
        units, sweep = plan(opts)
    except FunesError:
        return None  # said by the full run
    state = IndexState.load(path)
    tiers = TIERS if sweep else TIERS[-1:]
    report = IndexReport(memory=memory_label(path))
    for u in units:
        if u.error is not None and sweep:
            report.failed.append((display_path(u.name), u.error))
            continue
        sig = u.signature()
        if not all(state.current(key(u), sig, t, opts.thinking) for t in tiers):
            return None
        report.skipped += 1
    return report
