"""What can go wrong with a memory on disk: none there, one funes cannot read, a full disk.
No heavy import here: a command that only reports these (`funes status` with no memory yet)
loads neither numpy nor pyarrow."""

from __future__ import annotations

from pathlib import Path

from funes.errors import FunesError
from funes.store.paths import default_memory_dir


class MemoryMissing(FunesError):
    """There is no table at this memory path yet."""


class DiskFull(FunesError):
    """The disk holding a memory filled up while it was being written. Lance commits a version
    only once its files are whole, and the lexical index catches up with the table on the next
    open, so what was stored before the failed write is intact."""

    def __init__(self, label: str, kept: str = "") -> None:
        self.label = label
        kept = (
            kept or "the write in progress was not stored; what the memory held before it is intact"
        )
        super().__init__(
            f"no space left on the disk holding {label} — {kept}. Free some space and run the "
            "command again"
        )


class MemoryIncompatible(FunesError):
    """The memory was built with an embedding model or vector width we cannot use."""


def missing_message(path: Path) -> str:
    """What :class:`MemoryMissing` says for a memory directory without a table."""
    if path == default_memory_dir():
        return (
            "no index yet — run `funes add <agent>` to build one (or `funes index`), "
            "then recall your own history"
        )
    return (
        f"no index found at {path} — check the path, or build one there with "
        f"`funes index PATH --memory {path}`"
    )
