"""Files funes writes for the agents: atomic, only when the content differs, and its own
packaged files (the hook scripts, pi's extension)."""

from __future__ import annotations

import json
import os
import shutil
from importlib import resources
from pathlib import Path


def write_if_changed(path: Path, data: bytes, mode: int | None = None) -> bool:
    """Write ``data`` atomically unless the file already holds it; True if written.

    ``mode`` None keeps an existing file's permissions (user files) and uses 0644 for new ones.
    """
    try:
        old: bytes | None = path.read_bytes()
        old_mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        old, old_mode = None, None
    want = mode if mode is not None else (old_mode if old_mode is not None else 0o644)
    if old == data and old_mode == want:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".funes-tmp")
    tmp.write_bytes(data)
    os.chmod(tmp, want)
    os.replace(tmp, path)
    return True


def remove_file(path: Path) -> bool:
    try:
        path.unlink()
        return True
    except FileNotFoundError:
        return False


def prune_dirs(path: Path, stop: Path) -> None:
    """Remove ``path`` and its parents up to (not including) ``stop`` while they are empty."""
    while path != stop and stop in path.parents:
        try:
            path.rmdir()
        except OSError:
            return
        path = path.parent


def remove_tree(path: Path) -> bool:
    """Delete a directory tree funes owns; a symlink at the root is unlinked, not followed."""
    if path.is_symlink():
        path.unlink()
        return True
    if path.is_dir():
        shutil.rmtree(path)
        return True
    return False


def packaged(name: str) -> bytes:
    """A file shipped in ``funes.agents`` (``hooks/funes-index.sh``, ``pi_extension/…``)."""
    return resources.files("funes.agents").joinpath(name).read_bytes()


def written_args(data: bytes, prefix: bytes) -> list[str] | None:
    """The JSON array of strings that follows ``prefix`` in ``data`` (an argv funes wrote into
    a plugin, ``const HOOK = [...]``); None when there is none."""
    at = data.find(prefix)
    if at < 0:
        return None
    try:
        args, _ = json.JSONDecoder().raw_decode(data[at + len(prefix) :].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    ok = isinstance(args, list) and all(isinstance(a, str) for a in args)
    return args if ok else None
