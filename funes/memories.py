"""Memory specs → memories: what ``--memory``, the MCP ``memory`` argument and hooks name, opened.

    open_one()                     the default local memory (so do "" and "local")
    open_one("/path/to/memory")    a local memory directory
    open_one("owner/team")         a Hub dataset, read from its cached copy (funes.hub.remote)
    open_all("local,owner/team")   several, in the order named, duplicates dropped
    open_for_write("/path/to/memory", create=True)  the local memory a command writes


This is the one place that decides whether a spec names a local directory, a Hub dataset or
several memories (the grammar is :mod:`funes.hub.spec`). Each memory comes back with its
:class:`~funes.store.memory.Origin`: read from this machine or from a remote's cached copy, and
whether its passages are the user's own words. A remote the Hub cannot serve, with no cached
copy either, is replaced by the local memory, whose origin carries the note saying so.

Every command that writes a memory (index, ingest, funes-write, backfill, scrub, optimize) or
publishes one (push, curate) opens it with :func:`open_for_write`, which refuses a Hub spec in
one line before anything is created: funes writes only on this machine, and a remote changes
only through `funes push`.
"""

from __future__ import annotations

from pathlib import Path

from funes.errors import FunesError, UsageError
from funes.hub.remote import is_own, locate
from funes.hub.spec import MemorySpec, parse_many, parse_one
from funes.store.memory import Memory, MemoryMissing, Origin, open_memory
from funes.store.paths import memory_dir


def open_one(spec: str | Path | None = None) -> Memory:
    """The one memory ``spec`` names, for a command that reads one (several → FunesError)."""
    if not isinstance(spec, str):
        return open_memory(spec)
    one = parse_one(spec)
    return _open_remote(one) if one.remote else open_memory(spec)


def writable_dir(spec: str | Path | None = None, *, flag: str = "--memory") -> Path:
    """The local directory of the one memory a command writes, before it is opened (the
    detached workers are handed it; a setting is stored there before the first write). A Hub
    memory is refused (UsageError): funes writes only on this machine, and publishes with
    `funes push`. Without this, ``hf://datasets/bob/kb`` read as a path would make a ``./hf:``
    folder. ``flag`` is the option that named ``spec``, for the refusal."""
    if not isinstance(spec, str):
        return memory_dir(spec)
    one = parse_one(spec)
    if one.repo_id is not None:
        if flag != "--memory":
            raise UsageError(f"{flag} must name a local memory, not the Hub memory {one.uri}")
        raise UsageError(
            f"{one.uri} is a Hub memory, and funes writes only local ones — write to a local "
            f"memory (--memory DIR) and publish it with `funes push {one.short} --from DIR`"
        )
    assert one.path is not None
    return one.path


def open_for_write(
    spec: str | Path | None = None,
    *,
    create: bool = False,
    catch_up: bool = True,
    flag: str = "--memory",
) -> Memory:
    """The local memory ``spec`` names, for a command that writes it (index, ingest,
    funes-write, backfill, scrub, optimize) or publishes from it (push, curate): ``create``
    makes it when missing. A Hub spec is refused before anything is created (see
    :func:`writable_dir`); ``catch_up`` as in :func:`~funes.store.memory.open_memory`."""
    return open_memory(writable_dir(spec, flag=flag), create=create, catch_up=catch_up)


def open_all(spec: str | None = None) -> list[Memory]:
    """Every memory ``spec`` names (``local,owner/team``), in the order named."""
    return [open_spec(s) for s in parse_many(spec)]


def open_spec(spec: MemorySpec) -> Memory:
    """The memory of one parsed spec: its local directory, or the remote's cached copy."""
    if spec.path is not None:
        return open_memory(spec.path)
    return _open_remote(spec)


def _open_remote(spec: MemorySpec) -> Memory:
    """The remote opened read-only from the cache (labelled with its URI). Offline without a
    cached copy → the local memory, its origin's note saying so."""
    path, note, _state = locate(spec)
    if path is None:
        try:
            return open_memory(None, origin=Origin(note=note))
        except MemoryMissing:
            raise FunesError(
                f"remote {spec.uri} unreachable and no local index yet — run `funes add <agent>` "
                "(or `funes index`) to build one"
            ) from None
    return open_memory(path, origin=Origin(spec.uri, own=is_own(spec), note=note))
